"""``agent doctor``: checks, in a few seconds, everything a chat depends on, and says what to fix.

The model server (reachable, the model served, streaming, its context size, whether its chat template keeps system
messages), the embedder (loads, embeds), the store (its lock, the index against the ledger, free disk) and the data
directory's permissions. Each check is a ``Check`` with ok, warn or fail; the CLI only prints them. A check that
cannot run because an earlier one failed is left out rather than failed again.

The checks build nothing: what they probe arrives as ``Probes`` (``agent.wiring.doctor_probes`` builds them from
the settings), small ports over the model server, the embedder, the store and the data directory, so the doctor
reads the same adapters a chat would use, and a test hands it fakes.

How the system role is checked: from the chat template where the server publishes its source (llama.cpp's
``/props``, Ollama's ``/api/show``), as the chat decides where the memory goes. Elsewhere by two one-token requests,
the same user line after a short and after a long system message: a template that keeps system messages counts
more prompt tokens for the long one; one that drops them (llama-cpp-python's ``gemma``) counts the same for both,
and would drop the memory block if the agent sent it there. Not with and without a system message: a template
that puts a default system prompt of its own in front when none is sent (SmolLM2's: 33 tokens, as many as the
doctor's message was) can count the same for both and look as if it dropped the message.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from agent.config import Settings
from agent.domain import Message
from agent.errors import AgentError, ChatError, Remedy, StoreLocked
from agent.ports import ChatChunk, Embedder, Notify
from agent.server import ServerInfo, ServerProfile, request_limit, server_profile, template_has_system_role

Status = Literal["ok", "warn", "fail"]
PING_TOKENS = 8
DISK_FAIL = 100 * 1024**2
DISK_WARN = 1024**3
_PING = [Message("user", "Say OK.")]
_SHORT_SYSTEM = Message("system", "Be brief.")
_LONG_SYSTEM = Message("system", "Be brief. " + "Keep every answer to one short sentence, and say nothing else. " * 4)
# What a request holds besides the window: the system prompt (about 200 tokens) and the memory block.
_SYSTEM_PROMPT_TOKENS = 250


@dataclass(frozen=True)
class Check:
    """One finding: ``area`` and ``name`` say what was checked, ``detail`` what was seen, ``fix`` what to do."""

    area: str
    name: str
    status: Status
    detail: str
    fix: str = ""


class PingChat(Protocol):
    """The chat model as the doctor asks it: a short streamed reply, and the prompt tokens a request counts."""

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]: ...

    def prompt_tokens(self, messages: Sequence[Message], model: str) -> int | None: ...


class ModelServer(Protocol):
    """The model server of the settings."""

    def check_endpoint(self) -> None:
        """Raise ``AgentError`` when the endpoint cannot be used at all (a malformed URL, no key for OpenAI)."""

    def probe(self) -> ServerInfo:
        """What the server publishes: its kind, its models, its context size, its chat template."""

    def chat(self, max_tokens: int) -> PingChat:
        """Its chat model, with replies of ``max_tokens`` at most and no retry: the doctor reports, it does not wait."""


class OpenStore(Protocol):
    """The memory store, opened without its checks: what the doctor counts in it."""

    def check_space(self) -> None: ...

    def count(self) -> int: ...

    def indexed(self) -> int: ...

    def close(self) -> None: ...


class StoreOpener(Protocol):
    """The memory store of the settings, looked at before and after opening it."""

    def holder(self) -> str | None:
        """None when this process may hold the embedded index (or there is none to hold: a Chroma server, no data
        directory yet); else the pid of the process that holds it, ``""`` when it cannot be told."""

    def open(self, notify: Notify) -> OpenStore:
        """The store opened as a chat opens it, minus the checks; what the open repaired goes to ``notify``."""


@dataclass(frozen=True)
class Probes:
    """What the checks probe, built by the composition root: the model server, the embedder of a kind (``local``,
    ``openai``), the store and the data directory."""

    server: ModelServer
    embedder: Callable[[str], Embedder]
    store: StoreOpener
    data_dir: Path


def run(settings: Settings, probes: Probes) -> list[Check]:
    """Every check, in order; an unexpected error in one area is that area's failure, and the others still run."""
    areas: list[tuple[str, Callable[[], Iterator[Check]]]] = [
        ("model server", lambda: server_checks(settings, probes.server)),
        ("embedder", lambda: embedder_checks(settings.resolved_embedder, probes.embedder)),
        ("data directory", lambda: data_dir_checks(probes.data_dir)),
        ("store", lambda: store_checks(settings, probes.store)),
    ]
    checks: list[Check] = []
    for area, area_checks in areas:
        try:
            checks.extend(area_checks())
        except Exception as exc:  # a check that breaks is a finding, not the end of the doctor
            checks.append(Check(area, "check", "fail", f"{type(exc).__name__}: {exc}"))
    return checks


def failed(checks: list[Check]) -> bool:
    return any(check.status == "fail" for check in checks)


# -- the model server ------------------------------------------------------------------------------------------


def server_checks(settings: Settings, server: ModelServer) -> Iterator[Check]:
    area = "model server"
    try:
        server.check_endpoint()
    except AgentError as exc:
        yield Check(area, "endpoint", "fail", str(exc))
        return
    where = settings.base_url or "OpenAI"
    info = server.probe()
    if info.unreachable:
        yield Check(area, "reachable", "fail", f"{where}: {info.error}",
                    "start the server, or set OPENAI_BASE_URL to where it listens")
        return
    if info.error is not None and not info.models:
        yield Check(area, "reachable", "warn", f"{where} answers, but /models gave {info.error}",
                    "is this an OpenAI-compatible server? The base URL usually ends in /v1")
    else:
        yield Check(area, "reachable", "ok", f"{where} ({info.kind})")
    profile = server_profile(info, model=settings.model, system_prompt=settings.system_prompt,
                             max_tokens=settings.max_tokens)
    yield _model_check(info, settings.model)
    chat = server.chat(PING_TOKENS)
    streamed = _stream_check(lambda: chat.stream(_PING, settings.model))
    yield streamed
    yield _context_check(info, settings)
    if streamed.status != "fail":
        yield system_role_check(lambda messages: chat.prompt_tokens(messages, settings.model), profile)


def _model_check(info: ServerInfo, model: str) -> Check:
    area = "model server"
    if not info.models:
        return Check(area, "model served", "warn", f"the server lists no models; asking for {model!r}")
    if model in info.models:
        return Check(area, "model served", "ok", model)
    if len(info.models) == 1:
        return Check(area, "model served", "ok", f"{info.models[0]} (the only one; AGENT_MODEL={model} is "
                     "answered by it on llama.cpp)", f"elsewhere set AGENT_MODEL={info.models[0]}")
    shown = ", ".join(info.models[:8]) + (" ..." if len(info.models) > 8 else "")
    return Check(area, "model served", "fail", f"{model!r} is not among the {len(info.models)} models listed: {shown}",
                 "set AGENT_MODEL (or -m) to one of them")


def _stream_check(stream: Callable[[], Iterator[object]]) -> Check:
    started = time.monotonic()
    try:
        pieces = [getattr(chunk, "text", "") for chunk in stream()]
    except ChatError as exc:
        return Check("model server", "streaming", "fail", str(exc))
    seconds, chars = time.monotonic() - started, len("".join(pieces))
    return Check("model server", "streaming", "ok",
                 f"a reply of up to {PING_TOKENS} tokens streamed in {seconds:.1f} s ({chars} characters)")


def _context_check(info: ServerInfo, settings: Settings) -> Check:
    area = "model server"
    needed = settings.context_tokens + settings.memory_tokens + _SYSTEM_PROMPT_TOKENS
    if info.context is None:
        local = settings.base_url is not None
        return Check(area, "context size", "warn" if local else "ok",
                     "the server publishes no context size" + (": a request it refuses as too long is trimmed and "
                                                               "sent again" if local else ""),
                     f"make sure it holds {needed + settings.max_tokens:,} tokens (llama.cpp --n_ctx, Ollama num_ctx)"
                     if local else "")
    limit = request_limit(info.context, settings.max_tokens) or 0
    if limit >= needed:
        return Check(area, "context size", "ok", f"{info.context:,} tokens: room for the agent's budget and a reply")
    return Check(area, "context size", "warn",
                 f"{info.context:,} tokens, less than the agent's budget ({settings.context_tokens:,} + up to "
                 f"{settings.memory_tokens:,} of memory + a {settings.max_tokens:,}-token reply): older turns leave "
                 "the context sooner", f"give the server a context of {needed + settings.max_tokens:,} tokens, or "
                 "lower AGENT_CONTEXT_TOKENS")


def system_role_check(count: Callable[[list[Message]], int | None], profile: ServerProfile) -> Check:
    area, name = "model server", "system role"
    goes = f"the memory goes into {profile.placement.describe()}"
    published = profile.info.template
    has_role = template_has_system_role(published) if published is not None else None
    if has_role:
        return Check(area, name, "ok", f"the server's chat template has a system role; {goes}")
    if has_role is False:
        if profile.placement.where == "user":
            return Check(area, name, "ok", f"the server's chat template has no system role; {goes}")
        return Check(area, name, "warn", "the server's chat template has no system role: it may drop a system "
                     f"message, and the memory with it; {goes}", "set AGENT_SYSTEM_PROMPT=user")
    try:
        short, long = count([_SHORT_SYSTEM, *_PING]), count([_LONG_SYSTEM, *_PING])
    except ChatError as exc:
        return Check(area, name, "warn", f"could not tell ({exc})")
    if short is None or long is None:
        return Check(area, name, "warn", f"the server reports no token usage, so it cannot be told; {goes}")
    if long > short:
        return Check(area, name, "ok", f"the chat template keeps system messages; {goes}")
    if profile.placement.where == "user":
        return Check(area, name, "ok", f"the chat template drops system messages; {goes}")
    return Check(area, name, "fail", f"the chat template drops system messages, and the memory with them; {goes}",
                 "set AGENT_SYSTEM_PROMPT=user")


# -- the embedder, the data directory and the store -----------------------------------------------------------


def embedder_checks(kind: str, build: Callable[[str], Embedder]) -> Iterator[Check]:
    started = time.monotonic()
    try:
        embedder = build(kind)
        vector = embedder.embed(["I can't eat peanuts"])[0]
    except AgentError as exc:
        yield Check("embedder", "loads and embeds", "fail", str(exc))
        return
    seconds = time.monotonic() - started
    yield Check("embedder", "loads and embeds", "ok",
                f"{kind} ({embedder.model}, {len(vector)} dimensions) in {seconds:.1f} s")


def data_dir_checks(root: Path) -> Iterator[Check]:
    area = "data directory"
    if not root.exists():
        yield Check(area, "permissions", "ok", f"{root} does not exist yet; it is created 0700 at first use")
        return
    if not root.is_dir():
        yield Check(area, "permissions", "fail", f"{root} is not a directory", "set AGENT_DATA_DIR or --data-dir")
        return
    mode = stat.S_IMODE(root.stat().st_mode)
    loose = [p for p in (root, *root.rglob("*")) if not p.is_symlink() and p.lstat().st_mode & 0o077]
    if not os.access(root, os.W_OK | os.X_OK):
        yield Check(area, "permissions", "fail", f"{root} is not writable (mode {mode:04o})",
                    f"chmod u+rwx {root}, or set AGENT_DATA_DIR to a writable directory")
    elif loose:
        entries = "1 entry" if len(loose) == 1 else f"{len(loose)} entries"
        yield Check(area, "permissions", "warn", f"{entries} under {root} can be read by other users "
                    f"(e.g. {loose[0]})", f"chmod -R go-rwx {root} (the next chat does it too)")
    else:
        yield Check(area, "permissions", "ok", f"{root} (mode {mode:04o}, private to you)")
    free = shutil.disk_usage(root).free
    level: Status = "fail" if free < DISK_FAIL else "warn" if free < DISK_WARN else "ok"
    yield Check(area, "free disk", level, f"{free / 1024**3:.1f} GB free", "" if level == "ok" else "free some disk")


def store_checks(settings: Settings, store: StoreOpener) -> Iterator[Check]:
    area = "store"
    notes: list[str] = []
    pid = store.holder()
    if pid is not None:
        # Normal with several terminals open: the holder keeps the index, this process would work from the ledger.
        who = f"another agent process (pid {pid})" if pid else "another agent process"
        yield Check(area, "lock", "ok", f"{who} holds the memory index; a chat started now works from the ledger's "
                    "copies of the vectors, and the index catches up at the holder's next turn")
        return
    try:
        service = store.open(notes.append)
    except StoreLocked as exc:
        yield Check(area, "lock", "warn", str(exc))
        return
    except AgentError as exc:
        yield Check(area, "opens", "fail", str(exc))
        return
    try:
        yield Check(area, "lock", "ok", "no other agent process has the store open" if not settings.chroma_url else
                    f"a Chroma server ({settings.chroma_url}) needs no lock")
        for note in notes:
            yield Check(area, "repaired", "warn", note)
        try:
            service.check_space()
        except AgentError as exc:
            yield Check(area, "embedder", "fail", str(exc))
        ledger, indexed = service.count(), service.indexed()
        if ledger == indexed:
            yield Check(area, "index matches ledger", "ok", f"{ledger} memories of {settings.user}")
        else:
            yield Check(area, "index matches ledger", "warn", f"{ledger} memories in the ledger, {indexed} in the "
                        "index", f"the next chat re-indexes them (or {Remedy.REBUILD})")
    finally:
        service.close()
