"""qemu-img through QEMU's own iSCSI initiator (libiscsi): copies between files and a fastblock LUN
without the kernel's iSCSI initiator, open-iscsi or os-brick.

The CHAP secret never appears on a command line (``ps`` shows every argument): it is written to a
file readable by this user only and handed to QEMU as a ``secret`` object (``password-secret=``),
and the file is removed once qemu-img exits. Error messages are qemu-img's own, with the secret's
file name but never the secret.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Iterator, Sequence

SECRET_ID = "fastblock-chap"
# qemu-img convert skips writing runs of zeros at least this long (its -S); a fresh thin volume then
# stays thin, and the gateway turns zero runs of an overwritten volume into unmaps.
SPARSE_SIZE = "4k"


@dataclass(frozen=True)
class IscsiLun:
    """One LUN as QEMU's iscsi block driver reaches it."""

    portal: str  # host:port, [v6]:port
    iqn: str
    lun: int
    initiator: str
    user: str | None = None
    secret: str | None = None


class QemuImgError(Exception):
    """qemu-img exited non-zero, could not be started, or outlived its time limit."""

    def __init__(self, what: str, detail: str):
        super().__init__(f"{what}: {detail}")
        self.what = what
        self.detail = detail


def _escape(value: str) -> str:
    # QEMU's option syntax: a comma inside a value is written twice.
    return str(value).replace(",", ",,")


def image_opts(lun: IscsiLun, secret_id: str | None) -> str:
    """The ``--image-opts`` string of ``lun``; the password only by reference to ``secret_id``."""
    opts = [
        "driver=iscsi",
        "transport=tcp",
        f"portal={_escape(lun.portal)}",
        f"target={_escape(lun.iqn)}",
        f"lun={int(lun.lun)}",
        f"initiator-name={_escape(lun.initiator)}",
    ]
    if lun.user is not None:
        if secret_id is None:
            raise ValueError("a CHAP user needs its secret")
        opts += [f"user={_escape(lun.user)}", f"password-secret={secret_id}"]
    return ",".join(opts)


def secret_object(path: str) -> str:
    return f"secret,id={SECRET_ID},file={_escape(path)},format=raw"


@contextlib.contextmanager
def _secret_file(lun: IscsiLun) -> Iterator[str | None]:
    if lun.user is None:
        yield None
        return
    directory = tempfile.mkdtemp(prefix="fastblock-chap-")  # 0700
    path = os.path.join(directory, "secret")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as stream:
            stream.write(lun.secret or "")
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(directory)


def write_command(source: str, source_format: str, lun: IscsiLun, secret_path: str | None,
                  sparse: bool = True) -> list[str]:
    """qemu-img convert of the file ``source`` (read as ``source_format``, never probed) onto ``lun``.

    ``-n``: the LUN exists (the volume); every byte of the image's virtual size is written, zero runs
    as zero writes (-S) unless ``sparse`` is off, so an existing volume keeps nothing of its old data
    there.
    """
    command = ["qemu-img", "convert", "-n", "-f", source_format, "-S", SPARSE_SIZE if sparse else "0"]
    if secret_path is not None:
        command += ["--object", secret_object(secret_path)]
    command += ["--target-image-opts", source, image_opts(lun, SECRET_ID if secret_path else None)]
    return command


def read_command(lun: IscsiLun, target: str, target_format: str, secret_path: str | None,
                 compress: bool = False) -> list[str]:
    """qemu-img convert of the whole ``lun`` (raw bytes) into a new file ``target`` of ``target_format``."""
    command = ["qemu-img", "convert"]
    if secret_path is not None:
        command += ["--object", secret_object(secret_path)]
    command += ["--image-opts", image_opts(lun, SECRET_ID if secret_path else None), "-O", target_format]
    if compress:
        command.append("-c")
    command.append(target)
    return command


def _run(what: str, command: Sequence[str], timeout: float | None) -> None:
    try:
        result = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout,
                                stdin=subprocess.DEVNULL, env=dict(os.environ, LC_ALL="C"))
    except FileNotFoundError as error:
        raise QemuImgError(what, f"qemu-img is not installed ({error})") from error
    except subprocess.TimeoutExpired as error:
        raise QemuImgError(what, f"qemu-img did not finish within {timeout:.0f} s") from error
    if result.returncode != 0:
        detail = (result.stderr or result.stdout or "").strip() or f"exit status {result.returncode}"
        raise QemuImgError(what, f"qemu-img exited with {result.returncode}: {detail}")


def write_image(source: str, source_format: str, lun: IscsiLun, sparse: bool = True,
                timeout: float | None = None) -> None:
    with _secret_file(lun) as secret_path:
        _run(f"write {source_format} image to {lun.iqn}",
             write_command(source, source_format, lun, secret_path, sparse), timeout)


def read_volume(lun: IscsiLun, target: str, target_format: str, compress: bool = False,
                timeout: float | None = None) -> None:
    with _secret_file(lun) as secret_path:
        _run(f"read {lun.iqn} into a {target_format} image",
             read_command(lun, target, target_format, secret_path, compress), timeout)
