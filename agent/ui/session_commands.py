"""The commands that move the chat between sessions without leaving it: ``/new``, ``/sessions`` (list, go into one)
and ``/sessions search TEXT``. A base of ``agent.ui.commands.Commands``, which lists them and dispatches to them.

Moving is safe as leaving is: the session left is saved first (a summary being made is awaited), and its lock is let
go only once the next one's is held and its file read; a session another process holds, or a damaged file, leaves
the chat where it was, with one line saying why. The search shows no forgotten text: the words of a forget still
under way (a session another process held when it was made) are taken out of what it reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agent.app import machines
from agent.app.chat_engine import ChatEngine
from agent.forget import Forgotten
from agent.sessions import Session, SessionHold, check_name, search, unused_name
from agent.ui.output import Output
from agent.ui.render import plural
from agent.ui.sessions_view import found_lines, sessions_table

SHOWN_FOUND = 20  # /sessions search shows the newest 20 matches; `agent sessions search` takes --limit


class SessionCommands:
    """``/new`` and ``/sessions`` over the chat's engine, output, and the lock of the session it is in (``hold``;
    None in a chat that holds none, as the tests' harness)."""

    engine: ChatEngine
    out: Output
    hold: SessionHold | None
    _session_listing: list[str]

    def _new(self, arg: str) -> None:
        """A fresh session without leaving the chat: named after the time, or ``arg``. A chat that writes no
        session (``--no-session``) starts another that is not written, unless it is given a name."""
        store = self.engine.session_store()
        name = check_name(arg) if arg else unused_name(store)
        if arg and store.exists(name):
            self.out.warn(f"There is a session {name} already: /sessions {name} goes into it.")
            return
        saving = bool(arg) or self.engine.status().saving
        now = time.time()
        left = self._go(name, saving, lambda: Session(name, now, now))
        if left is not None:
            kept = "" if saving else " (not saved: this chat writes no session)"
            self.out.notice(f"(new session {name}{kept}; {left})")

    def _sessions(self, arg: str) -> None:
        word, _, rest = arg.partition(" ")
        if word == "search" and (rest.strip() or not self.engine.session_store().exists("search")):
            self._search(rest.strip())
            return
        if not arg:
            self._list()
            return
        store, status = self.engine.session_store(), self.engine.status()
        name = arg
        if arg.isdigit() and not store.exists(arg) and 1 <= int(arg) <= len(self._session_listing):
            name = self._session_listing[int(arg) - 1]
        if name == status.session and status.saving:
            self.out.notice(f"Already in session {name}.")
            return
        if not store.exists(check_name(name)):
            self.out.warn(f"There is no session {name} of yours: /sessions lists them, /new {name} starts it.")
            return
        left = self._go(name, True, lambda: store.load(name))
        if left is None:
            return
        now = self.engine.status()
        last = f"; last: you: {' '.join(now.last_turn.user.split())[:80]}" if now.last_turn is not None else ""
        self.out.notice(f"(session {name}, {plural(now.turns, 'turn', 'turns')}{last}; {left})")

    def _list(self) -> None:
        infos = self.engine.session_store().list()
        self._session_listing = [info.name for info in infos]
        if not infos:
            self.out.notice("No saved session yet: a session is saved after its first turn.")
            return
        self.out.show(sessions_table(infos, current=self.engine.session_name()))
        self.out.notice("/sessions N or NAME goes into one (* is this one); /new starts another; /sessions search "
                        "TEXT finds words in them.")

    def _go(self, name: str, saving: bool, load: Callable[[], Session]) -> str | None:
        """Go into the session ``load`` reads (under the lock of ``name`` when it is written: ``saving``) and say
        what became of the one left; None, with one line saying why, when the chat stays where it is."""
        engine = self.engine
        engine.settle()  # a summary being made is saved into the session it belongs to
        status = engine.status()
        if status.unsaved is not None:
            self.out.error(f"{status.unsaved} The chat stays in session {status.session} until a save succeeds.")
            return None
        leaving, written = status.session, status.saving
        kept = written and engine.session_store().exists(leaving)
        session = load() if self.hold is None else self.hold.take(name if saving else None, load)
        engine.switch(session, saving)
        if kept:
            return f"session {leaving} is saved: /sessions {leaving} goes back"
        return f"session {leaving} {'had no turn to save' if written else 'was not saved'}"

    def _search(self, text: str) -> None:
        if not text:
            self.out.warn("Usage: /sessions search TEXT (the words of a line or a reply, in any session of yours).")
            return
        memory = self.engine.memory_worker()
        if memory is None:
            self.out.warn("Long-term memory is off in this run, and the search reads it to leave out what was "
                          "forgotten: `agent sessions search TEXT` searches outside the chat.")
            return
        forgotten = Forgotten(memory.call(machines.forgotten_texts))
        found = search(self.engine.session_store(), text, forgotten.scrub)
        if not found:
            self.out.notice(f"No turn of your sessions holds {text!r}.")
            return
        for line in found_lines(found[:SHOWN_FOUND], text):
            self.out.show(line)
        more = len(found) - SHOWN_FOUND
        tail = f" (the newest {SHOWN_FOUND} shown: `agent sessions search` lists them all)" if more > 0 else ""
        self.out.notice(f"{plural(len(found), 'match', 'matches')}{tail}; /sessions NAME goes into one.")
