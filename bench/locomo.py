"""LoCoMo in the form the recall benchmark needs: turns as user statements, questions with clean evidence, and
the recall arithmetic. Pure functions over the published JSON; nothing here knows any particular conversation.

Evidence in the published file is untidy (see ``shared/data/README.md``): several ids joined by ";" or spaces,
malformed ids ("D:11:26", "D30:05"), ids of turns that do not exist, questions with no evidence. ``load`` repairs
what can be repaired, drops the rest and counts every fix, so the report can say what was measured.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION = re.compile(r"^session_(\d+)$")
_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SPLIT = re.compile(r"[;,\s]+(?=D)")


@dataclass(frozen=True)
class Turn:
    """One turn: its ``dia_id``, session number, the session's date and the statement the agent is told."""

    dia_id: str
    session: int
    when: datetime
    speaker: str
    text: str
    caption: str = ""

    @property
    def statement(self) -> str:
        """``(session date) Speaker: text``, with the shared image's caption appended when there is one."""
        shared = f" [shares a photo: {self.caption}]" if self.caption else ""
        return f"({format_date(self.when)}) {self.speaker}: {self.text}{shared}"


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class EvidenceFixes:
    """What ``load`` had to do to the evidence lists, summed over a file."""

    split: int = 0
    normalised: int = 0
    dropped: int = 0
    questions_skipped: int = 0

    def add(self, other: EvidenceFixes) -> None:
        self.split += other.split
        self.normalised += other.normalised
        self.dropped += other.dropped
        self.questions_skipped += other.questions_skipped


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    fixes: EvidenceFixes = field(default_factory=EvidenceFixes)


def format_date(when: datetime) -> str:
    """A session date as people write it and questions ask it: "8 May 2023" (no time of day: it is noise)."""
    return f"{when.day} {when:%B %Y}"


def parse_date(raw: str) -> datetime:
    """LoCoMo's session stamp ("1:56 pm on 8 May, 2023") as a UTC datetime."""
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def parse_evidence(raw: Iterable[str], known: set[str], fixes: EvidenceFixes) -> tuple[str, ...]:
    """Evidence ids split, normalised to ``D<session>:<turn>`` without leading zeros, unknown ids dropped;
    order kept, duplicates removed. Each fix is counted in ``fixes``."""
    out: list[str] = []
    for entry in raw:
        parts = [p for p in _SPLIT.split(str(entry).strip()) if p]
        if len(parts) > 1:
            fixes.split += 1
        for part in parts:
            match = _ID.fullmatch(part.strip())
            if match is None:
                fixes.dropped += 1
                continue
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id != part.strip():
                fixes.normalised += 1
            if dia_id not in known:
                fixes.dropped += 1
            elif dia_id not in out:
                out.append(dia_id)
    return tuple(out)


def parse_conversation(sample: dict[str, object]) -> Conversation:
    conv = sample["conversation"]
    assert isinstance(conv, dict)
    turns: list[Turn] = []
    numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION.match(key)) and isinstance(conv[key], list))
    for n in numbers:
        when = parse_date(conv[f"session_{n}_date_time"])
        for raw in conv[f"session_{n}"]:
            caption = raw.get("blip_caption", "") if raw.get("img_url") else ""
            turns.append(Turn(raw["dia_id"], n, when, raw["speaker"], raw["text"].strip(), caption.strip()))
    known = {t.dia_id for t in turns}
    fixes = EvidenceFixes()
    questions: list[Question] = []
    qa = sample.get("qa", [])
    assert isinstance(qa, list)
    for item in qa:
        evidence = parse_evidence(item.get("evidence", []), known, fixes)
        if not evidence:
            fixes.questions_skipped += 1
            continue
        questions.append(Question(item["question"], int(item["category"]), evidence))
    return Conversation(str(sample.get("sample_id", "")), tuple(turns), tuple(questions), fixes)


def load(path: Path) -> list[Conversation]:
    """Every conversation of a LoCoMo-format file."""
    with path.open(encoding="utf-8") as handle:
        samples = json.load(handle)
    return [parse_conversation(sample) for sample in samples]


def session_of(dia_id: str) -> str:
    return dia_id.split(":", 1)[0]


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    """LoCoMo's recall@k: the share of ``relevant`` found in the first ``k`` of ``ranked``."""
    top = set(ranked[:k])
    return sum(1 for r in relevant if r in top) / len(relevant)


def share_found(found: Iterable[str], relevant: Sequence[str]) -> float:
    """The share of ``relevant`` present in ``found`` (the memory block holds no order that matters)."""
    got = set(found)
    return sum(1 for r in relevant if r in got) / len(relevant)


def sessions_ranked(ranked: Sequence[str]) -> list[str]:
    """Sessions in the order their first turn appears in a turn ranking."""
    return list(dict.fromkeys(session_of(d) for d in ranked))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linearly interpolated; 0 for no values."""
    return float(np.percentile(values, q)) if len(values) else 0.0


def categories_of(questions: Iterable[Question]) -> Counter[int]:
    return Counter(q.category for q in questions)
