"""FastBlockISCSIDriver against a real local cluster (namenode, 3 storage servers, iSCSI gateway):
Cinder's objects and DB from its test base, the cluster's real REST API, and the volume reached with
the returned connection_info through libiscsi and qemu-img, as os-brick would."""

import os
import uuid

import pytest

from cinder import exception
from cinder.tests.unit import fake_snapshot
from cinder.tests.unit import fake_volume
from cinder.volume import qos_specs
from cinder.volume import volume_types

import initiator as iscsi
from cluster_case import ClusterDriverCase
from fastblock_cinder import driver as fb_driver
from fastblock_cinder.client import FastblockClient, FastblockError

pytestmark = pytest.mark.functional

GiB = 1 << 30
INITIATOR = "iqn.2026-11.org.example:functional-host"


@pytest.mark.usefixtures("cluster")
class DriverOnClusterTest(ClusterDriverCase):
    def setUp(self):
        super().setUp()
        self.driver = fb_driver.FastBlockISCSIDriver(configuration=self.configuration, host="devhost@fastblock")
        self.driver.do_setup(self.ctxt)
        self.driver.check_for_setup_error()
        self.client = FastblockClient(self.namenode_url)
        self.connector = {"initiator": INITIATOR, "ip": "127.0.0.1", "host": "functional-host"}

    def _volume(self, size=1, **kw):
        volume = fake_volume.fake_volume_obj(self.ctxt, id=str(uuid.uuid4()), size=size,
                                             host="devhost@fastblock#fastblock", **kw)
        self.addCleanup(self._delete_quietly, volume)
        return volume

    def _delete_quietly(self, volume):
        try:
            for snap in self.client.list_snapshots(volume.name):
                self.client.delete_snapshot(volume.name, snap["name"])
        except FastblockError:
            pass
        self.driver.delete_volume(volume)

    def _type_with_qos(self, specs):
        name = "t-" + uuid.uuid4().hex[:8]
        vtype = volume_types.create(self.ctxt, name, {"volume_backend_name": "fastblock"})
        qos = qos_specs.create(self.ctxt, name + "-qos", dict(specs, consumer="back-end"))
        qos_specs.associate_qos_with_type(self.ctxt, qos["id"], vtype["id"])
        return vtype

    def test_attach_with_chap_then_write_read_retry_and_detach(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        info = self.driver.initialize_connection(volume, self.connector)
        data = info["data"]
        self.assertEqual("127.0.0.1:%d" % self.iscsi_port, data["target_portal"])
        self.assertEqual("CHAP", data["auth_method"])

        listed = iscsi.discover(data, INITIATOR)
        self.assertEqual(0, listed.returncode, listed.stdout + listed.stderr)
        self.assertIn(data["target_iqn"], listed.stdout)
        refused = iscsi.inquiry(data, INITIATOR, with_chap=False)
        self.assertNotEqual(0, refused.returncode, "login without the CHAP secret must fail")
        self.assertEqual(GiB, iscsi.capacity_bytes(data, INITIATOR))

        payload = os.urandom(4 << 20)
        iscsi.write(data, INITIATOR, payload, self.workdir)
        self.assertEqual(payload, iscsi.read(data, INITIATOR, len(payload), self.workdir))

        # A failed attach retried by Nova: same target, same credentials, and they still work.
        self.assertEqual(info, self.driver.initialize_connection(volume, self.connector))
        self.assertEqual(payload, iscsi.read(data, INITIATOR, len(payload), self.workdir))

        self.assertFalse(self.driver.terminate_connection(volume, self.connector))
        self.assertEqual([], self.client.list_exports(volume.name))
        gone = iscsi.inquiry(data, INITIATOR)
        self.assertNotEqual(0, gone.returncode, "after detach the initiator may not log in any more")

        # Force detach (connector None) removes every initiator's export.
        self.driver.initialize_connection(volume, self.connector)
        self.driver.initialize_connection(volume, dict(self.connector, initiator=INITIATOR + "-2"))
        self.driver.terminate_connection(volume, None, force=True)
        self.assertEqual([], self.client.list_exports(volume.name))

        self.driver.delete_volume(volume)
        self.driver.delete_volume(volume)  # missing: fine
        self.assertRaises(FastblockError, self.client.get_volume, volume.name)

    def test_stats_are_the_clusters_capacity(self):
        stats = self.driver.get_volume_stats(refresh=True)
        capacity = self.client.status()["capacity"]
        pool = stats["pools"][0]
        self.assertEqual("up", pool["backend_state"])
        self.assertGreater(pool["total_capacity_gb"], 0)
        self.assertEqual(round(capacity["usable"] / GiB, 2), pool["total_capacity_gb"])
        self.assertEqual(round(capacity["provisioned"] / GiB, 2), pool["provisioned_capacity_gb"])

    def test_create_with_qos_retype_and_manage_on_the_real_namenode(self):
        gold = self._type_with_qos({"total_iops_sec": "500"})
        per_gb = self._type_with_qos({"write_bytes_sec_per_gb": "1048576"})
        volume = self._volume(size=2, volume_type_id=gold["id"])
        self.driver.create_volume(volume)
        self.assertEqual(500, self.client.get_volume(volume.name)["qos"]["totalIopsSec"])
        host = {"host": "devhost@fastblock#fastblock", "capabilities": {}}
        self.assertEqual((True, None), self.driver.retype(self.ctxt, volume, per_gb, {}, host))
        qos = self.client.get_volume(volume.name)["qos"]
        self.assertEqual((0, 2 * 1048576), (qos["totalIopsSec"], qos["writeBytesSec"]))

        legacy = "legacy-" + uuid.uuid4().hex[:8]
        self.client.create_volume(legacy, 2 * GiB)
        managed = self._volume(volume_type_id=gold["id"])
        ref = {"source-name": legacy}
        self.assertEqual(2, self.driver.manage_existing_get_size(managed, ref))
        self.driver.manage_existing(managed, ref)
        self.assertRaises(FastblockError, self.client.get_volume, legacy)
        now = self.client.get_volume(managed.name)
        self.assertEqual((2 * GiB, 500), (now["size"], now["qos"]["totalIopsSec"]))
        self.driver.unmanage(managed)
        self.assertEqual(now["id"], self.client.get_volume(managed.name)["id"])
        self.assertRaises(exception.ManageExistingInvalidReference, self.driver.manage_existing,
                          self._volume(), {"source-name": legacy})

    def test_snapshot_clone_extend_and_revert(self):
        source = self._volume()
        self.driver.create_volume(source)
        data = self.driver.initialize_connection(source, self.connector)["data"]
        first = os.urandom(1 << 20)
        iscsi.write(data, INITIATOR, first, self.workdir)
        self.driver.terminate_connection(source, self.connector)

        snap = fake_snapshot.fake_snapshot_obj(self.ctxt, id=str(uuid.uuid4()), volume=source, volume_size=1)
        self.driver.create_snapshot(snap)
        self.driver.create_snapshot(snap)  # a retry: the same snapshot
        self.assertEqual([snap.name], [s["name"] for s in self.client.list_snapshots(source.name)])

        data = self.driver.initialize_connection(source, self.connector)["data"]
        second = os.urandom(1 << 20)
        iscsi.write(data, INITIATOR, second, self.workdir)  # goes to the new top layer
        self.driver.terminate_connection(source, self.connector)

        from_snap = self._volume(size=2)
        self.driver.create_volume_from_snapshot(from_snap, snap)
        self.assertEqual(2 * GiB, self.client.get_volume(from_snap.name)["size"])
        self.assertEqual({"volume": source.name, "snapshot": snap.name},
                         self.client.get_volume(from_snap.name)["source"])
        copy = self._volume(size=1)
        self.driver.create_cloned_volume(copy, source)
        self.assertEqual(source.name, self.client.get_volume(copy.name)["source"]["volume"])

        self.driver.extend_volume(source, 2)
        self.assertEqual(2 * GiB, self.client.get_volume(source.name)["size"])
        source.size = 2
        self.driver.revert_to_snapshot(self.ctxt, source, snap)
        self.assertEqual(2 * GiB, self.client.get_volume(source.name)["size"], "revert keeps the current size")

        self.assertRaises(exception.VolumeIsBusy, self.driver.delete_volume, source)
        self.assertEqual(source.name, self.client.get_volume(source.name)["name"])

        for volume, expected in ((from_snap, first), (copy, second), (source, first)):
            connection = self.driver.initialize_connection(volume, self.connector)["data"]
            self.assertEqual(expected, iscsi.read(connection, INITIATOR, len(expected), self.workdir), volume.name)
            self.driver.terminate_connection(volume, self.connector)
        self.driver.delete_snapshot(snap)
        self.driver.delete_snapshot(snap)
        self.assertEqual([], self.client.list_snapshots(source.name))
