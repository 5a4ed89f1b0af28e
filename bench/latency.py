"""Speed and size of the memory with the local embedder: ``python bench/latency.py [--json] [--sizes 1000 10000
100000]``; ``--servers`` compares the embedded store with the shared deployment's servers instead.

One store grows through the sizes asked for. At each size: the write throughput of the batches that brought it
there (``MemoryService.write``: ledger, embedding, index), the per-turn overhead of the read path
(``MemoryService.recall``: embed the probe, fused search, token-budgeted block, ledger touch) over varied probes,
the resident memory of the real ``agent`` on that store after three turns (``bench/agent_process.py``; this
process's too, which also holds the bench's texts), and the store's bytes per memory. Then, once per run, how soon
the chat is ready for the next line after a reply while the write gate runs in the background
(``bench/next_prompt.py``), and the start-up time of ``agent`` to its first prompt, spawned on a pseudo-terminal
against an unreachable model server.
Memories are synthetic but varied first-person sentences, so the tokenizer and the index see realistic text.

``--servers [--database-url URL --chroma-url URL]``: the same store grown three times, embedded (the data
directory's SQLite ledger and Chroma store), on the servers (a PostgreSQL ledger with a Chroma server: throwaway
ones started on 127.0.0.1 when no URL is given, as the tests start them) and on the database alone (the PostgreSQL
ledger with the data directory's Chroma store, as AGENT_DATABASE_URL alone wires it), and at each size for each:
writes/s in batches, writes/s one memory at a time as a chat's turn writes it (``MemoryService.remember``: truth
checks, ledger, embedding, index), and the per-turn overhead of recall, without and with a write before each (a
chat's turn follows the last one's write, which moves the ledger's change mark and so what is kept until it does).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client
from agent.adapters.ledger import SqliteLedger
from agent.adapters.local_embedder import LocalEmbedder
from agent.adapters.mirrored_index import MirroredIndex
from agent.app.data_dir import DataPaths, ensure_data_dir
from agent.domain import MemoryRecord, content_hash, memory_id
from agent.memory.policy import MemoryPolicy
from agent.memory.service import MemoryService
from agent.ports import Embedder, Ledger
from bench import machine, memory_truth, next_prompt
from bench.agent_process import resident_mb, startup_s
from bench.locomo import percentile

USER = "latency"
TRUTH_LINES = memory_truth.turn_lines(json.loads(memory_truth.DEFAULT_DATA.read_text()))
BATCH = 256
PROBES = 200
AGENT_LINES = ("What do you know about my sister?", "Any ideas for pottery this weekend?", "What should I cook?")

_SUBJECTS = ("I", "My sister", "My brother", "My partner", "My best friend", "My dad", "My mum", "Our neighbour",
             "My manager", "My daughter", "My son", "We", "My colleague", "My grandmother", "My flatmate")
_VERBS = ("started learning", "stopped eating", "fell in love with", "is allergic to", "keeps talking about",
          "booked a trip to see", "signed up for", "can't stand", "spent the weekend on", "is saving money for",
          "bought a book about", "wants to try", "gave up on", "has a class on", "volunteers at a place for")
_OBJECTS = ("pottery", "Thai cooking", "the cello", "rock climbing", "peanuts", "shellfish", "marathon training",
            "watercolour painting", "a vintage motorbike", "Portuguese lessons", "sourdough baking", "chess",
            "birdwatching", "the night shift", "a rescue greyhound", "salsa dancing", "gardening", "stand-up comedy",
            "a jazz festival", "woodworking", "kayaking", "a book club", "yoga", "photography", "board games")
_WHEN = ("last week", "since March", "every Sunday", "next month", "in 2019", "after the move to Leeds",
         "before the wedding", "this summer", "on Tuesday evenings", "two years ago", "when I was a kid",
         "during lockdown", "at the start of the year", "for the last three months", "since the new job")
_QUESTIONS = ("Any ideas for {o} this weekend?", "What do you know about my {r}?", "Can you plan something with {o}?",
              "Remind me what I said about {o}", "What should I cook tonight?", "How is my {r} doing with {o}?",
              "Suggest a gift for my {r}", "Where could I go {w}?", "What did I decide about {o}?")


def sentences(n: int, seed: int = 7) -> list[str]:
    """``n`` distinct first-person-style statements drawn from templates (a detail is added once they repeat)."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        text = f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_WHEN)}"
        if text in seen:
            text = f"{text}, note {len(out)}"
        seen.add(text)
        out.append(text)
    return out


def probes(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    relations = [s.split()[-1] for s in _SUBJECTS if s.startswith("My ")]
    return [rng.choice(_QUESTIONS).format(o=rng.choice(_OBJECTS), r=rng.choice(relations), w=rng.choice(_WHEN))
            for _ in range(n)]


def records(texts: Sequence[str], start: int, user: str = USER) -> list[MemoryRecord]:
    now = time.time()
    return [
        MemoryRecord(id=memory_id(user, t), text=t, kind="turn", user=user, session=f"s{(start + i) // 50}",
                     turn=start + i, created_at=now, last_seen=now, content_hash=content_hash(t), source=t)
        for i, t in enumerate(texts)
    ]


class TimedEmbedder:
    """The local embedder with a stopwatch: how much of a write is the model, and how much the stores."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.name, self.model, self.dimension = inner.name, inner.model, inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def open_service(paths: DataPaths, embedder: Embedder, capacity: int
                 ) -> tuple[MemoryService, SqliteLedger, MirroredIndex]:
    """The store as ``open_memory`` wires it (the index mirrored into the ledger), with a timed embedder; its
    ledger and index too, which the service keeps to itself."""
    ledger = SqliteLedger(paths.ledger)
    index = MirroredIndex(ChromaIndex(open_client(paths.chroma, None), USER, str(paths.chroma)), ledger, USER)
    return MemoryService(ledger, index, embedder, USER, MemoryPolicy(capacity=capacity)), ledger, index


def timed_writes(service: MemoryService, texts: Sequence[str], start: int) -> float:
    """Seconds to write ``texts`` (numbered from ``start``) in batches of ``BATCH``."""
    started = time.perf_counter()
    for at in range(0, len(texts), BATCH):
        service.write(records(texts[at : at + BATCH], start + at, service.user))
    return time.perf_counter() - started


def recall_ms(service: MemoryService, asked: Sequence[str], written: bool = False) -> tuple[list[float], list[int]]:
    """Milliseconds of ``recall`` for each probe, after ten that warm the caches the way a running chat has them,
    and the tokens of each block. ``written``: each probe follows a write, as a chat's turn follows the last one's
    (the ``last_seen`` of what the previous recall found, written untimed), so whatever is kept until the ledger
    changes is read again, as it is in a chat."""
    for probe in asked[:10]:
        service.recall(probe)
    times, tokens = [], []
    for probe in asked:
        if written:
            service.flush_seen()
        started = time.perf_counter()
        recall = service.recall(probe)
        times.append((time.perf_counter() - started) * 1000)
        tokens.append(recall.block.tokens)
    return times, tokens


def measure_sizes(sizes: Sequence[int], log: Any, model_dir: Path | None = None) -> dict[str, Any]:
    """Grow one store through ``sizes`` and measure at each; the store is laid out as the agent's data directory,
    so at each size the real ``agent`` can be started on it for its resident memory."""
    out: dict[str, Any] = {}
    root = Path(tempfile.mkdtemp(prefix="latency-"))
    paths = ensure_data_dir(root / "data")
    local = LocalEmbedder(model_dir)
    local.warm_up()
    embedder = TimedEmbedder(local)
    service, ledger, index = open_service(paths, embedder, max(sizes))
    texts = sentences(max(sizes))
    asked = probes(PROBES)
    try:
        have = 0
        for size in sorted(sizes):
            embed_before = embedder.seconds
            write_s = timed_writes(service, texts[have:size], have)
            write_embed_s = embedder.seconds - embed_before
            added, have = size - have, size
            times, tokens = recall_ms(service, asked)
            # The truth checks of the write path (bench/memory_truth.py), 1% of the store stating profile facts.
            seeded = len(ledger.profiled(USER))
            service.write(memory_truth.profile_records(seeded, size // 100 - seeded))
            truth = memory_truth.time_truth_checks(service, (ledger, index), embedder, TRUTH_LINES)
            out[str(size)] = {
                "truth_profile_supersede_ms_p50": truth["profile_supersede_ms_p50"],
                "truth_profile_supersede_ms_p95": truth["profile_supersede_ms_p95"],
                "truth_neighbours_ms_p50": truth["neighbours_ms_p50"],
                "truth_neighbours_ms_p95": truth["neighbours_ms_p95"],
                "memories": service.count(),
                "overhead_ms_p50": percentile(times, 50),
                "overhead_ms_p95": percentile(times, 95),
                "write_per_s": added / write_s,
                "write_s": write_s,
                "write_embed_share": write_embed_s / write_s,
                "bench_rss_mb": rss_mb(),  # this process: the store, the model and the bench's own texts
                "bytes_per_memory": dir_bytes(paths.root) / size,
                "block_tokens_p50": percentile(tokens, 50),
            }
            # The product's own figure: ``agent`` on this store after three recalls. One process per store: hand
            # it over, then take it back.
            ledger.close()
            forget_clients()
            out[str(size)].update(resident_mb(paths.root, USER, AGENT_LINES, model_dir))
            service, ledger, _ = open_service(paths, embedder, max(sizes))
            log(f"{size}: {json.dumps(out[str(size)])}")
    finally:
        ledger.close()
        forget_clients()
        shutil.rmtree(root, ignore_errors=True)
    return out


ADDS = 50  # memories written one at a time at each size, as a chat's turns write them


def on_servers(database_url: str, chroma_url: str, embedder: Embedder, capacity: int) -> tuple[MemoryService, Ledger]:
    """The store as ``open_memory`` wires it with AGENT_DATABASE_URL and AGENT_CHROMA_URL set."""
    from agent.adapters.postgres_ledger import PostgresLedger

    ledger = PostgresLedger(database_url)
    chroma = ChromaIndex(open_client(None, chroma_url), USER, chroma_url, namespace=ledger.store_id(), remote=True)
    return MemoryService(ledger, MirroredIndex(chroma, ledger, USER), embedder, USER,
                         MemoryPolicy(capacity=capacity)), ledger


DATABASE_USER = f"{USER}-db"  # the database-only store's memories, beside the servers' in the same database


def on_database(database_url: str, data: Path, embedder: Embedder, capacity: int) -> tuple[MemoryService, Ledger]:
    """The store as ``open_memory`` wires it with AGENT_DATABASE_URL alone: the PostgreSQL ledger and this data
    directory's embedded Chroma store, held by this process and caught up with the ledger before each search."""
    from agent.adapters.index_holder import HeldIndex
    from agent.adapters.postgres_ledger import PostgresLedger

    ledger = PostgresLedger(database_url)
    paths = ensure_data_dir(data)
    index = HeldIndex(ChromaIndex(open_client(paths.chroma, None), DATABASE_USER, str(paths.chroma)), ledger,
                      DATABASE_USER)
    return MemoryService(ledger, index, embedder, DATABASE_USER, MemoryPolicy(capacity=capacity)), ledger


def measure_backends(
    sizes: Sequence[int], log: Any, database_url: str, chroma_url: str, model_dir: Path | None = None
) -> dict[str, Any]:
    """For the embedded store and for the servers, one store each grown through ``sizes`` with the same texts; at
    each size the writes/s in batches, the writes/s one memory at a time and the per-turn overhead of recall."""
    embedder = LocalEmbedder(model_dir)
    embedder.warm_up()
    texts, asked = sentences(max(sizes) + ADDS * len(sizes)), probes(PROBES)
    root = Path(tempfile.mkdtemp(prefix="latency-servers-"))
    builds = {
        "embedded": lambda: open_service(ensure_data_dir(root / "data"), embedder, len(texts))[:2],
        "servers": lambda: on_servers(database_url, chroma_url, embedder, len(texts)),
        "database": lambda: on_database(database_url, root / "database-data", embedder, len(texts)),
    }
    out: dict[str, Any] = {}
    try:
        for backend, build in builds.items():
            service, ledger = build()
            try:
                have, added = 0, 0
                for size in sorted(sizes):
                    batch_s = timed_writes(service, texts[have:size], have)
                    singles = texts[max(sizes) + added : max(sizes) + added + ADDS]
                    each = []
                    for text in singles:
                        started = time.perf_counter()
                        service.remember(text, session="bench")
                        each.append((time.perf_counter() - started) * 1000)
                    times, _ = recall_ms(service, asked)
                    after_write, _ = recall_ms(service, asked, written=True)
                    out.setdefault(backend, {})[str(size)] = {
                        "memories": service.count(),
                        "write_per_s": (size - have) / batch_s,
                        "add_per_s": len(each) / (sum(each) / 1000),
                        "add_ms_p50": percentile(each, 50),
                        "add_ms_p95": percentile(each, 95),
                        "overhead_ms_p50": percentile(times, 50),
                        "overhead_ms_p95": percentile(times, 95),
                        "overhead_after_write_ms_p50": percentile(after_write, 50),
                        "overhead_after_write_ms_p95": percentile(after_write, 95),
                    }
                    have, added = size, added + ADDS
                    log(f"{backend} {size}: {json.dumps(out[backend][str(size)])}")
            finally:
                ledger.close()
                forget_clients()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def servers_main(args: argparse.Namespace, log: Any) -> int:
    """``--servers``: the embedded store against the servers given (or started here), printed as a table."""
    from bench.shared_servers import servers

    with servers(args.database_url, args.chroma_url) as (database_url, chroma_url, started):
        result = measure_backends(args.sizes, log, database_url, chroma_url, args.model_dir)
    result["server_origin"] = "started here on 127.0.0.1 (fsync off)" if started else "given"
    result["machine"] = machine.describe()
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"machine: {machine.line()}; servers: {result['server_origin']}")
    print("| memories | store | write/s (batches of 256) | write/s (one at a time) | one write p50/p95 ms | "
          "overhead p50 ms | overhead p95 ms | after a write p50 / p95 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sorted(args.sizes):
        for backend in ("embedded", "servers", "database"):
            r = result[backend][str(size)]
            print(f"| {size:,} | {backend} | {r['write_per_s']:.0f} | {r['add_per_s']:.1f} | {r['add_ms_p50']:.1f} / "
                  f"{r['add_ms_p95']:.1f} | {r['overhead_ms_p50']:.1f} | {r['overhead_ms_p95']:.1f} | "
                  f"{r['overhead_after_write_ms_p50']:.1f} / {r['overhead_after_write_ms_p95']:.1f} |")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--model-dir", type=Path, help="model.onnx and tokenizer.json to use as they are, as "
                        "AGENT_LOCAL_MODEL_DIR does (to compare with the packaged file before its int8 conversion)")
    parser.add_argument("--servers", action="store_true", help="the embedded store against a PostgreSQL ledger with "
                        "a Chroma server (started on 127.0.0.1 unless their URLs are given)")
    parser.add_argument("--database-url", help="with --servers: a PostgreSQL database to use (it gains a user "
                        f"{USER!r}); without it a throwaway server is started")
    parser.add_argument("--chroma-url", help="with --servers: a Chroma server to use; without it one is started")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.servers:
        return servers_main(args, log)

    result: dict[str, Any] = measure_sizes(args.sizes, log, args.model_dir)
    turns = next_prompt.TURNS + next_prompt.BACK_TO_BACK
    prompt = next_prompt.measure(sentences(turns, seed=23), probes(4 * turns, seed=5), log, args.model_dir)
    result.update({k: v for k, v in prompt.items() if k.startswith("next_prompt_")})  # the headline figures
    result["next_prompt"] = prompt
    result["startup_s"] = startup_s()
    result["machine"] = machine.describe()
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"machine: {machine.line()}")
    print("| memories | overhead p50 ms | overhead p95 ms | write/s | of it embedding | agent RSS MB (peak) | "
          "bench RSS MB | bytes/memory | truth checks p50/p95 ms | neighbours p50/p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in sorted(args.sizes):
        r = result[str(size)]
        print(f"| {size:,} | {r['overhead_ms_p50']:.1f} | {r['overhead_ms_p95']:.1f} | {r['write_per_s']:.0f} | "
              f"{r['write_embed_share']:.0%} | {r['rss_mb']:.0f} ({r['peak_rss_mb']:.0f}) | {r['bench_rss_mb']:.0f} | "
              f"{r['bytes_per_memory']:.0f} | {r['truth_profile_supersede_ms_p50']:.2f}/"
              f"{r['truth_profile_supersede_ms_p95']:.2f} | {r['truth_neighbours_ms_p50']:.2f}/"
              f"{r['truth_neighbours_ms_p95']:.2f} |")
    print(f"next prompt after a reply: p50 {prompt['next_prompt_ms_p50']:.1f} ms / p95 "
          f"{prompt['next_prompt_ms_p95']:.1f} ms (max {prompt['next_prompt_ms_max']:.1f}, {prompt['turns']} turns); "
          f"lines sent back to back: p50 {prompt['next_prompt_back_to_back_ms_p50']:.1f} / p95 "
          f"{prompt['next_prompt_back_to_back_ms_p95']:.1f} ms; {prompt['folds']} of "
          f"{prompt['turns'] + prompt['back_to_back_turns']} turns pushed older ones out of the window (their summary "
          "is made behind the prompt)")
    print(f"  (reply's last chunk rendered -> Repl.turn returns, {prompt['writes_stored']} gate writes of p50 "
          f"{prompt['write_ms_p50']:.0f} ms running behind; back to back, a reply starts p50 "
          f"{prompt['reply_start_back_to_back_ms_p50']:.1f} / p95 {prompt['reply_start_back_to_back_ms_p95']:.1f} ms "
          f"after its line, not {prompt['reply_start_ms_p50']:.1f} ms: its recall waits for the previous write)")
    startup = result["startup_s"]
    print(f"start-up to first prompt: {'not seen' if startup is None else f'{startup:.2f} s'} (median of 3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
