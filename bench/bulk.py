"""Bulk writes against the embedder's own batched rate, in one run: ``python bench/bulk.py [--sizes 10000 100000]
[--phases embed import rebuild embed] [--long-every N] [--json]``.

At each size the texts are ``bench.latency.sentences`` (with ``--long-every N``, every Nth line is eight of them
joined, ~100 tokens, so the batches by length are tried on lines of mixed lengths), written as a JSON Lines export.
Each phase then runs in a process of its own, so its peak resident memory (``VmHWM``, ``machine.own_peak_mb``) is its
own, and in this order, so a change of the machine's load between them shows in the two embedder figures:

- ``embed``: the local int8 MiniLM alone, loaded untimed, then timed on the texts in the calls the import makes
  (``transfer.BATCH`` lines a call): the embedder's own batched rate. Its vectors are kept for the check below;
- ``import``: ``agent memories import FILE`` into a fresh data directory, timed whole, as a user runs it (the start,
  the file read twice, the ledger, the index, the vector copies);
- ``rebuild``: ``agent memories rebuild`` of that store (every memory embedded again from the ledger's text);
- ``embed`` again, last.

The fraction printed is the embedder's time (the mean of its runs) over the bulk write's, so 1.0 is a write that costs
nothing beyond its embedding, in wall time and in CPU time (every thread's: on a machine other work loads, the wall
time measures the share of the cores each process got, the CPU time what it asked for). The start of an ``agent``
process on the store (``agent memories stats``) is timed too, as the part of that which does not grow with the file,
and taken out of the CPU time in one more fraction. After each write the ledger's vector copies are compared with the
embedder's own: the largest difference is printed (0 when every memory went through the same batches). The machine
and its load are printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench import machine
from bench.latency import sentences

USER = "bulk"
LONG = 8  # sentences joined into one long line


def texts_of(size: int, long_every: int) -> list[str]:
    lines = sentences(size + (size // long_every) * LONG if long_every else size)
    if not long_every:
        return lines
    spare = iter(lines[size:])
    return [" ".join([line, *(next(spare) for _ in range(LONG - 1))]) if n % long_every == long_every - 1 else line
            for n, line in enumerate(lines[:size])]


def write_export(texts: Sequence[str], path: Path) -> None:
    """The lines an export holds: text, kind and dates; what the import leaves out takes its default."""
    with path.open("w", encoding="utf-8") as out:
        for n, text in enumerate(texts):
            out.write(json.dumps({"text": text, "kind": "explicit", "created_at": 1.7e9 + n}) + "\n")


def embed_worker(export: Path, vectors: Path) -> dict[str, Any]:
    """In a process of its own: the embedder alone on the export's texts, in the import's calls."""
    from agent.adapters.local_embedder import LocalEmbedder
    from agent.memory.transfer import BATCH

    texts = [json.loads(line)["text"] for line in export.read_text(encoding="utf-8").splitlines()]
    embedder = LocalEmbedder()
    embedder.warm_up()
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    started, cpu = time.perf_counter(), time.process_time()
    for at in range(0, len(texts), BATCH):
        out[at : at + BATCH] = embedder.embed(texts[at : at + BATCH])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    np.save(vectors, out)
    peak = machine.own_peak_mb()
    return {"seconds": seconds, "cpu_s": cpu,
            "peak_rss_mb": peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run(command: Sequence[str], env: dict[str, str]) -> dict[str, Any]:
    """Run ``command`` to its end: its wall time, its CPU time (every thread's, ``os.wait4``), its own peak resident
    memory (its ``VmHWM``, read every 20 ms until it ends: the mark only rises, and what it exits from is no higher)
    and its last line of output."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True)
        peak = 0.0
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, machine.own_peak_mb(child.pid) or 0.0)
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({child.returncode}): {err.read().strip()[-800:]}")
        said = (out.read().strip().splitlines() or [""])[-1]
    return {"seconds": seconds, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": peak or usage.ru_maxrss / 1024,
            "said": said}


def measure(size: int, long_every: int, phases: Sequence[str], tmp: Path) -> dict[str, Any]:
    """Every phase at ``size`` in one run (the module's docstring); the figures and the ratios."""
    export, data = tmp / "export.jsonl", tmp / "data"
    texts = texts_of(size, long_every)
    write_export(texts, export)
    env = dict(os.environ, AGENT_DATA_DIR=str(data), AGENT_EMBEDDER="local", AGENT_USER=USER,
               AGENT_MEMORY_CAPACITY=str(size + 100))
    agent = [sys.executable, "-m", "agent"]
    figures: dict[str, Any] = {"memories": size, "long_every": long_every, "load_avg_1m_start": os.getloadavg()[0]}
    for n, phase in enumerate(phases):
        if phase == "embed":
            done = run([sys.executable, str(Path(__file__).resolve()), "--worker", str(export), str(tmp / f"v{n}.npy")],
                       env)
            done |= json.loads(done.pop("said"))  # the worker's own times, the model loaded before
        else:
            done = run([*agent, "memories", phase, *([str(export)] if phase == "import" else [])], env)
            done["vectors_max_diff"] = _differs(data, tmp, size)
        figures[f"{phase}_{n}"] = done
    if data.exists():
        figures["start"] = run([*agent, "memories", "stats"], env)
    embedded = [figures[f"embed_{n}"] for n, phase in enumerate(phases) if phase == "embed"]
    figures["embed_s"] = sum(e["seconds"] for e in embedded) / len(embedded) if embedded else float("nan")
    figures["embed_cpu_s"] = sum(e["cpu_s"] for e in embedded) / len(embedded) if embedded else float("nan")
    for n, phase in enumerate(phases):
        if phase != "embed":
            done = figures[f"{phase}_{n}"]
            figures[f"{phase}_fraction"] = figures["embed_s"] / done["seconds"]
            figures[f"{phase}_cpu_fraction"] = figures["embed_cpu_s"] / done["cpu_s"]
            if "start" in figures:  # what grows with the file: the write less an agent process's start
                figures[f"{phase}_cpu_fraction_past_start"] = figures["embed_cpu_s"] / (
                    done["cpu_s"] - figures["start"]["cpu_s"])
    figures["load_avg_1m_end"] = os.getloadavg()[0]
    return figures


def _differs(data: Path, tmp: Path, size: int) -> float | None:
    """The largest difference between the ledger's vector copies and the embedder's own vectors (None before an
    ``embed`` phase ran), in the export's order."""
    kept = sorted(tmp.glob("v*.npy"))
    if not kept:
        return None
    from agent.adapters.ledger import SqliteLedger
    from agent.app.data_dir import ensure_data_dir
    from agent.domain import memory_id
    from agent.memory.canonical import canonical

    own = np.load(kept[0])
    texts = [json.loads(line)["text"] for line in (tmp / "export.jsonl").read_text(encoding="utf-8").splitlines()]
    ledger = SqliteLedger(ensure_data_dir(data).ledger)
    try:
        worst = 0.0
        for at in range(0, size, 2048):
            ids = [memory_id(USER, canonical(t)) for t in texts[at : at + 2048]]
            stored = ledger.stored_vectors(USER, ids)
            copies = np.asarray([stored[i] for i in ids], dtype=np.float32)
            worst = max(worst, float(np.abs(copies - own[at : at + 2048]).max()))
        return worst
    finally:
        ledger.close()


def table(results: Sequence[dict[str, Any]]) -> list[str]:
    rows = ["| figure | " + " | ".join(f"{r['memories']:,}" for r in results) + " |",
            "|---|" + "---|" * len(results)]

    def row(label: str, pick: Any) -> None:
        rows.append(f"| {label} | " + " | ".join(pick(r) for r in results) + " |")

    for key in sorted({k for r in results for k, v in r.items() if isinstance(v, dict)},
                      key=lambda k: int(k.rsplit("_", 1)[1]) if k[-1].isdigit() else 99):
        name = key.rsplit("_", 1)[0] if key[-1].isdigit() else key
        row(f"{name}: seconds", lambda r, k=key: f"{r[k]['seconds']:.1f}" if k in r else "")
        if name != "start":
            row(f"{name}: lines a second", lambda r, k=key: f"{r['memories'] / r[k]['seconds']:.0f}" if k in r else "")
        row(f"{name}: CPU seconds (every thread)", lambda r, k=key: f"{r[k]['cpu_s']:.1f}" if k in r else "")
        row(f"{name}: peak RSS (MB)", lambda r, k=key: f"{r[k]['peak_rss_mb']:.0f}" if k in r else "")
        if name in ("import", "rebuild"):
            row(f"{name}: vectors, largest difference from the embedder's",
                lambda r, k=key: "" if r.get(k, {}).get("vectors_max_diff") is None
                else f"{r[k]['vectors_max_diff']:.2g}")
    for name in [n for n in ("import", "rebuild") if any(f"{n}_fraction" in r for r in results)]:
        row(f"{name}: fraction of the embedder's rate, wall time / CPU time",
            lambda r, n=name: f"{r[f'{n}_fraction']:.2f} / {r[f'{n}_cpu_fraction']:.2f}" if f"{n}_fraction" in r
            else "")
        row(f"{name}: fraction in CPU time, the start of an agent process taken out",
            lambda r, n=name: f"{r[f'{n}_cpu_fraction_past_start']:.2f}" if f"{n}_cpu_fraction_past_start" in r
            else "")
    row("load average, start / end", lambda r: f"{r['load_avg_1m_start']:.1f} / {r['load_avg_1m_end']:.1f}")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--phases", nargs="+", choices=("embed", "import", "rebuild"),
                        default=["embed", "import", "rebuild", "embed"])
    parser.add_argument("--long-every", type=int, default=0, help="every Nth line long (0: none)")
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(embed_worker(*args.worker)))
        return 0
    results = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-bulk-") as tmp:
            results.append(measure(size, args.long_every, args.phases, Path(tmp)))
        print(f"{size}: {json.dumps(results[-1])}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"machine": machine.describe(), "results": results}, indent=2))
        return 0
    print(f"machine: {machine.line()}")
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
