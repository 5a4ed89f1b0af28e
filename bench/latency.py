"""Speed and size of the memory with the local embedder: ``python bench/latency.py [--json] [--sizes 1000 10000
100000]``.

One store grows through the sizes asked for. At each size: the write throughput of the batches that brought it
there (``MemoryService.write``: ledger, embedding, index), the per-turn overhead of the read path
(``MemoryService.recall``: embed the probe, fused search, token-budgeted block, ledger touch) over varied probes,
the process's resident memory and the store's bytes per memory. Then, once per run, how soon the chat is ready for
the next line after a reply while the write gate runs in the background (``bench/next_prompt.py``), and the
start-up time of ``agent`` to its first prompt, spawned on a pseudo-terminal against an unreachable model server.
Memories are synthetic but varied first-person sentences, so the tokenizer and the index see realistic text.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import random
import select
import shutil
import signal
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
from agent.domain import MemoryRecord, content_hash, memory_id
from agent.memory.service import MemoryPolicy, MemoryService
from agent.ports import Embedder
from bench import machine, next_prompt
from bench.locomo import percentile

USER = "latency"
BATCH = 256
PROBES = 200
PROJECT = Path(__file__).resolve().parent.parent
PROMPT_MARK = "›".encode()

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


def records(texts: Sequence[str], start: int) -> list[MemoryRecord]:
    now = time.time()
    return [
        MemoryRecord(id=memory_id(USER, t), text=t, kind="turn", user=USER, session=f"s{(start + i) // 50}",
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


def measure_sizes(sizes: Sequence[int], log: Any) -> dict[str, Any]:
    """Grow one store through ``sizes`` and measure at each."""
    out: dict[str, Any] = {}
    root = Path(tempfile.mkdtemp(prefix="latency-"))
    local = LocalEmbedder()
    local.warm_up()
    embedder = TimedEmbedder(local)
    ledger = SqliteLedger(root / "ledger.sqlite3")
    index = ChromaIndex(open_client(root / "chroma", None), USER, str(root / "chroma"))
    service = MemoryService(ledger, index, embedder, USER, MemoryPolicy(capacity=max(sizes)))
    texts = sentences(max(sizes))
    asked = probes(PROBES)
    try:
        have = 0
        for size in sorted(sizes):
            started, embed_before = time.perf_counter(), embedder.seconds
            for at in range(have, size, BATCH):
                service.write(records(texts[at : min(at + BATCH, size)], at))
            write_s = time.perf_counter() - started
            write_embed_s = embedder.seconds - embed_before
            added, have = size - have, size
            for probe in asked[:10]:  # warm caches the way a running chat has them
                service.recall(probe)
            times = []
            tokens = []
            for probe in asked:
                t0 = time.perf_counter()
                recall = service.recall(probe)
                times.append((time.perf_counter() - t0) * 1000)
                tokens.append(recall.block.tokens)
            out[str(size)] = {
                "memories": service.count(),
                "overhead_ms_p50": percentile(times, 50),
                "overhead_ms_p95": percentile(times, 95),
                "write_per_s": added / write_s,
                "write_s": write_s,
                "write_embed_share": write_embed_s / write_s,
                "rss_mb": rss_mb(),
                "bytes_per_memory": dir_bytes(root) / size,
                "block_tokens_p50": percentile(tokens, 50),
            }
            log(f"{size}: {json.dumps(out[str(size)])}")
    finally:
        ledger.close()
        forget_clients()
        shutil.rmtree(root, ignore_errors=True)
    return out


def startup_s(runs: int = 3, timeout: float = 15.0) -> float | None:
    """Median seconds from spawning ``agent`` on a pseudo-terminal to its first prompt (None if it never shows).

    The model server is an unreachable local port and the data directory is fresh, so nothing is fetched."""
    agent = PROJECT / ".venv" / "bin" / "agent"
    if not agent.exists():
        agent = Path(sys.executable).parent / "agent"
    found: list[float] = []
    for _ in range(runs):
        home = tempfile.mkdtemp(prefix="startup-")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "AGENT_"))}
        env.update(HOME=home, AGENT_DATA_DIR=str(Path(home) / "data"), TERM="xterm",
                   OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="unused-offline")
        started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: become agent
            os.chdir(home)
            os.execve(str(agent), [str(agent)], env)
        seen = b""
        try:
            while time.perf_counter() - started < timeout:
                ready, _, _ = select.select([fd], [], [], 0.02)
                if not ready:
                    continue
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
                if b"\x1b[6n" in chunk:  # answer prompt_toolkit's cursor-position request as a terminal would
                    os.write(fd, b"\x1b[1;1R")
                if PROMPT_MARK in seen:
                    found.append(time.perf_counter() - started)
                    break
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
            shutil.rmtree(home, ignore_errors=True)
    return sorted(found)[len(found) // 2] if found else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    result: dict[str, Any] = measure_sizes(args.sizes, log)
    turns = next_prompt.TURNS + next_prompt.BACK_TO_BACK
    prompt = next_prompt.measure(sentences(turns, seed=23), probes(4 * turns, seed=5), log)
    result.update({k: v for k, v in prompt.items() if k.startswith("next_prompt_")})  # the headline figures
    result["next_prompt"] = prompt
    result["startup_s"] = startup_s()
    result["machine"] = machine.describe()
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"machine: {machine.line()}")
    print("| memories | overhead p50 ms | overhead p95 ms | write/s | of it embedding | RSS MB | bytes/memory |")
    print("|---|---|---|---|---|---|---|")
    for size in sorted(args.sizes):
        r = result[str(size)]
        print(f"| {size:,} | {r['overhead_ms_p50']:.1f} | {r['overhead_ms_p95']:.1f} | {r['write_per_s']:.0f} | "
              f"{r['write_embed_share']:.0%} | {r['rss_mb']:.0f} | {r['bytes_per_memory']:.0f} |")
    print(f"next prompt after a reply: p50 {prompt['next_prompt_ms_p50']:.1f} ms / p95 "
          f"{prompt['next_prompt_ms_p95']:.1f} ms (max {prompt['next_prompt_ms_max']:.1f}, {prompt['turns']} turns); "
          f"lines sent back to back: p50 {prompt['next_prompt_back_to_back_ms_p50']:.1f} / p95 "
          f"{prompt['next_prompt_back_to_back_ms_p95']:.1f} ms; {prompt['folds']} of "
          f"{prompt['turns'] + prompt['back_to_back_turns']} turns asked the model for a summary (instant here)")
    print(f"  (reply's last chunk rendered -> Repl.turn returns, {prompt['writes_stored']} gate writes of p50 "
          f"{prompt['write_ms_p50']:.0f} ms running behind; back to back, a reply starts p50 "
          f"{prompt['reply_start_back_to_back_ms_p50']:.1f} / p95 {prompt['reply_start_back_to_back_ms_p95']:.1f} ms "
          f"after its line, not {prompt['reply_start_ms_p50']:.1f} ms: its recall waits for the previous write)")
    startup = result["startup_s"]
    print(f"start-up to first prompt: {'not seen' if startup is None else f'{startup:.2f} s'} (median of 3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
