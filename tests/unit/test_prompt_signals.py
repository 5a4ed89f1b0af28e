"""A SIGTERM or SIGHUP that lands while the prompt's event loop runs one of its callbacks ends the prompt with
``Leave``. A closed terminal does exactly that: the hang-up wakes the prompt to read its terminal at the moment
SIGHUP arrives. Raised inside the callback, ``Leave`` (a ``BaseException``) was caught by asyncio and shown by
prompt-toolkit as an unhandled exception waiting for Enter, on a terminal that was gone: the chat never ended (a
full run of the suite saw it once, in ``test_signals.py``'s closed terminal at the prompt).

The prompt runs in this process on a pipe for input; the signal is sent from inside a callback of its loop, where
the handler then runs, on any machine."""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from agent.ui.prompt import TerminalReader
from agent.ui.repl import HeldInterrupts, Leave

WAIT = 60.0  # only a prompt that swallowed the signal gets near it


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_inside_a_callback_of_the_prompt_ends_it_with_leave(tmp_path: Path, signum: int) -> None:
    with create_pipe_input() as keys:
        reader = TerminalReader(tmp_path / "history", lambda: "", lambda _: None, pt_input=keys,
                                pt_output=DummyOutput())
        app = reader._session.app

        def signal_from_a_callback() -> None:
            while not (app.is_running and app.loop is not None):
                threading.Event().wait(0.01)
            app.loop.call_soon_threadsafe(os.kill, os.getpid(), signum)  # the handler runs inside that callback

        threading.Thread(target=signal_from_a_callback, daemon=True).start()
        # A prompt that swallowed the signal waits for ever, Ctrl-C and SIGTERM included: the process then ends
        # with every thread's traceback, which fails the test (and, under pytest-xdist, only its worker).
        faulthandler.dump_traceback_later(WAIT, exit=True)
        try:
            with HeldInterrupts(), pytest.raises(Leave) as left:
                reader.read()
        finally:
            faulthandler.cancel_dump_traceback_later()
        assert left.value.signum == signum
