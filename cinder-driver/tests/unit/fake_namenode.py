"""A small in-memory namenode speaking the v1 REST contract over a real HTTP socket.

It is deliberately strict in the same places as the real namenode (names, sizes, chunk sizes, 404/409),
so the client and CLI are tested against the wire format, not against mocks.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

NAME = re.compile(r"[a-z0-9][a-z0-9.-]{0,62}")
SIZE = re.compile(r"([0-9]+)(?:([KMGTP])(?:i|iB|B)?)?")
MULTIPLIER = {None: 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
DEFAULT_CHUNK = 64 << 20
QOS_FIELDS = ("totalIopsSec", "readIopsSec", "writeIopsSec", "totalBytesSec", "readBytesSec", "writeBytesSec")


def _group(group_id: int, ids: list[str], dead: set[str]) -> dict[str, Any]:
    return {
        "id": group_id,
        "chainVersion": 1,
        "members": [
            {"id": node, "host": "127.0.0.1", "port": 9400 + int(node.split("-")[1]), "live": node not in dead}
            for node in ids
        ],
    }


class FakeNamenode:
    def __init__(self) -> None:
        self.volumes: dict[str, dict[str, Any]] = {}
        self.next_id = 1
        self.requests: list[dict[str, Any]] = []
        # (status, body bytes, content type): answered once for the next request instead of the API.
        self.canned: list[tuple[int, bytes, str]] = []
        self.dead: set[str] = set()
        self.down: list[dict[str, Any]] = []  # /v1/status "down": the namenode's down/out interval records
        self.exports: dict[str, dict[str, dict[str, Any]]] = {}
        # volume name -> snapshots, oldest first (contract B)
        self.snapshots: dict[str, list[dict[str, Any]]] = {}
        # volume name -> gateway holding a live write lease (contract C: no rename then)
        self.leased: dict[str, str] = {}
        self.node_state: dict[str, str] = {}
        self.labels: dict[str, dict[str, str]] = {}
        # group id -> joining node and its reported progress (copied, total) or None
        self.joining: dict[int, tuple[str, tuple[int, int] | None]] = {}
        # when set, every request except GET is answered 307 to this base URL (a standby)
        self.redirect_to: str | None = None
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-namenode", daemon=True)

    def start(self) -> FakeNamenode:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def answer_next(self, status: int, body: bytes | str, content_type: str = "application/json") -> None:
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.canned.append((status, body, content_type))

    # --- contract --------------------------------------------------------------------------------

    def nodes(self) -> list[dict[str, Any]]:
        return [
            {
                "id": f"storage-{i}",
                "host": "127.0.0.1",
                "port": 9400 + i,
                "live": f"storage-{i}" not in self.dead,
                "capacityBytes": 100 << 30,
                "freeBytes": (100 - 10 * i) << 30,
                "labels": self.labels.get(f"storage-{i}", {}),
                "state": self.node_state.get(f"storage-{i}", "active"),
                "load": None if f"storage-{i}" in self.dead else {
                    "capacityBytes": 100 << 30,
                    "freeBytes": (100 - 10 * i) << 30,
                    "queueDepth": {"read": i, "write": 2 * i, "catch-up": 0, "other": 0},
                    "reportedAt": "2026-11-21T10:00:00Z",
                },
            }
            for i in (1, 2, 3)
        ]

    def groups(self) -> list[dict[str, Any]]:
        groups = [
            _group(1, ["storage-1", "storage-2", "storage-3"], self.dead),
            _group(2, ["storage-2", "storage-3", "storage-1"], self.dead),
            _group(3, ["storage-3", "storage-1", "storage-2"], self.dead),
        ]
        for group in groups:
            group["degraded"] = any(not m["live"] for m in group["members"])
            joining = self.joining.get(group["id"])
            group["joining"] = None
            if joining is not None:
                node, progress = joining
                group["joining"] = {
                    "id": node, "host": "127.0.0.1", "port": 9499, "live": True,
                    "copiedBytes": progress[0] if progress else None,
                    "totalBytes": progress[1] if progress else None,
                }
        return groups

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        if self.redirect_to is not None and method != "GET":
            return 307, {"code": "NOT_LEADER", "message": f"standby; the leader is {self.redirect_to}"}
        if method == "POST" and path.startswith("/v1/nodes/") and path.endswith("/drain"):
            node = path[len("/v1/nodes/"):-len("/drain")]
            if node not in {n["id"] for n in self.nodes()}:
                return 404, {"code": "NODE_NOT_FOUND", "message": f"no storage node '{node}' is registered"}
            self.node_state[node] = "draining"
            return 202, next(n for n in self.nodes() if n["id"] == node)
        if path.startswith("/v1/volumes/") and "/exports" in path:
            return self._exports(method, path, body)
        if path.startswith("/v1/volumes/") and path.count("/") >= 4:
            return self._volume_action(method, path, body)
        if method == "GET" and path == "/v1/health":
            return 200, {"status": "ok"}
        if path == "/v1/volumes" and method == "POST":
            return self._create(body)
        if path == "/v1/volumes" and method == "GET":
            return 200, {"volumes": list(self.volumes.values())}
        if path.startswith("/v1/volumes/"):
            from urllib.parse import unquote

            name = unquote(path[len("/v1/volumes/"):])
            volume = self.volumes.get(name)
            if volume is None:
                return 404, {"code": "VOLUME_NOT_FOUND", "message": f"volume {name} does not exist"}
            if method == "GET":
                return 200, volume
            if method == "DELETE":
                if self.snapshots.get(name):
                    names = ", ".join(s["name"] for s in self.snapshots[name])
                    return 409, {"code": "VOLUME_HAS_SNAPSHOTS", "message": f"volume {name} has snapshots: {names}; delete them first"}
                del self.volumes[name]
                self.exports.pop(name, None)
                return 204, None
            if method == "PATCH":
                return self._patch(name, json.loads(body))
        if method == "GET" and path == "/v1/nodes":
            return 200, {"nodes": self.nodes()}
        if method == "GET" and path == "/v1/groups":
            return 200, {"groups": self.groups()}
        if method == "GET" and path == "/v1/status":
            allocated = sum(v["allocatedChunks"] for v in self.volumes.values())
            groups = self.groups()
            return 200, {
                "nodes": self.nodes(),
                "groups": groups,
                "volumes": len(self.volumes),
                "allocatedChunks": allocated,
                "capacity": {
                    "raw": 300 << 30, "usable": 100 << 30,
                    "provisioned": sum(v["size"] for v in self.volumes.values()),
                    "allocated": 0, "oversubscription": 4.0, "provisionable": 400 << 30,
                },
                "degradedGroups": sum(1 for g in groups if g["degraded"]),
                "namenode": {"leader": True, "leaderUrl": self.url},
                "down": self.down,
            }
        return 404, {"code": "NOT_FOUND", "message": f"no route for {method} {path}"}

    def _exports(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        from urllib.parse import unquote

        rest = path[len("/v1/volumes/"):]
        name, _, tail = rest.partition("/exports")
        name = unquote(name)
        if name not in self.volumes:
            return 404, {"code": "VOLUME_NOT_FOUND", "message": f"volume {name} does not exist"}
        exports = self.exports.setdefault(name, {})
        if method == "GET" and tail == "":
            return 200, {"exports": list(exports.values())}
        if method == "POST" and tail == "":
            request = json.loads(body)
            initiator = request.get("initiator")
            if not isinstance(initiator, str) or not (initiator == "*" or initiator.startswith("iqn.")):
                return 400, {"code": "INVALID_INITIATOR", "message": f"bad initiator {initiator!r}"}
            if initiator in exports:
                return 200, exports[initiator]
            chap = None
            if request.get("chap", "generate") == "generate":
                chap = {"user": f"fb-{name}", "secret": "Abcdefgh23456789", "targetUser": None, "targetSecret": None}
            export = {"volume": name, "iqn": f"iqn.2026-11.io.fastblock:{name}", "initiator": initiator,
                      "host": request.get("host"), "chap": chap, "createdAt": "2026-11-21T12:00:00Z"}
            exports[initiator] = export
            return 201, export
        if method == "DELETE" and tail.startswith("/"):
            initiator = unquote(tail[1:])
            if exports.pop(initiator, None) is None:
                return 404, {"code": "EXPORT_NOT_FOUND", "message": f"no export to {initiator}"}
            return 204, None
        return 404, {"code": "NOT_FOUND", "message": f"no route for {method} {path}"}

    def _patch(self, name: str, request: dict[str, Any]) -> tuple[int, Any]:
        volume = self.volumes[name]
        unknown = set(request) - {"name", "qos"}
        if unknown:
            return 400, {"code": "INVALID_FIELD", "message": f"field {sorted(unknown)[0]!r} cannot be changed"}
        new_name = request.get("name")
        if new_name is not None and not (isinstance(new_name, str) and NAME.fullmatch(new_name)):
            return 400, {"code": "INVALID_NAME", "message": f"name {new_name!r} is invalid"}
        qos = request.get("qos")
        if qos is not None:
            if not isinstance(qos, dict) or set(qos) - set(QOS_FIELDS) or any(
                    not isinstance(v, int) or v < 0 for v in qos.values()):
                return 400, {"code": "INVALID_QOS", "message": f"bad qos {qos!r}"}
        if new_name is not None and new_name != name:
            if new_name in self.volumes:
                return 409, {"code": "VOLUME_EXISTS", "message": f"volume {new_name} already exists"}
            if name in self.leased:
                return 409, {"code": "VOLUME_ATTACHED", "message": f"volume '{name}' cannot be renamed while gateway '{self.leased[name]}' holds its write lease"}
        if qos is not None:
            volume["qos"] = {field: qos.get(field, 0) for field in QOS_FIELDS}
        if new_name is not None and new_name != name:
            del self.volumes[name]
            volume["name"] = new_name
            volume["iqn"] = f"iqn.2026-11.io.fastblock:{new_name}"
            self.volumes[new_name] = volume
            for key in (self.exports, self.snapshots):
                if name in key:
                    key[new_name] = key.pop(name)
            for export in self.exports.get(new_name, {}).values():
                export["volume"] = new_name
                export["iqn"] = volume["iqn"]
        return 200, volume

    def _volume_action(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        from urllib.parse import unquote

        parts = [unquote(p) for p in path[len("/v1/volumes/"):].split("/")]
        name = parts[0]
        volume = self.volumes.get(name)
        if volume is None:
            return 404, {"code": "VOLUME_NOT_FOUND", "message": f"volume {name} does not exist"}
        snaps = self.snapshots.setdefault(name, [])
        request = json.loads(body) if body else {}
        if parts[1:] == ["snapshots"] and method == "POST":
            if any(s["name"] == request.get("name") for s in snaps):
                return 409, {"code": "SNAPSHOT_EXISTS", "message": f"snapshot {request.get('name')} of {name} exists"}
            snap = {"name": request["name"], "volume": name, "id": request.get("id"), "size": volume["size"],
                    "createdAt": "2026-11-21T12:00:00Z", "state": "available"}
            snaps.append(snap)
            return 201, snap
        if parts[1:] == ["snapshots"] and method == "GET":
            return 200, {"snapshots": list(snaps)}
        if len(parts) == 3 and parts[1] == "snapshots":
            snap = next((s for s in snaps if s["name"] == parts[2]), None)
            if snap is None:
                return 404, {"code": "SNAPSHOT_NOT_FOUND", "message": f"volume {name} has no snapshot {parts[2]}"}
            if method == "GET":
                return 200, snap
            if method == "DELETE":
                snaps.remove(snap)
                return 204, None
        if parts[1:] == ["lease"] and method == "GET":
            holder = self.leased.get(name)
            return 200, {"volume": name, "volumeId": volume["id"], "holder": holder, "epoch": 1 if holder else 0,
                         "expiresAt": "2999-01-01T00:00:00Z" if holder else None, "ttlMs": 15000}
        if parts[1:] == ["extend"] and method == "POST":
            size = self._size(request.get("size"))
            if size is None or size <= volume["size"]:
                return 400, {"code": "INVALID_SIZE", "message": f"new size {request.get('size')!r} must be larger than {volume['size']}"}
            volume["size"] = size
            return 200, volume
        if parts[1:] == ["revert"] and method == "POST":
            snap = next((s for s in snaps if s["name"] == request.get("snapshot")), None)
            if snap is None:
                return 404, {"code": "SNAPSHOT_NOT_FOUND", "message": f"volume {name} has no snapshot {request.get('snapshot')}"}
            if snap is not snaps[-1]:
                return 409, {"code": "NOT_LATEST_SNAPSHOT", "message": f"{snap['name']} is not the latest snapshot of {name}"}
            volume["size"] = snap["size"]
            return 200, volume
        return 404, {"code": "NOT_FOUND", "message": f"no route for {method} {path}"}

    def _create(self, body: bytes) -> tuple[int, Any]:
        try:
            request = json.loads(body)
        except ValueError as error:
            return 400, {"code": "MALFORMED_JSON", "message": f"request body is not JSON: {error}"}
        if not isinstance(request, dict):
            return 400, {"code": "MALFORMED_JSON", "message": "request body must be a JSON object"}
        name = request.get("name")
        if not isinstance(name, str) or not NAME.fullmatch(name):
            return 400, {"code": "INVALID_NAME", "message": f"invalid volume name {name!r}: must match ^[a-z0-9][a-z0-9.-]{{0,62}}$"}
        size = self._size(request.get("size"))
        if size is None and not (request.get("source") is not None and request.get("size") is None):
            return 400, {"code": "INVALID_SIZE", "message": f"size must be a positive multiple of 512 bytes, got {request.get('size')!r}"}
        chunk = request.get("chunkSize", DEFAULT_CHUNK)
        if not isinstance(chunk, int) or chunk < (1 << 20) or chunk > (1 << 30) or chunk & (chunk - 1):
            return 400, {"code": "INVALID_CHUNK_SIZE", "message": f"chunkSize must be a power of two from 1 MiB to 1 GiB, got {chunk!r}"}
        source = request.get("source")
        source_view = None
        if source is not None:
            if "volume" in source:
                origin = self.volumes.get(source["volume"])
                source_view = {"volume": source["volume"], "snapshot": None}
            else:
                vol_name, _, snap_name = source.get("snapshot", "").partition("/")
                origin = next((s for s in self.snapshots.get(vol_name, []) if s["name"] == snap_name), None)
                source_view = {"volume": vol_name, "snapshot": snap_name}
            if origin is None:
                return 404, {"code": "SOURCE_NOT_FOUND", "message": f"source {source!r} does not exist"}
            if request.get("size") is None:
                size = origin["size"]
            elif size < origin["size"]:
                return 400, {"code": "INVALID_SIZE", "message": f"a clone cannot be smaller than its source ({origin['size']} bytes)"}
        if name in self.volumes:
            existing = self.volumes[name]
            if request.get("id") is not None and existing["clientId"] == request.get("id"):
                return 200, existing
            return 409, {"code": "VOLUME_EXISTS", "message": f"volume {name} already exists"}
        volume = {
            "id": self.next_id,
            "name": name,
            "size": size,
            "blockSize": 512,
            "chunkSize": chunk,
            "iqn": f"iqn.2026-11.io.fastblock:{name}",
            "state": "available",
            "createdAt": "2026-11-21T12:00:00Z",
            "allocatedChunks": 0,
            "tenant": request.get("tenant", "default"),
            "qos": {field: (request.get("qos") or {}).get(field, 0) for field in QOS_FIELDS},
            "clientId": request.get("id"),
            "source": source_view,
        }
        self.next_id += 1
        self.volumes[name] = volume
        return 201, volume

    @staticmethod
    def _size(value: Any) -> int | None:
        if isinstance(value, bool):
            return None
        if isinstance(value, str):
            match = SIZE.fullmatch(value)
            if not match:
                return None
            value = int(match[1]) * MULTIPLIER[match[2]]
        if not isinstance(value, int) or value <= 0 or value % 512:
            return None
        return value

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with fake.lock:
                    fake.requests.append(
                        {"method": self.command, "path": self.path, "body": body, "headers": dict(self.headers)}
                    )
                    if fake.canned:
                        status, raw, content_type = fake.canned.pop(0)
                    else:
                        status, payload = fake.handle(self.command, self.path, body)
                        raw = b"" if payload is None else json.dumps(payload).encode("utf-8")
                        content_type = "application/json"
                self.send_response(status)
                if status in (307, 308) and fake.redirect_to is not None:
                    self.send_header("Location", fake.redirect_to + self.path)
                if raw:
                    self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_DELETE = do_PATCH = _serve

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

        return Handler
