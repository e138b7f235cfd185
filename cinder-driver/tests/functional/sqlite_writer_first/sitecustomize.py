"""Loaded by the local Cinder's services (their PYTHONPATH starts here): every transaction oslo.db opens
on sqlite takes the write lock when it begins (BEGIN IMMEDIATE) instead of at its first write.

Why: the five processes share one sqlite file in WAL mode. A deferred transaction that has read and
then writes, after another process committed in between, gets SQLITE_BUSY at once: sqlite does not run
the busy timeout for a stale snapshot, so `?timeout=60` never helps. That failed cinder-volume's
`UPDATE volume_attachment` in CI and left the volume reserved. Taking the lock first makes every
conflict a wait that the busy timeout covers. Transactions are short and do no I/O that yields, so
waiting costs milliseconds. Production Cinder runs on MySQL or PostgreSQL and never loads this.

Only sqlite3 is imported here, which does not import threading: the services monkey-patch with
eventlet after this module runs.
"""

import sqlite3

_connect = sqlite3.connect


class _WriterFirstCursor(sqlite3.Cursor):
    def execute(self, sql, *args):
        if isinstance(sql, str) and sql.strip().upper() == "BEGIN":
            sql = "BEGIN IMMEDIATE"
        return super().execute(sql, *args)


class _WriterFirstConnection(sqlite3.Connection):
    def cursor(self, factory=_WriterFirstCursor):
        return super().cursor(factory)

    def execute(self, sql, *args):
        return self.cursor().execute(sql, *args)


def _writer_first_connect(*args, **kwargs):
    kwargs.setdefault("factory", _WriterFirstConnection)
    return _connect(*args, **kwargs)


sqlite3.connect = _writer_first_connect
sqlite3.dbapi2.connect = _writer_first_connect
