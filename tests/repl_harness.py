"""A whole chat in-process: scripted model, real conversation, session files and memory service on ``tmp_path``,
rich consoles writing to strings, and scripted input lines. Tests assert on the transcript it prints."""

from __future__ import annotations

import io
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from agent.adapters.ledger import SqliteLedger
from agent.app.chat_engine import ChatEngine
from agent.app.memory_worker import ConnectWait, MemoryWorker
from agent.conversation import Conversation, model_summarizer
from agent.memory.service import MemoryService
from agent.ports import ChatModel, Embedder
from agent.server import ServerProfile
from agent.sessions import Session, SessionStore
from agent.spool import Spool
from agent.ui.output import Mode, Output
from agent.ui.prompt import PipeReader
from agent.ui.repl import Repl, ReplEvents
from tests.fakes import InMemoryIndex, WordHashEmbedder


@dataclass
class Chat:
    """One finished run: what it printed, its exit code, and the objects to inspect."""

    repl: Repl
    stdout: io.StringIO
    notices: io.StringIO
    code: int | None = None

    @property
    def out(self) -> str:
        return self.stdout.getvalue()

    @property
    def log(self) -> str:
        return self.notices.getvalue()

    @property
    def session(self) -> Session:
        engine = self.repl.engine
        return engine.session_store().load(engine.session_name())


def memory_service(root: Path, embedder: Embedder | None = None) -> MemoryService:
    root.mkdir(parents=True, exist_ok=True)
    return MemoryService(SqliteLedger(root / "ledger.sqlite3"), InMemoryIndex(), embedder or WordHashEmbedder(), "me")


def build_chat(
    root: Path,
    model: ChatModel,
    *,
    memory: Callable[[], MemoryService] | None = None,
    session: str = "test",
    budget: int = 6000,
    interactive: bool = False,
    history: Path | None = None,
    server: Future[ServerProfile] | None = None,
    max_tokens: int = 0,
    read_only: bool = False,
    spool: Spool | None = None,
    open_wait: ConnectWait | None = None,
    width: int = 100,
    catalog: Callable[[], list[str]] | None = None,
    saving: bool = True,
) -> Chat:
    """A chat wired like ``run_chat`` does it, minus the terminal; ``memory`` opens the service (None: off);
    ``history`` is the input history file ``/forget`` cleans; ``server`` what a probe of the model server found;
    ``read_only`` is ``--read-only``; ``spool`` keeps the turns the store could not take; ``open_wait`` bounds the
    wait for a connection to the store's server at start; ``width`` the terminal's columns; ``catalog`` lists the
    models the server serves (``/model``); ``saving`` False is ``--no-session``."""
    stdout, notices = io.StringIO(), io.StringIO()
    mode = Mode(interactive=interactive, plain=True)
    out = Output(mode, Console(file=stdout, width=width, no_color=True, soft_wrap=True),
                 Console(file=notices, width=width, no_color=True, soft_wrap=True))
    store = SessionStore(root / "sessions", "default")
    existing = store.load(session) if store.exists(session) else Session(session, 0.0, 0.0)
    conversation = Conversation(budget, model_summarizer(model, "test-model"))
    conversation.resume(existing.turns, existing.context_start, existing.summary)
    events = ReplEvents(out)
    worker = None if memory is None else MemoryWorker(memory, events.on_write, read_only, spool, open_wait=open_wait,
                                                      on_back=events.on_memory_back)
    engine = ChatEngine(model, "test-model", conversation, store, existing, worker, server=server,
                        max_tokens=max_tokens, catalog=catalog, saving=saving)
    repl = Repl(engine, out, worker, events, history=history)
    return Chat(repl, stdout, notices)


def run_lines(chat: Chat, *lines: str) -> Chat:
    """Feed ``lines`` as a script would through stdin and run the loop to the end of input."""
    chat.repl.use(PipeReader(chat.repl.out.notice, io.StringIO("".join(f"{line}\n" for line in lines))))
    chat.code = chat.repl.run()
    return chat
