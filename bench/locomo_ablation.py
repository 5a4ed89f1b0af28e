"""Where LoCoMo recall goes, one piece at a time: ``python bench/locomo_ablation.py --data PATH [VARIANT ...]``.

The agent with the gate on, through the write and read paths of ``bench/locomo_recall.py`` (``MemoryService.observe``
per turn with its dia_id and the turn it answers as context, ``MemoryService.search`` without a threshold per
question), with one piece of the product switched off or changed per variant (bench/RESULTS.md, E13), from the
fusion weights E13 started from (``MERGED``); ``current`` is the product as it is. Pieces are
swapped in by patching the module attribute the product calls, for the length of one variant; the product's code
is not changed. ``oldgate`` is the gate before issue 10 §1, read from git (``OLD_GATE``), so it needs the project's
git history. Each text is embedded once for all variants. Prints R@5 / R@10 / R@25 over all questions, over
categories 1-4 and per conversation.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters import ledger as ledger_module
from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client
from agent.adapters.ledger import SqliteLedger
from agent.domain import MemoryRecord
from agent.memory import dates, gate, retriever, truth
from agent.memory.policy import FusionWeights, MemoryPolicy
from agent.memory.service import MemoryService
from agent.ports import Embedder
from bench import locomo
from bench.locomo import Conversation
from bench.locomo_recall import KS, USER, Answer, mean, prepare

# The last commit before the gate of issue 10 §1 (cf60086, "keep what the user disclosed, sentence by sentence").
OLD_GATE = "cf60086^:agent/memory/gate.py"
ROOT = Path(__file__).resolve().parent.parent


class CachedEmbedder:
    """``inner`` with every text embedded once; ``said`` maps a date-resolved text to the words as said, embedded
    instead of it while ``use_said`` is on."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.cache: dict[str, list[float]] = {}
        self.said: dict[str, str] = {}
        self.use_said = False

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.use_said:
            texts = [self.said.get(t, t) for t in texts]
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.embed(missing), strict=True))
        return [self.cache[t] for t in texts]


Patch = tuple[Any, str, Any]
# The fusion of the merged code that E13 took apart (dense 0.35): every variant starts from it, so its rows can be
# run again as they were, whatever the product's weights are now (``current``).
MERGED = FusionWeights(dense=0.35, keyword=0.65)


@dataclass(frozen=True)
class Variant:
    """One row: what is patched, the fusion weights and policy of the writer, and whether a reply to a stored
    statement is indexed without its context."""

    patches: Callable[[CachedEmbedder], list[Patch]] = lambda _: []
    weights: FusionWeights = MERGED
    gate: bool = True
    truth: bool = True
    context_once: bool = False


def old_gate(spec: str = OLD_GATE) -> types.ModuleType:
    """The gate module as it was before issue 10 §1 (or at ``spec``, ``REV:PATH``)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", spec], check=True, capture_output=True,
                            text=True).stdout
    module = types.ModuleType("old_gate")
    sys.modules["old_gate"] = module  # its dataclass looks its module up while it is made
    exec(compile(source, spec, "exec"), module.__dict__)  # the project's own history, not input
    return module


def old_decide(module: types.ModuleType) -> Callable[[str], gate.GateDecision]:
    def decide(text: str) -> gate.GateDecision:
        d = module.decide(text)
        return gate.GateDecision(d.keep, d.reason, text=d.text, explicit=d.explicit)
    return decide


def whole_turn(text: str) -> gate.GateDecision:
    decision = REAL_DECIDE(text)
    return replace(decision, text=text.strip()) if decision.keep and not decision.explicit else decision


def question_only(text: str) -> bool:
    parts = [p for p in re.split(r"(?<=[.!?])\s+", truth.body(text).strip()) if p]
    return bool(parts) and all(p.rstrip().endswith("?") for p in parts if len(p.split()) > 2) \
        and parts[-1].rstrip().endswith("?")


def scored_down(factor: float, test: Callable[[str], bool]) -> Callable[..., list[tuple[str, float]]]:
    """``retriever.by_recency`` after multiplying by ``factor`` the score of each memory whose text passes ``test``."""
    def by_recency(ranked: Sequence[tuple[str, float]], records: dict[str, MemoryRecord],
                   weight: float) -> list[tuple[str, float]]:
        out = sorted(((mid, score * factor if mid in records and test(records[mid].text) else score)
                      for mid, score in ranked), key=lambda item: (-item[1], item[0]))
        return REAL_BY_RECENCY(out, records, weight)
    return by_recency


def ends_with_question(text: str) -> bool:
    return truth.body(text).rstrip().endswith("?")


def recording_resolve(embedder: CachedEmbedder) -> Callable[[str, float], str]:
    def resolve(text: str, when: float) -> str:
        resolved = REAL_RESOLVE(text, when)
        embedder.said[resolved] = text
        return resolved
    return resolve


REAL_DECIDE = gate.decide
REAL_RESOLVE = dates.resolve
REAL_BY_RECENCY = retriever.by_recency


def rank(config: str) -> Callable[[CachedEmbedder], list[Patch]]:
    return lambda _: [(ledger_module, "rank_config", lambda: config)]


def variants(old: Callable[[], types.ModuleType]) -> dict[str, Variant]:
    def older(_: CachedEmbedder) -> list[Patch]:
        return [(gate, "decide", old_decide(old()))]

    def undated(_: CachedEmbedder) -> list[Patch]:
        return [(dates, "resolve", lambda text, when: text)]

    def said(e: CachedEmbedder) -> list[Patch]:
        return [(dates, "resolve", recording_resolve(e)), (e, "use_said", True)]

    e13 = MERGED
    return {
        "current": Variant(weights=FusionWeights()),
        "recency0": Variant(weights=replace(e13, recency=0.0)),
        "notruth": Variant(truth=False),
        "nodates": Variant(undated),
        "embed_said": Variant(said),
        "wholeturn": Variant(lambda _: [(gate, "decide", whole_turn)]),
        "oldgate": Variant(older),
        "oldgate_nodates": Variant(lambda e: older(e) + undated(e)),
        "oldgate_notruth_r0": Variant(older, weights=replace(e13, recency=0.0), truth=False),
        "gateoff": Variant(gate=False),
        "ctx05": Variant(rank("bm25(2.0, 0.5)")),
        "text3": Variant(rank("bm25(3.0, 1.0)")),
        "text1": Variant(rank("bm25(1.0, 1.0)")),
        "context_once": Variant(context_once=True),
        "oldgate_context_once": Variant(older, context_once=True),
        "q70": Variant(lambda _: [(retriever, "by_recency", scored_down(0.7, ends_with_question))]),
        "q50": Variant(lambda _: [(retriever, "by_recency", scored_down(0.5, ends_with_question))]),
        "qo70": Variant(lambda _: [(retriever, "by_recency", scored_down(0.7, question_only))]),
        "qo50": Variant(lambda _: [(retriever, "by_recency", scored_down(0.5, question_only))]),
        **{f"d{round(d * 100)}": Variant(weights=replace(e13, dense=d, keyword=round(1 - d, 2)))
           for d in (0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.50)},
        "oldgate_d25": Variant(older, weights=replace(e13, dense=0.25, keyword=0.75)),
        "oldgate_nodates_d25": Variant(lambda e: older(e) + undated(e), weights=replace(e13, dense=0.25, keyword=0.75)),
        "gateoff_d25": Variant(gate=False, weights=replace(e13, dense=0.25, keyword=0.75)),
    }


@contextlib.contextmanager
def patched(patches: Sequence[Patch]) -> Iterator[None]:
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    try:
        for obj, name, value in patches:
            setattr(obj, name, value)
        yield
    finally:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)


def answers(conv: Conversation, embedder: CachedEmbedder, variant: Variant) -> list[Answer]:
    """Every question of ``conv`` on a fresh store written and read under ``variant``."""
    with patched(variant.patches(embedder)), tempfile.TemporaryDirectory(prefix="locomo-ablation-") as tmp:
        root = Path(tmp)
        ledger = SqliteLedger(root / "ledger.sqlite3")
        index = ChromaIndex(open_client(root / "chroma", None), USER, str(root / "chroma"))
        writer = MemoryService(ledger, index, embedder, USER, MemoryPolicy(gate=variant.gate, truth=variant.truth))
        previous: dict[int, str] = {}
        stated: dict[int, bool] = {}  # the session's previous turn was stored and is not a question
        for number, turn in enumerate(conv.turns):
            extra = {"dia_id": turn.dia_id}
            if turn.session in previous and not (variant.context_once and stated.get(turn.session)):
                extra["context"] = previous[turn.session]
            report = writer.observe(turn.statement, session=f"session_{turn.session}", turn=number,
                                    when=turn.when.timestamp(), extra=extra)
            previous[turn.session] = f"{turn.speaker}: {turn.text}"
            stated[turn.session] = bool(report.stored) and not turn.text.rstrip().endswith("?")
        reader = MemoryService(ledger, index, embedder, USER, MemoryPolicy(weights=variant.weights))
        prefix = f"{conv.sample_id}/"
        out = []
        for q in conv.questions:
            ranked = reader.search(q.question, k=max(KS), threshold=None)
            out.append(Answer(q.category, tuple(prefix + e for e in q.evidence),
                              tuple(prefix + m.record.extra["dia_id"] for m in ranked), (), 0, 0.0))
        ledger.close()
    forget_clients()
    return out


def recalls(found: Sequence[Answer]) -> str:
    return "/".join(f"{mean(locomo.recall_at(a.ranked, a.evidence, k) for a in found):.3f}" for k in KS)


def main(argv: Sequence[str] | None = None) -> int:
    cache: list[types.ModuleType] = []

    def old() -> types.ModuleType:
        if not cache:
            cache.append(old_gate())
        return cache[0]

    table = variants(old)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a file in LoCoMo's JSON format")
    parser.add_argument("variants", nargs="*", default=["current"], metavar="VARIANT",
                        help=f"any of: {', '.join(table)} (default current)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.variants if name not in table]
    if unknown:
        parser.error(f"no variant {', '.join(unknown)}; the variants are {', '.join(table)}")
    conversations, inner = prepare(args.data, "local")
    embedder = CachedEmbedder(inner)
    print("| variant | all | categories 1-4 | " + " | ".join(c.sample_id for c in conversations) + " | s |")
    print("|---" * (4 + len(conversations)) + "|")
    for name in args.variants:
        started = time.perf_counter()
        per = [answers(conv, embedder, table[name]) for conv in conversations]
        found = [a for conv in per for a in conv]
        cells = [recalls(found), recalls([a for a in found if a.category != 5]), *map(recalls, per)]
        print(f"| {name} | " + " | ".join(cells) + f" | {time.perf_counter() - started:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
