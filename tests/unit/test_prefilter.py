"""``agent.memory.prefilter``: what it derives from a pattern, and that a guarded pattern finds what the pattern
finds on every line of the bench's gate and refusal sets (a test that skipped a line it should search would change
a decision)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent.memory import credentials, instructions, links
from agent.memory.canonical import canonical, matching
from agent.memory.prefilter import Guarded, needed

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_words_of_an_alternation_are_needed() -> None:
    assert needed(re.compile(r"\bpass|Login|c[oó]dig|wi-?fi", re.IGNORECASE)) == {"pass", "login", "codig", "wi"}


def test_a_sequence_needs_its_most_telling_part() -> None:
    assert needed(re.compile(r"(?:^|\.\s*)(?:please )?(?:ignore|forget) (?:all )?rules")) == {"ignore", "forget"}


def test_nothing_is_needed_of_what_can_match_anything() -> None:
    assert needed(re.compile(r"\w+|pass")) is None
    assert needed(re.compile(r"(?:pass)?")) is None
    assert needed(re.compile(r"pass|")) is None


def test_a_letter_that_matches_another_ascii_letter_gives_up() -> None:
    # the Kelvin sign matches "k" and the long s "s" under IGNORECASE: no word is told from them
    assert needed(re.compile("\u212aey", re.IGNORECASE)) == {"ey"}
    assert needed(re.compile("pa\u017f\u017f", re.IGNORECASE)) == {"pa"}
    assert Guarded(re.compile("\u212aey", re.IGNORECASE)).search("my key") is not None


def test_what_no_ascii_text_can_hold_is_never_possible_in_it() -> None:
    guarded = Guarded(re.compile("пароль|密码"))
    assert not guarded.possible("my password")
    assert guarded.search("мой пароль") is not None  # not ASCII: searched whatever it holds


def test_case_of_the_text_does_not_hide_a_match() -> None:
    guarded = Guarded(re.compile(r"\bpass(?:word)?\b", re.IGNORECASE))
    assert guarded.search("my PASSWORD is x") is not None
    assert guarded.search("my bus ticket") is None


def _bench_lines() -> list[str]:
    files = sorted(BENCH.glob("gate_*.jsonl")) + sorted(BENCH.glob("refusal_*.jsonl"))
    return [json.loads(line)["text"] for f in files for line in f.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _guarded(module: object) -> list[Guarded]:
    """Every guarded pattern a module holds, alone or in a tuple."""
    found: list[Guarded] = []
    for value in vars(module).values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, Guarded):
                found.append(item)
    return found


@pytest.mark.parametrize("module", [instructions, credentials, links], ids=lambda m: m.__name__)
def test_guarded_patterns_find_what_the_patterns_find(module: object) -> None:
    texts = _bench_lines()
    assert len(texts) > 3000
    guarded = _guarded(module)
    assert guarded
    # Each as the judging reads it: instructions on their own view, the rest on the ``matching`` one.
    seen = ([instructions.read(canonical(t)) for t in texts] if module is instructions
            else [matching(canonical(t)) for t in texts])
    for g in guarded:
        for text in seen:
            if not g.possible(text):
                assert g.pattern.search(text) is None, (g.pattern.pattern[:60], text)
