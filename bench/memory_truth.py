"""Does the memory stay true? ``python bench/memory_truth.py [--data bench/memory_truth_dev.json] [--json]
[--chat] [--cost 10000]``.

Every scenario of the labelled set runs through ``MemoryService`` (gate, dates, profile, supersede, restatement) with
the real local embedder on a temp store, each scenario as a user of its own, one line after another an hour apart;
then its probe is recalled and the block the model would get is checked.

- update accuracy: the probe's block carries every value that must reach the prompt and none that must not
  (the old value); ``linked`` counts the old memory marked superseded by the new one;
- false-supersede rate: pairs of statements that do not contradict, where either one was superseded or merged
  into the other; ``both arrive``: the pair's probe gets both values;
- duplicate rate: live memories beyond the first in each paraphrase group, over the lines that could have been
  twins; ``<= 2 live``: the groups the held-out check asks for;
- date accuracy: a relative date stored as the calendar date it meant (and the relative words gone), and that date
  in the block of the probe;
- profile hit rate on far probes: the update probes whose similarity to the new statement is under the injection
  threshold (the memory store alone would not bring it), where the new value still arrived;
- safety on every request (``safety``, where the data has it): a safety fact said once, then unrelated lines; each of
  its far probes must carry it, and a case counts only when every probe did;
- standing preferences (``preferences``): a standing one must reach every later probe, a one-off order none.

``--base-url URL --model NAME`` turns the model's extraction on (``AGENT_LLM_EXTRACT``) against any OpenAI-compatible
server: the model proposes facts, profile values and supersedes of the live memories listed to it, and the measures
say what its proposals, after the memory's checks, did to the truth (``extraction`` counts what it proposed and what
was dropped). ``--chat`` runs the update scenarios through the real ``agent chat`` process too (each line a session
of its own, the fake OpenAI server of the tests recording the system prompt of the probe's request). ``--cost N``
measures what the profile and supersede checks cost per turn on a store of N memories.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client
from agent.adapters.ledger import SqliteLedger
from agent.adapters.local_embedder import LocalEmbedder
from agent.domain import MemoryRecord
from agent.memory.extraction import Extraction
from agent.memory.policy import MemoryPolicy
from agent.memory.retriever import dot
from agent.memory.service import Extractor, MemoryService
from agent.ports import Embedder, MemoryStore, VectorIndex
from bench import machine

DEFAULT_DATA = Path(__file__).with_name("memory_truth_dev.json")
START = "2026-12-01T09:00:00"
MAX_EXTRACT_TOKENS = 160
HOUR = 3600.0


@dataclass
class Clock:
    """The time each line is said: an hour after the previous one."""

    now: float

    def __call__(self) -> float:
        self.now += HOUR
        return self.now


@dataclass
class Counts:
    """What the model's extraction did over a run: the turns it was asked about, the calls that failed, the
    proposals dropped by the memory's checks, and the memories its supersedes replaced."""

    asked: int = 0
    failed: int = 0
    dropped: int = 0
    superseded: int = 0


@dataclass
class Store:
    """One ledger and one Chroma directory shared by every scenario; each scenario is a user of its own. With an
    ``extractor``, each service asks the model about each turn it keeps."""

    root: Path
    embedder: Embedder
    extractor: Extractor | None = None
    counts: Counts = field(default_factory=Counts)
    ledger: SqliteLedger = field(init=False)
    indexes: dict[str, ChromaIndex] = field(init=False, default_factory=dict)  # each user's, as ``service`` built it

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.ledger = SqliteLedger(self.root / "ledger.sqlite3")

    def service(self, user: str, start: str = START) -> tuple[MemoryService, Clock]:
        clock = Clock(datetime.fromisoformat(start).timestamp() - HOUR)
        index = self.indexes[user] = ChromaIndex(open_client(self.root / "chroma", None), user,
                                                 str(self.root / "chroma"))
        extractor = self.extractor
        if extractor is not None:
            def counted(text: str, listed: Sequence[str], ask: Extractor = extractor) -> Extraction:
                self.counts.asked += 1
                return ask(text, listed)
            extractor = counted
        service = MemoryService(self.ledger, index, self.embedder, user, MemoryPolicy(), extractor=extractor,
                                clock=clock)
        return service, clock


def contains(text: str, needle: str) -> bool:
    """``needle`` in ``text``, case aside: a value that must reach the prompt may be part of a word ("diabet")."""
    return needle.casefold() in text.casefold()


def mentions(text: str, needle: str) -> bool:
    """``needle`` as a word or phrase of its own: a value that must not reach the prompt ("EST") is not found
    inside another word of the system prompt ("request")."""
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text, re.IGNORECASE) is not None


# How many characters around an old value must be the new statement's own for the value to count as said gone.
SAID_GONE_CONTEXT = 16


def _agreed(text: str, start: int, end: int, own: str, at: int) -> int:
    """How many characters around ``text[start:end]`` read as around ``own[at:]`` (the same value there)."""
    left = 0
    while start - left > 0 and at - left > 0 and text[start - left - 1] == own[at - left - 1]:
        left += 1
    right, width = 0, end - start
    while end + right < len(text) and at + width + right < len(own) and text[end + right] == own[at + width + right]:
        right += 1
    return left + right


def mentioned_as_current(text: str, needle: str, said: Sequence[str]) -> bool:
    """``needle`` mentioned in ``text`` other than in the words of ``said`` (the new statement, as the user typed it
    and as stored): "I'm not a Missions girl anymore ... the Roadrunners are my team now" names the old team only to
    say it went, which is no stale fact asserted as current."""
    folded = text.casefold()
    owns = [s.casefold() for s in said]
    for match in re.finditer(rf"(?<!\w){re.escape(needle)}(?!\w)", folded, re.IGNORECASE):
        if not any(_agreed(folded, match.start(), match.end(), own, at.start()) >= SAID_GONE_CONTEXT
                   for own in owns for at in re.finditer(re.escape(match.group()), own)):
            return True
    return False


def say(service: MemoryService, lines: Sequence[str], counts: Counts | None = None) -> list[float]:
    """Observe each line as its own session; the seconds each write took."""
    took = []
    for n, line in enumerate(lines):
        started = time.perf_counter()
        written = service.observe(line, session=f"s{n}", turn=1)
        took.append(time.perf_counter() - started)
        if counts is not None and service.extracts:
            counts.dropped += len(written.dropped)
            counts.superseded += len(written.consolidated)
    return took


def by_source(service: MemoryService, line: str) -> MemoryRecord | None:
    return next((r for r in service.list() if r.source == line.strip()), None)


def run_updates(store: Store, cases: Sequence[dict[str, Any]], writes: list[float]) -> dict[str, Any]:
    correct, said_gone, linked, far, far_hit, collateral = 0, 0, 0, 0, 0, 0
    failures: list[str] = []
    failures_said: list[str] = []
    for case in cases:
        service, _ = store.service(case["id"])
        writes += say(service, [case["old"], *case["chatter"], case["new"]], store.counts)
        block = service.recall(case["probe"]).block.text
        arrived = all(contains(block, m) for m in case["must"])
        ok = arrived and not any(mentions(block, m) for m in case["must_not"])
        correct += ok
        old, new = by_source(service, case["old"]), by_source(service, case["new"])
        said = [case["new"], *([new.text] if new else [])]
        gone_ok = arrived and not any(mentioned_as_current(block, m, said) for m in case["must_not"])
        said_gone += gone_ok
        linked += bool(old and new and old.superseded_by == new.id)
        collateral += sum(1 for line in case["chatter"] if (r := by_source(service, line)) and not r.current)
        if new is not None:
            probe_vector, new_vector = store.embedder.embed([case["probe"], new.text])
            if dot(probe_vector, new_vector) < service.threshold:
                far += 1
                far_hit += all(contains(block, m) for m in case["must"])
        if not ok:
            failures.append(case["id"])
        if not gone_ok:
            failures_said.append(case["id"])
    return {"scenarios": len(cases), "update_accuracy": correct / len(cases), "failed_said_gone": failures_said,
            "update_accuracy_old_only_said_gone": said_gone / len(cases), "linked": linked / len(cases),
            "chatter_superseded": collateral, "far_probes": far, "profile_hit_far": far_hit / far if far else None,
            "failed": failures}


def run_pairs(store: Store, cases: Sequence[dict[str, Any]], writes: list[float]) -> dict[str, Any]:
    superseded, merged, both, failures = 0, 0, 0, []
    for case in cases:
        service, _ = store.service(case["id"])
        writes += say(service, [case["a"], case["b"]], store.counts)
        a, b = by_source(service, case["a"]), by_source(service, case["b"])
        lost = [r for r in (a, b) if r is not None and not r.current]
        superseded += bool(lost)
        merged += b is None or (a is not None and any(q.text == case["b"] for q in a.restated))
        block = service.recall(case["probe"]).block.text
        arrived = all(contains(block, m) for m in case["must"])
        both += arrived
        if lost or not arrived or b is None:
            failures.append(case["id"])
    n = len(cases)
    return {"pairs": n, "false_supersede_rate": superseded / n, "false_merge_rate": merged / n,
            "both_arrive": both / n, "failed": failures}


def run_paraphrases(store: Store, cases: Sequence[dict[str, Any]], writes: list[float]) -> dict[str, Any]:
    extra, possible, within_two, arrived, failures = 0, 0, 0, 0, []
    for case in cases:
        service, _ = store.service(case["id"])
        writes += say(service, case["lines"], store.counts)
        live = [r for r in service.list() if r.current]
        extra += max(len(live) - 1, 0)
        possible += len(case["lines"]) - 1
        within_two += len(live) <= 2
        block = service.recall(case["probe"]).block.text
        arrived += all(contains(block, m) for m in case["must"])
        if len(live) > 2:
            failures.append(case["id"])
    n = len(cases)
    return {"groups": n, "duplicate_rate": extra / possible, "at_most_two_live": within_two / n,
            "probe_hit": arrived / n, "failed": failures}


def run_dates(store: Store, cases: Sequence[dict[str, Any]], writes: list[float]) -> dict[str, Any]:
    stored_ok, block_ok, failures = 0, 0, []
    for case in cases:
        service, _ = store.service(case["id"], start=case["said_at"])  # the line is said at said_at
        writes += say(service, [case["line"]], store.counts)
        record = by_source(service, case["line"])
        text = record.text if record else ""
        good = bool(record) and all(e in text for e in case["expect"]) and text != case["line"]
        stored_ok += good
        block_ok += all(e in service.recall(case["probe"]).block.text for e in case["expect"])
        if not good:
            failures.append(case["id"])
    n = len(cases)
    return {"statements": n, "date_accuracy": stored_ok / n, "date_in_block": block_ok / n, "failed": failures}


def run_safety(store: Store, cases: Sequence[dict[str, Any]], writes: list[float]) -> dict[str, Any]:
    every, probes, carried, failures = 0, 0, 0, []
    for case in cases:
        service, _ = store.service(case["id"])
        writes += say(service, [case["line"], *case["chatter"]], store.counts)
        hits = [all(contains(service.recall(probe).block.text, m) for m in case["must"]) for probe in case["probes"]]
        probes += len(hits)
        carried += sum(hits)
        every += all(hits)
        if not all(hits):
            failures.append(case["id"])
    n = len(cases)
    return {"facts": n, "every_request": every / n if n else None, "probe_hit": carried / probes if probes else None,
            "failed": failures}


def run_preferences(store: Store, cases: Sequence[dict[str, Any]], writes: list[float]) -> dict[str, Any]:
    standing, standing_ok, one_off, one_off_ok, failures = 0, 0, 0, 0, []
    for case in cases:
        service, _ = store.service(case["id"])
        writes += say(service, [case["line"]], store.counts)
        blocks = [service.recall(probe).block.text for probe in case["probes"]]
        if case["standing"]:
            ok = all(contains(block, m) for block in blocks for m in case["must"])
            standing += 1
            standing_ok += ok
        else:
            ok = not any(mentions(block, m) for block in blocks for m in case["must"])
            one_off += 1
            one_off_ok += ok
        if not ok:
            failures.append(case["id"])
    return {"standing": standing, "standing_every_request": standing_ok / standing if standing else None,
            "one_off": one_off, "one_off_not_kept": one_off_ok / one_off if one_off else None, "failed": failures}


def model_extraction(base_url: str, model: str) -> tuple[Extractor, Counts]:
    """The model's extraction against the OpenAI-compatible server at ``base_url`` (``OPENAI_API_KEY`` if it needs
    one), and the counts it keeps: a failed call counts and yields nothing, as in the chat."""
    from openai import OpenAI

    from agent.adapters.openai_chat import OpenAIChat
    from agent.extract import model_extractor

    counts = Counts()

    def failed(exc: Exception) -> None:
        counts.failed += 1

    client = OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "none", base_url=base_url, timeout=120)
    # A reply is a few lines: a small local model that rambles on would take minutes per turn.
    return model_extractor(OpenAIChat(client, max_retries=1, max_tokens=MAX_EXTRACT_TOKENS), model, failed), counts


def run_library(data: dict[str, Any], embedder: Embedder, root: Path,
                extraction: tuple[Extractor, Counts] | None = None) -> dict[str, Any]:
    store = Store(root, embedder, *extraction) if extraction else Store(root, embedder)
    writes: list[float] = []
    steps: dict[str, Callable[[Store, Sequence[dict[str, Any]], list[float]], dict[str, Any]]] = {
        "updates": run_updates, "pairs": run_pairs, "paraphrases": run_paraphrases, "dates": run_dates,
        "safety": run_safety, "preferences": run_preferences,
    }
    out: dict[str, Any] = {name: step(store, data[name], writes) for name, step in steps.items() if name in data}
    out["write_ms_p50"] = round(1000 * statistics.median(writes), 1)
    if extraction:
        out["extraction"] = asdict(store.counts)
    store.ledger.close()
    return out


def run_chat(data: dict[str, Any], root: Path) -> dict[str, Any]:
    """The update scenarios through the real ``agent`` process: one session per line, then the probe; the system
    prompt the fake server received for the probe is checked."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.e2e_helpers import agent, agent_env
    from tests.fake_openai import FakeOpenAI, Reply

    correct, failures = 0, []
    for case in data["updates"]:
        home = root / case["id"]
        home.mkdir(parents=True)
        with FakeOpenAI(fallback=Reply("Noted.")) as fake:
            env = agent_env(fake, AGENT_DATA_DIR=str(home / "data"))
            for n, line in enumerate([case["old"], *case["chatter"], case["new"]]):
                agent(env, "--lines", "-s", f"s{n}", stdin=f"{line}\n")
            agent(env, "--lines", "-s", "probe", stdin=f"{case['probe']}\n")
            prompt = fake.system_prompts()[-1]
        ok = all(contains(prompt, m) for m in case["must"]) and not any(mentions(prompt, m) for m in case["must_not"])
        correct += ok
        if not ok:
            failures.append(case["id"])
    return {"scenarios": len(data["updates"]), "update_accuracy": correct / len(data["updates"]), "failed": failures}


PROFILE_LINES = ("I'm allergic to peanuts.", "I live in Boston.", "My favourite coffee is a flat white.",
                 "I work as a nurse at St. Mary's hospital.", "My name is Katherine.")


def profile_records(start: int, count: int) -> list[MemoryRecord]:
    """``count`` memories stating profile facts, as a long-lived user's store holds them among the rest."""
    from agent.memory import profile
    from bench.latency import records

    out = []
    for n in range(start, start + count):
        text = f"{PROFILE_LINES[n % len(PROFILE_LINES)]} (note {n})"
        out.append(replace(records([text], n)[0], facts=profile.read(text).facts))
    return out


def time_truth_checks(service: MemoryService, stores: tuple[MemoryStore, VectorIndex], embedder: Embedder,
                      lines: Sequence[str]) -> dict[str, Any]:
    """Per-turn cost of the truth checks, ``lines`` one turn each: reading the turn's facts (the attribute of each
    sentence by meaning included, its vectors computed before), loading the profile memories and deciding
    (``profile_supersede``), and the nearest-neighbour query a restatement or a correction
    needs (``neighbours``; the turn's vector is computed anyway, for the index). ``stores`` are the ledger and the
    index ``service`` was built over, which the service keeps to itself."""
    from agent.memory import attributes, profile, truth

    classifier = attributes.for_embedder(embedder)
    ledger, index = stores
    vectors: dict[str, list[float]] = {}

    def known(texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in vectors]
        vectors.update(zip(missing, embedder.embed(missing) if missing else [], strict=True))
        return [vectors[t] for t in texts]

    meaning = attributes.meaning(classifier, known) if classifier else None
    checks, queries = [], []
    for line in lines:
        vector = embedder.embed([line])[0]
        profile.read(line, meaning)  # the sentences' vectors, which the write computes anyway, are not timed
        started = time.perf_counter()
        statement = profile.read(line, meaning)
        profiled = ledger.profiled(service.user)
        truth.decide(line, statement, profiled, [])
        middle = time.perf_counter()
        hits = index.query(vector, 4)
        ledger.get(service.user, [h.id for h in hits])
        checks.append(middle - started)
        queries.append(time.perf_counter() - middle)

    def ms(values: list[float], q: float) -> float:
        return round(1000 * sorted(values)[min(int(q * len(values)), len(values) - 1)], 2)

    return {"memories": service.count(), "profile_memories": len(ledger.profiled(service.user)),
            "turns": len(lines), "profile_supersede_ms_p50": ms(checks, 0.5),
            "profile_supersede_ms_p95": ms(checks, 0.95), "neighbours_ms_p50": ms(queries, 0.5),
            "neighbours_ms_p95": ms(queries, 0.95)}


def turn_lines(data: dict[str, Any]) -> list[str]:
    return [case["new"] for case in data["updates"]] + [line for case in data["paraphrases"] for line in case["lines"]]


def run_cost(size: int, embedder: Embedder, root: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The truth checks on a store of ``size`` memories, 1% of them stating profile facts."""
    from bench.latency import USER, records, sentences

    store = Store(root, embedder)
    service, _ = store.service(USER)  # the user the synthetic records are written for
    rows = records(sentences(size - size // 100), 0) + profile_records(size, size // 100)
    for start in range(0, len(rows), 512):
        service.write(rows[start : start + 512])
    return time_truth_checks(service, (store.ledger, store.indexes[USER]), embedder, turn_lines(data))


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def report(result: dict[str, Any]) -> str:
    lib = result["library"]
    u, p, g, d = lib["updates"], lib["pairs"], lib["paraphrases"], lib["dates"]
    lines = [
        f"machine: {machine.line()}",
        f"data: {result['data']}: {u['scenarios']} updates, {p['pairs']} pairs, {g['groups']} paraphrase groups, "
        f"{d['statements']} dated statements; run {result['seconds']:.1f} s; write p50 {lib['write_ms_p50']} ms",
        "",
        "| measure | value | on |",
        "|---|---|---|",
        f"| update accuracy (new value in the prompt, old one not) | {percent(u['update_accuracy'])} | "
        f"{u['scenarios']} scenarios |",
        f"| the same, where the old value may appear in the new statement's own words (\"not a Missions girl "
        f"anymore\") | {percent(u['update_accuracy_old_only_said_gone'])} | {u['scenarios']} scenarios |",
        f"| old memory linked (superseded_by = the new one) | {percent(u['linked'])} | {u['scenarios']} scenarios |",
        f"| chatter memories superseded by mistake | {u['chatter_superseded']} | all chatter lines |",
        f"| false-supersede rate | {percent(p['false_supersede_rate'])} | {p['pairs']} non-contradicting pairs |",
        f"| false-merge rate | {percent(p['false_merge_rate'])} | {p['pairs']} pairs |",
        f"| both facts of a pair arrive | {percent(p['both_arrive'])} | {p['pairs']} pairs |",
        f"| duplicate rate (live memories beyond one) | {percent(g['duplicate_rate'])} | {g['groups']} groups |",
        f"| groups with at most two live memories | {percent(g['at_most_two_live'])} | {g['groups']} groups |",
        f"| paraphrase probe hit | {percent(g['probe_hit'])} | {g['groups']} groups |",
        f"| date accuracy (stored as the date it meant) | {percent(d['date_accuracy'])} | {d['statements']} |",
        f"| resolved date in the probe's block | {percent(d['date_in_block'])} | {d['statements']} |",
        f"| profile hit rate on far probes | {percent(u['profile_hit_far'])} | {u['far_probes']} probes under "
        "the threshold |",
    ]
    if "safety" in lib:
        s = lib["safety"]
        lines.append(f"| safety fact in every far request | {percent(s['every_request'])} | {s['facts']} facts, "
                     f"probe hit {percent(s['probe_hit'])} |")
    if "preferences" in lib:
        r = lib["preferences"]
        lines += [f"| standing preference in every later request | {percent(r['standing_every_request'])} | "
                  f"{r['standing']} preferences |",
                  f"| one-off order not carried later | {percent(r['one_off_not_kept'])} | {r['one_off']} orders |"]
    if "extraction" in lib:
        x, m = lib["extraction"], result.get("model", {})
        lines.append(f"| model extraction on ({m.get('model')} at {m.get('base_url')}) | {x['asked']} turns asked, "
                     f"{x['failed']} calls failed | {x['dropped']} proposals dropped, {x['superseded']} supersedes "
                     "taken |")
    if "chat" in result:
        c = result["chat"]
        lines.append(f"| update accuracy through `agent chat` | {percent(c['update_accuracy'])} | "
                     f"{c['scenarios']} scenarios |")
    if "cost" in result:
        c = result["cost"]
        lines += ["", f"cost per turn at {c['memories']} memories ({c['profile_memories']} state profile facts, "
                  f"{c['turns']} turns): profile+supersede p50 {c['profile_supersede_ms_p50']} ms, p95 "
                  f"{c['profile_supersede_ms_p95']} ms; neighbour query p50 {c['neighbours_ms_p50']} ms, p95 "
                  f"{c['neighbours_ms_p95']} ms"]
    failed = {name: section["failed"] for name, section in [*lib.items(), *result.items()]
              if isinstance(section, dict) and section.get("failed")}
    lines += ["", f"failed: {json.dumps(failed)}"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--chat", action="store_true", help="also run the updates through the real agent process")
    parser.add_argument("--cost", type=int, default=0, help="measure the truth checks on a store of this size")
    parser.add_argument("--base-url", help="turn the model's extraction on, against this OpenAI-compatible server")
    parser.add_argument("--model", default="", help="the model the server is asked for (with --base-url)")
    args = parser.parse_args(argv)
    if args.model and not args.base_url:
        parser.error("--model needs --base-url")
    data = json.loads(args.data.read_text())
    embedder = LocalEmbedder()
    embedder.warm_up()
    root = Path(tempfile.mkdtemp(prefix="memory-truth-"))
    started = time.perf_counter()
    try:
        extraction = model_extraction(args.base_url, args.model or "default") if args.base_url else None
        result: dict[str, Any] = {"data": args.data.name,
                                  "library": run_library(data, embedder, root / "lib", extraction)}
        if extraction:
            result["model"] = {"base_url": args.base_url, "model": args.model or "default"}
        if args.chat:
            result["chat"] = run_chat(data, root / "chat")
        if args.cost:
            result["cost"] = run_cost(args.cost, embedder, root / "cost", data)
        result["seconds"] = time.perf_counter() - started
        result["machine"] = machine.describe()
        print(json.dumps(result, indent=2) if args.json else report(result))
    finally:
        forget_clients()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
