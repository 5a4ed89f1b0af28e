"""The first turn of a chat does not wait for the examples' warm-up (issue 22, the first turn after launch): the
memory thread embeds the labelled examples the writes read meaning with as the store opens, which takes seconds,
and a recall typed while the store opened waited behind it (its task is queued only once the open settles, after
that warm-up was). The warm-up steps aside for a call waiting for the thread and for the calls that follow it
within a moment, and still runs once nothing asks; so do the pieces of the index's compare with the ledger that an
open without a saved mark leaves for between turns, each run once, until the last."""

from __future__ import annotations

import math
import threading
from typing import Any, cast

from agent.app.memory_worker import ConnectWait, MemoryWorker
from agent.memory.service import MemoryService

WAIT = 30.0


class OpeningStore:
    """The few methods of ``MemoryService`` the worker uses to open and recall, recording their order; the open
    waits for ``release``, as a store and a model that take seconds to load do."""

    def __init__(self, pieces: int = 0, pending: int = 0) -> None:
        self.release = threading.Event()
        self.flushed = threading.Event()
        self.pending = pending  # vectors written that wait for the index's group commit
        self.warmed = threading.Event()
        self.swept = threading.Event()
        self.done: list[str] = []
        self.embedder = object()
        self.pieces = pieces  # of the index's compare with the ledger left for between turns

    def sweep_index(self) -> bool:
        if not self.pieces or self.swept.is_set():  # resumed from its mark, or the last piece ran: nothing left
            return False
        self.done.append("piece")
        more = self.done.count("piece") < self.pieces
        if not more:
            self.swept.set()
        return more

    def current_count(self) -> int:
        return 0

    def warm_up_index(self) -> None:
        self.release.wait(WAIT)

    def warm_up_meaning(self) -> None:
        self.done.append("meaning")
        self.warmed.set()

    def recall(self, line: str) -> Any:
        self.done.append(f"recall {line}")
        return None

    def flush_seen(self) -> None:
        """Nothing recalled here was seen."""

    def writes_pending(self) -> bool:
        return self.pending > 0

    def flush_index(self) -> None:
        if self.pending:
            self.done.append("flush")
            self.pending = 0
            self.flushed.set()


class Watched(ConnectWait):
    """The wait for the open, telling when a call has begun it."""

    def __init__(self) -> None:
        super().__init__(math.inf)
        self.entered = threading.Event()

    def wait(self) -> bool:
        self.entered.set()
        return super().wait()


def turn(worker: MemoryWorker) -> None:
    """A turn's calls, one right after the other (a chat's turn asks for the forgets to follow, then recalls)."""
    worker.recall("the forgets")
    worker.recall("the first line")


def test_the_calls_of_a_turn_typed_while_the_store_opens_go_before_the_examples_warm_up() -> None:
    store = OpeningStore()
    opening = Watched()
    worker = MemoryWorker(lambda: cast(MemoryService, store), lambda outcome: None, read_only=True,
                          open_wait=opening)
    asked = threading.Thread(target=turn, args=(worker,))
    asked.start()
    assert opening.entered.wait(WAIT)
    store.release.set()
    asked.join(WAIT)
    assert store.warmed.wait(WAIT), "the warm-up runs once nothing asks"
    worker.close()
    assert store.done == ["recall the forgets", "recall the first line", "meaning"]


def test_the_pieces_of_the_index_compare_go_after_the_calls_of_a_turn_and_run_until_the_last() -> None:
    store = OpeningStore(pieces=5)
    opening = Watched()
    worker = MemoryWorker(lambda: cast(MemoryService, store), lambda outcome: None, read_only=True,
                          open_wait=opening)
    asked = threading.Thread(target=turn, args=(worker,))
    asked.start()
    assert opening.entered.wait(WAIT)
    store.release.set()
    asked.join(WAIT)
    assert store.swept.wait(WAIT) and store.warmed.wait(WAIT), "the pieces and the warm-up run once nothing asks"
    worker.close()
    assert store.done[:2] == ["recall the forgets", "recall the first line"]
    assert sorted(store.done[2:]) == ["meaning"] + ["piece"] * 5


def test_the_pieces_a_short_run_left_no_time_for_are_finished_when_it_closes() -> None:
    store = OpeningStore(pieces=5)
    store.release.set()
    worker = MemoryWorker(lambda: cast(MemoryService, store), lambda outcome: None, read_only=True)
    worker.recall("the only line")  # a one-shot run: one turn, then the end
    worker.close()
    assert store.done.count("piece") == 5


def test_the_vectors_a_write_left_pending_go_into_the_index_after_the_calls_of_a_turn() -> None:
    """A write leaves its vectors for the index's group commit (``HeldIndex.group_writes``): the memory thread puts
    them in once nothing asks, after the turn's calls, not on their way."""
    store = OpeningStore(pending=1)
    store.release.set()
    worker = MemoryWorker(lambda: cast(MemoryService, store), lambda outcome: None, read_only=True)
    turn(worker)
    assert store.flushed.wait(WAIT), "the flush runs once nothing asks"
    worker.close()
    assert store.done[:2] == ["recall the forgets", "recall the first line"]
    assert store.done.count("flush") == 1


def test_the_vectors_still_pending_at_the_close_go_into_the_index_then() -> None:
    store = OpeningStore(pending=1)
    store.release.set()
    worker = MemoryWorker(lambda: cast(MemoryService, store), lambda outcome: None)
    worker.recall("the only line")
    worker.close()
    assert store.pending == 0 and store.done.count("flush") == 1
