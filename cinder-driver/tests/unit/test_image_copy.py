"""Image copies and migration of FastBlockISCSIDriver on Cinder's test base: qemu-img's command lines,
the CHAP secret kept off them, and real qemu-img runs that fail (a gateway that refuses, one that
never answers, no qemu-img at all) turned into Cinder's exceptions with the tool's message, with the
copy's export removed every time. The namenode is tests/unit/fake_namenode.py over a real socket."""

import json
import os
import socket
import stat
import subprocess
import threading
import uuid
from unittest import mock

import fixtures

from cinder import context
from cinder import exception
from cinder.tests.unit import utils as test_utils
from cinder.tests.unit.image import fake as fake_image
from cinder.volume import configuration as conf
from cinder.volume import driver as cinder_driver
from cinder.volume import volume_types

from cinder_case import CinderTestCase
from fake_namenode import FakeNamenode
from fastblock_cinder import driver as fb_driver
from fastblock_cinder import image_transfer
from fastblock_cinder import qemu_iscsi

GROUP = "fastblock-image-unit"
MiB = 1 << 20
CHAP_LUN = qemu_iscsi.IscsiLun(portal="192.0.2.7:3260", iqn="iqn.2026-11.io.fastblock:volume-1", lun=0,
                               initiator="iqn.2026-11.io.fastblock:cinder-volume.h", user="fb-volume-1",
                               secret="Sup3rSecretValue")


class CommandLineTest(CinderTestCase):
    def test_write_reads_the_declared_format_and_names_the_secret_only_by_id(self):
        command = qemu_iscsi.write_command("/tmp/img", "qcow2", CHAP_LUN, "/run/s/secret")
        self.assertEqual(["qemu-img", "convert", "-n", "-f", "qcow2", "-S", "4k", "--object",
                          "secret,id=fastblock-chap,file=/run/s/secret,format=raw", "--target-image-opts",
                          "/tmp/img",
                          "driver=iscsi,transport=tcp,portal=192.0.2.7:3260,target=iqn.2026-11.io.fastblock:"
                          "volume-1,lun=0,initiator-name=iqn.2026-11.io.fastblock:cinder-volume.h,"
                          "user=fb-volume-1,password-secret=fastblock-chap"], command)
        self.assertNotIn("Sup3rSecretValue", " ".join(command))

    def test_disable_sparse_writes_every_block(self):
        command = qemu_iscsi.write_command("/tmp/img", "raw", CHAP_LUN, "/s", sparse=False)
        self.assertEqual(["-S", "0"], command[command.index("-S"):command.index("-S") + 2])

    def test_read_converts_the_lun_as_raw_into_the_image_format(self):
        command = qemu_iscsi.read_command(CHAP_LUN, "/tmp/out", "qcow2", "/s", compress=True)
        self.assertEqual("--image-opts", command[4])
        self.assertTrue(command[5].startswith("driver=iscsi,"))
        self.assertEqual(["-O", "qcow2", "-c", "/tmp/out"], command[6:])
        self.assertNotIn("Sup3rSecretValue", " ".join(command))

    def test_without_chap_no_secret_and_commas_are_escaped(self):
        lun = qemu_iscsi.IscsiLun(portal="[2001:db8::1]:3260", iqn="iqn.x:a,b", lun=3, initiator="iqn.y:c")
        command = qemu_iscsi.write_command("/tmp/img", "raw", lun, None)
        self.assertNotIn("--object", command)
        self.assertEqual("driver=iscsi,transport=tcp,portal=[2001:db8::1]:3260,target=iqn.x:a,,b,lun=3,"
                         "initiator-name=iqn.y:c", command[-1])
        self.assertRaises(ValueError, qemu_iscsi.image_opts, CHAP_LUN, None)

    def test_the_secret_file_is_private_and_removed_after(self):
        with qemu_iscsi._secret_file(CHAP_LUN) as path:
            self.assertEqual("Sup3rSecretValue", open(path).read())
            self.assertEqual(0o600, stat.S_IMODE(os.stat(path).st_mode))
            self.assertEqual(0o700, stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode))
        self.assertFalse(os.path.exists(path))
        self.assertFalse(os.path.exists(os.path.dirname(path)))


class InspectTest(CinderTestCase):
    """The checks a downloaded image passes before it reaches a volume, on real files made by qemu-img."""

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def _img(self, name, *create):
        path = os.path.join(self.dir, name)
        subprocess.run(["qemu-img", "create", "-q", *create[:-1], path, create[-1]], check=True, timeout=60)
        return path

    def test_a_good_image_gives_its_virtual_size(self):
        self.assertEqual(64 * MiB, image_transfer.inspect(self._img("a.qcow2", "-f", "qcow2", "64M"), "qcow2",
                                                          "i").virtual_size)
        self.assertEqual(8 * MiB, image_transfer.inspect(self._img("a.raw", "-f", "raw", "8M"), "raw",
                                                         "i").virtual_size)

    def test_unsafe_or_mislabelled_images_are_refused(self):
        base = self._img("base.qcow2", "-f", "qcow2", "64M")
        cases = [
            (base, "raw", "declared raw but its data is qcow2"),
            (self._img("backed.qcow2", "-f", "qcow2", "-b", base, "-F", "qcow2", "64M"), "qcow2", "safety check"),
            (self._img("datafile.qcow2", "-f", "qcow2", "-o", "data_file=" + os.path.join(self.dir, "d.raw"),
                       "64M"), "qcow2", "safety check"),
            (self._img("a.vmdk", "-f", "vmdk", "64M"), "qcow2", "declared qcow2 but its data is vmdk"),
        ]
        for path, declared, message in cases:
            error = self.assertRaises(exception.ImageUnacceptable, image_transfer.inspect, path, declared, "img-1")
            self.assertIn(message, str(error))


class _SilentTarget:
    """Accepts iSCSI connections and never answers: a gateway that hangs."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.port = self.server.getsockname()[1]
        self.held = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self):
        self.server.close()
        for conn in self.held:
            conn.close()


class _DriverOnFakeNamenode(CinderTestCase):
    def setUp(self):
        super().setUp()
        self.ctxt = context.get_admin_context()
        self.namenode = FakeNamenode().start()
        self.addCleanup(self.namenode.stop)
        self.configuration = conf.Configuration(cinder_driver.volume_opts + fb_driver.fastblock_opts,
                                                config_group=GROUP)
        self.override_config("fastblock_namenode_urls", [self.namenode.url], group=GROUP)
        self.override_config("volume_backend_name", "fastblock", group=GROUP)
        self.override_config("my_ip", "127.0.0.1")
        self.workdir = self.useFixture(fixtures.TempDir()).path
        self.override_config("image_conversion_dir", self.workdir)
        # A port that is bound but never listens: connections to it are refused.
        self.refusing = socket.socket()
        self.refusing.bind(("127.0.0.1", 0))
        self.addCleanup(self.refusing.close)
        self.override_config("fastblock_gateway_port", self.refusing.getsockname()[1], group=GROUP)
        self.images = fake_image._FakeImageService()
        self.images.temp_images = None  # as Glance's service starts (the fake's is a MagicMock)

    def _driver(self):
        driver = fb_driver.FastBlockISCSIDriver(configuration=self.configuration, host="cv-1@fastblock")
        driver.do_setup(self.ctxt)
        return driver

    def _volume(self, driver):
        vtype = volume_types.create(self.ctxt, "t-" + uuid.uuid4().hex[:8], {"volume_backend_name": "fastblock"})
        volume = test_utils.create_volume(self.ctxt, size=1, host="cv-1@fastblock#fastblock",
                                          volume_type_id=vtype["id"])
        driver.create_volume(volume)
        return volume

    def _raw_image(self, size=4 * MiB):
        path = os.path.join(self.workdir, "src.raw")
        with open(path, "wb") as f:
            f.write(os.urandom(size))
        with open(path, "rb") as data:
            return self.images.create(self.ctxt, {"disk_format": "raw", "container_format": "bare"}, data)["id"]

    def _export_calls(self, volume):
        prefix = "/v1/volumes/%s/exports" % volume.name
        return [(r["method"], r["path"][len(prefix):]) for r in self.namenode.requests
                if r["path"].startswith(prefix)]



class ImageCopyDriverTest(_DriverOnFakeNamenode):
    def test_the_copy_initiator_is_derived_from_the_host_or_configured(self):
        self.assertEqual("iqn.2026-11.io.fastblock:cinder-volume.cv-1-fastblock", self._driver()._copy_initiator())
        self.override_config("fastblock_image_copy_initiator", "iqn.2026-11.org.example:cv", group=GROUP)
        self.assertEqual("iqn.2026-11.org.example:cv", self._driver()._copy_initiator())

    def test_overlapping_copies_of_a_volume_share_the_export_until_the_last_ends(self):
        driver = self._driver()
        volume = self._volume(driver)
        with driver._host_lun(volume) as first:
            with driver._host_lun(volume) as second:
                self.assertEqual((first.user, first.secret), (second.user, second.secret))
            self.assertEqual([first.initiator], list(self.namenode.exports[volume.name]),
                             "the first copy still needs it")
        self.assertEqual({}, self.namenode.exports[volume.name])
        self.assertEqual({}, driver._copies)

    def test_a_refused_connection_is_image_copy_failure_with_qemu_imgs_message_and_the_export_goes(self):
        driver = self._driver()
        volume = self._volume(driver)
        error = self.assertRaises(exception.ImageCopyFailure, driver.copy_image_to_volume, self.ctxt, volume,
                                  self.images, self._raw_image())
        self.assertIn("qemu-img exited with 1", str(error))
        self.assertIn("iSCSI: Failed to connect to LUN", str(error))
        self.assertNotIn("Abcdefgh23456789", str(error), "the CHAP secret stays out of messages")
        initiator = "/iqn.2026-11.io.fastblock%3Acinder-volume.cv-1-fastblock"
        self.assertEqual([("POST", ""), ("DELETE", initiator)], self._export_calls(volume))
        self.assertEqual({}, self.namenode.exports.get(volume.name, {}))
        post = [r for r in self.namenode.requests if r["method"] == "POST" and r["path"].endswith("/exports")][0]
        self.assertEqual("generate", json.loads(post["body"])["chap"])

        meta = self.images.create(self.ctxt, {"disk_format": "qcow2", "container_format": "bare"})
        error = self.assertRaises(exception.ImageCopyFailure, driver.copy_volume_to_image, self.ctxt, volume,
                                  self.images, meta)
        self.assertIn("iSCSI: Failed to connect to LUN", str(error))
        self.assertEqual({}, self.namenode.exports.get(volume.name, {}))
        self.assertEqual([], [f for f in os.listdir(self.workdir) if f.startswith("fastblock_")],
                         "temporary files are removed")

    def test_a_gateway_that_never_answers_is_stopped_after_the_time_limit(self):
        silent = _SilentTarget()
        self.addCleanup(silent.close)
        self.override_config("fastblock_gateway_port", silent.port, group=GROUP)
        self.override_config("fastblock_image_copy_timeout", 3, group=GROUP)
        driver = self._driver()
        volume = self._volume(driver)
        error = self.assertRaises(exception.ImageCopyFailure, driver.copy_image_to_volume, self.ctxt, volume,
                                  self.images, self._raw_image())
        self.assertIn("did not finish within 3 s", str(error))
        self.assertEqual({}, self.namenode.exports.get(volume.name, {}))

    def test_no_qemu_img_is_a_precise_failure(self):
        driver = self._driver()
        volume = self._volume(driver)
        image_id = self._raw_image()
        # Found by the image check (run by path), missing for the copy itself.
        real = subprocess.run

        def without_qemu_img(command, *args, **kwargs):
            if command and command[0] == "qemu-img" and command[1] == "convert":
                command = ["/nonexistent/qemu-img"] + list(command[1:])
            return real(command, *args, **kwargs)

        with mock.patch.object(qemu_iscsi.subprocess, "run", side_effect=without_qemu_img):
            error = self.assertRaises(exception.ImageCopyFailure, driver.copy_image_to_volume, self.ctxt, volume,
                                      self.images, image_id)
        self.assertIn("qemu-img is not installed", str(error))
        self.assertEqual({}, self.namenode.exports.get(volume.name, {}))

    def test_compressed_containers_and_unknown_formats_are_refused_before_any_export(self):
        driver = self._driver()
        volume = self._volume(driver)
        for meta, message in (({"disk_format": "raw", "container_format": "compressed"}, "os-brick"),
                              ({"disk_format": "ploop", "container_format": "bare"}, "disk_format ploop")):
            image_id = self.images.create(self.ctxt, dict(meta))["id"]
            error = self.assertRaises(exception.ImageUnacceptable, driver.copy_image_to_volume, self.ctxt, volume,
                                      self.images, image_id)
            self.assertIn(message, str(error))
            error = self.assertRaises(exception.ImageUnacceptable, driver.copy_volume_to_image, self.ctxt, volume,
                                      self.images, self.images.show(self.ctxt, image_id))
            self.assertIn(message, str(error))
        self.assertEqual([], self._export_calls(volume))

    def test_os_brick_option_uses_cinders_generic_path(self):
        self.override_config("fastblock_image_copy", "os-brick", group=GROUP)
        driver = self._driver()
        volume = self._volume(driver)
        with mock.patch.object(cinder_driver.VolumeDriver, "copy_image_to_volume") as to_volume, \
                mock.patch.object(cinder_driver.VolumeDriver, "copy_volume_to_image") as to_image:
            driver.copy_image_to_volume(self.ctxt, volume, self.images, "img", disable_sparse=True)
            driver.copy_volume_to_image(self.ctxt, volume, self.images, {"id": "img"})
        to_volume.assert_called_once_with(self.ctxt, volume, self.images, "img", disable_sparse=True)
        to_image.assert_called_once_with(self.ctxt, volume, self.images, {"id": "img"})
        self.assertEqual([], self._export_calls(volume))

    def test_bad_option_value_is_refused(self):
        self.assertRaises(ValueError, self.override_config, "fastblock_image_copy", "dd", group=GROUP)


class MigrationTest(_DriverOnFakeNamenode):
    def _host(self, location_info, name="cv-2@other#other"):
        return {"host": name, "capabilities": {"location_info": location_info}}

    def test_same_cluster_moves_nothing_and_other_backends_go_generic(self):
        driver = self._driver()
        volume = self._volume(driver)
        before = list(self.namenode.requests)
        url = self.namenode.url
        self.assertEqual((True, None), driver.migrate_volume(self.ctxt, volume, self._host("fastblock:" + url)))
        # Another namenode list with ours in it (standby first, trailing slash): the same cluster.
        self.assertEqual((True, None), driver.migrate_volume(
            self.ctxt, volume, self._host("fastblock:http://192.0.2.9:9333," + url + "/")))
        self.assertEqual([], [r for r in self.namenode.requests[len(before):] if r["method"] != "GET"],
                         "nothing changes on the cluster")
        for other in ("fastblock:http://192.0.2.9:9333", "LVMVolumeDriver:host:vg:thin:0", None):
            self.assertEqual((False, None), driver.migrate_volume(self.ctxt, volume, self._host(other)))
        # A retype migrates through the driver only between types with the same QoS (Cinder checks).
        volume.status = "retyping"
        self.assertEqual((True, None), driver.migrate_volume(self.ctxt, volume, self._host("fastblock:" + url)))

    def test_stats_carry_the_location_info_migration_compares(self):
        driver = self._driver()
        pool = driver.get_volume_stats(refresh=True)["pools"][0]
        self.assertEqual("fastblock:" + self.namenode.url, pool["location_info"])
        self.assertTrue(pool["online_extend_support"])
        self.assertFalse(pool["multiattach"])
