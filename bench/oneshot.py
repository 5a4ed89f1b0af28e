"""How long a one-shot run takes from start to exit: ``agent "PROMPT"`` as a script or a shell user runs it, the
real ``agent`` command against the project's fake OpenAI-compatible server (a reply of one word, at once), in a
fresh data directory per case. Three cases: without memory (``--no-memory``: the floor, interpreter and imports),
with memory on an empty store (the local embedding model loads, the prompt is recalled against and judged after),
and with a piped document of 20 kB (read, fenced, the first 2,000 characters recalled against).

    .venv/bin/python -m bench.oneshot [--runs 5]

Prints the median and the slowest of ``--runs`` runs per case, in seconds, and the machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agent.adapters.local_model import default_cache_dir
from bench.agent_process import agent_command
from bench.machine import line
from tests.fake_openai import FakeOpenAI, Reply

DOCUMENT = "".join(f"line {n}: a change to the parser, nothing personal in it\n" for n in range(360))


def timed(env: dict[str, str], args: list[str], stdin: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([agent_command(), *args], input=stdin, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"agent {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    cases = [("no memory", ["--no-memory", "what is 2+2"], ""), ("memory on", ["what is 2+2"], ""),
             ("memory on, 20 kB piped", ["review this"], DOCUMENT)]
    print(f"machine: {line()}")
    with FakeOpenAI(fallback=Reply("Four.")) as fake:
        for name, args, stdin in cases:
            times = []
            for _ in range(runs):
                with tempfile.TemporaryDirectory() as home:
                    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "AGENT_"))}
                    env.update(HOME=home, OPENAI_BASE_URL=fake.url, AGENT_EMBEDDER="local",
                               AGENT_DATA_DIR=str(Path(home) / "data"),
                               XDG_CACHE_HOME=str(default_cache_dir().parent))  # the model converted once
                    times.append(timed(env, args, stdin))
            print(f"{name:24} median {statistics.median(times):.2f} s, slowest {max(times):.2f} s ({runs} runs)")


if __name__ == "__main__":
    main()
