"""Keep-alive connections spread evenly over gunicorn's workers, from the one listening socket.

A kept-alive connection stays with the worker that accepted it, and with gthread workers on one
shared socket, whichever worker runs first takes a burst of new connections: one worker was seen
holding 88-94 % of 64 clients while the other idled (docs/benchmarks.md). Here each worker
publishes, in a small table the master shares with its workers, how many connections it holds,
how many of its threads are busy (connections being answered or waiting for a thread, not idle
kept-alive ones), and whether it takes new ones (alive, below its `worker_connections`). A worker
holds back from accepting while another live worker that takes new ones would answer a new
connection sooner or carries fewer:
- a free thread first: a worker whose threads are all busy (long streamed answers) holds back for
  one with a free thread, and nobody holds back for it;
- then connections: between two that both have a free thread (or both none), the one holding at
  least two more holds back.
Every worker still accepts from the master's one socket, so a connection is never queued for a
particular worker: one that is stuck, stopping or restarting leaves new connections to the others,
as gthread does on its own. What a worker holding back costs: it looks again every
`HELD_BACK_POLL` seconds, and a peer that stopped publishing (stuck with its listener still
registered) is believed for `FRESH_SECONDS` at most.

With `reuse_port` (gunicorn's `--reuse-port`) each worker has its own listening socket and the
kernel picks the socket a new connection waits on: a worker holding back would leave it there
unanswered. So with `reuse_port` no worker holds back; the workers run as plain gthread and the
kernel spreads the connections.

gunicorn.conf.py names the worker class and calls `assign_slot` (master, before each fork) and
`free_slot` (master, when a worker has exited). A worker without a slot (more workers than
`SLOTS`) behaves as plain gthread.
"""

from __future__ import annotations

import mmap
import struct
import time

from gunicorn.workers.gthread import ThreadWorker

SLOTS = 64
# A slot: when it was last written (time.monotonic, shared by all processes; 0 = free), the
# connections its worker holds, whether all its threads are busy (1) or one is free (0), and
# whether it takes new ones (1: alive and below its cap) or not.
SLOT = struct.Struct("diii")
# A worker's loop wakes at least once a second (gthread's poll timeout) and writes its slot.
FRESH_SECONDS = 2.0
# While held back, a worker's loop wakes this often to look again: the worker it left connections
# to may have taken enough of them meanwhile to hold back in turn, and until it looks again new
# connections wait in the shared queue.
HELD_BACK_POLL = 0.01

_table: mmap.mmap | None = None  # made in the master before its first fork; shared with workers


def assign_slot(server, worker) -> None:
    """gunicorn's pre_fork (in the master): the lowest slot no live worker has."""
    global _table
    if _table is None:
        _table = mmap.mmap(-1, SLOTS * SLOT.size)  # anonymous and shared: inherited by each fork
    taken = {getattr(w, "slot", None) for w in server.WORKERS.values()}
    worker.slot = next((n for n in range(SLOTS) if n not in taken), None)
    if worker.slot is not None:
        SLOT.pack_into(_table, worker.slot * SLOT.size, 0.0, 0, 0, 0)


def free_slot(server, worker) -> None:
    """gunicorn's child_exit (in the master): a dead worker holds nobody back."""
    if _table is not None and getattr(worker, "slot", None) is not None:
        SLOT.pack_into(_table, worker.slot * SLOT.size, 0.0, 0, 0, 0)


class BalancedThreadWorker(ThreadWorker):
    slot: int | None = None
    holding_back = False

    def _busy(self) -> bool:
        """All threads busy: the connections neither kept alive idle nor waiting for a first
        request in the poller are being answered or queued for a thread."""
        answering = self.nr_conns - len(self.keepalived_conns) - len(self.pending_conns)
        return answering >= self.cfg.threads

    def _publish(self) -> None:
        if _table is not None and self.slot is not None:
            takes = self.alive and self.nr_conns < self.worker_connections
            SLOT.pack_into(
                _table, self.slot * SLOT.size, time.monotonic(), self.nr_conns, int(self._busy()), int(takes)
            )

    def _held_back(self) -> bool:
        """Another live worker takes new connections and would answer one sooner (it has a free
        thread and this one has none) or, as free, holds at least two fewer. One comes first in
        that order and never holds back, so some live worker always accepts. Whether that
        worker's listener is registered at this moment does not matter: if it is held back too,
        it looks again within HELD_BACK_POLL. (Counting only registered peers let one worker take
        60 of a burst of 64 while the other was briefly held back.)"""
        if _table is None or self.slot is None or self.cfg.reuse_port:
            return False  # reuse_port: a connection the kernel queued on this worker's socket waits for it
        now, busy = time.monotonic(), self._busy()
        for n in range(SLOTS):
            if n == self.slot:
                continue
            stamp, connections, peer_busy, takes = SLOT.unpack_from(_table, n * SLOT.size)
            if not stamp or now - stamp >= FRESH_SECONDS or not takes:
                continue
            if busy != bool(peer_busy):
                if busy:  # the peer has a free thread, this worker none
                    return True
            elif connections + 1 < self.nr_conns:
                return True
        return False

    def set_accept_enabled(self, enabled):
        # gthread's loop calls this whenever `enabled` differs from what is registered: while held
        # back, on every turn of the loop.
        self.holding_back = enabled and self.alive and self._held_back()
        super().set_accept_enabled(enabled and self.alive and not self.holding_back)
        self._publish()

    def accept(self, listener):
        super().accept(listener)
        self._publish()
        if self._held_back():
            self.set_accept_enabled(False)

    def wait_for_and_dispatch_events(self, timeout):
        if self._accepting and self._held_back():  # its threads filled since it last looked
            self.holding_back = True
            super().set_accept_enabled(False)
        self._publish()
        if self.holding_back:
            timeout = min(timeout, HELD_BACK_POLL)
        super().wait_for_and_dispatch_events(timeout)

    def handle_exit(self, sig, frame):
        super().handle_exit(sig, frame)
        # Stopping: no longer a worker the others should leave connections to.
        if _table is not None and self.slot is not None:
            SLOT.pack_into(_table, self.slot * SLOT.size, 0.0, 0, 0, 0)
