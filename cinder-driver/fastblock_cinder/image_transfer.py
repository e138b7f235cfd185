"""Images to and from fastblock volumes on the cinder-volume host, through qemu-img's own iSCSI
initiator instead of os-brick (which needs the kernel's initiator and open-iscsi).

Downloads are checked as Cinder's generic path checks them before anything reaches the volume: the
format the image service declares must be the format found in the file (Cinder's format inspector,
which also refuses unsafe qcow2/vmdk), no backing file, no qcow2 data file, a virtual size that fits
the volume. qemu-img then reads the file in that declared format, never a probed one, and the
volume is always read as raw, so a volume whose bytes look like a qcow2 header stays raw.
"""

from __future__ import annotations

from typing import Callable, ContextManager

from oslo_concurrency import processutils
from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import imageutils
from oslo_utils import units

from cinder import exception
from cinder.i18n import _
from cinder.image import format_inspector
from cinder.image import image_utils
from cinder import utils

from fastblock_cinder import qemu_iscsi

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

# What qemu-img reads and writes here; image services name some of them differently (vhd -> vpc).
FORMATS = frozenset(["raw", "qcow2", "vmdk", "vdi", "vpc", "vhdx", "qed"])
COMPRESSIBLE = frozenset(["qcow2"])

ExportFactory = Callable[[object], ContextManager[qemu_iscsi.IscsiLun]]


def inspect(path: str, declared_format: str, image_id: str) -> imageutils.QemuImgInfo:
    """The verified ``qemu-img info`` of a downloaded image, or ImageUnacceptable saying why not."""
    inspector = format_inspector.detect_file_format(path)
    found = str(inspector)
    if not inspector.safety_check():
        raise exception.ImageUnacceptable(image_id=image_id,
                                          reason=_("the %s image failed Cinder's safety check") % found)
    if found != declared_format:
        raise exception.ImageUnacceptable(
            image_id=image_id,
            reason=_("the image is declared %(declared)s but its data is %(found)s")
            % {"declared": declared_format, "found": found})
    limits = processutils.ProcessLimits(cpu_time=CONF.image_introspection_cpu_limit,
                                        address_space=CONF.image_introspection_address_space_limit * units.Gi)
    try:
        out, _err = utils.execute("env", "LC_ALL=C", "qemu-img", "info", "-f", found, "--output=json", path,
                                  run_as_root=False, prlimit=limits)
    except processutils.ProcessExecutionError as error:
        raise exception.ImageUnacceptable(image_id=image_id,
                                          reason=_("qemu-img info failed: %s") % error.stderr) from error
    info = imageutils.QemuImgInfo(out, format="json")
    if info.backing_file is not None:
        raise exception.ImageUnacceptable(
            image_id=image_id, reason=_("fmt=%(fmt)s backed by: %(backing)s") % {"fmt": found,
                                                                                  "backing": info.backing_file})
    if found == "qcow2":
        image_utils.check_qcow2_image(image_id, info)
    if found == "vmdk":
        image_utils.check_vmdk_image(image_id, info)
    return info


def _disk_format(meta: dict, image_id: str) -> str:
    declared = image_utils.fixup_disk_format(meta.get("disk_format") or "")
    if declared not in FORMATS:
        raise exception.ImageUnacceptable(
            image_id=image_id,
            reason=_("disk_format %(f)s cannot be copied with qemu-img here (supported: %(all)s)")
            % {"f": meta.get("disk_format"), "all": ", ".join(sorted(FORMATS))})
    if meta.get("container_format") == "compressed":
        raise exception.ImageUnacceptable(
            image_id=image_id,
            reason=_("compressed container images go through Cinder's generic path "
                     "(fastblock_image_copy = os-brick)"))
    return declared


class ImageTransfer:
    """Copies between an image service and volumes reached through ``export(volume)``, a context
    manager that gives the LUN as this host's initiator reaches it and removes that access after."""

    def __init__(self, export: ExportFactory, timeout: float | None = None):
        self._export = export
        self._timeout = timeout

    def image_to_volume(self, context, volume, image_service, image_id, disable_sparse=False) -> None:
        meta = image_service.show(context, image_id)
        image_utils.check_image_conversion_disable(meta.get("disk_format"), "raw", image_id, upload=False)
        declared = _disk_format(meta, image_id)
        # The manager's create-from-image flow has already downloaded it (and keeps the file until
        # we return): use that copy rather than fetching the image a second time.
        fetched = image_utils.TemporaryImages.for_image_service(image_service).get(context, image_id)
        if fetched:
            self._write(fetched, declared, volume, image_id, disable_sparse)
            return
        with image_utils.temporary_file(prefix="fastblock_image_%s_" % image_id) as tmp:
            image_utils.fetch(context, image_service, image_id, tmp, None, None)
            self._write(tmp, declared, volume, image_id, disable_sparse)

    def _write(self, path, declared, volume, image_id, disable_sparse) -> None:
        info = inspect(path, declared, image_id)
        image_utils.check_virtual_size(info.virtual_size, volume.size, image_id)
        with self._export(volume) as lun:
            try:
                qemu_iscsi.write_image(path, declared, lun, sparse=not disable_sparse, timeout=self._timeout)
            except qemu_iscsi.QemuImgError as error:
                LOG.error("fastblock: image %s to %s failed: %s", image_id, volume.name, error)
                raise exception.ImageCopyFailure(reason=str(error)) from error
        LOG.info("fastblock: image %s (%s, %d bytes) written to %s", image_id, declared, info.virtual_size,
                 volume.name)

    def volume_to_image(self, context, volume, image_service, image_meta, store_id=None,
                        base_image_ref=None) -> None:
        image_id = image_meta["id"]
        image_utils.check_image_conversion_disable(image_meta.get("disk_format"), "raw", image_id, upload=True)
        out_format = _disk_format(image_meta, image_id)
        compress = CONF.image_compress_on_upload and out_format in COMPRESSIBLE
        with image_utils.temporary_file(prefix="fastblock_upload_%s_" % image_id) as tmp:
            with self._export(volume) as lun:
                try:
                    qemu_iscsi.read_volume(lun, tmp, out_format, compress=compress, timeout=self._timeout)
                except qemu_iscsi.QemuImgError as error:
                    LOG.error("fastblock: %s to image %s failed: %s", volume.name, image_id, error)
                    raise exception.ImageCopyFailure(reason=str(error)) from error
            written = inspect(tmp, out_format, image_id)
            if written.virtual_size != volume.size * units.Gi:
                raise exception.ImageCopyFailure(
                    reason=_("%(name)s is %(size)d GiB but its image holds %(bytes)d bytes")
                    % {"name": volume.name, "size": volume.size, "bytes": written.virtual_size})
            with open(tmp, "rb") as stream:
                image_service.update(context, image_id, {}, stream, store_id=store_id,
                                     base_image_ref=base_image_ref)
        LOG.info("fastblock: %s uploaded as image %s (%s)", volume.name, image_id, out_format)

