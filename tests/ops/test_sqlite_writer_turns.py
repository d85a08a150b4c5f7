"""Writers to a SQLite file take turns (writer_turns.WriterTurns): a writer waits while another holds the
turn, goes on as soon as it is given back, however the holder's transaction ended, and no turn
outlives the connection or the process that took it."""

from __future__ import annotations

import errno
import fcntl
import gc
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from inventory_ai import writer_turns
from inventory_ai.config import engine_options
from inventory_ai.database import install_sqlite_pragmas, write_transaction
from inventory_ai.writer_turns import WriterTurns

REPO = Path(__file__).resolve().parents[2]
# Far below SQLite's busy_timeout (15 s): a writer that got through within it was handed the turn,
# not let in by SQLite giving up on the lock.
HANDED_OVER = 5


@pytest.fixture
def engine(tmp_path):
    url = f"sqlite:///{tmp_path}/turns.db"
    engine = create_engine(url, **engine_options(url))
    install_sqlite_pragmas(engine)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE moves (id INTEGER PRIMARY KEY, who TEXT)"))
    yield engine
    engine.dispose()


def write_in_thread(engine, who: str) -> threading.Event:
    done = threading.Event()

    def write():
        with write_transaction(engine) as session:
            session.execute(text("INSERT INTO moves (who) VALUES (:who)"), {"who": who})
        done.set()

    threading.Thread(target=write, daemon=True).start()
    return done


def written(engine) -> list[str]:
    with engine.connect() as conn:
        return [who for (who,) in conn.execute(text("SELECT who FROM moves ORDER BY id"))]


def test_a_writer_waits_for_the_turn_and_goes_on_when_it_is_given_back(engine):
    with write_transaction(engine) as first:
        first.execute(text("INSERT INTO moves (who) VALUES ('first')"))
        second = write_in_thread(engine, "second")
        assert not second.wait(0.3)  # still the first writer's turn
    assert second.wait(HANDED_OVER)
    assert written(engine) == ["first", "second"]


@pytest.mark.parametrize("ending", ["commit", "rollback", "connection closed"])
def test_the_turn_is_given_back_however_the_transaction_ends(engine, ending):
    conn = engine.connect().execution_options(sqlite_begin="BEGIN IMMEDIATE")
    conn.begin()
    conn.execute(text("INSERT INTO moves (who) VALUES ('first')"))
    if ending == "commit":
        conn.commit()
    elif ending == "rollback":
        conn.rollback()
    else:
        conn.invalidate()  # the DBAPI connection is closed under the open transaction
    assert write_in_thread(engine, "next").wait(HANDED_OVER)
    conn.close()
    assert written(engine)[-1] == "next"


def test_a_turn_never_outlives_its_connection():
    turns = WriterTurns(None)

    class Connection:
        pass

    dropped = Connection()
    assert turns.take(dropped)
    del dropped  # dropped without its transaction ending
    gc.collect()
    got = threading.Event()
    threading.Thread(target=lambda: turns.take(Connection()) and got.set(), daemon=True).start()
    assert got.wait(HANDED_OVER)


HOLDER = """
import sys
from sqlalchemy import create_engine, text
from inventory_ai.config import engine_options
from inventory_ai.database import install_sqlite_pragmas
url = sys.argv[1]
engine = create_engine(url, **engine_options(url))
install_sqlite_pragmas(engine)
conn = engine.connect().execution_options(sqlite_begin="BEGIN IMMEDIATE")
conn.begin()
conn.execute(text("INSERT INTO moves (who) VALUES ('other process')"))
print("holding", flush=True)
sys.stdin.readline()
conn.commit()
print("given back", flush=True)
sys.stdin.readline()
"""


@contextmanager
def holder(engine) -> Iterator[subprocess.Popen]:
    """Another process holding the turn (its transaction open) until told on its stdin."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(engine.url)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    ) as process:  # fmt: skip
        try:
            assert process.stdout.readline().strip() == "holding"
            yield process
        finally:
            process.kill()


def file_turn_is_free(engine) -> bool:
    with open(f"{engine.url.database}-writers") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(lock, fcntl.LOCK_UN)
        return True


def test_processes_take_turns_through_the_file_beside_the_database(engine):
    with holder(engine) as process:
        assert not file_turn_is_free(engine)
        process.stdin.write("\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "given back"
        assert file_turn_is_free(engine)
        assert write_in_thread(engine, "here").wait(HANDED_OVER)
    assert written(engine) == ["other process", "here"]


def test_a_killed_process_does_not_keep_the_turn(engine):
    with holder(engine) as process:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert write_in_thread(engine, "here").wait(HANDED_OVER)
    assert written(engine) == ["here"]  # the killed writer's row was never committed


def test_a_write_that_cannot_get_its_turn_gives_up_within_the_limit_not_twice_it(engine, monkeypatch):
    monkeypatch.setattr(writer_turns, "WRITE_LOCK_SECONDS", 1)
    with holder(engine):
        started = time.monotonic()
        with pytest.raises(OperationalError, match="locked"), write_transaction(engine):
            pass
        # its turn for 1 s, then SQLite once, not SQLite's busy_timeout (15 s) on top
        assert time.monotonic() - started < 5
    assert write_in_thread(engine, "after").wait(HANDED_OVER)  # nothing was left held


def test_a_filesystem_without_file_locks_leaves_sqlite_to_decide(engine, monkeypatch):
    def refused(*_args):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(writer_turns.fcntl, "flock", refused)
    for who in ("first", "second"):  # the first finds out; neither is left waiting for a turn
        assert write_in_thread(engine, who).wait(HANDED_OVER)
    assert written(engine) == ["first", "second"]


FORKING_HOLDER = HOLDER.replace(
    'print("holding", flush=True)',
    """import os, time
child = os.fork()
if child == 0:  # a child that outlives its parent, holding nothing of its own
    time.sleep(60)
    os._exit(0)
print(child, flush=True)
print("holding", flush=True)""",
)


def test_a_forked_child_does_not_keep_its_parents_turn_alive(engine):
    with subprocess.Popen(
        [sys.executable, "-c", FORKING_HOLDER, str(engine.url)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    ) as parent:  # fmt: skip
        child = int(parent.stdout.readline())
        try:
            assert parent.stdout.readline().strip() == "holding"
            os.kill(parent.pid, signal.SIGKILL)
            parent.wait()
            assert write_in_thread(engine, "here").wait(HANDED_OVER)
        finally:
            os.kill(child, signal.SIGKILL)
    assert written(engine) == ["here"]


def test_a_turn_asks_the_kernel_for_nothing_but_the_file_lock(tmp_path, monkeypatch):
    """The process's id is known without a system call: a message takes and gives back three turns."""
    turns = WriterTurns(str(tmp_path / "turns.db"))

    class Connection:
        pass

    holder = Connection()
    turns.take(holder)  # this process's state made
    turns.give_back(holder)
    monkeypatch.setattr(os, "getpid", lambda: pytest.fail("os.getpid() at a turn"))
    assert turns.take(holder)
    turns.give_back(holder)
    assert turns.take(Connection())  # given back: the next writer has it at once
