"""``python -m bench.fixed_clock EPOCH ARGS...`` runs ``agent ARGS...`` on a clock that starts at EPOCH: the README's
transcripts (``bench/readme_transcripts.py``) show dates, and the same dates on every run keep them from drifting.

The clock moves on from EPOCH at the real pace (``time.monotonic``), so what waits on it still waits. It is set
before ``agent`` is imported: the agent's clocks are ``time.time`` taken as default arguments at import.
"""

from __future__ import annotations

import sys
import time


def main() -> None:
    epoch, started = float(sys.argv[1]), time.monotonic()
    time.time = lambda: epoch + (time.monotonic() - started)
    sys.argv = ["agent", *sys.argv[2:]]
    from agent.cli import main as agent

    agent()


if __name__ == "__main__":
    main()
