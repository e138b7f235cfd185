"""Client for the fastblock namenode REST API (v1), shared by the admin CLI and the Cinder driver.

Standard library only (urllib) so that it installs into cinder-volume without new requirements.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

DEFAULT_URL = "http://127.0.0.1:9333"
MAX_REDIRECTS = 3


class FastblockError(Exception):
    """The namenode answered with an HTTP error (4xx/5xx)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class FastblockConnectionError(Exception):
    """No namenode URL could be reached; ``attempts`` holds (url, reason) for every URL tried."""

    def __init__(self, attempts: list[tuple[str, str]]):
        self.attempts = attempts
        self.urls = [url for url, _ in attempts]
        tried = ", ".join(f"{url} ({reason})" for url, reason in attempts)
        super().__init__(f"cannot reach the fastblock namenode at {tried}")


class FastblockClient:
    """Talks to one namenode, falling over to the next URL when one cannot be reached.

    A URL is skipped only when the connection itself fails (refused, unreachable, timed out) or the
    namenode answers 503 (e.g. a standby that knows no leader); any other HTTP answer is final. A
    standby answers writes with 307 and the leader's URL in ``Location``: the request (method, body,
    token) is repeated there, at most ``MAX_REDIRECTS`` times.
    Note that a timed-out POST may have been applied by the namenode that timed out: retrying it on the
    next URL can then report VOLUME_EXISTS.
    """

    def __init__(
        self,
        urls: list[str] | str,
        token: str | None = None,
        timeout: float = 10,
        ssl_verify: bool | str = True,
    ):
        """``ssl_verify``: True checks https namenodes against the system CAs, a path against that CA
        bundle, False not at all (test clusters with self-signed certificates only)."""
        if isinstance(urls, str):
            urls = [urls]
        cleaned = [url.strip().rstrip("/") for url in urls if url and url.strip()]
        if not cleaned:
            raise ValueError("at least one namenode URL is required")
        for url in cleaned:
            parsed = urllib.parse.urlsplit(url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise ValueError(f"invalid namenode URL {url!r}: expected http://HOST:PORT or https://HOST:PORT")
        self.urls = cleaned
        self.token = token
        self.timeout = timeout
        self._opener = _opener(ssl_verify)

    # --- API -------------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        return self._request("GET", "/v1/health")

    def create_volume(
        self,
        name: str,
        size: int | str,
        chunk_size: int | None = None,
        client_id: str | None = None,
        tenant: str | None = None,
        qos: dict[str, int] | None = None,
    ) -> dict[str, Any]:
        """Creates a volume; with ``client_id`` a repeat of the same create returns the same volume."""
        body: dict[str, Any] = {"name": name, "size": size}
        if chunk_size is not None:
            body["chunkSize"] = chunk_size
        if client_id is not None:
            body["id"] = client_id
        if tenant is not None:
            body["tenant"] = tenant
        if qos:
            body["qos"] = qos
        return self._request("POST", "/v1/volumes", body)

    def clone_volume(
        self,
        name: str,
        source_volume: str | None = None,
        source_snapshot: tuple[str, str] | None = None,
        size: int | str | None = None,
        client_id: str | None = None,
        tenant: str | None = None,
        qos: dict[str, int] | None = None,
    ) -> dict[str, Any]:
        """A new volume sharing the data of a volume or of a snapshot ``(volume, snapshot)`` until written.

        ``size`` None keeps the source's size; a larger one grows the clone (never smaller).
        """
        if (source_volume is None) == (source_snapshot is None):
            raise ValueError("give exactly one of source_volume and source_snapshot")
        body: dict[str, Any] = {"name": name}
        if source_volume is not None:
            body["source"] = {"volume": source_volume}
        else:
            body["source"] = {"snapshot": f"{source_snapshot[0]}/{source_snapshot[1]}"}
        if size is not None:
            body["size"] = size
        if client_id is not None:
            body["id"] = client_id
        if tenant is not None:
            body["tenant"] = tenant
        if qos:
            body["qos"] = qos
        return self._request("POST", "/v1/volumes", body)

    def update_volume(self, name: str, new_name: str | None = None, qos: dict[str, int] | None = None) -> dict[str, Any]:
        """Renames a volume and/or replaces its QoS limits (``{}`` clears them); no data moves."""
        body: dict[str, Any] = {}
        if new_name is not None:
            body["name"] = new_name
        if qos is not None:
            body["qos"] = qos
        if not body:
            raise ValueError("nothing to update: give new_name and/or qos")
        return self._request("PATCH", "/v1/volumes/" + _segment(name), body)

    def extend_volume(self, name: str, size: int | str) -> dict[str, Any]:
        return self._request("POST", "/v1/volumes/" + _segment(name) + "/extend", {"size": size})

    def revert_volume(self, name: str, snapshot: str) -> dict[str, Any]:
        """Reverts a volume to its latest snapshot (409 NOT_LATEST_SNAPSHOT for an older one)."""
        return self._request("POST", "/v1/volumes/" + _segment(name) + "/revert", {"snapshot": snapshot})

    def create_snapshot(self, volume: str, name: str, client_id: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name}
        if client_id is not None:
            body["id"] = client_id
        return self._request("POST", "/v1/volumes/" + _segment(volume) + "/snapshots", body)

    def list_snapshots(self, volume: str) -> list[dict[str, Any]]:
        return self._field(self._request("GET", "/v1/volumes/" + _segment(volume) + "/snapshots"), "snapshots")

    def get_snapshot(self, volume: str, name: str) -> dict[str, Any]:
        return self._request("GET", "/v1/volumes/" + _segment(volume) + "/snapshots/" + _segment(name))

    def delete_snapshot(self, volume: str, name: str) -> None:
        self._request("DELETE", "/v1/volumes/" + _segment(volume) + "/snapshots/" + _segment(name))

    def create_export(
        self, name: str, initiator: str, host: str | None = None, chap: str | dict[str, str] = "generate"
    ) -> dict[str, Any]:
        """Exports a volume to an initiator IQN (or "*"); ``chap`` is "generate", "none" or credentials."""
        body: dict[str, Any] = {"initiator": initiator, "chap": chap}
        if host is not None:
            body["host"] = host
        return self._request("POST", "/v1/volumes/" + _segment(name) + "/exports", body)

    def list_exports(self, name: str) -> list[dict[str, Any]]:
        return self._field(self._request("GET", "/v1/volumes/" + _segment(name) + "/exports"), "exports")

    def delete_export(self, name: str, initiator: str) -> None:
        self._request("DELETE", "/v1/volumes/" + _segment(name) + "/exports/" + _segment(initiator))

    def get_lease(self, name: str) -> dict[str, Any]:
        """The volume's write lease as it stands (holder, epoch, expiresAt), without taking it."""
        return self._request("GET", "/v1/volumes/" + _segment(name) + "/lease")

    def drain_node(self, node_id: str) -> dict[str, Any]:
        return self._request("POST", "/v1/nodes/" + _segment(node_id) + "/drain", {})

    def list_volumes(self) -> list[dict[str, Any]]:
        return self._field(self._request("GET", "/v1/volumes"), "volumes")

    def get_volume(self, name: str) -> dict[str, Any]:
        return self._request("GET", "/v1/volumes/" + _segment(name))

    def delete_volume(self, name: str) -> None:
        self._request("DELETE", "/v1/volumes/" + _segment(name))

    def list_nodes(self) -> list[dict[str, Any]]:
        return self._field(self._request("GET", "/v1/nodes"), "nodes")

    def list_groups(self) -> list[dict[str, Any]]:
        return self._field(self._request("GET", "/v1/groups"), "groups")

    def status(self) -> dict[str, Any]:
        return self._request("GET", "/v1/status")

    # --- transport -------------------------------------------------------------------------------

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token

        attempts: list[tuple[str, str]] = []
        unavailable: FastblockError | None = None
        for base in self.urls:
            try:
                return self._send(base + path, method, data, headers)
            except urllib.error.HTTPError as error:
                failure = _error_from_response(error.code, error.reason, _read_quietly(error))
                if error.code == 503:
                    unavailable = failure
                    continue
                raise failure from None
            except urllib.error.URLError as error:
                attempts.append((base, _describe(error.reason)))
            except (OSError, http.client.HTTPException) as error:
                # A namenode dying mid-answer raises http.client errors that are not OSErrors
                # (IncompleteRead, BadStatusLine).
                attempts.append((base, _describe(error)))
        if unavailable is not None:
            raise unavailable
        raise FastblockConnectionError(attempts)

    def _send(self, url: str, method: str, data: bytes | None, headers: dict[str, str]) -> Any:
        """One request, following a standby's 307/308 to the leader with the same method, body and headers."""
        for _ in range(MAX_REDIRECTS + 1):
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    return _decode_success(response.status, response.read())
            except urllib.error.HTTPError as error:
                location = error.headers.get("Location") if error.headers else None
                if error.code in (307, 308) and location:
                    _read_quietly(error)
                    url = urllib.parse.urljoin(url, location)
                    continue
                raise
        raise FastblockError(307, "TOO_MANY_REDIRECTS", f"more than {MAX_REDIRECTS} redirects, last to {url}")

    @staticmethod
    def _field(payload: Any, name: str) -> list[dict[str, Any]]:
        if not isinstance(payload, dict) or not isinstance(payload.get(name), list):
            raise FastblockError(200, "BAD_RESPONSE", f"expected a JSON object with a {name!r} list, got {payload!r}")
        return payload[name]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are followed by FastblockClient itself, which keeps method, body and token."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401, ANN001
        return None


def _opener(ssl_verify: bool | str) -> urllib.request.OpenerDirector:
    if ssl_verify is True:
        context = ssl.create_default_context()
    elif ssl_verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = ssl.create_default_context(cafile=ssl_verify)
    return urllib.request.build_opener(_NoRedirect, urllib.request.HTTPSHandler(context=context))


def _segment(name: str) -> str:
    # Quote everything, including "/", so a name can never address another resource.
    return urllib.parse.quote(name, safe="")


def _read_quietly(error: urllib.error.HTTPError) -> bytes:
    try:
        return error.read()
    except Exception:  # the body is only used for the message; a broken body must not hide the status
        return b""


def _decode_success(status: int, raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError:
        text = raw.decode("utf-8", errors="replace").strip()
        raise FastblockError(status, "BAD_RESPONSE", f"namenode answered HTTP {status} with a body that is not JSON: {text[:200]}") from None


def _error_from_response(status: int, reason: str, raw: bytes) -> FastblockError:
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if isinstance(payload, dict) and isinstance(payload.get("code"), str):
        message = payload.get("message")
        return FastblockError(status, payload["code"], message if isinstance(message, str) else text)
    return FastblockError(status, f"HTTP_{status}", text or str(reason or "no message"))


def _describe(reason: Any) -> str:
    if isinstance(reason, socket.timeout) or isinstance(reason, TimeoutError):
        return "timed out"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__
