"""The local Cinder's harness asks a failed CLI call again only when cinder-api's log says its sqlite
file was locked for that very request (the harness's database failed, not the driver)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

from cinder_services import CinderServices

REQ = "req-af35e697-bd7a-4d81-9c96-6c0d381f2e35"
OTHER = "req-00000000-1111-2222-3333-444444444444"
FAILED = subprocess.CompletedProcess(
    [], 1, "", f"ERROR: The server has either erred or is incapable of performing the requested operation. "
               f"(HTTP 500) (Request-ID: {REQ})\n")


def _api_log(tmp_path: Path, request: str, error: str) -> SimpleNamespace:
    log = tmp_path / "log"
    log.mkdir(parents=True)
    # As oslo.log writes an exception: the first line carries the request, the traceback's lines do not.
    (log / "cinder-api.log").write_text(
        f"2026-11-22 03:05:50.520 17601 INFO cinder.api.openstack.wsgi [None {OTHER} admin admin - - - -] GET\n"
        f"2026-11-22 03:05:50.525 17601 ERROR cinder.api.middleware.fault [None {request} admin admin - - - -] "
        f"Caught error: <class 'sqlalchemy.exc.OperationalError'> {error}\n"
        "2026-11-22 03:05:50.525 17601 ERROR cinder.api.middleware.fault Traceback (most recent call last):\n"
        f"2026-11-22 03:05:50.525 17601 ERROR cinder.api.middleware.fault sqlalchemy.exc.OperationalError: {error}\n"
        f"2026-11-22 03:05:50.536 17601 INFO cinder.api.middleware.fault [None {request} admin admin - - - -] "
        "returned with HTTP 500\n")
    return SimpleNamespace(log_dir=log)


def test_a_locked_database_for_this_request_is_asked_again(tmp_path):
    services = _api_log(tmp_path, REQ, "(sqlite3.OperationalError) database is locked")
    assert CinderServices._sqlite_locked(services, FAILED)


def test_other_failures_are_not_asked_again(tmp_path):
    locked_elsewhere = _api_log(tmp_path, OTHER, "(sqlite3.OperationalError) database is locked")
    assert not CinderServices._sqlite_locked(locked_elsewhere, FAILED)
    other_error = _api_log(tmp_path / "b", REQ, "(sqlite3.IntegrityError) UNIQUE constraint failed")
    assert not CinderServices._sqlite_locked(other_error, FAILED)
    ok = subprocess.CompletedProcess([], 0, "", "")
    assert not CinderServices._sqlite_locked(_api_log(tmp_path / "c", REQ, "database is locked"), ok)
    client_error = subprocess.CompletedProcess([], 1, "", f"ERROR: Invalid input (HTTP 400) (Request-ID: {REQ})")
    assert not CinderServices._sqlite_locked(_api_log(tmp_path / "d", REQ, "database is locked"), client_error)
