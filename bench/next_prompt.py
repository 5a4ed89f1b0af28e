"""How soon the chat is ready for the next line once a reply has ended, while the write gate runs behind it.

The chat is wired by the composition root (``agent.wiring.build_chat``), so the turn is the REPL's ``Repl.turn``: recall
on the memory thread, the reply rendered as Markdown to a terminal console (in memory), the session saved, the
user's words queued for the gate, the usage line. Only the model is replaced, by ``InstantChat``, whose replies
arrive at once; memory is real: ``open_memory`` with the local embedder and an embedded Chroma store in a temp dir.

``next_prompt_ms`` is the time from the moment the reply's last chunk has been rendered (the model's stream is
asked for more after its last chunk) to the return of ``Repl.turn``, after which the REPL reads the next line.
Lines alternate between first-person facts the gate keeps (so the embedding, ledger and Chroma write run on the
memory thread while the turn ends) and questions or small talk it drops. Two cases: the user types for a while
(every write lands before the next line is sent), and lines sent back to back. In the second case the recall of
the next line queues behind the previous write on the memory thread, so the wait shows up before the next reply
starts (``reply_start_ms``: from sending the line to the request reaching the model), not at the prompt.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from agent.adapters.chroma_index import forget_clients
from agent.app.chat_options import ChatOptions
from agent.app.data_dir import ensure_data_dir
from agent.app.memory_worker import WriteOutcome
from agent.config import Settings
from agent.domain import Message
from agent.memory import gate
from agent.ports import ChatChunk
from agent.sessions import SessionStore
from agent.ui.output import Mode, Output
from agent.ui.repl import Repl, ReplEvents, open_session
from agent.wiring import build_chat
from bench.locomo import percentile

TURNS = 50
BACK_TO_BACK = 20
# A reply of the usual shape (two paragraphs and a list), so rendering its end costs what it costs in a chat.
REPLY = ("Thanks for telling me. I'll keep that in mind for next time, and I can suggest a few things that fit.\n\n"
         "- a short plan for the weekend\n- something to cook that avoids what you mentioned\n- a reminder for "
         "the date\n\nWould you like me to go into **any** of these in more detail?")


class InstantChat:
    """A ``ChatModel`` whose replies arrive at once, word by word. ``started`` is when a request reached it and
    ``ended`` when its last chunk had been consumed (the caller asked for more); the first of each turn is kept,
    so a summary asked for while the turn is recorded does not count."""

    def __init__(self) -> None:
        self.started: float | None = None
        self.ended: float | None = None

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        self.started = self.started or time.perf_counter()
        words = REPLY.split(" ")
        for i, word in enumerate(words):
            yield ChatChunk(text=word if i == len(words) - 1 else f"{word} ")
        yield ChatChunk(finish_reason="stop")
        yield ChatChunk(prompt_tokens=sum(len(m.content.split()) for m in messages), completion_tokens=len(words))
        self.ended = self.ended or time.perf_counter()


class TimedEvents(ReplEvents):
    """The REPL's events, noting when each memory write landed."""

    def __init__(self, out: Output, written: list[tuple[float, WriteOutcome]]) -> None:
        super().__init__(out)
        self.written = written

    def on_write(self, outcome: WriteOutcome) -> None:
        self.written.append((time.perf_counter(), outcome))
        super().on_write(outcome)


def lines(facts: Sequence[str], questions: Sequence[str], n: int) -> list[str]:
    """``n`` user lines, three in five of them ``facts`` (the gate keeps them), the others ``questions`` the gate
    drops and small talk."""
    other = [q for q in questions if not gate.decide(q).keep] + ["thanks, that helps", "ok great"]
    return [facts[i] if i % 5 in (0, 1, 3) else other[i % len(other)] for i in range(n)]


def measure(
    facts: Sequence[str], questions: Sequence[str], log: Callable[[str], None], model_dir: Path | None = None
) -> dict[str, Any]:
    """Run the turns with user lines made of ``facts`` and ``questions``; the figures are in milliseconds."""
    root = Path(tempfile.mkdtemp(prefix="next-prompt-"))
    settings = Settings(data_dir=root / "data", embedder="local", user="bench", model="instant",
                        local_model_dir=model_dir)
    model = InstantChat()
    written: list[tuple[float, WriteOutcome]] = []
    paths = ensure_data_dir(settings.data_dir).for_user(settings.user)
    store = SessionStore(paths.sessions, settings.user)
    console = Console(file=io.StringIO(), force_terminal=True, width=100, highlight=False, emoji=False)
    out = Output(Mode(interactive=True, plain=False), console, console)
    with store.lock("bench"):
        session, _ = open_session(store, "bench", False, out.warn)
        events = TimedEvents(out, written)
        engine, worker = build_chat(settings, ChatOptions(), store, session, events, model)
        assert worker is not None
        repl = Repl(engine, out, worker, events, history=paths.history, data_root=settings.data_dir)
        try:
            service = worker.call(lambda s: s)  # waits for the store and the model to open
            for line in ["hi there", "I moved to Porto last spring with my partner", "Tell me a joke about cats"]:
                repl.turn(line)  # warm-up: first renders, first writes
                worker.drain()
            written.clear()
            idle = []
            for line in lines(facts, questions, TURNS):
                worker.drain()  # the user takes a while to type the next line: the last write has landed
                idle.append(_turn(repl, model, line))
            back = [_turn(repl, model, line) for line in lines(facts[TURNS:], questions[TURNS:], BACK_TO_BACK)]
            worker.close()  # lets the last writes finish
            service.close()
        finally:
            forget_clients()
            shutil.rmtree(root, ignore_errors=True)
    turns = {s.number: s for s in idle + back}
    stored = [(at, turns[o.turn]) for at, o in written if o.report is not None and o.report.stored]
    refused = [o for _, o in written if o.error is not None or (o.report is not None and o.report.skipped_reason)]
    result: dict[str, Any] = {
        "next_prompt_ms_p50": percentile([s.next_prompt_ms for s in idle], 50),
        "next_prompt_ms_p95": percentile([s.next_prompt_ms for s in idle], 95),
        "next_prompt_ms_max": max(s.next_prompt_ms for s in idle),
        "next_prompt_back_to_back_ms_p50": percentile([s.next_prompt_ms for s in back], 50),
        "next_prompt_back_to_back_ms_p95": percentile([s.next_prompt_ms for s in back], 95),
        "reply_start_ms_p50": percentile([s.reply_start_ms for s in idle], 50),
        "reply_start_back_to_back_ms_p50": percentile([s.reply_start_ms for s in back], 50),
        "reply_start_back_to_back_ms_p95": percentile([s.reply_start_ms for s in back], 95),
        "turns": len(idle),
        "back_to_back_turns": len(back),
        "folds": sum(s.folded for s in idle + back),
        "writes_stored": len(stored),
        # Writes that landed after the turn had returned: they really ran behind the prompt.
        "writes_after_prompt": sum(1 for at, s in stored if at > s.returned),
        "write_ms_p50": percentile([(at - s.ended) * 1000 for at, s in stored], 50),
        "writes_refused": len(refused),
    }
    log(f"next prompt: {json.dumps(result)}")
    return result


@dataclass(frozen=True)
class Sample:
    """One measured turn: its number in the session, the two waits (ms), and when its reply ended and it returned."""

    number: int
    folded: bool  # the turn pushed older ones out of the context window: a summary started behind the prompt
    next_prompt_ms: float
    reply_start_ms: float
    ended: float
    returned: float


def _turn(repl: Repl, model: InstantChat, line: str) -> Sample:
    """Send ``line`` through the REPL's turn and time it."""
    model.started = model.ended = None
    sent = time.perf_counter()
    result = repl.turn(line)
    returned = time.perf_counter()
    assert result is not None and model.started is not None and model.ended is not None, "the turn did not finish"
    ended = model.ended
    return Sample(result.number, result.left > 0, (returned - ended) * 1000, (model.started - sent) * 1000,
                  ended, returned)
