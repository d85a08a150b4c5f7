"""SQLite's writers taking turns: a lock for the threads of a process and a file lock for the
processes, given back when a transaction ends (WriterTurns, SQLiteConnection). database.py
installs them on an engine."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import threading
import time
import weakref

WRITE_LOCK_SECONDS = 15  # how long a write waits for a lock: SQLite's busy_timeout, PostgreSQL's lock_timeout


class TurnNotHad(Exception):
    """No writer's turn within WRITE_LOCK_SECONDS."""


class WriterTurns:
    """Writers to one SQLite file take turns here before BEGIN IMMEDIATE, and give the turn back
    when their transaction ends: a lock for the threads of this process, then a lock on a file
    beside the database (`…-writers`) for the processes; the kernel drops it if a process dies.

    Why: a writer that finds SQLite's lock taken sleeps in SQLite's busy handler, 1, 2, 5 … then
    25, 50 and 100 ms at a time, and keeps sleeping while the lock stands free. Under load that was
    most of a chat message's waiting (docs/benchmarks.md measures it, under the loop). Here a thread waits on
    a lock that wakes it when it is given back.

    SQLite's own lock stays the rule: a thread already holding a turn through another connection,
    a writer outside this code (the sqlite3 shell), or a file lock the filesystem refuses go to
    BEGIN IMMEDIATE and its busy_timeout, as before. A turn not had within WRITE_LOCK_SECONDS raises
    TurnNotHad: the write has had its wait."""

    _files: dict[str, WriterTurns] = {}
    _made = threading.Lock()
    # This process's id, set again in a forked child (_forget_inherited): a turn is taken and given
    # back three times a chat message, and os.getpid() at each was a system call each time.
    _process = os.getpid()

    def __init__(self, path: str | None):
        self.path = path
        self._pid = -1  # no state yet: made in the process that first takes a turn
        self._holder: weakref.ref | None = None

    @classmethod
    def for_file(cls, path: str | None) -> WriterTurns:
        key = os.path.realpath(path) if path and path != ":memory:" else ""
        with cls._made:
            return cls._files.setdefault(key, cls(key or None))

    def _own(self) -> None:
        """State of this process's own: a forked process must not share its parent's lock file (a
        lock on it would outlive the parent) nor its thread locks (held by threads it does not have)."""
        if self._pid == WriterTurns._process:
            return
        with WriterTurns._made:
            if self._pid == WriterTurns._process:
                return
            self._threads = threading.Lock()
            self._guard = threading.Lock()  # who holds the turn changes under it
            self._holder = None
            self._holder_thread: int | None = None
            self._file = None
            if self.path:  # in a folder we cannot write in, only the threads take turns
                with contextlib.suppress(OSError):
                    self._file = os.open(f"{self.path}-writers", os.O_RDONLY | os.O_CREAT, 0o644)
            self._pid = WriterTurns._process  # last: another thread sees the state whole or not at all

    @classmethod
    def _forget_inherited(cls) -> None:
        """In a forked child: close the parent's lock file here, so only the parent holds its lock."""
        cls._made = threading.Lock()  # a parent's thread may have held it at the fork
        cls._process = os.getpid()
        for turns in cls._files.values():
            if turns._pid != -1 and turns._file is not None:
                with contextlib.suppress(OSError):
                    os.close(turns._file)
            turns._pid = -1

    def take(self, connection) -> bool:
        """Wait for the turn for this connection: True once had; False when SQLite decides instead."""
        self._own()
        if self._holder_thread == threading.get_ident():
            return False  # this thread's other transaction holds it: SQLite decides, as before
        deadline = time.monotonic() + WRITE_LOCK_SECONDS
        while not self._threads.acquire(timeout=min(1.0, max(0.0, deadline - time.monotonic()))):
            held = self._holder
            if held is not None and held() is None:
                self._let_go(held)  # its connection was dropped without ending the transaction
            elif time.monotonic() >= deadline:
                raise TurnNotHad()
        try:
            self._take_file(deadline)
            with self._guard:
                self._holder, self._holder_thread = weakref.ref(connection), threading.get_ident()
        except BaseException:
            self._threads.release()
            raise
        return True

    def _take_file(self, deadline: float) -> None:
        pause = 0.0001
        while self._file is not None:
            try:
                fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TurnNotHad() from None
                time.sleep(pause)
                pause = min(2 * pause, 0.0005)
            except OSError:  # a filesystem without file locks (ENOLCK): SQLite's lock alone, as before
                os.close(self._file)
                self._file = None

    def give_back(self, connection) -> None:
        if self._pid != WriterTurns._process:
            return  # no turn was taken in this process
        held = self._holder
        if held is not None and held() is connection:
            self._let_go(held)

    def _let_go(self, held: weakref.ref) -> None:
        with self._guard:
            if self._holder is not held:
                return  # given back already
            self._holder = self._holder_thread = None
            if self._file is not None:
                fcntl.flock(self._file, fcntl.LOCK_UN)
            self._threads.release()


os.register_at_fork(after_in_child=WriterTurns._forget_inherited)


class SQLiteConnection(sqlite3.Connection):
    """pysqlite's connection, giving its writer's turn back (WriterTurns) once its transaction has
    ended, however it ends: committed, rolled back, or the connection closed."""

    turns: WriterTurns | None = None
    deadline_set = False  # a progress handler stops its statements at a deadline (stopped_at)

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self._give_back()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self._give_back()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._give_back()

    def _give_back(self) -> None:
        if self.turns is not None:
            self.turns.give_back(self)
