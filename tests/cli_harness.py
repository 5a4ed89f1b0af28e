"""The ``agent`` command run in this process as its console script runs it: ``cli.main`` on the arguments, with
stdin, the environment and stdout/stderr swapped by click's ``CliRunner`` isolation, the exit code taken from
``SystemExit``. A run costs a fraction of a fresh ``python -m agent`` (the imports and the model conversion are
paid once per test run), and its result is the ``CompletedProcess`` a process would give, so a test reads the
same either way.

What a process would leave behind when it ends is undone after each run: the embedded stores are closed and their
locks released (as at exit), logging is as it was (a fresh process has no handler, so warnings reach stderr through
logging's last resort; ``--debug`` configures the root logger), and so are the signal handlers. Whatever is about the
process itself (locks between processes, crashes and kills, signals, the terminal, the stdin of a real locale) goes
through ``tests.e2e_helpers`` instead.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import traceback
from collections.abc import Mapping

from click.testing import CliRunner

from agent import cli
from agent.adapters.chroma_index import forget_clients

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def invoke(
    *args: str, stdin: str | bytes = "", env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``agent ARGS`` with ``stdin`` and ``env`` (added to this process's environment for the run)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    handlers_of = {number: signal.getsignal(number) for number in _SIGNALS}
    code = 0
    with CliRunner().isolation(input=stdin, env=env) as (stdout, stderr, _):
        root.handlers = []
        try:
            cli.main(list(args))
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        except Exception:  # what the interpreter does with an exception nothing caught (``--debug`` lets them out)
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            forget_clients()
            root.handlers = handlers
            root.setLevel(level)
            for number, handler in handlers_of.items():
                if signal.getsignal(number) is not handler:  # (only the main thread may set one)
                    signal.signal(number, handler)
        out, err = stdout.getvalue().decode(), stderr.getvalue().decode("utf-8", "replace")
    return subprocess.CompletedProcess(["agent", *args], code, out, err)
