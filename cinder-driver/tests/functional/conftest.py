"""A real fastblock cluster for the functional tests: the local-cluster jar on free ports, once per session.

Set FASTBLOCK_TEST_NAMENODE=http://HOST:PORT to use a cluster that is already running instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
JAR = REPO_ROOT / "local-cluster" / "target" / "fastblock-local-cluster.jar"
STARTUP_TIMEOUT_S = 90
STOP_TIMEOUT_S = 30
STORAGE_SERVERS = 3


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port_run(count: int, avoid: set[int]) -> int:
    """First port of `count` consecutive free ports (the launcher numbers storage servers P, P+1, ...)."""
    for _ in range(200):
        first = _free_port()
        run = range(first, first + count)
        if first + count <= 65535 and not avoid.intersection(run) and all(_port_is_free(p) for p in run):
            return first
    raise RuntimeError(f"could not find {count} consecutive free ports on 127.0.0.1")


def _pick_ports() -> dict[str, int]:
    ports: dict[str, int] = {}
    for name in ("zk-port", "namenode-port", "iscsi-port"):
        port = _free_port()
        while port in ports.values():
            port = _free_port()
        ports[name] = port
    ports["storage-port"] = _free_port_run(STORAGE_SERVERS, set(ports.values()))
    return ports


class _OutputCollector:
    """Drains the launcher's stdout (so it never blocks on a full pipe) and watches for the NAMENODE line."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self.namenode: str | None = None
        self.ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(stream,), name="local-cluster-output", daemon=True)
        self._thread.start()

    def _run(self, stream) -> None:
        for line in stream:
            line = line.rstrip("\n")
            self.lines.append(line)
            if self.namenode is None and line.startswith("NAMENODE "):
                self.namenode = line.split(None, 1)[1].strip()
                self.ready.set()
        self.ready.set()  # EOF: the launcher exited

    def tail(self, n: int = 40) -> str:
        return "\n".join(self.lines[-n:])


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)  # the launcher's shutdown hook stops every child server
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


# The ports of the cluster the session runs (filled by namenode_url).
CLUSTER: dict[str, object] = {}


@pytest.fixture(scope="session")
def namenode_url():
    external = os.environ.get("FASTBLOCK_TEST_NAMENODE")
    if external:
        CLUSTER["iscsi-port"] = int(os.environ.get("FASTBLOCK_TEST_ISCSI_PORT", "3260"))
        yield external.rstrip("/")
        return

    if not JAR.is_file():
        pytest.fail(
            f"the local cluster jar {JAR} does not exist: build it first with "
            f"`cd {REPO_ROOT} && mvn -DskipTests package` (or set FASTBLOCK_TEST_NAMENODE to a running namenode)",
            pytrace=False,
        )
    java = shutil.which("java")
    if java is None:
        pytest.fail("`java` is not on PATH: the functional tests need Java 17 to run the local cluster", pytrace=False)

    data_dir = Path(tempfile.mkdtemp(prefix="fastblock-functional-"))
    ports = _pick_ports()
    CLUSTER.update(ports)
    CLUSTER["data-dir"] = data_dir
    command = [java, "-jar", str(JAR), f"--data-dir={data_dir}", "--no-demo"]
    command += [f"--{name}={port}" for name, port in ports.items()]
    stderr_path = data_dir / "launcher.stderr"
    with open(stderr_path, "w") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, text=True, cwd=data_dir
        )
    output = _OutputCollector(process.stdout)
    try:
        output.ready.wait(STARTUP_TIMEOUT_S)
        if output.namenode is None:
            _stop(process)
            reason = (
                f"exited with code {process.returncode}"
                if process.returncode not in (None, -signal.SIGTERM)
                else f"printed no NAMENODE line within {STARTUP_TIMEOUT_S} s"
            )
            pytest.fail(
                f"the local cluster {reason}.\ncommand: {' '.join(command)}\n"
                f"--- stdout ---\n{output.tail()}\n--- stderr ---\n{stderr_path.read_text()[-4000:]}",
                pytrace=False,
            )
        yield output.namenode
    finally:
        _stop(process)
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def iscsi_port(namenode_url) -> int:
    """The port of the cluster's iSCSI gateway (on 127.0.0.1)."""
    return int(CLUSTER["iscsi-port"])


@pytest.fixture(scope="session")
def fastblock_cli(namenode_url):
    """Runs the CLI in a child process, the way an admin does, against the test cluster."""

    def run(*args: str, namenode: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        env.pop("FASTBLOCK_NAMENODE", None)
        # Test the source tree even when an older copy of the package is installed.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
        command = [sys.executable, "-m", "fastblock_cinder.cli", "--namenode", namenode or namenode_url, *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)

    return run


@pytest.fixture(scope="class")
def cluster(request, namenode_url, iscsi_port, tmp_path_factory):
    """The cluster's addresses and a scratch directory as attributes of a unittest-style test class."""
    request.cls.namenode_url = namenode_url
    request.cls.iscsi_port = iscsi_port
    request.cls.workdir = tmp_path_factory.mktemp(request.cls.__name__)
