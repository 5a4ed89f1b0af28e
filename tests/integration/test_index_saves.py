"""The HNSW index is saved every ``SAVE_EVERY`` changes, not every second write, and a forget still leaves Chroma's
index files before it returns: its delete makes Chroma save them (``ChromaIndex._flush``). A store an older agent
made (saved every second write) is switched over when it is opened, and keeps every vector; what was written since the
last save, by a process that closed or was killed, is replayed from Chroma's write log at the next open."""

from __future__ import annotations

import random
from pathlib import Path

from agent.adapters.chroma_index import SAVE_EVERY, ChromaIndex, close_client, collection_name, open_client

DIMENSION = 8


def vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1.0, 1.0) for _ in range(DIMENSION)]


def files_holding(root: Path, needle: str) -> list[str]:
    """The files of the store's HNSW segments (not its SQLite file) whose raw bytes hold ``needle``."""
    return sorted(f.name for f in root.glob("*/*") if f.is_file() and needle.encode() in f.read_bytes())


def saved(root: Path, ids: list[str]) -> list[str]:
    """Which of ``ids`` the saved id map holds: the file the HNSW segment writes at each save."""
    held = b"".join(pickle.read_bytes() for pickle in root.glob("*/index_metadata.pickle"))
    return [memory_id for memory_id in ids if memory_id.encode() in held]


def test_writes_are_saved_in_batches_and_a_delete_leaves_the_index_files_before_it_returns(tmp_path: Path) -> None:
    root, rng = tmp_path / "chroma", random.Random(7)
    index = ChromaIndex(open_client(root, None), "me", str(root))
    first = [f"memory-{n:04d}" for n in range(SAVE_EVERY)]
    index.upsert(first, [vector(rng) for _ in first])
    assert saved(root, first) == first, "a batch of SAVE_EVERY changes is saved at once"
    index.upsert(["memory-secret"], [vector(rng)])
    assert saved(root, ["memory-secret"]) == [], "a single write waits for the next save, in Chroma's write log"
    second = [f"memory-1{n:03d}" for n in range(SAVE_EVERY)]
    index.upsert(second, [vector(rng) for _ in second])
    assert saved(root, ["memory-secret"]) == ["memory-secret"]
    later = [f"memory-later-{n}" for n in range(3)]
    for memory_id in later:
        index.upsert([memory_id], [vector(rng)])
    assert saved(root, later) == []

    index.delete(["memory-secret"])

    assert files_holding(root, "memory-secret") == [], "the delete was saved before it returned"
    assert saved(root, [*first, *second, *later]) == [*first, *second, *later], "and what waited with it"
    assert "memory-secret" not in {hit.id for hit in index.query(vector(rng), 3 * SAVE_EVERY)}
    assert index.count() == 2 * SAVE_EVERY + 3


def test_a_store_saved_every_second_write_is_switched_over_and_keeps_its_vectors(tmp_path: Path) -> None:
    root, rng = tmp_path / "chroma", random.Random(8)
    client = open_client(root, None)
    old = client.create_collection(collection_name("me"), embedding_function=None, configuration={
        "hnsw": {"space": "cosine", "sync_threshold": 2, "batch_size": 2}})
    stored = {f"memory-{n:04d}": vector(rng) for n in range(5)}
    old.upsert(ids=list(stored), embeddings=list(stored.values()))
    close_client(root)

    index = ChromaIndex(open_client(root, None), "me", str(root))
    assert index.count() == 5
    index.upsert(["memory-new"], [vector(rng)])
    close_client(root)  # the write is in Chroma's write log alone, as a kill would leave it too

    client = open_client(root, None)
    assert client.get_collection(collection_name("me")).configuration["hnsw"]["sync_threshold"] == SAVE_EVERY
    index = ChromaIndex(client, "me", str(root))
    assert index.ids() == {*stored, "memory-new"}
    for memory_id, held in stored.items():
        assert index.query(held, 1)[0].id == memory_id
    index.delete(["memory-0000"])
    assert files_holding(root, "memory-0000") == []

