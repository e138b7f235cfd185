"""The hook the local Cinder's services load turns oslo.db's deferred sqlite transactions into ones that
take the write lock first, so a transaction that read before another process's commit waits for the
lock instead of failing with 'database is locked' (which the busy timeout does not cover).

Both sides run the same interleaving through oslo.db's own engine in a fresh interpreter, once without
the hook (the failure it exists for) and once with it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

HOOK_DIR = Path(__file__).resolve().parent / "sqlite_writer_first"

# One transaction reads, another connection commits a write, then the first writes. WAL mode, as the
# harness sets it, and a busy timeout long enough that only an immediate SQLITE_BUSY can fail it.
INTERLEAVING = textwrap.dedent("""
    import sqlite3, sys, threading
    from oslo_db.sqlalchemy import engines
    import sqlalchemy as sa

    path = sys.argv[1]
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE attachment (id INTEGER PRIMARY KEY, status TEXT)")
        db.execute("INSERT INTO attachment VALUES (1, 'reserved'), (2, 'reserved')")
    engine = engines.create_engine(f"sqlite:///{path}?timeout=10")
    first_read = threading.Event()
    other_committed = threading.Event()
    errors = []

    def first():
        try:
            with engine.begin() as conn:
                conn.execute(sa.text("SELECT status FROM attachment WHERE id = 1")).fetchall()
                first_read.set()
                # Without the hook the other side commits now; with it, the other side waits for us.
                other_committed.wait(0.5)
                conn.execute(sa.text("UPDATE attachment SET status = 'attached' WHERE id = 1"))
        except Exception as error:
            errors.append(f"first: {error}")

    def other():
        first_read.wait(5)
        try:
            with engine.begin() as conn:
                conn.execute(sa.text("UPDATE attachment SET status = 'attaching' WHERE id = 2"))
            other_committed.set()
        except Exception as error:
            errors.append(f"other: {error}")

    threads = [threading.Thread(target=first), threading.Thread(target=other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT id, status FROM attachment ORDER BY id").fetchall()
    print(errors or "ok", rows)
""")


def _run(tmp_path: Path, hooked: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if hooked:
        env["PYTHONPATH"] = str(HOOK_DIR)
    db = tmp_path / ("hooked.sqlite" if hooked else "plain.sqlite")
    result = subprocess.run([sys.executable, "-c", INTERLEAVING, str(db)], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_without_the_hook_a_transaction_that_read_first_fails_at_once(tmp_path):
    out = _run(tmp_path, hooked=False)
    assert "database is locked" in out and "first:" in out, out
    assert "(1, 'reserved')" in out, out  # its update was lost, as in the CI failure


def test_with_the_hook_both_transactions_commit(tmp_path):
    out = _run(tmp_path, hooked=True)
    assert out == "ok [(1, 'attached'), (2, 'attaching')]", out
