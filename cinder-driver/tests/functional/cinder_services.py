"""Real Cinder services for the end-to-end test: RabbitMQ from Debian, cinder-api (noauth),
cinder-scheduler and cinder-volume with the fastblock driver, on sqlite, all bound to 127.0.0.1 on
free ports and owned by the test (started as its children, stopped by their process group).

Everything is bounded in time; every failure message carries the tails of the services' logs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from glance_service import Glance

RABBIT_SERVER = Path("/usr/lib/rabbitmq/bin/rabbitmq-server")
BIN = Path(sys.executable).parent
SQLITE_HOOK = Path(__file__).resolve().parent / "sqlite_writer_first"
START_TIMEOUT_S = 240
STOP_TIMEOUT_S = 30
CLI_TIMEOUT_S = 180
API_VERSION = "3.70"

# noauth pipeline for the v3 API (the paste file is not shipped in Cinder's wheel).
API_PASTE = """\
[composite:osapi_volume]
use = call:cinder.api:root_app_factory
/: apiversions
/healthcheck: healthcheck
/v3: openstack_volume_api_v3

[composite:openstack_volume_api_v3]
use = call:cinder.api.middleware.auth:pipeline_factory
noauth = request_id faultwrap sizelimit noauth apiv3

[filter:request_id]
paste.filter_factory = oslo_middleware.request_id:RequestId.factory

[filter:faultwrap]
paste.filter_factory = cinder.api.middleware.fault:FaultWrapper.factory

[filter:noauth]
paste.filter_factory = cinder.api.middleware.auth:NoAuthMiddleware.factory

[filter:sizelimit]
paste.filter_factory = oslo_middleware.sizelimit:RequestBodySizeLimiter.factory

[app:apiv3]
paste.app_factory = cinder.api.v3.router:APIRouter.factory

[pipeline:apiversions]
pipeline = request_id faultwrap osvolumeversionapp

[app:osvolumeversionapp]
paste.app_factory = cinder.api.versions:Versions.factory

[app:healthcheck]
paste.app_factory = oslo_middleware:Healthcheck.app_factory
backends = disable_by_file
disable_by_file_path = /nonexistent
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as error:
        return f"({error})"


class Processes:
    """Children started in their own process group, stopped by group (never by name)."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.started: list[tuple[str, subprocess.Popen, Path]] = []

    def start(self, name: str, command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        out = self.workdir / f"{name}.out"
        with open(out, "w") as stream:
            process = subprocess.Popen(command, stdout=stream, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       env=env, cwd=self.workdir, start_new_session=True)
        self.started.append((name, process, out))
        return process

    def check_alive(self) -> None:
        for name, process, out in self.started:
            if process.poll() is not None:
                raise AssertionError(f"{name} exited with {process.returncode}:\n{_tail(out)}")

    def stop_all(self) -> None:
        # Last started first: the Cinder services before the broker they talk to.
        for name, process, _ in reversed(self.started):
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(process.pid, signal.SIGKILL)  # stragglers of the group (epmd, forked workers)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                pass


class RabbitMQ:
    """A broker of its own: epmd and the node on free loopback ports, data under the work dir."""

    def __init__(self, processes: Processes, workdir: Path):
        self.dir = workdir / "rabbitmq"
        self.dir.mkdir()
        self.port = free_port()
        epmd_port, dist_port = free_port(), free_port()
        (self.dir / "enabled_plugins").write_text("[].\n")
        self.log = self.dir / "log"
        env = dict(os.environ, HOME=str(self.dir), ERL_EPMD_PORT=str(epmd_port), ERL_EPMD_ADDRESS="127.0.0.1",
                   RABBITMQ_NODE_IP_ADDRESS="127.0.0.1", RABBITMQ_NODE_PORT=str(self.port),
                   RABBITMQ_DIST_PORT=str(dist_port), RABBITMQ_NODENAME=f"rabbit-e2e-{os.getpid()}@localhost",
                   RABBITMQ_MNESIA_BASE=str(self.dir / "mnesia"), RABBITMQ_LOG_BASE=str(self.log),
                   RABBITMQ_ENABLED_PLUGINS_FILE=str(self.dir / "enabled_plugins"),
                   RABBITMQ_CONFIG_FILE=str(self.dir / "rabbitmq"),
                   RABBITMQ_ADVANCED_CONFIG_FILE=str(self.dir / "advanced.config"),
                   RABBITMQ_CONF_ENV_FILE=str(self.dir / "rabbitmq-env.conf"),
                   RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}")
        # Our own epmd, so no daemon outlives the test.
        processes.start("epmd", ["epmd", "-port", str(epmd_port), "-address", "127.0.0.1"], env)
        processes.start("rabbitmq", [str(RABBIT_SERVER)], env)
        self.out = processes.workdir / "rabbitmq.out"

    @property
    def url(self) -> str:
        return f"rabbit://guest:guest@127.0.0.1:{self.port}/"


class CinderServices:
    def __init__(self, workdir: Path, namenode_url: str, iscsi_port: int):
        self.workdir = workdir
        self.processes = Processes(workdir)
        self.log_dir = workdir / "log"
        self.log_dir.mkdir()
        self.api_port = free_port()
        self.namenode_url = namenode_url
        self.iscsi_port = iscsi_port
        self.conf = workdir / "cinder.conf"
        self.host = "e2e"
        self.backend = "fastblock"
        # A second backend on the same cluster: migration and retype between backends.
        self.backends = (self.backend, "fastblock2")

    # --- lifecycle -------------------------------------------------------------------------------

    def start(self) -> CinderServices:
        if not RABBIT_SERVER.exists():
            raise AssertionError(f"{RABBIT_SERVER} is missing: run scripts/install-deps (apt rabbitmq-server)")
        self.rabbit = RabbitMQ(self.processes, self.workdir)
        self.glance = Glance(self.processes, self.workdir, free_port())
        self._wait("RabbitMQ to listen", lambda: _listening(self.rabbit.port), 120, interval=0.5)
        self._wait("glance-api to answer", self.glance.ready, START_TIMEOUT_S, interval=0.5)
        (self.workdir / "api-paste.ini").write_text(API_PASTE)
        for sub in ("state", "locks"):
            (self.workdir / sub).mkdir()
        self.conf.write_text(self._config())
        sync = subprocess.run([str(BIN / "cinder-manage"), "--config-file", str(self.conf), "db", "sync"],
                              capture_output=True, text=True, timeout=600, cwd=self.workdir)
        if sync.returncode != 0:
            raise AssertionError(f"cinder-manage db sync failed:\n{sync.stdout}\n{sync.stderr}")
        # Write-ahead log (kept by the database file): readers no longer block the writer, so the five
        # processes sharing the file (api, scheduler, volume and its two backends) stop failing each
        # other's updates with 'database is locked' (seen on attachment updates under load).
        with sqlite3.connect(self.workdir / "cinder.sqlite") as db:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            raise AssertionError(f"sqlite refused the write-ahead log: journal_mode={mode}")
        # The services run as deployed (eventlet); the test process itself chose threading.
        env = {k: v for k, v in os.environ.items() if k != "OS_CINDER_DISABLE_EVENTLET_PATCHING"}
        # Their sqlite transactions take the write lock when they begin: see sqlite_writer_first/.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SQLITE_HOOK), env.get("PYTHONPATH")]))
        # One after another: each service writes its row into the shared sqlite file as it starts.
        # cinder-scheduler exited with 1 at start once in CI when all three started together; its log
        # was not kept, and a start meeting another's write ('database is locked' at once in a
        # transaction that read first, as seen on API requests) is the likely cause, not a proven one.
        self._start_service("cinder-api", env)
        self._wait("cinder-api to listen", lambda: _listening(self.api_port), START_TIMEOUT_S, interval=0.5)
        self._start_service("cinder-scheduler", env)
        self._wait("cinder-scheduler to be up", lambda: self._services_up(volumes=False), START_TIMEOUT_S,
                   interval=0.5)
        self._start_service("cinder-volume", env)
        self._wait("cinder-scheduler and cinder-volume to be up", self._services_up, START_TIMEOUT_S, interval=0.5)
        return self

    def _start_service(self, binary: str, env: dict[str, str]) -> None:
        self.processes.start(binary, [str(BIN / binary), "--config-file", str(self.conf)], env)

    def stop(self) -> None:
        self.processes.stop_all()

    def _config(self) -> str:
        d = self.workdir
        return f"""\
[DEFAULT]
auth_strategy = noauth
transport_url = {self.rabbit.url}
api_paste_config = {d}/api-paste.ini
state_path = {d}/state
my_ip = 127.0.0.1
host = {self.host}
osapi_volume_listen = 127.0.0.1
osapi_volume_listen_port = {self.api_port}
osapi_volume_workers = 1
enabled_backends = {",".join(self.backends)}
log_dir = {self.log_dir}
debug = True
report_interval = 5
periodic_interval = 5
backend_stats_polling_interval = 5
service_down_time = 120
rpc_response_timeout = 90
volume_name_template = volume-%s
glance_api_servers = {self.glance.url}
image_conversion_dir = {d}/conversion
[database]
# three services write one sqlite file: wait for its lock (pysqlite gives up after 5 s, which a
# busy 2-core machine exceeds: "database is locked" failed an attachment update)
connection = sqlite:///{d}/cinder.sqlite?timeout=60
[oslo_concurrency]
lock_path = {d}/locks
[cinder_sys_admin]
# Cinder's privileged helper (the create-from-image flow inspects the downloaded image through it):
# a deployment starts it with sudo; the test runs as root on a machine that may have no sudo.
helper_command = {BIN}/privsep-helper --config-file {self.conf}
[coordination]
backend_url = file://{d}/locks
""" + "".join(self._backend_section(name) for name in self.backends)

    def _backend_section(self, name: str) -> str:
        return f"""\
[{name}]
volume_driver = fastblock_cinder.driver.FastBlockISCSIDriver
volume_backend_name = {name}
fastblock_namenode_urls = {self.namenode_url}
fastblock_gateway_port = {self.iscsi_port}
fastblock_use_chap = True
"""

    # --- diagnostics -----------------------------------------------------------------------------

    def logs(self) -> str:
        parts = []
        for name, _, out in self.processes.started:
            parts.append(f"--- {name} (stdout/stderr) ---\n{_tail(out, 15)}")
        for log in sorted(self.log_dir.glob("*.log")):
            errors = [line for line in log.read_text(errors="replace").splitlines()
                      if " ERROR " in line or "Traceback" in line or "Error" in line][-25:]
            parts.append(f"--- {log.name}: last errors ---\n" + "\n".join(errors))
            parts.append(f"--- {log.name}: tail ---\n{_tail(log, 25)}")
        return "\n".join(parts)

    def fail(self, message: str) -> None:
        raise AssertionError(f"{message}\n===== service logs =====\n{self.logs()}")

    def _wait(self, what: str, condition, timeout: float, interval: float = 2.0):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                self.processes.check_alive()
            except AssertionError as died:
                # Its stdout holds little more than import warnings; the reason is in its log file.
                self.fail(f"{died}\n(while waiting for {what})")
            last = condition()
            if last:
                return last
            time.sleep(interval)
        self.fail(f"timed out after {timeout:.0f} s waiting for {what} (last: {last})")

    # --- the cinder CLI ---------------------------------------------------------------------------

    def cli(self, *args: str, ok: bool = True, timeout: float = CLI_TIMEOUT_S,
            version: str = API_VERSION) -> subprocess.CompletedProcess:
        command = [str(BIN / "cinder"), "--os-auth-type", "noauth", "--os-user-id", "admin", "--os-project-id",
                   "admin", "--os-endpoint", f"http://127.0.0.1:{self.api_port}/v3", "--os-volume-api-version",
                   version, *args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
        for _ in range(3):
            if not self._sqlite_locked(result):
                break
            # The harness's sqlite, not the driver, failed the request: asked again it succeeds or
            # fails on its merits. (Kept from before the services took their write lock first, which
            # removed the known cause: a transaction that read before another process's write.)
            time.sleep(1)
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
        if ok and result.returncode != 0:
            self.fail(f"`cinder {' '.join(args)}` failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def _sqlite_locked(self, result: subprocess.CompletedProcess) -> bool:
        """True if the call failed with HTTP 500 because cinder-api found the sqlite file locked."""
        if result.returncode == 0 or "(HTTP 500)" not in result.stdout + result.stderr:
            return False
        request = re.search(r"Request-ID: (req-[0-9a-f-]+)", result.stdout + result.stderr)
        if request is None:
            return False
        for log in self.log_dir.glob("*api*.log"):
            lines = log.read_text(errors="replace").splitlines()
            for i, line in enumerate(lines):
                # The traceback's lines after the first one do not carry the request id.
                if request.group(1) in line and " ERROR " in line \
                        and any("database is locked" in later for later in lines[i:i + 80]):
                    return True
        return False

    def show(self, kind: str, ref: str) -> dict[str, str]:
        return properties(self.cli(f"{kind}-show" if kind != "volume" else "show", ref).stdout)

    def api_get(self, path: str) -> dict | None:
        """GET ``/v3{path}`` on cinder-api as the admin (noauth, the project in the token, none in the
        path); None when it answers that the item does not exist (404 itemNotFound; any other
        404, such as a path cinder-api does not route, fails).

        Waits poll this rather than the ``cinder`` CLI: each CLI call starts a Python process (about
        1.5 s, most of a core on a 2-core machine), which made polling cost more than the operations
        waited for. The CLI is still what every step uses to act and to show.
        """
        request = urllib.request.Request(f"http://127.0.0.1:{self.api_port}/v3{path}",
                                         headers={"X-Auth-Token": "admin:admin", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=CLI_TIMEOUT_S) as reply:
                return json.load(reply)
        except urllib.error.HTTPError as e:
            body = e.read().decode(errors="replace")
            if e.code == 404 and "itemNotFound" in body:
                return None
            raise AssertionError(f"GET {request.full_url}: {e.code} {body}") from e

    def api_show(self, kind: str, ref: str) -> dict | None:
        """A volume or snapshot (by id) as the REST API shows it to the admin; None once it is gone."""
        collection = {"volume": "volumes", "snapshot": "snapshots"}[kind]
        body = self.api_get(f"/{collection}/{ref}")
        return None if body is None else body[kind]

    def wait_status(self, kind: str, ref: str, wanted: str, timeout: float = 300) -> dict:
        """Waits for a volume/snapshot to reach ``wanted`` and returns it as the REST API shows it; an
        error status fails at once, with the logs."""
        def check():
            current = self.api_show(kind, ref)
            if current is None:
                self.fail(f"{kind} {ref} does not exist (while waiting for it to be {wanted})")
            status = current["status"]
            if status == wanted:
                return current
            if status.startswith("error") and not wanted.startswith("error"):
                self.fail(f"{kind} {ref} went to {status} while waiting for {wanted}: {current}")
            return None
        return self._wait(f"{kind} {ref} to be {wanted}", check, timeout, interval=0.5)

    def wait_gone(self, kind: str, ref: str, timeout: float = 300) -> None:
        def check():
            current = self.api_show(kind, ref)
            if current is None:
                return True
            status = current["status"]
            if status.startswith("error"):
                self.fail(f"{kind} {ref} went to {status} while being deleted")
            return None
        self._wait(f"{kind} {ref} to be deleted", check, timeout, interval=0.5)

    def _services_up(self, volumes: bool = True):
        # Before 3.49 the service list is read from the DB only; later versions also ask the
        # scheduler over RPC, and a call sent before the scheduler's queue exists is lost (the
        # caller then waits for the RPC timeout).
        rows = self.api_get("/os-services")["services"]
        states = {(r["binary"], r["host"]): (r["status"], r["state"]) for r in rows}
        wanted = [("cinder-scheduler", self.host)]
        if volumes:
            wanted += [("cinder-volume", f"{self.host}@{name}") for name in self.backends]
        if all(states.get(key) == ("enabled", "up") for key in wanted):
            return states
        return None

    def wait_pool(self, backend: str | None = None):
        """The scheduler's view of ``backend``'s pool (the first backend's by default) once it has stats."""
        name = f"{self.host}@{backend or self.backend}#{backend or self.backend}"

        def check():
            for pool in property_tables(self.cli("get-pools", "--detail").stdout):
                if pool.get("name") == name and pool.get("total_capacity_gb") not in (None, "", "0", "0.0",
                                                                                      "unknown"):
                    return pool
            return None
        return self._wait("the fastblock pool's stats in the scheduler", check, START_TIMEOUT_S)


def table_rows(output: str) -> list[dict[str, str]]:
    """Rows of the prettytables in ``output`` (several tables: all their rows, each with its header)."""
    rows: list[dict[str, str]] = []
    header: list[str] = []
    state = 0  # 0 outside, 1 expecting the header, 2 after it, 3 in the rows
    for line in output.splitlines():
        if line.startswith("+"):
            state = {0: 1, 2: 3, 3: 0}.get(state, 0)
            continue
        if not line.startswith("|"):
            state = 0
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if state == 1:
            header, state = cells, 2
        elif state == 3 and len(cells) == len(header):
            rows.append(dict(zip(header, cells)))
    return rows


def property_tables(output: str) -> list[dict[str, str]]:
    """Each Property/Value table in ``output`` on its own (get-pools --detail prints one per pool)."""
    tables: list[dict[str, str]] = []
    for line in output.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells == ["Property", "Value"]:
            tables.append({})
        elif tables and len(cells) == 2:
            tables[-1][cells[0]] = cells[1]
    return tables


def properties(output: str) -> dict[str, str]:
    """Property/Value tables (one or several, as attachment-create prints) as one dict."""
    merged: dict[str, str] = {}
    for row in table_rows(output):
        keys = list(row)
        if len(keys) == 2 and keys[1] == "Value":
            merged[row[keys[0]]] = row["Value"]
    return merged


def id_of(output: str) -> str:
    value = properties(output).get("id", "")
    if not re.fullmatch(r"[0-9a-f-]{36}", value):
        raise AssertionError(f"no id in:\n{output}")
    return value


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
