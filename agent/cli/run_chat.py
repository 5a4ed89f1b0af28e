"""Open the chat, or send the one message of a one-shot run: the use case behind ``agent``, ``agent PROMPT`` and
``agent chat``, built from what ``agent.wiring`` composes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from agent import wiring
from agent.app.chat_options import ChatOptions
from agent.app.data_dir import ensure_data_dir
from agent.app.maintenance import finish_forgets
from agent.config import Settings
from agent.errors import UsageError
from agent.sessions import Session, SessionHold, new_name
from agent.wiring import build_chat, check_endpoint

if TYPE_CHECKING:
    from agent.attachments import OneMessage

UNSAVED = "nosession-"  # the name of a conversation no file keeps, as its memories' provenance shows it


def run_chat(settings: Settings, options: ChatOptions, message: OneMessage | None = None) -> int:
    """Open the chat for ``settings`` and ``options``, or send the one ``message`` of a one-shot run; returns the
    exit code. A run that no one types into (one message, or a script read with ``--lines``) writes no session
    file unless it names one (``-s NAME``) or continues one (``-c``): scripts and one-shot prompts do not fill
    ``agent sessions list`` with a timestamped session each; ``--no-session`` does the same for the chat."""
    from agent.pricing import price, priced_endpoint
    from agent.ui.output import Mode, Output
    from agent.ui.prompt import TerminalReader
    from agent.ui.repl import Repl, ReplEvents, banner, open_session, pick_session

    if options.no_memory and options.read_only:
        raise UsageError("Use --no-memory (no memory at all) or --read-only (recall, never write), not both.")
    named = options.session is not None or options.resume_latest
    if options.no_session and named:
        raise UsageError("--no-session writes no session file: give it without -s NAME or -c.")
    check_endpoint(settings)
    paths = ensure_data_dir(settings.data_dir).for_user(settings.user)
    out = Output(Mode.detect(options.plain, once=message is not None))
    # Before this chat holds its own session, so that one is scrubbed too.
    finish_forgets(wiring, settings, paths, out.notice)
    store = paths.session_store()
    saving = named or not (options.no_session or options.lines or message is not None)
    with SessionHold(store) as hold:
        if saving:
            name, resumed = pick_session(store, options)
            session, resumed = hold.take(name, lambda: open_session(store, name, resumed, out.warn))
        else:
            now = time.time()
            session, resumed = Session(UNSAVED + new_name(now), now, now), False
        events = ReplEvents(out)
        engine, worker = build_chat(settings, options, store, session, events, saving=saving)
        priced = priced_endpoint(settings.base_url)
        repl = Repl(engine, out, worker, events, options.debug, paths.history, settings.data_dir, hold,
                    price=lambda model: price(model) if priced else None)
        if options.resume_latest and not resumed:
            out.notice("No session to continue: starting a new one.")
        if message is not None:
            return repl.run_once(message)
        if out.mode.interactive:
            repl.use(TerminalReader(paths.history, repl.toolbar, out.warn))
            banner(repl, resumed, options)
        return repl.run()
