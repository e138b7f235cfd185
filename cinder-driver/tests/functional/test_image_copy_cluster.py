"""Copy image to volume and volume to image against a real local cluster: real qcow2 and raw images
made by qemu-img, written and read by qemu-img's own iSCSI initiator through the gateway with the
CHAP credentials of the driver's own export, then the volume's bytes checked through a separate
attachment (libiscsi) and the uploaded images' bytes checked with qemu-img.

The image service is Cinder's fake one from its test tree (the e2e test runs a real Glance), with uploads kept
so they can be read back.
"""

import os
import socket
import subprocess
import uuid

import pytest

from cinder import exception
from cinder.image import image_utils
from cinder.tests.unit import utils as test_utils
from cinder.tests.unit.image import fake as fake_image
from cinder.volume import volume_types

import initiator as iscsi
from cluster_case import ClusterDriverCase
from fastblock_cinder import driver as fb_driver
from fastblock_cinder.client import FastblockClient

pytestmark = pytest.mark.functional

GiB = 1 << 30
MiB = 1 << 20
INITIATOR = "iqn.2026-11.org.example:image-check"
IMAGE_SPAN = 48 * MiB  # the images' virtual size; the volumes are 1 GiB


class KeepingImageService(fake_image._FakeImageService):
    """Cinder's fake image service, except that an upload keeps its data (the fake drops it) and the
    manager's pre-fetched images are real (the fake's are a MagicMock)."""

    def __init__(self):
        super().__init__()
        self.temp_images = None

    def update(self, context, image_id, metadata, data=None, purge_props=False, store_id=None,
               base_image_ref=None):
        image = super().update(context, image_id, metadata, None, purge_props, store_id, base_image_ref)
        if data is not None:
            self._imagedata[image_id] = data.read()
            self.images[image_id]["size"] = len(self._imagedata[image_id])
        return image


def _qemu(*args):
    result = subprocess.run(["qemu-img", *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.usefixtures("cluster")
class ImageCopyOnClusterTest(ClusterDriverCase):
    GROUP = "fastblock-image-functional"

    def setUp(self):
        super().setUp()
        self.override_config("fastblock_image_copy_timeout", 300, group=self.GROUP)
        # The gateway of this "cinder-volume host" listens on loopback.
        self.override_config("my_ip", "127.0.0.1")
        self.override_config("image_conversion_dir", str(self.workdir / "conversion"))
        self.driver = self._driver()
        self.client = FastblockClient(self.namenode_url)
        self.images = KeepingImageService()
        self.connector = {"initiator": INITIATOR, "ip": "127.0.0.1", "host": "image-check"}
        self.tmp = self.workdir / uuid.uuid4().hex[:8]
        self.tmp.mkdir()

    def _driver(self):
        driver = fb_driver.FastBlockISCSIDriver(configuration=self.configuration, host="imagehost@fastblock")
        driver.do_setup(self.ctxt)
        return driver

    def _volume(self, size=1):
        # In Cinder's DB, as the manager hands them over (type and glance metadata load lazily).
        vtype = volume_types.create(self.ctxt, "t-" + uuid.uuid4().hex[:8], {"volume_backend_name": "fastblock"})
        volume = test_utils.create_volume(self.ctxt, size=size, host="imagehost@fastblock#fastblock",
                                          volume_type_id=vtype["id"])
        self.driver.create_volume(volume)
        self.addCleanup(self.driver.delete_volume, volume)
        return volume

    def _raw_image(self):
        """48 MiB, mostly holes: random data at 0, 17 MiB and the last MiB."""
        path = self.tmp / "image.raw"
        with open(path, "wb") as f:
            f.truncate(IMAGE_SPAN)
            for offset in (0, 17 * MiB, IMAGE_SPAN - MiB):
                f.seek(offset)
                f.write(os.urandom(MiB))
        return path

    def _register(self, path, disk_format):
        with open(path, "rb") as data:
            return self.images.create(self.ctxt, {"disk_format": disk_format, "container_format": "bare",
                                                  "status": "active", "size": os.path.getsize(path)},
                                      data)["id"]

    def _read_volume(self, volume, length):
        data = self.driver.initialize_connection(volume, self.connector)["data"]
        try:
            return iscsi.read(data, INITIATOR, length, self.tmp)
        finally:
            self.driver.terminate_connection(volume, self.connector)

    def _write_volume(self, volume, payload):
        data = self.driver.initialize_connection(volume, self.connector)["data"]
        try:
            iscsi.write(data, INITIATOR, payload, self.tmp)
        finally:
            self.driver.terminate_connection(volume, self.connector)

    def _downloaded_as_raw(self, image_id, disk_format):
        stored = self.tmp / ("uploaded." + disk_format)
        stored.write_bytes(self.images._imagedata[image_id])
        info = _qemu("info", "-f", disk_format, "--output=json", str(stored)).stdout
        raw = self.tmp / "uploaded-converted.raw"
        _qemu("convert", "-f", disk_format, "-O", "raw", str(stored), str(raw))
        return info, raw

    def test_qcow2_and_raw_images_reach_the_volume_and_come_back(self):
        raw = self._raw_image()
        qcow2 = self.tmp / "image.qcow2"
        _qemu("convert", "-f", "raw", "-O", "qcow2", str(raw), str(qcow2))
        expected = raw.read_bytes()

        for path, disk_format in ((qcow2, "qcow2"), (raw, "raw")):
            volume = self._volume()
            # Old data where the image has holes must not survive (a volume re-imaged in place).
            self._write_volume(volume, b"\xa5" * (4 * MiB) + b"\x5a" * (16 * MiB))
            self.driver.copy_image_to_volume(self.ctxt, volume, self.images, self._register(path, disk_format))
            self.assertEqual([], self.client.list_exports(volume.name), "the copy's export is removed")
            self.assertEqual(expected, self._read_volume(volume, IMAGE_SPAN), disk_format)
            self.assertEqual(bytes(8 * MiB), self._read_volume(volume, IMAGE_SPAN + 8 * MiB)[IMAGE_SPAN:],
                             "beyond the image the fresh volume reads zeros")

        # Volume to image, in both formats; the images hold the whole volume (1 GiB), the image's
        # data at its start and zeros after.
        for disk_format in ("qcow2", "raw"):
            image_id = self.images.create(self.ctxt, {"disk_format": disk_format, "container_format": "bare",
                                                      "status": "queued"})["id"]
            meta = self.images.show(self.ctxt, image_id)
            self.driver.copy_volume_to_image(self.ctxt, volume, self.images, meta)
            self.assertEqual([], self.client.list_exports(volume.name))
            info, back = self._downloaded_as_raw(image_id, disk_format)
            self.assertIn('"virtual-size": %d' % GiB, info)
            self.assertEqual(GiB, os.path.getsize(back))
            with open(back, "rb") as f:
                self.assertEqual(expected, f.read(IMAGE_SPAN), disk_format)
                f.seek(512 * MiB)
                self.assertEqual(bytes(MiB), f.read(MiB))
            if disk_format == "qcow2":
                # Sparse: a 1 GiB volume holding 3 MiB of data is a small qcow2.
                self.assertLess(len(self.images._imagedata[image_id]), 16 * MiB)

    def test_an_image_the_manager_already_fetched_is_not_downloaded_again(self):
        raw = self._raw_image()
        # The image service holds no data for it: only the manager's copy can fill the volume.
        image_id = self.images.create(self.ctxt, {"disk_format": "raw", "container_format": "bare"})["id"]
        fetched = image_utils.TemporaryImages.for_image_service(self.images)
        fetched.temporary_images.setdefault(self.ctxt.user_id, {})[image_id] = str(raw)
        volume = self._volume()
        self.driver.copy_image_to_volume(self.ctxt, volume, self.images, image_id)
        self.assertEqual(raw.read_bytes(), self._read_volume(volume, IMAGE_SPAN))
        self.assertTrue(raw.exists(), "the manager's file stays for the manager to remove")

    def test_bad_images_are_refused_before_the_volume_is_touched(self):
        volume = self._volume()
        mark = os.urandom(MiB)
        self._write_volume(volume, mark)
        raw = self._raw_image()
        qcow2 = self.tmp / "image.qcow2"
        _qemu("convert", "-f", "raw", "-O", "qcow2", str(raw), str(qcow2))
        big = self.tmp / "big.qcow2"
        _qemu("create", "-f", "qcow2", str(big), "2G")
        backed = self.tmp / "backed.qcow2"
        _qemu("create", "-f", "qcow2", "-b", str(qcow2), "-F", "qcow2", str(backed))

        cases = [
            (qcow2, "raw", "declared raw"),          # a qcow2 posing as raw
            (big, "qcow2", "doesn't fit"),           # 2 GiB into 1 GiB
            (backed, "qcow2", "safety check"),       # a backing file
        ]
        for path, declared, message in cases:
            error = self.assertRaises(exception.ImageUnacceptable, self.driver.copy_image_to_volume,
                                      self.ctxt, volume, self.images, self._register(path, declared))
            self.assertIn(message, str(error))
        self.assertEqual([], self.client.list_exports(volume.name))
        self.assertEqual(mark, self._read_volume(volume, MiB), "a refused image changes nothing")

    def test_an_unreachable_gateway_fails_the_copy_with_qemu_imgs_message_and_removes_the_export(self):
        volume = self._volume()
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))  # bound, never listening: connection refused
        self.addCleanup(holder.close)
        self.override_config("fastblock_gateway_port", holder.getsockname()[1], group=self.GROUP)
        driver = self._driver()
        image_id = self._register(self._raw_image(), "raw")
        error = self.assertRaises(exception.ImageCopyFailure, driver.copy_image_to_volume,
                                  self.ctxt, volume, self.images, image_id)
        self.assertIn("qemu-img exited with 1", str(error))
        self.assertIn("iSCSI", str(error))
        self.assertEqual([], self.client.list_exports(volume.name))
        meta = self.images.create(self.ctxt, {"disk_format": "raw", "container_format": "bare"})
        self.assertRaises(exception.ImageCopyFailure, driver.copy_volume_to_image, self.ctxt, volume,
                          self.images, meta)
        self.assertEqual([], self.client.list_exports(volume.name))
