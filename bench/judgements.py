"""Every judgement made of every line of the bench's gate and refusal sets, one JSON array a line, to compare two
trees of the code: ``python bench/judgements.py [EXTRA.jsonl ...] > out.jsonl`` under each (``git archive`` of the
base into a directory, run there with ``PYTHONPATH`` set to it), then ``cmp`` the two outputs.

A change meant to make judging cheaper and decide nothing differently (``agent.memory.prefilter``) must leave every
line the same: the refusal of the words as said (not cached), the gate's decision (keep, reason, text, explicit,
read as), ``service.judge``'s decision, words and profile statement (without an embedder: the patterns alone), the
profile facts read of the canonical text, and whether it is an instruction, a secret, an identity number or a
link. ``EXTRA``: more JSON Lines files with a ``text`` field (``bench/bulk.py``'s export).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the tree it is run from, unless PYTHONPATH names another first
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from agent.memory import credentials, gate, instructions, links, profile, refusal
from agent.memory.canonical import canonical, matching
from agent.memory.policy import MemoryPolicy
from agent.memory.service import judge

BENCH = Path(__file__).resolve().parent


def texts(extra: list[str]) -> list[str]:
    files = [*sorted(BENCH.glob("gate_*.jsonl")), *sorted(BENCH.glob("refusal_*.jsonl")), *map(Path, extra)]
    return [json.loads(line)["text"] for f in files for line in f.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def main(argv: list[str]) -> int:
    policy = MemoryPolicy()
    for text in texts(argv):
        shown = canonical(text)
        seen = matching(shown)
        decided, words, statement = judge(policy, text)
        gated = gate.decide(shown)
        print(json.dumps([text, refusal.refusal.__wrapped__(text),
                          [gated.keep, gated.reason, gated.text, gated.explicit, gated.read_as],
                          [decided.keep, decided.reason, decided.text, decided.explicit, decided.read_as], words,
                          repr(statement), repr(profile.read(shown)), instructions.instruction(shown),
                          credentials.secret(seen), credentials.identity_number(seen), links.carries_link(shown)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
