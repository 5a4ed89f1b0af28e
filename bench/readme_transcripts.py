"""The README's transcripts, made by running the real agent: ``python -m bench.readme_transcripts`` runs each
against the fake OpenAI server (``tests/fake_openai.py``: scripted replies, everything else real: the local
embedder, the memory, what the agent printed), on a fixed clock (``bench/fixed_clock.py``), in a fresh data
directory, and writes each between its markers in README.md (``<!-- transcript NAME -->`` and
``<!-- /transcript -->``). ``--check`` writes nothing and exits 1 when the README differs, as
``tests/test_readme_transcripts.py`` does: a transcript cannot drift from what the agent prints.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tests.fake_openai import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC).timestamp()
FRIDAY = datetime(2026, 12, 4, 17, 30, tzinfo=UTC).timestamp()
PEANUTS = "I can't eat peanuts, they make my throat swell"
BERLIN = "I am moving to Berlin next month"
SNACKS = "Any snack ideas?"
ALLERGY = "I'm allergic to shellfish, even a little makes me ill"
HOME = "I live in Lisbon, in Alfama, near the castle"
SISTER = "My sister Ottilie lives in Lisbon with her two cats"
SISTER_ANA = "My sister Ana lives in Lisbon with her two cats"
SECRET = "my api key is sk-proj-4fJ9kQ2mX7pL1vN8bR3tY6wZ0aC5dE"
LINKED = "My recipes are at https://example.com/recipes"
CELLO = "I play the cello in an orchestra"
MYSQL = "mysql://agent:PASSWORD@db/agent"
_MARKED = re.compile(r"(<!-- transcript (?P<name>[a-z-]+) -->\n```\n)(?P<body>.*?)(```\n<!-- /transcript -->)", re.S)


@dataclass(frozen=True)
class Run:
    """One command of a transcript: as the README shows it, what the agent is given, and on which clock."""

    shown: str
    args: tuple[str, ...]
    stdin: str
    clock: float
    columns: int = 100
    files: tuple[tuple[str, str], ...] = ()  # written in the home directory (the working one) before it runs
    env: tuple[tuple[str, str], ...] = ()
    code: int = 0  # the exit status it must end with


def agent(env: Mapping[str, str], run: Run) -> str:
    """What ``run`` printed, stdout and stderr in the order it printed them, after the command as shown."""
    for name, content in run.files:
        (Path(env["HOME"]) / name).write_text(content)
    done = subprocess.run([sys.executable, "-m", "bench.fixed_clock", str(run.clock), *run.args], input=run.stdin,
                          env={**env, "COLUMNS": str(run.columns), **dict(run.env)}, cwd=env["HOME"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, check=False)
    if done.returncode != run.code:
        raise RuntimeError(f"agent {' '.join(run.args)} exited {done.returncode}, not {run.code}:\n{done.stdout}")
    printed = "".join(line.rstrip() + "\n" for line in done.stdout.splitlines())  # a table pads its lines
    return f"$ {run.shown}\n{printed}"


def exported(*texts: str) -> str:
    """An export of another store holding ``texts``, in the format ``agent memories import`` reads."""
    said = {"kind": "explicit", "created_at": MONDAY, "last_seen": MONDAY, "session": "laptop", "turn": 0}
    return "".join(json.dumps({"text": text, **said}) + "\n" for text in texts)


def environment(home: Path, fake: FakeOpenAI) -> dict[str, str]:
    """A new user's: nothing of this machine's settings, the data directory in ``home``, UTC, 100 columns."""
    kept = {name: os.environ[name] for name in ("PATH", "XDG_CACHE_HOME", "LANG") if name in os.environ}
    return {**kept, "HOME": str(home), "AGENT_DATA_DIR": str(home / "data"), "OPENAI_BASE_URL": fake.url,
            "AGENT_EMBEDDER": "local", "TZ": "UTC", "COLUMNS": "100", "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT)}


def transcripts() -> dict[str, str]:
    """Every transcript, by name: each a fresh user (a data directory of its own)."""
    monday_friday = [
        Run(f'printf "{PEANUTS}\\n{BERLIN}\\n" | agent --lines -s monday', ("--lines", "-s", "monday"),
            f"{PEANUTS}\n{BERLIN}\n", MONDAY),
        Run('printf "Any snack ideas?\\n/why\\n/forget 1\\n" | agent --lines -s friday', ("--lines", "-s", "friday"),
            f"{SNACKS}\n/why\n/forget 1\n", FRIDAY),
    ]
    undo = [Run(f'printf "{SISTER}\\n/undo\\n" | agent --lines -s lisbon', ("--lines", "-s", "lisbon"),
                f"{SISTER}\n/undo\n", MONDAY)]
    profile = [
        Run(f'agent memories add "{ALLERGY}"', ("memories", "add", ALLERGY), "", MONDAY),
        Run(f'agent memories add "{HOME}"', ("memories", "add", HOME), "", MONDAY + 60),
        Run("COLUMNS=70 agent memories profile", ("memories", "profile"), "", FRIDAY, columns=70),
    ]
    importing = [
        Run(f'agent memories add "{SISTER_ANA}"', ("memories", "add", SISTER_ANA), "", MONDAY),
        Run("agent memories import in.jsonl", ("memories", "import", "in.jsonl"), "", FRIDAY,
            files=(("in.jsonl", exported(SISTER_ANA, SECRET, LINKED, CELLO)),)),
    ]
    database = [Run(f"AGENT_DATABASE_URL='{MYSQL}' agent memories list", ("memories", "list"), "", MONDAY,
                    env=(("AGENT_DATABASE_URL", MYSQL),), code=2)]
    script = [
        Reply("Thanks for telling me — I'll keep peanuts out of any food suggestions."),
        Reply("Congratulations on the move! Berlin is a great city; ask me if you need help planning it."),
        Reply("Here are a few peanut-free snacks:\n\n- Apple slices with sunflower-seed butter\n- Hummus and carrot "
              "sticks\n- Roasted chickpeas\n\nAll of them skip peanuts, since they make your throat swell."),
        Reply("Noted."),
    ]
    out: dict[str, str] = {}
    with FakeOpenAI(script) as fake:
        for name, runs in (("monday-friday", monday_friday), ("undo", undo),
                           ("narrow-profile", profile), ("import-refused", importing),
                           ("database-url", database)):
            with tempfile.TemporaryDirectory() as home:
                env = environment(Path(home), fake)
                out[name] = "".join(agent(env, run) for run in runs)
    return out


def spliced(readme: str, made: Mapping[str, str]) -> str:
    """``readme`` with each marked transcript replaced by the one made; a marker without one is an error."""
    def body(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in made:
            raise KeyError(f"README.md marks a transcript {name!r} that {__name__} does not make")
        return match.group(1) + made[name] + match.group(4)

    return _MARKED.sub(body, readme)


def marked(readme: str) -> set[str]:
    return {match["name"] for match in _MARKED.finditer(readme)}


def main() -> int:
    readme = README.read_text()
    updated = spliced(readme, transcripts())
    if "--check" in sys.argv[1:]:
        if updated != readme:
            print("README.md's transcripts differ from what the agent prints: run python -m bench.readme_transcripts")
            return 1
        return 0
    README.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
