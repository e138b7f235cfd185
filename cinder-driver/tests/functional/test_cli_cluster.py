"""The `fastblock` CLI against a real local cluster (namenode + 3 storage servers + gateway)."""

import json
import os
import time

import pytest

pytestmark = pytest.mark.functional

GiB = 1 << 30


@pytest.fixture
def volume_name(fastblock_cli):
    """A name no earlier run used (the cluster may be a long-running one), deleted afterwards."""
    name = f"ft-{os.getpid()}-{time.monotonic_ns() % 10**9}"
    yield name
    fastblock_cli("volume", "delete", name)


def test_health_and_status_show_three_live_nodes_and_three_groups(fastblock_cli):
    result = fastblock_cli("--json", "status")
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    live = [node for node in status["nodes"] if node["live"]]
    assert len(live) == 3, status["nodes"]
    assert len(status["groups"]) == 3, status["groups"]
    for group in status["groups"]:
        assert len(group["members"]) == 3, group
        assert len({member["id"] for member in group["members"]}) == 3, group

    result = fastblock_cli("status")
    assert result.returncode == 0, result.stderr
    assert "nodes: 3 live, 0 dead" in result.stdout
    assert "groups: 3" in result.stdout
    for group in status["groups"]:
        chain = " -> ".join(member["id"] for member in group["members"])
        assert f"(chain v{group['chainVersion']}): {chain}" in result.stdout


def test_volume_lifecycle(fastblock_cli, volume_name):
    iqn = f"iqn.2026-11.io.fastblock:{volume_name}"

    created = fastblock_cli("volume", "create", volume_name, "--size", "1G")
    assert created.returncode == 0, created.stderr
    assert created.stdout.startswith(f"created volume {volume_name}\n")
    assert "1 GiB (1073741824 bytes)" in created.stdout
    assert f"iscsi://127.0.0.1:3260/{iqn}/0" in created.stdout

    listed = fastblock_cli("volume", "list")
    assert listed.returncode == 0, listed.stderr
    assert any(line.split()[0] == volume_name for line in listed.stdout.splitlines()[1:]), listed.stdout

    listed_json = json.loads(fastblock_cli("--json", "volume", "list").stdout)
    [volume] = [v for v in listed_json["volumes"] if v["name"] == volume_name]
    assert volume["size"] == GiB and volume["blockSize"] == 512 and volume["iqn"] == iqn

    shown = fastblock_cli("volume", "show", volume_name)
    assert shown.returncode == 0, shown.stderr
    assert iqn in shown.stdout

    deleted = fastblock_cli("volume", "delete", volume_name)
    assert (deleted.returncode, deleted.stdout, deleted.stderr) == (0, f"deleted volume {volume_name}\n", "")
    assert all(v["name"] != volume_name for v in json.loads(fastblock_cli("--json", "volume", "list").stdout)["volumes"])


def test_create_with_chunk_size(fastblock_cli, volume_name):
    created = fastblock_cli("--json", "volume", "create", volume_name, "--size", "256M", "--chunk-size", "16M")
    assert created.returncode == 0, created.stderr
    volume = json.loads(created.stdout)
    assert (volume["size"], volume["chunkSize"], volume["allocatedChunks"]) == (256 << 20, 16 << 20, 0)


@pytest.mark.parametrize(
    "size, message",
    [
        ("0", "size must be positive, got '0'"),
        ("-1", "size must be positive, got '-1'"),
        ("12Q", "invalid size '12Q': unknown unit 'Q'"),
    ],
)
def test_create_with_bad_size_fails_with_a_message(fastblock_cli, volume_name, size, message):
    result = fastblock_cli("volume", "create", volume_name, "--size", size)
    assert result.returncode != 0
    assert result.stdout == ""
    assert result.stderr.startswith("fastblock: error: argument --size: " + message), result.stderr
    assert result.stderr.count("\n") == 1
    assert fastblock_cli("volume", "show", volume_name).returncode == 1  # nothing was created


def test_unaligned_size_is_refused_by_the_namenode(fastblock_cli, volume_name):
    result = fastblock_cli("volume", "create", volume_name, "--size", "1000")
    assert result.returncode == 1
    assert result.stderr.startswith("fastblock: error: INVALID_SIZE: "), result.stderr


def test_invalid_name_is_refused_by_the_namenode(fastblock_cli):
    result = fastblock_cli("volume", "create", "Not_Valid", "--size", "1G")
    assert result.returncode == 1
    assert result.stderr.startswith("fastblock: error: INVALID_NAME: "), result.stderr


def test_duplicate_name_is_volume_exists(fastblock_cli, volume_name):
    assert fastblock_cli("volume", "create", volume_name, "--size", "1G").returncode == 0
    result = fastblock_cli("volume", "create", volume_name, "--size", "2G")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("fastblock: error: VOLUME_EXISTS: "), result.stderr
    assert result.stderr.count("\n") == 1


def test_missing_volume_is_volume_not_found(fastblock_cli):
    for action in ("delete", "show"):
        result = fastblock_cli("volume", action, "no-such-volume-here")
        assert result.returncode == 1
        assert result.stderr.startswith("fastblock: error: VOLUME_NOT_FOUND: "), result.stderr


def test_unreachable_namenode_names_the_url(fastblock_cli):
    import socket

    with socket.socket() as holder:  # bound, never listening: connections are refused
        holder.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{holder.getsockname()[1]}"
        result = fastblock_cli("status", namenode=url)
    assert result.returncode == 1
    assert url in result.stderr and "make up" in result.stderr


def test_export_generates_chap_once_per_initiator(fastblock_cli, volume_name):
    assert fastblock_cli("volume", "create", volume_name, "--size", "1G").returncode == 0
    initiator = "iqn.1994-05.com.redhat:functional-test"
    first = fastblock_cli("--json", "volume", "export", volume_name, "--initiator", initiator, "--host", "compute-1")
    assert first.returncode == 0, first.stderr
    export = json.loads(first.stdout)
    assert export["initiator"] == initiator and export["host"] == "compute-1"
    assert len(export["chap"]["secret"]) == 16
    again = json.loads(fastblock_cli("--json", "volume", "export", volume_name, "--initiator", initiator).stdout)
    assert again["chap"] == export["chap"], "one initiator, one set of credentials"
    text = fastblock_cli("volume", "export", volume_name, "--initiator", "*", "--chap", "none")
    assert text.returncode == 0, text.stderr
    assert "chap:    none" in text.stdout
    bad = fastblock_cli("volume", "export", volume_name, "--initiator", "not-an-iqn")
    assert bad.returncode == 1
    assert "INVALID_INITIATOR" in bad.stderr
    assert fastblock_cli("volume", "delete", volume_name).returncode == 0


def test_nodes_list_shows_every_node_active(fastblock_cli):
    listed = fastblock_cli("nodes", "list")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()[1:]]
    assert len(rows) == 3, listed.stdout
    assert all(row[2] == "live" and row[3] == "active" for row in rows), listed.stdout
    status = fastblock_cli("status")
    assert "groups: 3 (0 degraded)" in status.stdout, status.stdout
    assert "capacity: raw " in status.stdout and "namenode: leader" in status.stdout
