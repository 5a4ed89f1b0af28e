"""The commands that change how the chat runs rather than what it remembers: ``/model``, ``/copy``, ``/pause`` and
``/resume``. A base of ``agent.ui.commands.Commands``, which lists them and dispatches to them by name."""

from __future__ import annotations

import base64

from agent.app.chat_engine import ChatEngine
from agent.app.engine_status import EngineStatus
from agent.errors import ChatError
from agent.ui.output import Output
from agent.ui.render import plural


def writes_state(status: EngineStatus) -> str:
    """What the toolbar and ``/session`` add to the memory count when this run does not write what is said."""
    if status.memory is not None and status.memory.read_only:
        return ", read-only"
    return ", paused" if status.paused else ""


class ChatControls:
    """``/model``, ``/copy``, ``/pause`` and ``/resume`` over the chat's engine and output."""

    engine: ChatEngine
    out: Output

    def _model(self, arg: str) -> None:
        """List what the server serves, or switch the model of the next replies; each turn records its model."""
        engine = self.engine
        model = engine.status().model
        served: list[str] | None = None
        problem = "this chat cannot ask the server"
        try:
            served = engine.served_models()
        except ChatError as exc:
            problem = str(exc)
        if not arg:
            if not served:
                why = problem if served is None else "the server lists no model"
                self.out.notice(f"Talking to {model}; {why}. /model NAME switches.")
                return
            for name in served:
                self.out.text(f"{'*' if name == model else ' '} {name}")
            current = "" if model in served else f" (talking to {model}, which it does not list)"
            self.out.notice(f"{plural(len(served), 'model', 'models')} served{current}. /model NAME switches; "
                            "the session records which model said what.")
            return
        name = engine.alias(arg) or arg  # an alias of AGENT_MODEL_ALIASES names its model
        if served is not None and name not in served:
            matches = [m for m in served if m.startswith(name)]
            if len(matches) != 1:
                self.out.warn(f"The server does not serve {name} ({plural(len(served), 'model', 'models')}: /model "
                              f"lists them); still talking to {model}.")
                return
            name = matches[0]
        if name == model:
            self.out.notice(f"Already talking to {name}.")
            return
        engine.use_model(name)
        unknown = f" ({problem}: it is used as given)" if served is None else ""
        self.out.notice(f"Now talking to {name}{unknown}; earlier replies keep the model that wrote them.")

    def _copy(self, arg: str) -> None:
        """The last reply to the clipboard with OSC 52: the terminal sets its clipboard from an escape sequence, so
        it works over SSH and needs no clipboard tool; a terminal that does not allow it ignores the sequence."""
        reply = self.engine.last_reply()
        if reply is None:
            self.out.notice("No reply to copy yet.")
            return
        payload = base64.b64encode(reply.encode("utf-8")).decode("ascii")
        if self.out.to_terminal(f"\x1b]52;c;{payload}\x07"):
            self.out.notice(f"Copied the last reply ({plural(len(reply), 'character', 'characters')}) to the "
                            "clipboard, through the terminal (OSC 52; in tmux it needs set-clipboard on).")
        else:
            self.out.notice("Not copied: the output is not a terminal, and the clipboard is reached through one "
                            "(OSC 52). `agent sessions show NAME` prints every reply.")

    def _pause(self, arg: str) -> None:
        memory = self.engine.status().memory
        if memory is None:
            self.out.warn("Long-term memory is off in this run (--no-memory, or it could not be opened).")
            return
        if memory.read_only:
            self.out.notice("Memory is read-only in this run (--read-only): nothing you say is remembered anyway.")
            return
        self.engine.pause(True)
        self.out.notice("Paused: nothing you say is remembered until /resume. Recall goes on; /remember still "
                        "stores what you give it.")

    def _resume(self, arg: str) -> None:
        memory = self.engine.status().memory
        if memory is None:
            self.out.warn("Long-term memory is off in this run (--no-memory, or it could not be opened).")
            return
        if memory.read_only:
            self.out.notice("Memory is read-only in this run (--read-only): start the chat without it to write.")
            return
        was = self.engine.pause(False)
        self.out.notice("Remembering again: what you say from now on goes to memory." if was else
                        "Memory writes are not paused.")
