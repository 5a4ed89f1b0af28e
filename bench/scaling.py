"""How each cost of the memory grows with the store, on the path the product runs: ``python bench/scaling.py
[--sizes 1000 10000 100000] [--json]``.

At each size a store is built once with bulk writes (the ledger's memories and vector copies, the local int8
MiniLM's vectors, cached beside it under ``--cache``, by default a directory in the system's temporary one) and
copied afresh for each run, so a run measures and never waits for 100,000 embeddings again. On the copy:

- ``open_s``: ``open_memory`` and the index's ``warm_up`` on a store a chat opened and closed before, as a chat
  opens them (the health probe, ``reconcile``, the held index's first catch-up), the model loaded before, so it
  is the store's own cost;
- ``steady_ms``: a turn's ``recall`` (embed the probe, dense and keyword search, the block) with nothing written
  since the last turn;
- ``after_write_ms``: the same turn right after ``remember`` stored one memory, as a chat's turn follows the last
  one's write: the ledger's change mark moved, so the held index catches up before it searches;
- ``remember_ms``: that one write (``/remember``, ``agent memories add``: truth checks, ledger, embedding, index).

- ``first_prompt_s``, ``first_turn_s``: the real ``agent`` started on a pseudo-terminal on the same store
  afterwards (``bench/agent_process.py``), seconds to its first prompt and to the answer to the first line, typed
  as soon as the prompt shows: that turn waits for what a launch does before its first recall (chromadb's import,
  the store's open, the model's load), the model server an unreachable port;
- ``unmarked_*``: the same store with the ledger mark its index was saved at removed (a store from before the mark,
  or one whose mark the ledger's record of changes no longer reaches, as after an import of over 10,000): the open
  as a chat makes it (``sweep_later``: every id compared in pieces afterwards), the first recall after it, the
  pieces run one after another as the chat's memory thread runs them between turns (their number, the largest, all
  of them together), and the real ``agent`` launched on it again.

With ``--bulk`` each size also runs ``bench/bulk.py``'s embedder alone and ``agent memories import`` of the same
number of lines (processes of their own): the import's fraction of the embedder's batched rate and its peak RSS;
mem0's load of the store (its embedding included) is timed and its peak RSS taken in its worker either way.

The ratio ``after_write_ms / steady_ms`` is what a write costs the next turn: 1.0 is a write that costs the next
turn nothing.

With ``--mem0-python PYTHON`` (the interpreter of mem0's venv, see ``bench/mem0_side.py``) mem0 2.2.1 is timed
at each size on the same store texts, the same probes (its ``search``, top 5, against our steady ``recall``,
keyword search included) and the same single writes (its ``add(infer=False)`` against our ``remember``), with the
same int8 MiniLM; the table prints its figures and the ratios beside ours. Without that interpreter the mem0
rows are skipped, with a line saying so.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from agent.adapters.chroma_index import LEDGER_MARK, forget_clients
from agent.adapters.ledger import SqliteLedger
from agent.adapters.local_embedder import LocalEmbedder
from agent.app.data_dir import ensure_data_dir
from agent.config import load_settings
from agent.memory.service import MemoryService, space_of
from agent.wiring import open_memory
from bench import bulk, machine, mem0_side
from bench.agent_process import first_turn_s
from bench.latency import probes, records, sentences
from bench.locomo import percentile

USER = "scaling"
TURNS = 30  # timed turns of each kind at each size
EMBED_BATCH = 512


def cached_vectors(texts: Sequence[str], embedder: LocalEmbedder, cache: Path) -> np.ndarray:
    """The vectors of ``texts``, embedded once and kept in ``cache`` (the texts are the same at every run)."""
    path = cache / f"vectors-{len(texts)}.npy"
    if path.exists():
        return np.asarray(np.load(path), dtype=np.float32)
    done = np.asarray([v for at in range(0, len(texts), EMBED_BATCH)
                       for v in embedder.embed(texts[at : at + EMBED_BATCH])], dtype=np.float32)
    np.save(path, done)
    return done


def built_store(size: int, texts: Sequence[str], vectors: np.ndarray, embedder: LocalEmbedder, cache: Path) -> Path:
    """A data directory of ``size`` memories with their vector copies, its index restored by one open: built once."""
    root = cache / f"store-{size}"
    if (root / "built").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    paths = ensure_data_dir(root / "data")
    ledger = SqliteLedger(paths.ledger)
    try:
        ledger.put(records(texts[:size], 0, USER))
        ledger.claim_vectors(USER, space_of(embedder))
        ledger.put_vectors(USER, [r.id for r in records(texts[:size], 0, USER)], vectors[:size].tolist())
    finally:
        ledger.close()
    service = open(root / "data", size, embedder)[0]
    close(service)
    (root / "built").touch()
    return root


def open(data: Path, size: int, embedder: LocalEmbedder, sweep_later: bool = False) -> tuple[MemoryService, float]:
    settings = load_settings({"data_dir": data, "memory_capacity": size + 10 * TURNS, "embedder": "local",
                              "user": USER})
    started = time.perf_counter()
    service = open_memory(settings, embedder, sweep_later=sweep_later, group_writes=True)  # as a chat opens
    service.warm_up_index()  # as a chat does while it opens: the first catch-up
    return service, time.perf_counter() - started


def unmark(data: Path) -> None:
    """Remove the ledger mark the index was saved at: the next open cannot resume and compares every id."""
    for mark in (data / "chroma").glob(f"{LEDGER_MARK}-*"):
        mark.unlink()


def unmarked(data: Path, size: int, embedder: LocalEmbedder, probe: str) -> dict[str, Any]:
    """The open of a chat on the store without its mark, its first recall, and the compare's pieces after it."""
    unmark(data)
    service, open_s = open(data, size, embedder, sweep_later=True)
    try:
        started = time.perf_counter()
        service.recall(probe)
        recall_ms = (time.perf_counter() - started) * 1000
        pieces = []
        more = True
        while more:
            started = time.perf_counter()
            more = service.sweep_index()
            pieces.append((time.perf_counter() - started) * 1000)
    finally:
        close(service)
    return {"unmarked_open_s": open_s, "unmarked_first_recall_ms": recall_ms, "unmarked_pieces": len(pieces),
            "unmarked_piece_max_ms": max(pieces), "unmarked_sweep_s": sum(pieces) / 1000}


def close(service: MemoryService) -> None:
    service.close()
    forget_clients()


def settle(service: MemoryService, probe: str) -> float:
    """Write the sightings the last turns left (a write of its own) and catch up with it, untimed: the next turn
    follows nothing written (what this recall sees is written with the next write). The vectors the last write left
    for the index go in first, as the chat's memory thread puts them in between turns: returns how long that took
    (ms), the part of a write that left the caller's time."""
    started = time.perf_counter()
    service.flush_index()
    flushed = (time.perf_counter() - started) * 1000
    service.flush_seen()
    service.recall(probe)
    return flushed


def written(size: int, texts: Sequence[str]) -> list[str]:
    """The single writes timed at ``size``: new lines, never in the store."""
    return [f"Note {n} at size {size}: {texts[size + n]}" for n in range(TURNS)]


def measure(size: int, texts: Sequence[str], vectors: np.ndarray, embedder: LocalEmbedder, cache: Path,
            asked: Sequence[str]) -> dict[str, Any]:
    built = built_store(size, texts, vectors, embedder, cache)
    with tempfile.TemporaryDirectory(prefix="scaling-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(built / "data", data)
        close(open(data, size, embedder)[0])  # the store as its last chat left it
        service, open_s = open(data, size, embedder)
        try:
            for probe in asked[:5]:
                service.recall(probe)
            steady, after, remember, flush = [], [], [], []
            for probe, note in zip(asked[5 : 5 + TURNS], written(size, texts), strict=True):
                flush.append(settle(service, asked[0]))
                started = time.perf_counter()
                service.recall(probe)
                steady.append((time.perf_counter() - started) * 1000)
                settle(service, asked[0])
                started = time.perf_counter()
                service.remember(note, session="bench")
                remember.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                service.recall(probe)
                after.append((time.perf_counter() - started) * 1000)
        finally:
            close(service)
        capacity = {"AGENT_MEMORY_CAPACITY": str(size + 10 * TURNS)}
        launched = first_turn_s(data, USER, asked[1], capacity)
        without_mark = unmarked(data, size, embedder, asked[2])
        unmark(data)
        launched_unmarked = first_turn_s(data, USER, asked[1], capacity)
    return {
        "memories": size,
        "open_s": open_s,
        **launched,
        **without_mark,
        "unmarked_first_prompt_s": launched_unmarked["first_prompt_s"],
        "unmarked_first_turn_s": launched_unmarked["first_turn_s"],
        "steady_ms_p50": percentile(steady, 50),
        "after_write_ms_p50": percentile(after, 50),
        "after_write_ratio": percentile(after, 50) / percentile(steady, 50),
        "remember_ms_p50": percentile(remember, 50),
        "flush_ms_p50": percentile(flush[1:], 50),  # the first settle follows no write
    }


def beside_mem0(ours: dict[str, Any], python: Path, size: int, texts: Sequence[str],
                asked: Sequence[str]) -> dict[str, Any]:
    """mem0 on the same store texts, the probes our steady turns asked and the notes our ``remember`` wrote."""
    theirs = mem0_side.measure(str(python), [size], probes=asked[5 : 5 + TURNS], writes=written(size, texts))[0]
    return {"mem0_search_ms_p50": theirs["search_ms_p50"], "mem0_add_ms_p50": theirs["add_ms_p50"],
            "embed_ms_p50": theirs["embed_ms_p50"], "mem0_load_s": theirs["load_s"],
            "mem0_load_lines_s": size / theirs["load_s"], "mem0_peak_rss_mb": theirs["peak_rss_mb"],
            "search_mem0_over_agent": theirs["search_ms_p50"] / ours["steady_ms_p50"],
            "add_mem0_over_agent": theirs["add_ms_p50"] / ours["remember_ms_p50"]}


def bulk_writes(size: int) -> dict[str, Any]:
    """``bench/bulk.py`` at ``size``: the embedder alone, then ``agent memories import`` of as many lines."""
    with tempfile.TemporaryDirectory(prefix="scaling-bulk-") as tmp:
        done = bulk.measure(size, 0, ["embed", "import"], Path(tmp))
    return {"bulk_fraction": done["import_fraction"], "bulk_cpu_fraction": done["import_cpu_fraction"],
            "bulk_lines_s": size / done["import_1"]["seconds"], "bulk_peak_rss_mb": done["import_1"]["peak_rss_mb"]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "agent-bench-scaling")
    parser.add_argument("--mem0-python", type=Path, help="the interpreter of mem0's venv: time mem0 beside us")
    parser.add_argument("--bulk", action="store_true", help="time bench/bulk.py's import at each size too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    embedder = LocalEmbedder()
    embedder.warm_up()
    texts = sentences(max(args.sizes) + TURNS)
    vectors = cached_vectors(texts[: max(args.sizes)], embedder, args.cache)
    asked = probes(TURNS + 5)
    result: dict[str, Any] = {"machine": machine.describe()}
    mem0 = args.mem0_python is not None and args.mem0_python.exists()
    if not mem0:
        print(f"mem0: skipped, no interpreter at {args.mem0_python} (give --mem0-python, see bench/mem0_side.py)"
              if args.mem0_python else "mem0: skipped (give --mem0-python to time it beside us)", file=sys.stderr)
    for size in sorted(args.sizes):
        result[str(size)] = measure(size, texts, vectors, embedder, args.cache, asked)
        print(f"{size}, ours: {json.dumps(result[str(size)])}", file=sys.stderr, flush=True)  # mem0's takes long
        if mem0:
            result[str(size)] |= beside_mem0(result[str(size)], args.mem0_python, size, texts, asked)
        if args.bulk:
            result[str(size)] |= bulk_writes(size)
        print(f"{size}: {json.dumps(result[str(size)])}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"machine: {machine.line()}")
    print("| figure | " + " | ".join(f"{size:,}" for size in sorted(args.sizes)) + " |")
    print("|---|" + "---|" * len(args.sizes))
    for label, key, shape in rows_of(mem0, args.bulk):
        print(f"| {label} | " + " | ".join(shape.format(result[str(s)][key]) for s in sorted(args.sizes)) + " |")
    if not args.bulk:
        print("bulk writes: give --bulk (or run bench/bulk.py) for the import's fraction of the embedder's rate and "
              "its peak RSS")
    return 0


def rows_of(mem0: bool, bulk_run: bool) -> list[tuple[str, str, str]]:
    """The table's rows: (label, key, format), mem0's beside ours where it has one."""
    rows = [("steady turn, recall p50 (ms)", "steady_ms_p50", "{:.1f}")]
    if mem0:
        rows += [("mem0 search p50 (ms)", "mem0_search_ms_p50", "{:.1f}"),
                 ("steady search, mem0 / agent", "search_mem0_over_agent", "{:.2f}x")]
    rows += [("one memory per call, remember p50 (ms)", "remember_ms_p50", "{:.1f}"),
             ("its vectors put into Chroma between turns (group commit), p50 (ms)", "flush_ms_p50", "{:.1f}")]
    if mem0:
        rows += [("mem0 add, one memory per call, p50 (ms)", "mem0_add_ms_p50", "{:.1f}"),
                 ("one memory per call, mem0 / agent (above 1: we are faster)", "add_mem0_over_agent", "{:.2f}x")]
    rows += [("turn right after a write, recall p50 (ms)", "after_write_ms_p50", "{:.1f}"),
             ("turn after a write / steady turn", "after_write_ratio", "{:.2f}x"),
             ("open, to the first prompt's memory (s)", "open_s", "{:.2f}"),
             ("agent launched: first prompt (s)", "first_prompt_s", "{:.2f}"),
             ("agent launched: first line answered, its recall included (s)", "first_turn_s", "{:.2f}"),
             ("no saved mark: open, to the first prompt's memory (s)", "unmarked_open_s", "{:.2f}"),
             ("no saved mark: first recall after that open (ms)", "unmarked_first_recall_ms", "{:.1f}"),
             ("no saved mark: pieces of the compare after it", "unmarked_pieces", "{}"),
             ("no saved mark: largest piece (ms)", "unmarked_piece_max_ms", "{:.1f}"),
             ("no saved mark: all pieces (s)", "unmarked_sweep_s", "{:.2f}"),
             ("no saved mark: agent launched, first line answered (s)", "unmarked_first_turn_s", "{:.2f}")]
    if bulk_run:
        rows += [("bulk import, fraction of the embedder's rate, wall time", "bulk_fraction", "{:.2f}"),
                 ("bulk import, fraction in CPU time", "bulk_cpu_fraction", "{:.2f}"),
                 ("bulk import, lines a second", "bulk_lines_s", "{:.0f}"),
                 ("bulk import, peak RSS (MB)", "bulk_peak_rss_mb", "{:.0f}")]
    if mem0:
        rows += [("mem0 bulk load (its embedding included), lines a second", "mem0_load_lines_s", "{:.0f}"),
                 ("mem0 peak RSS, its load and calls (MB)", "mem0_peak_rss_mb", "{:.0f}"),
                 ("embedder alone on a probe, p50 (ms)", "embed_ms_p50", "{:.1f}")]
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
