import json

import pytest

from fastblock_cinder.cli import main

GiB = 1 << 30


@pytest.fixture(autouse=True)
def no_ambient_namenode(monkeypatch):
    monkeypatch.delenv("FASTBLOCK_NAMENODE", raising=False)
    monkeypatch.delenv("FASTBLOCK_TOKEN", raising=False)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_create_prints_volume_and_iscsi_url(namenode, capsys):
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "10G")
    assert (code, err) == (0, "")
    assert out.startswith("created volume vol1\n")
    assert "10 GiB (10737418240 bytes)" in out
    assert "iqn.2026-11.io.fastblock:vol1" in out
    assert "iscsi://127.0.0.1:3260/iqn.2026-11.io.fastblock:vol1/0" in out
    assert json.loads(namenode.requests[-1]["body"]) == {"name": "vol1", "size": 10 * GiB}


def test_create_sends_chunk_size_in_bytes(namenode, capsys):
    code, out, _ = run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1G", "--chunk-size", "16M")
    assert code == 0
    assert json.loads(namenode.requests[-1]["body"]) == {"name": "vol1", "size": GiB, "chunkSize": 16 << 20}
    assert "16 MiB" in out


def test_create_json(namenode, capsys):
    code, out, _ = run(capsys, "--namenode", namenode.url, "--json", "volume", "create", "vol1", "--size", "1G")
    assert code == 0
    volume = json.loads(out)
    assert volume["name"] == "vol1" and volume["size"] == GiB
    assert volume["url"] == "iscsi://127.0.0.1:3260/iqn.2026-11.io.fastblock:vol1/0"


def test_json_flag_also_accepted_after_the_subcommand(namenode, capsys):
    code, out, _ = run(capsys, "status", "--namenode", namenode.url, "--json")
    assert code == 0
    assert json.loads(out)["volumes"] == 0


@pytest.mark.parametrize(
    "size, message",
    [
        ("0", "fastblock: error: argument --size: size must be positive, got '0'\n"),
        ("-5", "fastblock: error: argument --size: size must be positive, got '-5'\n"),
        ("abc", "fastblock: error: argument --size: invalid size 'abc': expected a whole number of bytes with an optional binary suffix K, M, G, T or P (e.g. 10G, 512MiB, 1T)\n"),
        ("12Q", "fastblock: error: argument --size: invalid size '12Q': unknown unit 'Q'; expected a whole number of bytes with an optional binary suffix K, M, G, T or P (e.g. 10G, 512MiB, 1T)\n"),
        ("1.5G", "fastblock: error: argument --size: fractional sizes are not supported, got '1.5G': use a whole number, e.g. 1536M\n"),
        ("", "fastblock: error: argument --size: size is empty: expected a whole number of bytes with an optional binary suffix K, M, G, T or P (e.g. 10G, 512MiB, 1T)\n"),
    ],
)
def test_bad_size_fails_locally_before_any_request(namenode, capsys, size, message):
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", size)
    assert (code, out, err) == (2, "", message)
    assert namenode.requests == []


def test_bad_chunk_size_fails_locally(namenode, capsys):
    code, _, err = run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1G", "--chunk-size", "0")
    assert (code, err) == (2, "fastblock: error: argument --chunk-size: size must be positive, got '0'\n")
    assert namenode.requests == []


def test_server_invalid_size_is_one_line_and_exit_1(namenode, capsys):
    # 1000 bytes passes local checks but is not a multiple of 512: the namenode refuses it.
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1000")
    assert (code, out) == (1, "")
    assert err == "fastblock: error: INVALID_SIZE: size must be a positive multiple of 512 bytes, got 1000\n"


def test_server_invalid_chunk_size(namenode, capsys):
    code, _, err = run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1G", "--chunk-size", "3M")
    assert code == 1
    assert err == "fastblock: error: INVALID_CHUNK_SIZE: chunkSize must be a power of two from 1 MiB to 1 GiB, got 3145728\n"


def test_server_invalid_name(namenode, capsys):
    code, _, err = run(capsys, "--namenode", namenode.url, "volume", "create", "Vol_1", "--size", "1G")
    assert code == 1
    assert err.startswith("fastblock: error: INVALID_NAME: invalid volume name 'Vol_1'")
    assert err.count("\n") == 1


def test_duplicate_is_volume_exists(namenode, capsys):
    assert run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1G")[0] == 0
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1G")
    assert (code, out, err) == (1, "", "fastblock: error: VOLUME_EXISTS: volume vol1 already exists\n")


@pytest.mark.parametrize("action", ["show", "delete"])
def test_missing_volume_is_volume_not_found(namenode, capsys, action):
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", action, "ghost")
    assert (code, out, err) == (1, "", "fastblock: error: VOLUME_NOT_FOUND: volume ghost does not exist\n")


def test_connection_refused_names_url_and_suggests_make_up(dead_url, capsys):
    code, out, err = run(capsys, "--namenode", dead_url, "volume", "list")
    assert (code, out) == (1, "")
    assert err == (
        f"fastblock: error: cannot reach the fastblock namenode at {dead_url} (connection refused); "
        "is the cluster running? (start one with `make up`)\n"
    )


def test_list_show_delete(namenode, capsys):
    for name, size in (("beta", "2G"), ("alpha", "1T")):
        assert run(capsys, "--namenode", namenode.url, "volume", "create", name, "--size", size)[0] == 0

    code, out, _ = run(capsys, "--namenode", namenode.url, "volume", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SIZE", "CHUNK", "SIZE", "CHUNKS", "STATE", "IQN"]
    assert lines[1].startswith("alpha ") and "1 TiB" in lines[1] and "0/16384 allocated" in lines[1]
    assert lines[2].startswith("beta ") and "2 GiB" in lines[2] and "iqn.2026-11.io.fastblock:beta" in lines[2]

    code, out, _ = run(capsys, "--namenode", namenode.url, "volume", "show", "beta")
    assert code == 0
    assert "iqn.2026-11.io.fastblock:beta" in out
    assert "2 GiB (2147483648 bytes)" in out

    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "delete", "beta")
    assert (code, out, err) == (0, "deleted volume beta\n", "")
    assert list(namenode.volumes) == ["alpha"]


def test_list_json_and_empty(namenode, capsys):
    assert run(capsys, "--namenode", namenode.url, "volume", "list") == (0, "no volumes\n", "")
    run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1G")
    code, out, _ = run(capsys, "--namenode", namenode.url, "--json", "volume", "list")
    assert code == 0
    assert [v["name"] for v in json.loads(out)["volumes"]] == ["vol1"]


def test_status_shows_nodes_chains_and_counts(namenode, capsys):
    namenode.dead.add("storage-2")
    run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1G")
    code, out, err = run(capsys, "--namenode", namenode.url, "status")
    assert (code, err) == (0, "")
    assert "nodes: 2 live, 1 dead" in out
    assert "storage-2  127.0.0.1:9402  DEAD" in out
    assert "storage-1  127.0.0.1:9401  live  active  -  r1 w2 c0 o0  90 GiB free of 100 GiB" in out
    assert "groups: 3" in out
    assert "group 1 (chain v1) DEGRADED: storage-1 -> storage-2 (DEAD) -> storage-3" in out
    assert "group 3 (chain v1) DEGRADED: storage-3 -> storage-1 -> storage-2 (DEAD)" in out
    assert "volumes: 1" in out
    assert "allocated chunks: 0" in out


def test_env_var_is_used_when_no_flag(namenode, capsys, monkeypatch):
    monkeypatch.setenv("FASTBLOCK_NAMENODE", namenode.url)
    assert run(capsys, "volume", "list") == (0, "no volumes\n", "")
    assert len(namenode.requests) == 1


def test_flag_wins_over_env_var(namenode, dead_url, capsys, monkeypatch):
    monkeypatch.setenv("FASTBLOCK_NAMENODE", dead_url)
    assert run(capsys, "--namenode", namenode.url, "volume", "list")[0] == 0
    monkeypatch.setenv("FASTBLOCK_NAMENODE", namenode.url)
    code, _, err = run(capsys, "--namenode", dead_url, "volume", "list")
    assert code == 1 and dead_url in err


def test_default_url_when_neither_flag_nor_env(capsys, monkeypatch):
    import fastblock_cinder.cli as cli

    seen = []

    class Recording(cli.FastblockClient):
        def __init__(self, urls, *args, **kwargs):
            seen.append(urls)
            super().__init__(urls, *args, **kwargs)

        def list_volumes(self):
            return []

    monkeypatch.setattr(cli, "FastblockClient", Recording)
    assert run(capsys, "volume", "list")[0] == 0
    assert seen == [["http://127.0.0.1:9333"]]


def test_comma_separated_urls_fail_over(namenode, dead_url, capsys):
    code, out, _ = run(capsys, "--namenode", f"{dead_url},{namenode.url}", "volume", "list")
    assert (code, out) == (0, "no volumes\n")


def test_connection_error_names_every_url(dead_url, other_dead_url, capsys):
    other = other_dead_url
    code, _, err = run(capsys, "--namenode", f"{dead_url}, {other}", "status")
    assert code == 1
    assert f"{dead_url} (connection refused), {other} (connection refused)" in err


def test_bad_namenode_url_is_a_usage_error(capsys):
    code, out, err = run(capsys, "--namenode", "ftp://somewhere", "status")
    assert (code, out) == (2, "")
    assert err == "fastblock: error: --namenode: invalid namenode URL 'ftp://somewhere': expected http://HOST:PORT or https://HOST:PORT\n"


@pytest.mark.parametrize("argv", [[], ["volume"], ["volume", "create", "vol1"], ["frobnicate"], ["volume", "show"]])
def test_argparse_usage_errors_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert "usage: fastblock" in err
    assert "error:" in err


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "usage: fastblock" in out


def test_status_shows_labels_states_degraded_groups_and_catch_up_progress(namenode, capsys):
    namenode.labels["storage-1"] = {"rack": "r1", "host": "h1"}
    namenode.node_state["storage-3"] = "draining"
    namenode.dead.add("storage-2")
    namenode.joining[1] = ("storage-4", (256 << 20, 1 << 30))
    namenode.joining[2] = ("storage-5", None)
    code, out, err = run(capsys, "--namenode", namenode.url, "status")
    assert (code, err) == (0, "")
    assert "storage-1  127.0.0.1:9401  live  active    host=h1,rack=r1" in out
    assert "storage-3  127.0.0.1:9403  live  draining  -" in out
    assert "groups: 3 (3 degraded)" in out
    assert "group 1 (chain v1) DEGRADED: storage-1 -> storage-2 (DEAD) -> storage-3" in out
    assert "    joining storage-4: [#####---------------]  25% (256 MiB of 1 GiB)" in out
    assert "    joining storage-5: [--------------------] catching up (no progress reported yet)" in out
    assert "re-replication: 2 group(s) catching up" in out
    assert "capacity: raw 300 GiB, usable 100 GiB (raw / 3), provisioned 0 B, allocated 0 B, limit 400 GiB (x4.0)" in out
    assert "namenode: leader" in out


def test_status_shows_down_nodes_and_when_their_replacement_starts(namenode, capsys):
    namenode.dead.add("storage-2")
    namenode.down = [
        {"id": "storage-2", "downSince": "2026-11-21T20:00:00Z", "replaceAt": "2026-11-21T20:01:00Z",
         "backSince": None, "groups": [1, 2], "state": "waiting"},
        {"id": "storage-4", "downSince": "2026-11-21T19:00:00Z", "replaceAt": "2026-11-21T19:01:00Z",
         "backSince": None, "groups": [3], "state": "replacing"},
        {"id": "storage-5", "downSince": "2026-11-21T20:00:00Z", "replaceAt": "2026-11-21T20:01:00Z",
         "backSince": "2026-11-21T20:00:30Z", "groups": [4], "state": "rejoining"},
    ]
    code, out, err = run(capsys, "--namenode", namenode.url, "status")
    assert (code, err) == (0, "")
    assert "down nodes: 3 (down/out interval)" in out
    assert ("  storage-2  waiting  down since 2026-11-21T20:00:00Z: groups 1,2 wait for it;"
            " replacement starts 2026-11-21T20:01:00Z") in out
    assert "  storage-4  replacing  down since 2026-11-21T19:00:00Z: replaced elsewhere since 2026-11-21T19:01:00Z" in out
    assert "back since 2026-11-21T20:00:30Z, catching up by delta in groups 4" in out
    namenode.down = []
    code, out, err = run(capsys, "--namenode", namenode.url, "status")
    assert (code, err) == (0, "")
    assert "down nodes" not in out


@pytest.mark.parametrize(
    "done, total, expected",
    [
        (0, 100, "[--------------------]   0%"),
        (50, 100, "[##########----------]  50%"),
        (100, 100, "[####################] 100%"),
        (150, 100, "[####################] 100%"),
        (-5, 100, "[--------------------]   0%"),
    ],
)
def test_progress_bar(done, total, expected):
    from fastblock_cinder.cli import progress_bar

    assert progress_bar(done, total).startswith(expected)


def test_nodes_list_and_drain(namenode, capsys):
    namenode.labels["storage-2"] = {"rack": "r2"}
    code, out, err = run(capsys, "--namenode", namenode.url, "nodes", "list")
    assert (code, err) == (0, "")
    assert out.splitlines()[0].split() == ["ID", "ADDRESS", "LIVE", "STATE", "LABELS", "QUEUES", "CAPACITY"]
    row = next(line for line in out.splitlines() if line.startswith("storage-2"))
    assert row.split() == ["storage-2", "127.0.0.1:9402", "live", "active", "rack=r2", "r2", "w4", "c0", "o0",
                           "80", "GiB", "free", "of", "100", "GiB"]
    namenode.dead.add("storage-3")
    code, out, err = run(capsys, "--namenode", namenode.url, "nodes", "list")
    row = next(line for line in out.splitlines() if line.startswith("storage-3"))
    assert row.split()[:6] == ["storage-3", "127.0.0.1:9403", "DEAD", "active", "-", "-"], "no heartbeat: no queues"

    code, out, err = run(capsys, "--namenode", namenode.url, "nodes", "drain", "storage-2")
    assert (code, err) == (0, "")
    assert "node storage-2 is draining" in out
    code, out, err = run(capsys, "--namenode", namenode.url, "nodes", "drain", "storage-9")
    assert code == 1
    assert err.strip() == "fastblock: error: NODE_NOT_FOUND: no storage node 'storage-9' is registered"


def test_volume_export_prints_the_chap_credentials(namenode, capsys):
    run(capsys, "--namenode", namenode.url, "volume", "create", "vol1", "--size", "1G")
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "export", "vol1", "--initiator",
                         "iqn.1994-05.com.redhat:c1", "--host", "compute-1")
    assert (code, err) == (0, "")
    assert "volume vol1 exported to iqn.1994-05.com.redhat:c1" in out
    assert "chap:    user fb-vol1 secret Abcdefgh23456789" in out
    assert json.loads(namenode.requests[-1]["body"]) == {"initiator": "iqn.1994-05.com.redhat:c1", "chap": "generate", "host": "compute-1"}
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "export", "vol1", "--initiator", "*", "--chap", "none")
    assert (code, err) == (0, "")
    assert "chap:    none" in out
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "export", "vol1", "--initiator", "x")
    assert code == 1 and "INVALID_INITIATOR" in err
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "export", "vol1", "--initiator", "*", "--chap", "maybe")
    assert code == 2


def test_token_flag_and_env_are_sent_as_bearer(namenode, capsys, monkeypatch):
    run(capsys, "--namenode", namenode.url, "--token", "flag-token", "volume", "list")
    assert namenode.requests[-1]["headers"]["Authorization"] == "Bearer flag-token"
    monkeypatch.setenv("FASTBLOCK_TOKEN", "env-token")
    run(capsys, "--namenode", namenode.url, "volume", "list")
    assert namenode.requests[-1]["headers"]["Authorization"] == "Bearer env-token"
    run(capsys, "--namenode", namenode.url, "status", "--token", "wins")
    assert namenode.requests[-1]["headers"]["Authorization"] == "Bearer wins"


# --- snapshots, clones, revert, extend (contract B) ----------------------------------------------


def _volume(namenode, capsys, name="vol1", size="1G"):
    code, _, err = run(capsys, "--namenode", namenode.url, "volume", "create", name, "--size", size)
    assert (code, err) == (0, "")


def test_snapshot_create_list_delete(namenode, capsys):
    _volume(namenode, capsys)
    code, out, err = run(capsys, "--namenode", namenode.url, "snapshot", "create", "vol1", "s1", "--id", "uuid-1")
    assert (code, err) == (0, "")
    assert out.startswith("created snapshot vol1/s1 (1 GiB")
    assert json.loads(namenode.requests[-1]["body"]) == {"name": "s1", "id": "uuid-1"}
    assert namenode.requests[-1]["path"] == "/v1/volumes/vol1/snapshots"
    run(capsys, "--namenode", namenode.url, "snapshot", "create", "vol1", "s2")
    code, out, _ = run(capsys, "--namenode", namenode.url, "snapshot", "list", "vol1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SIZE", "CREATED", "STATE"]
    assert [line.split()[0] for line in lines[1:]] == ["s1", "s2"]
    code, out, _ = run(capsys, "--namenode", namenode.url, "--json", "snapshot", "list", "vol1")
    assert [s["name"] for s in json.loads(out)["snapshots"]] == ["s1", "s2"]
    code, out, _ = run(capsys, "--namenode", namenode.url, "snapshot", "delete", "vol1", "s1")
    assert (code, out) == (0, "deleted snapshot vol1/s1\n")
    assert namenode.requests[-1]["method"] == "DELETE"


def test_snapshot_errors_are_reported_with_their_code(namenode, capsys):
    _volume(namenode, capsys)
    run(capsys, "--namenode", namenode.url, "snapshot", "create", "vol1", "s1")
    code, _, err = run(capsys, "--namenode", namenode.url, "snapshot", "create", "vol1", "s1")
    assert code == 1 and err.startswith("fastblock: error: SNAPSHOT_EXISTS: ")
    code, _, err = run(capsys, "--namenode", namenode.url, "volume", "delete", "vol1")
    assert code == 1 and err.startswith("fastblock: error: VOLUME_HAS_SNAPSHOTS: ")
    code, out, _ = run(capsys, "--namenode", namenode.url, "snapshot", "list", "vol1")
    assert code == 0 and "s1" in out


def test_clone_from_snapshot_and_from_volume(namenode, capsys):
    _volume(namenode, capsys)
    run(capsys, "--namenode", namenode.url, "snapshot", "create", "vol1", "s1")
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "clone", "c1", "--from", "vol1/s1")
    assert (code, err) == (0, "")
    assert out.startswith("created volume c1 from vol1/s1\n")
    assert "iscsi://127.0.0.1:3260/iqn.2026-11.io.fastblock:c1/0" in out
    assert json.loads(namenode.requests[-1]["body"]) == {"name": "c1", "source": {"snapshot": "vol1/s1"}}
    code, _, _ = run(capsys, "--namenode", namenode.url, "volume", "clone", "c2", "--from", "vol1", "--size", "2G")
    assert code == 0
    assert json.loads(namenode.requests[-1]["body"]) == {"name": "c2", "source": {"volume": "vol1"}, "size": 2 * GiB}
    code, _, err = run(capsys, "--namenode", namenode.url, "volume", "clone", "c3", "--from", "vol1/")
    assert code == 2 and "--from: expected VOLUME or VOLUME/SNAPSHOT" in err


def test_revert_and_extend(namenode, capsys):
    _volume(namenode, capsys)
    run(capsys, "--namenode", namenode.url, "snapshot", "create", "vol1", "s1")
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "revert", "vol1", "--snapshot", "s1")
    assert (code, out, err) == (0, "reverted volume vol1 to snapshot s1\n", "")
    assert json.loads(namenode.requests[-1]["body"]) == {"snapshot": "s1"}
    code, out, err = run(capsys, "--namenode", namenode.url, "volume", "extend", "vol1", "--size", "3G")
    assert (code, err) == (0, "")
    assert out == "extended volume vol1 to 3 GiB\n"
    assert json.loads(namenode.requests[-1]["body"]) == {"size": 3 * GiB}
    code, _, err = run(capsys, "--namenode", namenode.url, "volume", "extend", "vol1", "--size", "big")
    assert code == 2 and "--size" in err
