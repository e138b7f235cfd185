"""A real Glance image API for the end-to-end test: glance-api (the WSGI application, under gunicorn:
Glance no longer runs standalone) on sqlite with a file store under the test's directory, bound to
127.0.0.1 on a free port, without Keystone (unauthenticated context, an open policy), as cinder-api
runs with noauth. It lives in its own virtualenv (.venv-glance, made by scripts/install-deps) so its
OpenStack libraries never move Cinder's.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
GLANCE_VENV = REPO_ROOT / ".venv-glance"
START_TIMEOUT_S = 180

# Every image call the test and Cinder make, open to the unauthenticated context.
_POLICY_RULES = ("default", "context_is_admin", "get_images", "get_image", "add_image", "upload_image",
                 "download_image", "modify_image", "delete_image", "publicize_image", "communitize_image",
                 "get_image_location", "set_image_location", "delete_image_location", "add_image_location",
                 "fetch_image_location", "get_member", "get_members", "add_member", "modify_member",
                 "delete_member", "stage_image", "import_image", "deactivate", "reactivate", "get_stores")


class Glance:
    def __init__(self, processes, workdir: Path, port: int):
        self.dir = workdir / "glance"
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        for sub in ("images", "staging", "tasks"):
            (self.dir / sub).mkdir(parents=True)
        paste = GLANCE_VENV / "etc" / "glance" / "glance-api-paste.ini"
        (self.dir / "policy.yaml").write_text("".join(f'"{rule}": ""\n' for rule in _POLICY_RULES))
        (self.dir / "glance-api.conf").write_text(f"""\
[DEFAULT]
enabled_backends = fs:file
[database]
connection = sqlite:///{self.dir}/glance.sqlite
[paste_deploy]
flavor =
config_file = {paste}
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = {self.dir}/images
[os_glance_staging_store]
filesystem_store_datadir = {self.dir}/staging
[os_glance_tasks_store]
filesystem_store_datadir = {self.dir}/tasks
[oslo_policy]
policy_file = {self.dir}/policy.yaml
enforce_new_defaults = False
enforce_scope = False
""")
        manage = GLANCE_VENV / "bin" / "glance-manage"
        if not manage.exists():
            raise AssertionError(f"{manage} is missing: run scripts/install-deps (it makes .venv-glance)")
        sync = subprocess.run([str(manage), "--config-file", str(self.dir / "glance-api.conf"), "db_sync"],
                              capture_output=True, text=True, timeout=300, cwd=self.dir)
        if sync.returncode != 0:
            raise AssertionError(f"glance-manage db_sync failed:\n{sync.stdout}\n{sync.stderr}")
        env = dict(os.environ, OS_GLANCE_CONFIG_DIR=str(self.dir))
        env.pop("PYTHONPATH", None)
        processes.start("glance-api", [str(GLANCE_VENV / "bin" / "gunicorn"), "-b", f"127.0.0.1:{port}", "-w", "1",
                                       "--threads", "4", "--timeout", "300", "glance.wsgi.api:application"], env)

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/v2/images", timeout=5) as answer:
                return answer.status == 200
        except OSError:
            return False

    def _call(self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"):
        request = urllib.request.Request(self.url + path, data=body, method=method,
                                         headers={"Content-Type": content_type} if body is not None else {})
        with urllib.request.urlopen(request, timeout=300) as answer:
            data = answer.read()
        return json.loads(data) if data and answer.headers.get_content_type() == "application/json" else data

    def create_image(self, name: str, disk_format: str, path: Path) -> str:
        image = self._call("POST", "/v2/images", json.dumps({"name": name, "disk_format": disk_format,
                                                             "container_format": "bare"}).encode())
        self._call("PUT", f"/v2/images/{image['id']}/file", path.read_bytes(), "application/octet-stream")
        return image["id"]

    def show(self, image_id: str) -> dict:
        return self._call("GET", f"/v2/images/{image_id}")

    def download(self, image_id: str, path: Path) -> None:
        path.write_bytes(self._call("GET", f"/v2/images/{image_id}/file"))

    def wait_active(self, image_id: str, timeout: float = 300) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            image = self.show(image_id)
            if image["status"] == "active":
                return image
            if image["status"] in ("killed", "deleted"):
                raise AssertionError(f"image {image_id} went to {image['status']}: {image}")
            time.sleep(0.5)
        raise AssertionError(f"image {image_id} not active after {timeout:.0f} s: {self.show(image_id)}")
