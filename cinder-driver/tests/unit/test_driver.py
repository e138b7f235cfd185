"""FastBlockISCSIDriver on Cinder's own test base (cinder.tests.unit.test.TestCase: in-memory sqlite DB,
real volume types and QoS specs, Cinder's OVOs) against a namenode speaking the REST contract over a
real HTTP socket (tests/unit/fake_namenode.py)."""

import json
import socket
from unittest import mock

from cinder.common import constants
from cinder import context
from cinder import exception
from cinder.tests.unit import fake_constants as fake
from cinder.tests.unit import fake_snapshot
from cinder.tests.unit import fake_volume
from cinder.volume import configuration as conf
from cinder.volume import driver as cinder_driver
from cinder.volume import qos_specs
from cinder.volume import volume_types

from cinder_case import CinderTestCase
from fake_namenode import FakeNamenode
from fastblock_cinder import driver as fb_driver

GiB = 1 << 30
GROUP = "fastblock-unit"
INITIATOR = "iqn.1994-05.com.redhat:compute-1"
CONNECTOR = {"initiator": INITIATOR, "ip": "192.0.2.10", "host": "compute-1", "multipath": False}


class FastBlockDriverTestCase(CinderTestCase):
    def setUp(self):
        super().setUp()
        self.ctxt = context.get_admin_context()
        self.namenode = FakeNamenode().start()
        self.addCleanup(self.namenode.stop)
        self.configuration = conf.Configuration(cinder_driver.volume_opts + cinder_driver.iser_opts + fb_driver.fastblock_opts,
                                                config_group=GROUP)
        self.override_config("fastblock_namenode_urls", [self.namenode.url], group=GROUP)
        self.override_config("volume_backend_name", "fastblock", group=GROUP)
        self.driver = self._driver()

    def _driver(self):
        d = fb_driver.FastBlockISCSIDriver(configuration=self.configuration, host="devhost@fastblock")
        d.do_setup(self.ctxt)
        return d

    def _volume(self, **kw):
        kw.setdefault("size", 1)
        kw.setdefault("host", "devhost@fastblock#fastblock")
        return fake_volume.fake_volume_obj(self.ctxt, **kw)

    def _type(self, name, specs=None, consumer="back-end"):
        vtype = volume_types.create(self.ctxt, name, {"volume_backend_name": "fastblock"})
        if specs is not None:
            qos = qos_specs.create(self.ctxt, name + "-qos", dict(specs, consumer=consumer))
            qos_specs.associate_qos_with_type(self.ctxt, qos["id"], vtype["id"])
        return vtype

    def _bodies(self, method, path):
        return [json.loads(r["body"]) for r in self.namenode.requests if r["method"] == method and r["path"] == path]

    # --- interface and options ------------------------------------------------------------------

    def test_options_and_identity(self):
        names = {opt.name for opt in fb_driver.FastBlockISCSIDriver.get_driver_options()}
        for required in ("fastblock_namenode_urls", "fastblock_api_token", "fastblock_ssl_verify",
                         "fastblock_gateway_port", "fastblock_use_chap", "driver_ssl_cert_path"):
            self.assertIn(required, names)
        defaults = {opt.name: opt.default for opt in fb_driver.fastblock_opts}
        # `make up`'s cluster: namenode on 127.0.0.1:9333, gateway on 3260, CHAP on.
        self.assertEqual(["http://127.0.0.1:9333"], defaults["fastblock_namenode_urls"])
        self.assertEqual(3260, defaults["fastblock_gateway_port"])
        self.assertTrue(defaults["fastblock_use_chap"])
        self.assertTrue(defaults["fastblock_ssl_verify"])
        self.assertNotEqual("N/A", fb_driver.FastBlockISCSIDriver.VERSION)
        self.assertTrue(self.driver.SUPPORTED)

    def test_setup_error_names_the_unreachable_namenode(self):
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        self.addCleanup(holder.close)
        self.override_config("fastblock_namenode_urls", ["http://127.0.0.1:%d" % holder.getsockname()[1]], group=GROUP)
        d = self._driver()
        error = self.assertRaises(exception.VolumeDriverException, d.check_for_setup_error)
        self.assertIn("connection refused", str(error))
        self.driver.check_for_setup_error()  # the running one is fine

    def test_bad_url_is_a_configuration_error(self):
        self.override_config("fastblock_namenode_urls", ["ftp://x"], group=GROUP)
        self.assertRaises(exception.InvalidConfigurationValue, self._driver)

    # --- stats ----------------------------------------------------------------------------------

    def test_stats_report_the_cluster_capacity_and_capabilities(self):
        self.driver.create_volume(self._volume(id=fake.VOLUME_ID, size=3))
        stats = self.driver.get_volume_stats(refresh=True)
        for key in ("driver_version", "storage_protocol", "vendor_name", "volume_backend_name"):
            self.assertIn(key, stats)
        self.assertEqual(constants.ISCSI, stats["storage_protocol"])
        self.assertEqual("fastblock", stats["volume_backend_name"])
        self.assertFalse(stats["shared_targets"])
        pool = stats["pools"][0]
        # The fake cluster: 300 GiB raw, 100 GiB usable, ratio 4, nothing allocated, 3 GiB provisioned.
        self.assertEqual(100.0, pool["total_capacity_gb"])
        self.assertEqual(100.0, pool["free_capacity_gb"])
        self.assertEqual(3.0, pool["provisioned_capacity_gb"])
        self.assertEqual(4.0, pool["max_over_subscription_ratio"])
        self.assertEqual(1, pool["total_volumes"])
        self.assertEqual("up", pool["backend_state"])
        for flag in ("thin_provisioning_support", "QoS_support", "online_extend_support"):
            self.assertTrue(pool[flag], flag)
        self.assertFalse(pool["thick_provisioning_support"])
        self.assertFalse(pool["multiattach"])

    def test_stats_never_raise_when_the_cluster_is_unreachable(self):
        self.namenode.stop()
        stats = self.driver.get_volume_stats(refresh=True)
        self.assertEqual("down", stats["pools"][0]["backend_state"])
        self.assertEqual(0, stats["pools"][0]["free_capacity_gb"])

    # --- volumes --------------------------------------------------------------------------------

    def test_create_sends_name_size_client_id_and_tenant_and_is_retryable(self):
        volume = self._volume(id=fake.VOLUME_ID, size=2, project_id=fake.PROJECT_ID)
        self.assertIsNone(self.driver.create_volume(volume))
        self.driver.create_volume(volume)  # a retry after a lost answer returns the same volume
        created = self.namenode.volumes[volume.name]
        self.assertEqual(2 * GiB, created["size"])
        self.assertEqual(fake.VOLUME_ID, created["clientId"])
        self.assertEqual(fake.PROJECT_ID, created["tenant"])
        self.assertEqual(1, len(self.namenode.volumes))

    def test_create_with_backend_qos_and_per_gb_forms(self):
        vtype = self._type("gold", {"total_iops_sec": "500", "read_bytes_sec_per_gb": "1048576",
                                    "read_bytes_sec_max": "5242880"})
        volume = self._volume(size=3, volume_type_id=vtype["id"])
        self.driver.create_volume(volume)
        qos = self.namenode.volumes[volume.name]["qos"]
        self.assertEqual(500, qos["totalIopsSec"])
        self.assertEqual(3 * 1048576, qos["readBytesSec"])

    def test_front_end_qos_is_left_to_nova(self):
        vtype = self._type("fe", {"total_iops_sec": "500"}, consumer="front-end")
        volume = self._volume(volume_type_id=vtype["id"])
        self.driver.create_volume(volume)
        self.assertEqual(0, self.namenode.volumes[volume.name]["qos"]["totalIopsSec"])

    def test_qos_the_cluster_cannot_enforce_is_invalid_qos_specs(self):
        vtype = self._type("bad", {"maxIOPS": "500"})
        error = self.assertRaises(exception.InvalidQoSSpecs, self.driver.create_volume,
                                  self._volume(volume_type_id=vtype["id"]))
        self.assertIn("maxIOPS", str(error))
        self.assertEqual({}, self.namenode.volumes)

    def test_create_refused_by_the_cluster_is_a_backend_error_with_its_message(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        other = self._volume(id=fake.VOLUME2_ID, _name_id=fake.VOLUME_ID)  # same name, another id
        error = self.assertRaises(exception.VolumeBackendAPIException, self.driver.create_volume, other)
        self.assertIn("VOLUME_EXISTS", str(error))

    def test_delete_missing_volume_succeeds(self):
        self.driver.delete_volume(self._volume())

    def test_delete_with_snapshots_is_volume_is_busy_naming_them(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        snap = fake_snapshot.fake_snapshot_obj(self.ctxt, volume=volume)
        self.driver.create_snapshot(snap)
        error = self.assertRaises(exception.VolumeIsBusy, self.driver.delete_volume, volume)
        self.assertIn(snap.name, str(error))
        self.assertIn(volume.name, self.namenode.volumes)

    def test_extend_and_per_gb_qos_follow_the_new_size(self):
        vtype = self._type("pergb", {"total_iops_sec_per_gb": "100"})
        volume = self._volume(size=1, volume_type_id=vtype["id"])
        self.driver.create_volume(volume)
        self.driver.extend_volume(volume, 4)
        self.assertEqual(4 * GiB, self.namenode.volumes[volume.name]["size"])
        self.assertEqual(400, self.namenode.volumes[volume.name]["qos"]["totalIopsSec"])
        error = self.assertRaises(exception.ExtendVolumeError, self.driver.extend_volume, volume, 2)
        self.assertIn("INVALID_SIZE", str(error))

    def test_clone_and_volume_from_snapshot_honour_a_larger_size(self):
        source = self._volume(size=1)
        self.driver.create_volume(source)
        clone = self._volume(id=fake.VOLUME2_ID, size=3)
        self.driver.create_cloned_volume(clone, source)
        self.assertEqual(3 * GiB, self.namenode.volumes[clone.name]["size"])
        self.assertEqual({"volume": source.name, "snapshot": None}, self.namenode.volumes[clone.name]["source"])

        snap = fake_snapshot.fake_snapshot_obj(self.ctxt, volume=source, volume_size=1)
        self.driver.create_snapshot(snap)
        from_snap = self._volume(id=fake.VOLUME3_ID, size=2)
        self.driver.create_volume_from_snapshot(from_snap, snap)
        self.assertEqual(2 * GiB, self.namenode.volumes[from_snap.name]["size"])
        self.assertEqual({"volume": source.name, "snapshot": snap.name}, self.namenode.volumes[from_snap.name]["source"])

        missing = fake_snapshot.fake_snapshot_obj(self.ctxt, id=fake.SNAPSHOT2_ID, volume=source)
        error = self.assertRaises(exception.VolumeBackendAPIException, self.driver.create_volume_from_snapshot,
                                  self._volume(id=fake.VOLUME4_ID), missing)
        self.assertIn("SOURCE_NOT_FOUND", str(error))

    # --- snapshots and revert -------------------------------------------------------------------

    def test_snapshot_create_is_retryable_and_delete_of_missing_succeeds(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        snap = fake_snapshot.fake_snapshot_obj(self.ctxt, volume=volume)
        self.driver.create_snapshot(snap)
        self.driver.create_snapshot(snap)  # answer lost, manager retried: same snapshot, no error
        self.assertEqual([snap.name], [s["name"] for s in self.namenode.snapshots[volume.name]])
        self.assertEqual(snap.id, self.namenode.snapshots[volume.name][0]["id"])
        self.driver.delete_snapshot(snap)
        self.driver.delete_snapshot(snap)
        self.assertEqual([], self.namenode.snapshots[volume.name])

    def test_revert_keeps_the_current_size_and_no_temp_snapshot_is_taken(self):
        self.assertFalse(self.driver.snapshot_revert_use_temp_snapshot())
        volume = self._volume(size=1)
        self.driver.create_volume(volume)
        snap = fake_snapshot.fake_snapshot_obj(self.ctxt, volume=volume)
        self.driver.create_snapshot(snap)
        self.driver.extend_volume(volume, 2)
        volume.size = 2
        self.driver.revert_to_snapshot(self.ctxt, volume, snap)
        self.assertEqual(2 * GiB, self.namenode.volumes[volume.name]["size"])
        self.assertEqual(1, len(self._bodies("POST", "/v1/volumes/%s/revert" % volume.name)))

        newer = fake_snapshot.fake_snapshot_obj(self.ctxt, id=fake.SNAPSHOT2_ID, volume=volume)
        self.driver.create_snapshot(newer)
        error = self.assertRaises(exception.VolumeBackendAPIException, self.driver.revert_to_snapshot,
                                  self.ctxt, volume, snap)
        self.assertIn("NOT_LATEST_SNAPSHOT", str(error))

    # --- attach / detach ------------------------------------------------------------------------

    def test_initialize_connection_answers_the_local_gateway_unique_iqn_and_chap(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        info = self.driver.initialize_connection(volume, CONNECTOR)
        self.assertEqual("iscsi", info["driver_volume_type"])
        data = info["data"]
        self.assertEqual("192.0.2.10:3260", data["target_portal"])
        self.assertEqual("iqn.2026-11.io.fastblock:" + volume.name, data["target_iqn"])
        self.assertEqual(0, data["target_lun"])
        self.assertEqual([data["target_portal"]], data["target_portals"])
        self.assertEqual("CHAP", data["auth_method"])
        self.assertTrue(data["auth_username"] and len(data["auth_password"]) >= 12)
        self.assertTrue(data["discard"])
        self.assertFalse(data["target_discovered"])
        # A failed attach retried: the same export and the same credentials, no error.
        again = self.driver.initialize_connection(volume, CONNECTOR)
        self.assertEqual(info, again)
        self.assertEqual([INITIATOR], list(self.namenode.exports[volume.name]))
        export = self._bodies("POST", "/v1/volumes/%s/exports" % volume.name)[0]
        self.assertEqual({"initiator": INITIATOR, "chap": "generate", "host": "compute-1"}, export)

    def test_gateway_port_ipv6_and_no_chap(self):
        self.override_config("fastblock_gateway_port", 3270, group=GROUP)
        self.override_config("fastblock_use_chap", False, group=GROUP)
        volume = self._volume()
        self.driver.create_volume(volume)
        data = self.driver.initialize_connection(volume, dict(CONNECTOR, ip="fd00::2"))["data"]
        self.assertEqual("[fd00::2]:3270", data["target_portal"])
        self.assertNotIn("auth_method", data)
        self.assertIsNone(self.namenode.exports[volume.name][INITIATOR]["chap"])

    def test_connector_without_initiator_is_refused_precisely(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        error = self.assertRaises(exception.InvalidConnectorException, self.driver.initialize_connection,
                                  volume, {"ip": "192.0.2.10", "host": "compute-1"})
        self.assertIn("initiator", str(error))
        error = self.assertRaises(exception.InvalidConnectorException, self.driver.initialize_connection,
                                  volume, dict(CONNECTOR, initiator="not-an-iqn"))
        self.assertIn("not-an-iqn", str(error))

    def test_terminate_removes_that_initiator_and_none_removes_everything(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        other = dict(CONNECTOR, initiator="iqn.1994-05.com.redhat:compute-2", ip="192.0.2.11")
        self.driver.initialize_connection(volume, CONNECTOR)
        self.driver.initialize_connection(volume, other)
        self.assertFalse(self.driver.terminate_connection(volume, CONNECTOR))
        self.assertEqual([other["initiator"]], list(self.namenode.exports[volume.name]))
        self.driver.terminate_connection(volume, CONNECTOR)  # already gone: fine
        self.driver.initialize_connection(volume, CONNECTOR)
        self.driver.terminate_connection(volume, None, force=True)
        self.assertEqual({}, self.namenode.exports[volume.name])
        self.driver.terminate_connection(self._volume(id=fake.VOLUME2_ID), None)  # missing volume: fine

    def test_ensure_export_survives_a_restart_and_exports_stay(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        first = self.driver.initialize_connection(volume, CONNECTOR)
        restarted = self._driver()
        self.assertIsNone(restarted.ensure_export(self.ctxt, volume))
        self.assertEqual(first, restarted.initialize_connection(volume, CONNECTOR))

    # --- retype and manage ----------------------------------------------------------------------

    def test_retype_changes_qos_in_place(self):
        silver = self._type("silver", {"total_iops_sec": "100"})
        gold = self._type("gold2", {"total_iops_sec": "500"})
        volume = self._volume(volume_type_id=silver["id"])
        self.driver.create_volume(volume)
        host = {"host": "devhost@fastblock#fastblock", "capabilities": {}}
        self.assertEqual((True, None), self.driver.retype(self.ctxt, volume, gold, {}, host))
        self.assertEqual(500, self.namenode.volumes[volume.name]["qos"]["totalIopsSec"])
        plain = self._type("plain")
        self.driver.retype(self.ctxt, volume, plain, {}, host)
        self.assertEqual(0, self.namenode.volumes[volume.name]["qos"]["totalIopsSec"])
        elsewhere = {"host": "otherhost@lvm#lvm", "capabilities": {}}
        self.assertEqual((False, None), self.driver.retype(self.ctxt, volume, gold, {}, elsewhere))

    def test_manage_renames_rounds_up_and_applies_qos_and_unmanage_keeps_it(self):
        self.driver._api.create_volume("legacy-1", 1536 << 20)
        vtype = self._type("managed", {"write_iops_sec": "77"})
        volume = self._volume(volume_type_id=vtype["id"])
        ref = {"source-name": "legacy-1"}
        self.assertEqual(2, self.driver.manage_existing_get_size(volume, ref))
        self.driver.manage_existing(volume, ref)
        self.assertNotIn("legacy-1", self.namenode.volumes)
        managed = self.namenode.volumes[volume.name]
        self.assertEqual(2 * GiB, managed["size"])
        self.assertEqual(77, managed["qos"]["writeIopsSec"])
        self.driver.unmanage(volume)
        self.assertIn(volume.name, self.namenode.volumes)

        for bad in ({"source-name": "nope"}, {}):
            self.assertRaises(exception.ManageExistingInvalidReference, self.driver.manage_existing_get_size,
                              volume, bad)

    def test_manage_of_an_attached_volume_is_an_invalid_reference(self):
        self.driver._api.create_volume("busy-1", GiB)
        self.namenode.leased["busy-1"] = "gw-1"
        error = self.assertRaises(exception.ManageExistingInvalidReference, self.driver.manage_existing,
                                  self._volume(), {"source-name": "busy-1"})
        self.assertIn("gw-1", str(error))

    def test_manageable_volumes_and_snapshots_list_what_cinder_does_not_have(self):
        mine = self._volume()
        self.driver.create_volume(mine)
        self.driver._api.create_volume("stray", GiB)
        self.driver._api.create_snapshot("stray", "s1")
        listed = self.driver.get_manageable_volumes([mine], None, 100, 0, ["size"], ["asc"])
        by_name = {e["reference"]["source-name"]: e for e in listed}
        self.assertTrue(by_name["stray"]["safe_to_manage"])
        self.assertFalse(by_name[mine.name]["safe_to_manage"])
        self.assertEqual(mine.id, by_name[mine.name]["cinder_id"])
        snaps = self.driver.get_manageable_snapshots([], None, 100, 0, ["size"], ["asc"])
        self.assertEqual([({"source-name": "s1"}, {"source-name": "stray"})],
                         [(s["reference"], s["source_reference"]) for s in snaps])

    def test_manage_snapshot_remembers_the_cluster_name(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        self.driver._api.create_snapshot(volume.name, "nightly")
        snap = fake_snapshot.fake_snapshot_obj(self.ctxt, volume=volume)
        self.assertEqual(1, self.driver.manage_existing_snapshot_get_size(snap, {"source-name": "nightly"}))
        update = self.driver.manage_existing_snapshot(snap, {"source-name": "nightly"})
        self.assertEqual({"provider_id": "nightly"}, update)
        snap.provider_id = "nightly"
        clone = self._volume(id=fake.VOLUME2_ID)
        self.driver.create_volume_from_snapshot(clone, snap)
        self.assertEqual("nightly", self.namenode.volumes[clone.name]["source"]["snapshot"])
        self.driver.unmanage_snapshot(snap)
        self.driver.delete_snapshot(snap)
        self.assertEqual([], self.namenode.snapshots[volume.name])
        self.assertRaises(exception.ManageExistingInvalidReference, self.driver.manage_existing_snapshot,
                          snap, {"source-name": "nope"})

    def test_unreachable_cluster_is_a_backend_error(self):
        volume = self._volume()
        self.namenode.stop()
        for call in (lambda: self.driver.create_volume(volume), lambda: self.driver.delete_volume(volume),
                     lambda: self.driver.initialize_connection(volume, CONNECTOR)):
            error = self.assertRaises(exception.VolumeBackendAPIException, call)
            self.assertIn("cannot reach the fastblock namenode", str(error))

    def test_multiattach_on_one_host_keeps_the_export(self):
        volume = self._volume()
        self.driver.create_volume(volume)
        self.driver.initialize_connection(volume, CONNECTOR)
        attachments = [mock.Mock(attach_status="attached", connector=dict(CONNECTOR)) for _ in range(2)]
        shared = self._volume(volume_attachment=[])
        with mock.patch.object(type(shared), "volume_attachment", attachments, create=True):
            self.assertTrue(self.driver.terminate_connection(shared, CONNECTOR))
        self.assertEqual([INITIATOR], list(self.namenode.exports[volume.name]))
