"""End to end: the real `cinder` CLI -> cinder-api (noauth) -> RabbitMQ -> cinder-scheduler ->
cinder-volume running FastBlockISCSIDriver -> the local fastblock cluster; then the volume reached
with the returned connection (CHAP login through libiscsi and qemu-img, as os-brick would).

Snapshot, clone, extend and revert use the namenode's contract B routes and the gateway's layered
volumes.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

import pytest

import initiator as iscsi
from cinder_services import CinderServices, id_of, properties, remove_tree, table_rows
from fastblock_cinder.client import FastblockClient, FastblockError

pytestmark = [pytest.mark.functional, pytest.mark.e2e]

GiB = 1 << 30
INITIATOR = "iqn.2026-11.org.example:e2e-compute"
MiB4 = 4 << 20


@pytest.fixture(scope="module")
def cinder(namenode_url, iscsi_port, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("cinder-e2e")
    services = CinderServices(workdir, namenode_url, iscsi_port)
    try:
        services.start()
        yield services
    finally:
        services.stop()
        if os.environ.get("FASTBLOCK_KEEP_E2E") is None:
            remove_tree(workdir)


@pytest.fixture(scope="module")
def cluster(namenode_url):
    return FastblockClient(namenode_url)


@pytest.fixture
def workdir(tmp_path):
    return tmp_path


def _connection(output: str) -> dict:
    """The connection_info attachment-create/-update print as a second Property/Value table."""
    props = properties(output)
    if props.get("driver_volume_type") != "iscsi":
        raise AssertionError(f"no iSCSI connection info in:\n{output}")
    data = dict(props)
    data["target_lun"] = int(props.get("target_lun", "0"))
    return data


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _attach(cinder: CinderServices, volume_id: str) -> tuple[str, dict]:
    out = cinder.cli("attachment-create", volume_id, "--connect", "True", "--initiator", INITIATOR,
                     "--ip", "127.0.0.1", "--host", "e2e-compute").stdout
    attachment = properties(out)["id"]
    return attachment, _connection(out)


def _detach(cinder: CinderServices, attachment: str, volume_id: str) -> None:
    cinder.cli("attachment-delete", attachment)
    cinder.wait_status("volume", volume_id, "available")


def test_pools_show_the_clusters_real_capacity_and_capabilities(cinder, cluster):
    pool = cinder.wait_pool()
    capacity = cluster.status()["capacity"]
    assert pool["name"] == "e2e@fastblock#fastblock"
    assert float(pool["total_capacity_gb"]) == round(capacity["usable"] / GiB, 2)
    assert float(pool["max_over_subscription_ratio"]) == float(capacity["oversubscription"])
    for flag in ("thin_provisioning_support", "QoS_support", "online_extend_support"):
        assert pool[flag] == "True", (flag, pool)
    assert pool["multiattach"] == "False"
    assert pool["storage_protocol"] == "iSCSI"
    assert pool["vendor_name"] == "fastblock"
    assert pool["backend_state"] == "up"


def test_create_list_attach_with_chap_read_write_retry_detach_delete(cinder, cluster, workdir):
    name = _name("e2e-vol")
    volume_id = id_of(cinder.cli("create", "--name", name, "1").stdout)
    cinder.wait_status("volume", volume_id, "available")
    assert name in [r["Name"] for r in table_rows(cinder.cli("list").stdout)]
    backend = cluster.get_volume(f"volume-{volume_id}")
    assert backend["size"] == GiB and backend["clientId"] == volume_id

    # A first attach fails (the host sent no usable initiator); the volume is not stuck.
    failed = cinder.cli("attachment-create", volume_id, "--connect", "True", "--initiator", "not-an-iqn",
                        "--ip", "127.0.0.1", "--host", "e2e-compute", ok=False)
    assert failed.returncode != 0, failed.stdout
    leftovers = [r["ID"] for r in table_rows(cinder.cli("attachment-list", "--volume-id", volume_id).stdout)]
    if leftovers:
        # The failed attachment is retried with a good connector (as Nova retries the update).
        out = cinder.cli("attachment-update", leftovers[0], "--initiator", INITIATOR, "--ip", "127.0.0.1",
                         "--host", "e2e-compute").stdout
        attachment, data = leftovers[0], _connection(out)
    else:
        attachment, data = _attach(cinder, volume_id)
    assert data["target_portal"] == f"127.0.0.1:{cinder.iscsi_port}"
    assert data["target_iqn"] == f"iqn.2026-11.io.fastblock:volume-{volume_id}"
    assert data["auth_method"] == "CHAP"

    payload = os.urandom(MiB4)
    iscsi.write(data, INITIATOR, payload, workdir)
    assert iscsi.read(data, INITIATOR, MiB4, workdir) == payload
    denied = iscsi.inquiry(data, INITIATOR, with_chap=False)
    assert denied.returncode != 0, "a login without the CHAP secret must be refused"

    # The same attachment updated again (a retried attach): same credentials, still working.
    again = _connection(cinder.cli("attachment-update", attachment, "--initiator", INITIATOR, "--ip", "127.0.0.1",
                                   "--host", "e2e-compute").stdout)
    assert (again["auth_username"], again["auth_password"]) == (data["auth_username"], data["auth_password"])
    assert iscsi.read(again, INITIATOR, MiB4, workdir) == payload

    cinder.cli("attachment-complete", attachment)
    cinder.wait_status("volume", volume_id, "in-use")
    _detach(cinder, attachment, volume_id)
    assert cluster.list_exports(f"volume-{volume_id}") == []
    assert iscsi.inquiry(data, INITIATOR).returncode != 0, "after detach the host may not log in"

    # Attached again later: the data is still there.
    attachment, data = _attach(cinder, volume_id)
    assert iscsi.read(data, INITIATOR, MiB4, workdir) == payload
    _detach(cinder, attachment, volume_id)

    cinder.cli("delete", volume_id)
    cinder.wait_gone("volume", volume_id)
    with pytest.raises(FastblockError):
        cluster.get_volume(f"volume-{volume_id}")


def test_qos_spec_on_a_type_reaches_the_cluster_and_retype_changes_it_in_place(cinder, cluster):
    gold, silver = _name("gold"), _name("silver")
    for vtype, iops in ((gold, "500"), (silver, "100")):
        cinder.cli("type-create", vtype)
        cinder.cli("type-key", vtype, "set", "volume_backend_name=fastblock")
        qos_id = id_of(cinder.cli("qos-create", vtype + "-qos", f"total_iops_sec={iops}",
                                  "write_bytes_sec_per_gb=1048576").stdout)
        cinder.cli("qos-associate", qos_id, properties(cinder.cli("type-show", vtype).stdout)["id"])

    volume_id = id_of(cinder.cli("create", "--name", _name("e2e-qos"), "--volume-type", gold, "2").stdout)
    cinder.wait_status("volume", volume_id, "available")
    backend = cluster.get_volume(f"volume-{volume_id}")
    assert backend["qos"]["totalIopsSec"] == 500
    assert backend["qos"]["writeBytesSec"] == 2 * 1048576  # per-GB form computed for 2 GiB

    cinder.cli("retype", volume_id, silver)
    def retyped():
        shown = cinder.api_show("volume", volume_id)
        return shown if shown["volume_type"] == silver and shown["status"] == "available" else None
    cinder._wait(f"volume {volume_id} to be retyped", retyped, 300, interval=0.5)
    after = cluster.get_volume(f"volume-{volume_id}")
    assert after["qos"]["totalIopsSec"] == 100
    assert after["id"] == backend["id"], "retype moved no data: the same cluster volume"

    cinder.cli("delete", volume_id)
    cinder.wait_gone("volume", volume_id)


def test_manage_and_unmanage_keep_the_data(cinder, cluster, workdir):
    legacy = _name("legacy")
    cluster.create_volume(legacy, GiB)
    cluster.create_export(legacy, INITIATOR, chap="generate")
    export = cluster.list_exports(legacy)[0]
    data = {"target_portal": f"127.0.0.1:{cinder.iscsi_port}", "target_iqn": export["iqn"], "target_lun": 0,
            "auth_method": "CHAP", "auth_username": export["chap"]["user"], "auth_password": export["chap"]["secret"]}
    payload = os.urandom(MiB4)
    iscsi.write(data, INITIATOR, payload, workdir)
    cluster.delete_export(legacy, INITIATOR)
    # The gateway that wrote holds the write lease for a few seconds more; a volume is renamed
    # (managed) only once no gateway holds it.
    def lease_free():
        lease = cluster.get_lease(legacy)
        return lease["holder"] is None or lease["expiresAt"] is None or \
            time.time() > datetime.fromisoformat(lease["expiresAt"].replace("Z", "+00:00")).timestamp()
    cinder._wait("the write lease of the written volume to lapse", lease_free, 120, interval=0.5)

    volume_id = id_of(cinder.cli("manage", "--name", _name("managed"), "e2e@fastblock#fastblock", legacy).stdout)
    cinder.wait_status("volume", volume_id, "available")
    assert cinder.show("volume", volume_id)["size"] == "1"
    with pytest.raises(FastblockError):
        cluster.get_volume(legacy)
    attachment, attached = _attach(cinder, volume_id)
    assert iscsi.read(attached, INITIATOR, MiB4, workdir) == payload
    _detach(cinder, attachment, volume_id)

    cinder.cli("unmanage", volume_id)
    cinder.wait_gone("volume", volume_id)
    kept = cluster.get_volume(f"volume-{volume_id}")
    assert kept["size"] == GiB, "unmanage leaves the volume on the cluster"
    cluster.delete_volume(kept["name"])


def test_snapshots_clones_extend_revert_and_busy_delete(cinder, cluster, workdir):
    volume_id = id_of(cinder.cli("create", "--name", _name("e2e-src"), "1").stdout)
    cinder.wait_status("volume", volume_id, "available")
    attachment, data = _attach(cinder, volume_id)
    first = os.urandom(MiB4)
    iscsi.write(data, INITIATOR, first, workdir)
    _detach(cinder, attachment, volume_id)

    snap_id = id_of(cinder.cli("snapshot-create", "--name", _name("snap"), volume_id).stdout)
    cinder.wait_status("snapshot", snap_id, "available")
    assert [s["name"] for s in cluster.list_snapshots(f"volume-{volume_id}")] == [f"snapshot-{snap_id}"]

    attachment, data = _attach(cinder, volume_id)
    second = os.urandom(MiB4)
    iscsi.write(data, INITIATOR, second, workdir)  # goes to the volume's new top layer
    _detach(cinder, attachment, volume_id)

    from_snap = id_of(cinder.cli("create", "--snapshot-id", snap_id, "--name", _name("from-snap"), "2").stdout)
    from_src = id_of(cinder.cli("create", "--source-volid", volume_id, "--name", _name("from-src"), "1").stdout)
    for vid in (from_snap, from_src):
        cinder.wait_status("volume", vid, "available")
    assert cluster.get_volume(f"volume-{from_snap}")["size"] == 2 * GiB
    assert cluster.get_volume(f"volume-{from_snap}")["source"]["snapshot"] == f"snapshot-{snap_id}"
    assert cluster.get_volume(f"volume-{from_src}")["source"]["volume"] == f"volume-{volume_id}"

    cinder.cli("revert-to-snapshot", snap_id)
    cinder.wait_status("volume", volume_id, "available")
    assert cluster.get_volume(f"volume-{volume_id}")["size"] == GiB
    # (Cinder reverts only a volume of its snapshot's size; extend comes after.)

    cinder.cli("extend", volume_id, "2")
    def extended():
        shown = cinder.api_show("volume", volume_id)
        return shown if shown["size"] == 2 and shown["status"] == "available" else None
    cinder._wait(f"volume {volume_id} to be extended", extended, 300, interval=0.5)
    assert cluster.get_volume(f"volume-{volume_id}")["size"] == 2 * GiB
    attachment, data = _attach(cinder, volume_id)
    assert iscsi.capacity_bytes(data, INITIATOR) == 2 * GiB
    _detach(cinder, attachment, volume_id)

    # The source was reverted to the snapshot: it reads the first data again.
    for vid, expected in ((from_snap, first), (from_src, second), (volume_id, first)):
        attachment, data = _attach(cinder, vid)
        assert iscsi.read(data, INITIATOR, MiB4, workdir) == expected, vid
        _detach(cinder, attachment, vid)

    # A snapshot Cinder no longer knows: deleting the volume is refused and it stays available.
    cinder.cli("snapshot-unmanage", snap_id)
    cinder.wait_gone("snapshot", snap_id)
    cinder.cli("delete", volume_id)
    def back_available():
        shown = cinder.api_show("volume", volume_id)
        return shown if shown["status"] == "available" else None
    time.sleep(5)
    cinder._wait(f"volume {volume_id} to come back available", back_available, 300, interval=0.5)
    backend_snaps = cluster.list_snapshots(f"volume-{volume_id}")
    assert [s["name"] for s in backend_snaps] == [f"snapshot-{snap_id}"]

    # Managed back under another Cinder snapshot, then everything deleted.
    managed = id_of(cinder.cli("snapshot-manage", volume_id, backend_snaps[0]["name"]).stdout)
    cinder.wait_status("snapshot", managed, "available")
    cinder.cli("snapshot-delete", managed)
    cinder.wait_gone("snapshot", managed)
    assert cluster.list_snapshots(f"volume-{volume_id}") == []
    for vid in (from_snap, from_src, volume_id):
        cinder.cli("delete", vid)
    for vid in (from_snap, from_src, volume_id):
        cinder.wait_gone("volume", vid)

BENCH_JAR = Path(__file__).resolve().parents[3] / "bench" / "target" / "fastblock-bench.jar"


def _bench_read_iops(data: dict, workdir: Path) -> float:
    """4 KiB random reads at queue depth 32 for 10 s through the connection Cinder returned (deep enough
    that the gateway's limit, not the latency of a loaded machine, sets the rate)."""
    if not BENCH_JAR.is_file():
        raise AssertionError(f"{BENCH_JAR} is missing: build it with `mvn -DskipTests package` first")
    user, secret = quote(data["auth_username"], safe=""), quote(data["auth_password"], safe="")
    url = f"iscsi://{user}%{secret}@{data['target_portal']}/{data['target_iqn']}/{data['target_lun']}"
    report = workdir / "bench.json"
    result = subprocess.run(
        ["java", "-jar", str(BENCH_JAR), "--url", url, "--initiator-name", INITIATOR, "--rw", "randread",
         "--bs", "4k", "--iodepth", "32", "--runtime", "10s", "--ramp", "2s", "--seed", "3",
         "--json", str(report), "--time-limit", "2m"],
        capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    volume = json.loads(report.read_text())["volumes"][0]
    assert volume["errors"] == 0, volume
    print(result.stdout)
    return float(volume["read"]["iops"])


def test_backend_qos_of_500_iops_caps_the_volume_through_the_returned_connection(cinder, workdir):
    limited_type = _name("iops500")
    cinder.cli("type-create", limited_type)
    cinder.cli("type-key", limited_type, "set", "volume_backend_name=fastblock")
    qos_id = id_of(cinder.cli("qos-create", limited_type + "-qos", "consumer=back-end", "total_iops_sec=500").stdout)
    cinder.cli("qos-associate", qos_id, properties(cinder.cli("type-show", limited_type).stdout)["id"])

    measured = {}
    for label, extra in (("limited", ["--volume-type", limited_type]), ("unlimited", [])):
        volume_id = id_of(cinder.cli("create", "--name", _name("e2e-" + label), *extra, "1").stdout)
        cinder.wait_status("volume", volume_id, "available")
        attachment, data = _attach(cinder, volume_id)
        measured[label] = _bench_read_iops(data, workdir)
        _detach(cinder, attachment, volume_id)
        cinder.cli("delete", volume_id)
        cinder.wait_gone("volume", volume_id)
    print(f"QoS through Cinder: total_iops_sec=500 -> {measured['limited']:.1f} IOPS; "
          f"no QoS -> {measured['unlimited']:.1f} IOPS")
    assert abs(measured["limited"] - 500) <= 25, measured
    assert measured["unlimited"] > 1.5 * 500, f"the cap comes from the QoS spec, not the machine: {measured}"


def test_migrate_and_retype_between_backends_of_the_same_cluster_keep_the_data(cinder, cluster, workdir):
    """Two backends of one cluster: `cinder migrate` and a retype to the other backend move no data
    (the driver answers migrate_volume); `--force-host-copy` takes Cinder's generic copy, which
    attaches both volumes on the cinder-volume host through os-brick: where that host has no iSCSI
    initiator (this machine, CI) it must fail cleanly and leave the volume as it was."""
    for backend in cinder.backends:
        cinder.wait_pool(backend)
    pools = [f"{cinder.host}@{b}#{b}" for b in cinder.backends]

    # The default type names no backend: the scheduler may place and move it on either.
    volume_id = id_of(cinder.cli("create", "--name", _name("e2e-mig"), "1").stdout)
    shown = cinder.wait_status("volume", volume_id, "available")
    home = shown["os-vol-host-attr:host"]
    assert home in pools, shown
    away = next(p for p in pools if p != home)
    attachment, data = _attach(cinder, volume_id)
    payload = os.urandom(MiB4)
    iscsi.write(data, INITIATOR, payload, workdir)
    _detach(cinder, attachment, volume_id)
    cluster_name = f"volume-{volume_id}"
    backend_id = cluster.get_volume(cluster_name)["id"]

    def reads_back():
        attachment, data = _attach(cinder, volume_id)
        assert iscsi.read(data, INITIATOR, MiB4, workdir) == payload
        _detach(cinder, attachment, volume_id)

    # The generic host copy (Cinder creates a second volume and copies through os-brick).
    before = {v["name"] for v in cluster.list_volumes()}
    started = time.monotonic()
    cinder.cli("migrate", "--force-host-copy", "True", volume_id, away)

    def settled():
        shown = cinder.api_show("volume", volume_id)
        if shown["migration_status"] in ("success", "error") and shown["status"] == "available":
            return shown
        return None
    shown = cinder._wait(f"the host-copy migration of {volume_id} to end", settled, 300, interval=0.5)
    print(f"host-copy migration: {shown['migration_status']} after {time.monotonic() - started:.1f} s")
    if shown["migration_status"] == "error":
        # No initiator on this host: the volume stays where it was; the temporary one is deleted.
        assert shown["os-vol-host-attr:host"] == home, shown
        cinder._wait("the temporary destination volume to be deleted",
                     lambda: {v["name"] for v in cluster.list_volumes()} <= before or None, 120, interval=0.5)
        assert cluster.get_volume(cluster_name)["id"] == backend_id
    else:
        # A host with an initiator copied it: the data now lives in the copy, under its name.
        home, away = away, home
        assert shown["os-vol-host-attr:host"] == home, shown
        cluster_name = f"volume-{shown['os-vol-mig-status-attr:name_id']}"
        backend_id = cluster.get_volume(cluster_name)["id"]
    reads_back()

    def migrated_to(host):
        def check():
            shown = cinder.api_show("volume", volume_id)
            if shown["migration_status"] == "error":
                cinder.fail(f"migration of {volume_id} to {host} failed: {shown}")
            if shown["migration_status"] == "success" and shown["os-vol-host-attr:host"] == host \
                    and shown["status"] == "available":
                return shown
            return None
        return cinder._wait(f"volume {volume_id} to be on {host}", check, 300, interval=0.5)

    started = time.monotonic()
    cinder.cli("migrate", volume_id, away)
    shown = migrated_to(away)
    print(f"driver-assisted migration to {away}: {time.monotonic() - started:.1f} s")
    reads_back()
    assert cluster.get_volume(cluster_name)["id"] == backend_id, "the same cluster volume: nothing was copied"

    # Retype to a type of the first backend: the types differ only by backend, so the driver moves it.
    home_type = _name("home")
    cinder.cli("type-create", home_type)
    cinder.cli("type-key", home_type, "set", f"volume_backend_name={home.split('#')[1]}")
    cinder.cli("retype", "--migration-policy", "on-demand", volume_id, home_type)
    shown = migrated_to(home)
    assert shown["volume_type"] == home_type, shown
    reads_back()
    assert cluster.get_volume(cluster_name)["id"] == backend_id

    cinder.cli("delete", volume_id)
    cinder.wait_gone("volume", volume_id)


def _qemu_img(*args: str) -> str:
    result = subprocess.run(["qemu-img", *args], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_volume_from_a_glance_image_and_upload_to_image_through_qemu_img(cinder, cluster, workdir):
    """`cinder create --image-id` and `cinder upload-to-image` with a real glance-api: the driver copies
    with qemu-img's own iSCSI initiator through the gateway (no os-brick, no kernel initiator here)."""
    for backend in cinder.backends:
        cinder.wait_pool(backend)
    span = 40 << 20
    raw = workdir / "image.raw"
    with open(raw, "wb") as f:
        f.truncate(span)
        for offset in (0, 21 << 20, span - (1 << 20)):
            f.seek(offset)
            f.write(os.urandom(1 << 20))
    qcow2 = workdir / "image.qcow2"
    _qemu_img("convert", "-f", "raw", "-O", "qcow2", str(raw), str(qcow2))
    image_id = cinder.glance.create_image(_name("e2e-image"), "qcow2", qcow2)
    assert cinder.glance.wait_active(image_id)["disk_format"] == "qcow2"

    started = time.monotonic()
    volume_id = id_of(cinder.cli("create", "--image-id", image_id, "--name", _name("from-image"), "1").stdout)
    shown = cinder.wait_status("volume", volume_id, "available")
    print(f"volume from a {qcow2.stat().st_size >> 20} MiB qcow2 image: {time.monotonic() - started:.1f} s")
    assert shown["bootable"] == "true", shown
    assert cluster.list_exports(f"volume-{volume_id}") == [], "the image copy's export is removed"
    attachment, data = _attach(cinder, volume_id)
    assert iscsi.read(data, INITIATOR, span, workdir) == raw.read_bytes()
    _detach(cinder, attachment, volume_id)

    started = time.monotonic()
    out = cinder.cli("upload-to-image", "--disk-format", "qcow2", "--container-format", "bare", volume_id,
                     _name("uploaded")).stdout
    uploaded = properties(out)["image_id"]
    image = cinder.glance.wait_active(uploaded)
    cinder.wait_status("volume", volume_id, "available")
    print(f"upload of a 1 GiB volume as qcow2 ({image['size'] >> 20} MiB): {time.monotonic() - started:.1f} s")
    assert image["disk_format"] == "qcow2"
    assert cluster.list_exports(f"volume-{volume_id}") == []
    stored = workdir / "uploaded.qcow2"
    cinder.glance.download(uploaded, stored)
    assert json.loads(_qemu_img("info", "-f", "qcow2", "--output=json", str(stored)))["virtual-size"] == GiB
    back = workdir / "uploaded.raw"
    _qemu_img("convert", "-f", "qcow2", "-O", "raw", str(stored), str(back))
    with open(back, "rb") as f:
        assert f.read(span) == raw.read_bytes()
        assert f.read(8 << 20) == bytes(8 << 20)

    cinder.cli("delete", volume_id)
    cinder.wait_gone("volume", volume_id)
