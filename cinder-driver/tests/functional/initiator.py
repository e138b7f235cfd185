"""Reach a volume the way os-brick would from a connection_info: libiscsi's tools and qemu-img's
iscsi driver, logging in with the initiator name and the CHAP credentials the driver returned."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import quote

TOOL_TIMEOUT_S = 120


def run(*command: str, timeout: float = TOOL_TIMEOUT_S) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _auth(data: dict, with_chap: bool) -> str:
    if with_chap and data.get("auth_method") == "CHAP":
        return f"{quote(data['auth_username'], safe='')}%{quote(data['auth_password'], safe='')}@"
    return ""


def portal_url(data: dict, with_chap: bool = True) -> str:
    return f"iscsi://{_auth(data, with_chap)}{data['target_portal']}"


def lun_url(data: dict, with_chap: bool = True) -> str:
    return f"{portal_url(data, with_chap)}/{data['target_iqn']}/{data.get('target_lun', 0)}"


def image_opts(data: dict, initiator: str) -> str:
    opts = (f"driver=iscsi,transport=tcp,portal={data['target_portal']},target={data['target_iqn']},"
            f"lun={data.get('target_lun', 0)},initiator-name={initiator}")
    if data.get("auth_method") == "CHAP":
        opts += f",user={data['auth_username']},password={data['auth_password']}"
    return opts


def discover(data: dict, initiator: str, with_chap: bool = True) -> subprocess.CompletedProcess:
    return run("iscsi-ls", "-s", "-i", initiator, portal_url(data, with_chap))


def inquiry(data: dict, initiator: str, with_chap: bool = True) -> subprocess.CompletedProcess:
    return run("iscsi-inq", "-i", initiator, lun_url(data, with_chap))


def capacity_bytes(data: dict, initiator: str) -> int:
    result = run("iscsi-readcapacity16", "-s", "-i", initiator, lun_url(data))
    if result.returncode != 0:
        raise AssertionError(f"iscsi-readcapacity16 failed: {result.stdout}{result.stderr}")
    return int(result.stdout.strip())


def write(data: dict, initiator: str, payload: bytes, workdir: Path) -> None:
    """Writes ``payload`` at offset 0 of the LUN."""
    source = workdir / "payload.raw"
    source.write_bytes(payload)
    result = run("qemu-img", "convert", "-n", "-f", "raw", "--target-image-opts", str(source),
                 image_opts(data, initiator))
    if result.returncode != 0:
        raise AssertionError(f"qemu-img write failed: {result.stdout}{result.stderr}")


def read(data: dict, initiator: str, length: int, workdir: Path) -> bytes:
    """Reads the first ``length`` bytes (a whole number of MiB) of the LUN."""
    target = workdir / "readback.raw"
    target.unlink(missing_ok=True)
    result = run("qemu-img", "dd", "--image-opts", "-O", "raw", "bs=1M", f"count={length >> 20}",
                 f"if={image_opts(data, initiator)}", f"of={target}")
    if result.returncode != 0:
        raise AssertionError(f"qemu-img read failed: {result.stdout}{result.stderr}")
    return target.read_bytes()[:length]
