"""A chat's memory thread loads what the first recall waits for on threads beside the open (issue 22, the first
turn after launch): chromadb's import beside the ledger's open, the embedding model beside the index's open; they
took their sum before the first recall, one after the other. The threads have ended when ``open_memory`` returns:
one still inside onnxruntime when a short run exits aborts the process."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent import wiring
from agent.adapters.chroma_index import forget_clients
from agent.config import load_settings
from tests.helpers_store import ShaEmbedder

WAIT = 10.0


class SlowModel(ShaEmbedder):
    """An embedder whose model loads only once the index has begun to open, as a thread beside it can."""

    def __init__(self, opening: threading.Event) -> None:
        self.opening = opening
        self.loaded = threading.Event()
        self.on: list[str] = []

    def warm_up(self) -> None:
        self.on.append(threading.current_thread().name)
        if self.opening.wait(WAIT):
            self.loaded.set()


def test_the_model_loads_while_the_index_opens_and_has_loaded_when_the_open_returns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opening = threading.Event()
    real = wiring._open_index

    def open_index(*args: Any, **kwargs: Any) -> Any:
        opening.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(wiring, "_open_index", open_index)
    model = SlowModel(opening)
    memory = wiring.open_memory(load_settings(), model, warm_up=True)
    try:
        assert model.loaded.is_set(), "loaded beside the index's open, and waited for"
        assert model.on and model.on[0] != threading.current_thread().name
    finally:
        memory.close()
        forget_clients()


def test_chromadb_is_imported_while_the_ledger_opens(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ledger's open checks the whole file (0.3 s at 100,000 memories): chromadb's import runs beside it. Each
    of the two waits for the other to have begun, which only two threads can do."""
    opening = threading.Event()
    imported = threading.Event()
    real = wiring.build_ledger

    def import_chromadb() -> None:
        if opening.wait(WAIT):
            imported.set()

    def build_ledger(*args: Any, **kwargs: Any) -> Any:
        opening.set()
        assert imported.wait(WAIT), "imported beside the ledger's open"
        return real(*args, **kwargs)

    monkeypatch.setattr(wiring, "_import_chromadb", import_chromadb)
    monkeypatch.setattr(wiring, "build_ledger", build_ledger)
    memory = wiring.open_memory(load_settings(), ShaEmbedder(), warm_up=True)
    memory.close()
    forget_clients()
