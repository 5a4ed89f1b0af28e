"""The command line: ``agent`` (chat), ``agent PROMPT`` (one prompt, then exit), ``agent memories ...``,
``agent sessions ...``, ``agent config``, ``agent doctor``.

This is the only place that turns an ``AgentError`` into one line on stderr and an exit code: 0 success,
1 runtime error, 2 usage error, 130 after Ctrl-C. A traceback appears only with ``--debug``.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import io
import json
import logging
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO

import typer
from typer.core import TyperGroup

from agent.config import EmbedderKind, Settings, embedder_kind, load_settings
from agent.domain import Machine, MemoryRecord, ScoredMemory
from agent.errors import AgentError, UsageError
from agent.memory.profile import Entry
from agent.sessions import SessionStore
from agent.ui.render import (
    MIN_PREFIX,
    SHOWN_ID,
    escape_json,
    escape_terminal,
    plain_table,
    plural,
    print_stdout,
    stdout_is_terminal,
)

if TYPE_CHECKING:
    from typer import _click as click  # the click typer vendors: its commands and contexts are these

    from agent.attachments import OneMessage
    from agent.forget import Places
    from agent.memory.service import MemoryService
    from agent.ports import Ledger
    from agent.wiring import DataPaths


_FORCED = "agent.prompt"  # ``agent [OPTIONS] -- TEXT``: TEXT is a prompt, whatever its first word
_WORD = re.compile(r"[a-z]+")


class PromptGroup(TyperGroup):
    """The root command: a first word that names no command starts a one-shot prompt (``agent "what is 2+2"``,
    ``agent what is 2+2``), as ``llm`` and ``aichat`` take one. A prompt that starts with a command's name goes
    through ``agent ask TEXT`` or ``agent -- TEXT``. One word that is close to a command's name (``agent sesions``)
    is taken for a typo, not sent to the model: a usage error says both ways."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes the list it is given
        rest = super().parse_args(ctx, args)
        protected = getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])  # click 8.2 / 8.1
        words = [*protected, *ctx.args]  # what follows the root's own options
        if words and "--" in given and words == given[given.index("--") + 1:]:
            ctx.meta[_FORCED] = True
        return rest

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                              list[str]]:
        first = args[0] if args else ""
        if not ctx.meta.get(_FORCED) and (first in self.commands or not first):
            return super().resolve_command(ctx, args)
        close = difflib.get_close_matches(first, list(self.commands), n=1, cutoff=0.8)
        if not ctx.meta.get(_FORCED) and len(args) == 1 and _WORD.fullmatch(first) and close:
            raise UsageError(f"{first!r} is not a command: did you mean `agent {close[0]}`? To send it to the model "
                             f"as a prompt: agent ask {first}, or agent -- {first}.")
        return "ask", self.commands["ask"], ["--", *args] if ctx.meta.get(_FORCED) else args


# Plain help (click's layout): typer's rich panels print a type after every flag (`--plain <bool>`), which reads
# as if the flag took a value.
app = typer.Typer(
    cls=PromptGroup,
    rich_markup_mode=None,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    help="A terminal chat agent that remembers you. `agent` opens the chat; `agent PROMPT` answers one prompt "
         "and exits, with memory (recalled before, your words judged for memory after); piped input goes as one "
         "message (git diff | agent \"review this\"; cat notes.md | agent), `--lines` reads a script, one turn per "
         "line. A prompt that starts with a command's name: agent ask PROMPT, or agent -- PROMPT.",
)
memories_app = typer.Typer(help="Inspect and manage long-term memory (non-interactive).", no_args_is_help=True,
                           rich_markup_mode=None)
app.add_typer(memories_app, name="memories")


@dataclass
class State:
    """What one run of the app knows: the flags of the root command that every subcommand shares, and what they
    open. Kept on the run's root context (``shared`` hands it to each command), so nothing of one run (a test's,
    say) leaks into the next."""

    flags: dict[str, Any] = field(default_factory=dict)
    debug: bool = False
    chat_flags: ChatFlags | None = None  # the chat's flags given before a subcommand (``agent -m x ask TEXT``)

    warned: bool = False

    def settings(self, **more: Any) -> Settings:
        settings = aliased(load_settings({**self.flags, **{k: v for k, v in more.items() if v is not None}}))
        if not self.warned:  # lines that name files and what they set: escaped, a file's names may hold anything
            for warning in settings.warnings:
                print(f"agent: warning: {escape_terminal(warning)}", file=sys.stderr)
            for notice in settings.notices:
                print(f"agent: {escape_terminal(notice)}", file=sys.stderr)
            self.warned = True
        return settings

    def apply(self, data_dir: str | None, debug: bool, user: str | None = None) -> None:
        if data_dir is not None:
            self.flags["data_dir"] = data_dir
        if user is not None:
            self.flags["user"] = user
        if debug:
            self.debug = True
            logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")

    def data_dir(self, ledger: Ledger | None = None) -> DataPaths:
        """The data directory of every `agent memories` and `agent sessions` command. Opening it finishes first a
        forget that a kill or Ctrl-C cut short (``agent.forget``), with the command's ``ledger`` if it has one open,
        and says so."""
        from agent.app.maintenance import finish_forgets
        from agent.wiring import ensure_data_dir

        settings = self.settings()
        paths = ensure_data_dir(settings.data_dir).for_user(settings.user)
        finish_forgets(settings, paths, _warn, ledger)
        return paths

    def session_store(self) -> SessionStore:
        """The sessions of this run's user (``--user``): no other user's are listed, shown or removed."""
        return self.data_dir().session_store()

    def service(self, embedder: str | None = None, check: bool = True, ledger_only: bool = False) -> MemoryService:
        """The memory of this run's user; ``ledger_only`` for a command that reads the ledger only (list, profile,
        export), which then works while the Chroma server is down or frozen (``open_memory``)."""
        from agent.wiring import open_memory

        service = open_memory(self.settings(), embedder=_embedder(embedder), check=check, ledger_only=ledger_only)
        self.data_dir(service.ledger)  # the ledger just opened: a locked one is waited for once, not twice
        return service

    def places(self, user: str) -> Places:
        """Where a forget of ``user``'s scrubs on this machine: their session files and input history."""
        from agent.wiring import ensure_data_dir, machine_of, places_of

        settings = self.settings()
        paths = ensure_data_dir(settings.data_dir).for_user(user)
        return places_of(paths, machine_of(settings, paths))


# Taken as text, not a Path: a Path makes "" into "." and leaves "~" as it is; settings check and expand it.
DataDirOpt = Annotated[str | None, typer.Option("--data-dir", metavar="DIR",
                                                help="Data directory (default: see `agent config`).")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show debug logs and full tracebacks.")]
UserOpt = Annotated[str | None, typer.Option("--user", metavar="NAME",
                                             help="Whose memories to use (default: AGENT_USER).")]
EmbedderOpt = Annotated[str | None, typer.Option("--embedder", help="local or openai (default: the store's own).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
SessionOpt = Annotated[str | None, typer.Option("-s", "--session", metavar="NAME",
                                                help="Resume or start the session NAME.")]
ContinueOpt = Annotated[bool, typer.Option("-c", "--continue", help="Resume the most recent session.")]
ModelOpt = Annotated[str | None, typer.Option("-m", "--model", metavar="MODEL", help="Chat model.")]
NoMemoryOpt = Annotated[bool, typer.Option("--no-memory", help="Neither read nor write long-term memory.")]
ReadOnlyOpt = Annotated[bool, typer.Option("--read-only", help="Recall long-term memory, never write it.")]
PlainOpt = Annotated[bool, typer.Option("--plain", help="Plain text output, no colour or Markdown.")]
FileOpt = Annotated[list[str] | None, typer.Option(
    "-f", "--file", metavar="FILE", help="Attach a text file to the prompt, named in the message (repeatable).")]
SystemOpt = Annotated[str | None, typer.Option("--system", metavar="TEXT",
                                               help="The system prompt of this run (in place of prompts/system.md).")]
TemperatureOpt = Annotated[float | None, typer.Option("--temperature", metavar="T",
                                                      help="Sampling temperature of this run, 0 to 2.")]
OptionOpt = Annotated[list[str] | None, typer.Option(
    "-o", "--option", metavar="NAME=VALUE",
    help="A request option of this run: temperature, top_p, presence_penalty, frequency_penalty, seed.")]
NoSessionOpt = Annotated[bool, typer.Option("--no-session", help="Write no session file for this chat.")]
LinesOpt = Annotated[bool, typer.Option("--lines", help="Read standard input as a script: each line a turn (slash "
                                                        "commands too), as typed in the chat.")]


def _json(value: Any, indent: int | None = 2) -> str:
    """JSON for a terminal or a pipe: readable Unicode, but every character a listing escapes (``escape_json``)
    written as a \\u escape, like the C0 controls."""
    return escape_json(json.dumps(value, ensure_ascii=False, indent=indent))


Options = tuple[tuple[str, Any, Any], ...]  # (parameter name, its typer annotation, its default)
COMMON: Options = (("data_dir", DataDirOpt, None), ("user", UserOpt, None), ("debug", DebugOpt, False))
# `agent` and `agent chat` take the same: the names are ``ChatFlags``'s fields.
CHAT: Options = (("session", SessionOpt, None), ("resume_latest", ContinueOpt, False), ("model", ModelOpt, None),
                 ("no_memory", NoMemoryOpt, False), ("read_only", ReadOnlyOpt, False), ("plain", PlainOpt, False),
                 ("files", FileOpt, None), ("system", SystemOpt, None), ("temperature", TemperatureOpt, None),
                 ("options", OptionOpt, None), ("no_session", NoSessionOpt, False), ("lines", LinesOpt, False))


@dataclass(frozen=True)
class ChatFlags:
    """The chat's options as given on the command line."""

    session: str | None
    resume_latest: bool
    model: str | None
    no_memory: bool
    read_only: bool
    plain: bool
    files: list[str] | None
    system: str | None
    temperature: float | None
    options: list[str] | None
    no_session: bool
    lines: bool

    def over(self, earlier: ChatFlags | None) -> ChatFlags:
        """These flags (a subcommand's: ``agent -m x ask ...``) over those given before the subcommand: a flag
        given here wins, and the files and options of both are kept."""
        if earlier is None:
            return self
        merged: dict[str, Any] = {}
        for name in (f.name for f in fields(self)):
            mine, theirs = getattr(self, name), getattr(earlier, name)
            given = mine is not None and mine is not False  # a value of 0 (--temperature 0) is given
            merged[name] = [*(theirs or []), *mine] if isinstance(mine, list) else (mine if given else theirs)
        return ChatFlags(**merged)


def _with_options(
    command: Callable[..., None],
    options: Options,
    take: Callable[[State, dict[str, Any]], dict[str, Any]],
    at: str = "",
) -> Callable[..., None]:
    """``command`` with ``options`` added to the signature typer reads (in place of its parameter ``at``, or at the
    end), so that each option is declared once however many commands take it. ``take`` gets the run's state and
    their values, and returns what ``command`` receives for them. The run's context comes in through the
    command's own ``typer.Context`` parameter, or one added for it."""
    signature = inspect.signature(command, eval_str=True)
    kept = list(signature.parameters.values())
    own = next((p.name for p in kept if p.annotation is typer.Context), None)
    where = next((n for n, p in enumerate(kept) if p.name == at), len(kept))
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=option)
             for name, option, default in options]
    if own is None:
        added.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context))
    names = [name for name, _, _ in options]

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        ctx: typer.Context = kwargs[own] if own is not None else kwargs.pop("ctx")
        given = {name: kwargs.pop(name) for name in names}
        command(*args, **kwargs, **take(ctx.find_root().ensure_object(State), given))

    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*kept[:where], *added, *kept[where + (at != ""):]])
    return run


def shared(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with ``--data-dir``, ``--user`` and ``--debug`` of its own, so that they work after the
    subcommand (``agent memories list --user bob``) as well as before it (``agent memories --user bob list``); the
    later one wins. Its parameter ``state`` receives the run's ``State``."""
    wants = "state" in inspect.signature(command).parameters

    def take(state: State, given: dict[str, Any]) -> dict[str, Any]:
        state.apply(given["data_dir"], given["debug"], given["user"])
        return {"state": state} if wants else {}

    return _with_options(command, COMMON, take, at="state" if wants else "")


def chat_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with the chat's options in place of its parameter ``flags``, which receives them."""
    return _with_options(command, CHAT, lambda state, given: {"flags": ChatFlags(**given)}, at="flags")


def _print_version(wanted: bool) -> None:
    if wanted:
        from agent import __version__

        typer.echo(f"agent {__version__}")
        raise typer.Exit()


VersionOpt = Annotated[bool, typer.Option("--version", help="Print the version and exit.", is_eager=True,
                                          callback=_print_version)]


def _embedder(given: str | None) -> EmbedderKind | None:
    """The embedder ``--embedder`` names, if given."""
    try:
        return None if given is None else embedder_kind(given)
    except ValueError:
        raise typer.BadParameter(f"{given!r} is not an embedder: use local or openai.",
                                 param_hint="--embedder") from None


def _warn(line: str) -> None:
    print(f"agent: {line}", file=sys.stderr)


def aliased(settings: Settings) -> Settings:
    """``settings`` with its model named by an alias (``AGENT_MODEL_ALIASES``) replaced by the model it stands for;
    ``agent config`` shows the alias in the model's source."""
    target = settings.model_aliases.get(settings.model)
    if target is None:
        return settings
    sources = dict(settings.sources or {})
    sources["model"] = f"{sources.get('model', 'default')}, alias {settings.model} (AGENT_MODEL_ALIASES)"
    return replace(settings, model=target, sources=sources)


@app.callback(invoke_without_command=True)
@chat_options
@shared
def root(ctx: typer.Context, version: VersionOpt = False, *, flags: ChatFlags, state: State) -> None:
    """Chat with a model that remembers you. With no subcommand, opens the chat."""
    if ctx.invoked_subcommand is None:
        _chat(state, flags, [])
    state.chat_flags = flags


@app.command()
@chat_options
@shared
def chat(*, flags: ChatFlags, state: State) -> None:
    """Open the chat (the same as `agent` alone)."""
    _chat(state, flags.over(state.chat_flags), [])


@app.command()
@chat_options
@shared
def ask(
    prompt: Annotated[list[str] | None, typer.Argument(
        metavar="PROMPT...", help="The prompt (its words are joined by spaces; `-` reads it from stdin).")] = None,
    *,
    flags: ChatFlags,
    state: State,
) -> None:
    """Answer one prompt and exit (the same as `agent PROMPT`, for a prompt that starts with a command's name)."""
    words = prompt or []
    if not words and not flags.over(state.chat_flags).files and sys.stdin.isatty():
        raise typer.BadParameter("give the prompt: agent ask PROMPT.", param_hint="PROMPT")
    _chat(state, flags.over(state.chat_flags), words)


def _chat(state: State, flags: ChatFlags, words: list[str]) -> None:
    """The chat, or the one message of a one-shot run: the prompt ``words``, the files, what is piped in."""
    from agent import sampling
    from agent.app.chat_options import ChatOptions
    from agent.app.run_chat import run_chat

    settings = state.settings(model=flags.model)  # a bad setting is said before standard input is read
    message = _one_message(flags, words)
    code = run_chat(
        settings,
        ChatOptions(session=flags.session, resume_latest=flags.resume_latest, no_memory=flags.no_memory,
                    read_only=flags.read_only, plain=flags.plain, debug=state.debug, system=flags.system,
                    sampling=sampling.sampling(flags.options or [], flags.temperature), no_session=flags.no_session,
                    lines=flags.lines),
        message,
    )
    raise typer.Exit(code)


def _stdin() -> BinaryIO:
    """Standard input as bytes (a test's, or an embedding program's, may be a text stream without a buffer)."""
    buffer = getattr(sys.stdin, "buffer", None)
    return buffer if buffer is not None else io.BytesIO(sys.stdin.read().encode("utf-8", "surrogateescape"))


def _one_message(flags: ChatFlags, words: list[str]) -> OneMessage | None:
    """What a one-shot run sends, or None for the chat (standard input a terminal, or ``--lines``): the prompt,
    then what is piped in and the files given with ``-f``, each attached under its name; ``-`` as the prompt reads
    the prompt itself from standard input."""
    from agent import attachments

    files = flags.files or []
    if flags.lines:
        if words or files:
            raise UsageError("--lines reads every turn from standard input: give it no prompt and no -f.")
        return None
    piped = sys.stdin is not None and not sys.stdin.isatty()
    if not words and not files and not piped:
        return None
    prompt = " ".join(words)
    if prompt == attachments.STDIN:
        text = attachments.read_stream(_stdin()).strip()
        prompt, piped = text, False
        if not text:
            raise UsageError("Nothing to send: `-` reads the prompt from standard input, and it was empty.")
    found = [attachments.read_file(path) for path in files]
    if piped:
        text = attachments.read_stream(_stdin())
        found = [attachments.Attachment("stdin", text), *found] if text.strip() else found
    message = attachments.compose(prompt, found)
    if not message.text.strip():
        raise UsageError("Nothing to send: no prompt, and standard input was empty. At a terminal `agent` opens the "
                         "chat; `agent PROMPT` answers one prompt; `--lines` reads a script of turns.")
    return message


@app.command("config")
def config_cmd(ctx: typer.Context, data_dir: DataDirOpt = None, debug: DebugOpt = False) -> None:
    """Print every effective setting and where it came from (flag, environment, user config, .env, default)."""
    state = ctx.find_root().ensure_object(State)
    state.apply(data_dir, debug)
    settings = state.settings()
    header = ("setting", "variable", "value", "source")
    rows = [tuple(escape_terminal(cell) for cell in row) for row in settings.describe()]
    if stdout_is_terminal():
        print_stdout(plain_table(header, rows))
    else:  # a pipe gets every value whole, in aligned columns, instead of a table squeezed to 80 columns
        widths = [max(len(row[i]) for row in (header, *rows)) for i in range(3)]
        for row in (header, *rows):
            typer.echo("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[3]]))
    for file in settings.files:
        typer.echo(escape_terminal(f"settings file {file.path}: {file.describe()}"))


DOTENV = Path(".env")


@app.command("trust")
def trust_cmd(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .env to approve (default: the one here).")] = DOTENV,
    revoke: Annotated[bool, typer.Option("--revoke", help="Take the approval back: it is not read again.")] = False,
) -> None:
    """Approve a .env outside agent's own checkout, as it is now: agent reads it from then on, until it changes."""
    from agent.config import SPECS, approve_dotenv, checkout_dotenv, revoke_dotenv

    path = Path(os.path.abspath(file))
    if revoke:
        said = "approval taken back: it is not read again" if revoke_dotenv(path) else "it was not approved"
        typer.echo(escape_terminal(f"{path}: {said}"))
        return
    if checkout_dotenv(path):
        typer.echo(escape_terminal(f"{path} is the .env of agent's own checkout: it is read without approval."))
        return
    approved = approve_dotenv(path)
    specs = {name: spec for spec in SPECS for name in spec.env}
    ours = {name: value for name, value in (approved.written or {}).items() if name in specs}
    others = len(approved.names) - len(ours)
    typer.echo(escape_terminal(f"approved {path}: agent reads it while it stays as it is now (an edit needs "
                               f"`agent trust` again); {'it sets:' if ours else 'it sets none of its settings.'}"))
    for name, value in ours.items():  # as the file spells them: a ${VAR} it would expand is shown as it is
        shown = "(set)" if specs[name].secret else specs[name].shown(value)
        typer.echo(escape_terminal(f"  {name}={shown if len(shown) <= 100 else shown[:100] + '…'}"))
    if others:
        typer.echo(f"  and {plural(others, 'variable', 'variables')} agent does not read")
    for problem in approved.problems:
        _warn(f"warning: {escape_terminal(problem)}")


@app.command("mcp")
@shared
def mcp_cmd(embedder: EmbedderOpt = None, *, state: State) -> None:
    """Serve this user's memory over the Model Context Protocol on stdin and stdout (for an editor or another
    agent): tools to search, remember, forget and read the profile, as the chat does them."""
    from agent import mcp_server

    service = state.service(embedder)
    mcp_server.serve(service, state.places(service.user))


@app.command("doctor")
@shared
def doctor_cmd(*, state: State) -> None:
    """Check the model server, the embedder, the store and the data directory; say what to fix (exit 1 on a
    failure)."""
    from agent import doctor

    checks = doctor.run(state.settings())
    colours = {"ok": "green", "warn": "yellow", "fail": "red"}
    for check in checks:
        typer.secho(f"{check.status:<4}  {check.area}: {check.name}: {escape_terminal(check.detail)}",
                    fg=colours[check.status])
        if check.fix and check.status != "ok":
            typer.echo(f"      fix: {escape_terminal(check.fix)}")
    problems = [c for c in checks if c.status != "ok"]
    typer.echo("all good" if not problems else
               f"{sum(c.status == 'fail' for c in problems)} failed, {sum(c.status == 'warn' for c in problems)} "
               "warnings")
    if doctor.failed(checks):
        raise typer.Exit(1)


# -- agent sessions ---------------------------------------------------------------------------------------

sessions_app = typer.Typer(help="List, show, search and remove chat sessions.", no_args_is_help=True,
                           rich_markup_mode=None)
app.add_typer(sessions_app, name="sessions")
NameArg = Annotated[str, typer.Argument(help="The session name (as `agent sessions list` shows it).")]


@sessions_app.callback()
@shared
def sessions_root() -> None:
    """Options given here apply to every sessions command."""


@sessions_app.command("list")
@shared
def sessions_list(as_json: JsonOpt = False, *, state: State) -> None:
    """Every session, most recently updated first."""
    infos = state.session_store().list()
    if as_json:
        rows = [{"name": i.name, "turns": i.turns, "updated_at": i.updated_at, "path": str(i.path),
                 "first_line": i.first_line, "error": i.error} for i in infos]
        typer.echo(_json(rows))
        return
    if not infos:
        typer.echo("No sessions yet: `agent -s NAME` starts one.")
        return
    from agent.ui.sessions_view import sessions_table

    print_stdout(sessions_table(infos))


@sessions_app.command("show")
@shared
def sessions_show(name: NameArg, as_json: JsonOpt = False, *, state: State) -> None:
    """The whole conversation of session NAME."""
    session = state.session_store().load(name)
    if as_json:
        typer.echo(_json(session.to_json()))
        return
    from agent.ui.sessions_view import transcript

    print_stdout(transcript(session))


@sessions_app.command("search")
@shared
def sessions_search(
    text: Annotated[list[str], typer.Argument(metavar="TEXT...", help="Words to find (every one, in any case).")],
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most N matches, the newest.")] = 50,
    as_json: JsonOpt = False,
    *,
    state: State,
) -> None:
    """The turns of your sessions (--user) whose line or reply holds every word of TEXT, newest first. A forgotten
    text is never shown, also one still waiting to leave a session another chat holds."""
    from agent.app.machines import pending_texts
    from agent.forget import Forgotten
    from agent.sessions import search
    from agent.wiring import build_ledger, ensure_data_dir, existing_ledger

    query = " ".join(text)
    settings = state.settings()
    paths = ensure_data_dir(settings.data_dir).for_user(settings.user)
    ledger = (build_ledger(settings, paths) if settings.database_url else existing_ledger(settings, paths))
    try:
        store = state.data_dir(ledger).session_store()  # finishes forgets cut short first
        pending = [] if ledger is None else pending_texts(ledger, settings.user)
    finally:
        if ledger is not None:
            ledger.close()
    found = search(store, query, Forgotten(pending).scrub)
    if as_json:
        typer.echo(_json([{"session": f.session, "turn": f.turn, "at": datetime.fromtimestamp(f.at).astimezone()
                           .isoformat(timespec="seconds"), "who": f.who, "text": f.text} for f in found[:limit]]))
        return
    if not found:
        typer.echo(f"No turn of your sessions holds {query!r}.")
        return
    from agent.ui.sessions_view import found_lines

    for line in found_lines(found[:limit], query):
        print_stdout(line, soft_wrap=True)
    shown = f"the newest {limit} of " if len(found) > limit else ""
    typer.echo(f"{shown}{plural(len(found), 'match', 'matches')}: `agent sessions show NAME` shows a whole "
               "conversation.", err=True)


@sessions_app.command("rm")
@shared
def sessions_rm(name: NameArg, *, state: State) -> None:
    """Delete session NAME (its file; memories it led to stay: `agent memories` manages those)."""
    state.session_store().remove(name)
    typer.echo(f"removed session {name}")


# -- agent memories ---------------------------------------------------------------------------------------


@memories_app.callback()
@shared
def memories_root() -> None:
    """Options given here apply to every memories command."""


def _as_json(row: MemoryRecord | ScoredMemory, history: Sequence[Entry] = ()) -> dict[str, Any]:
    from agent.ui.truth_view import truth_fields

    record = row.record if isinstance(row, ScoredMemory) else row
    out: dict[str, Any] = {
        "id": record.id,
        "text": record.text,
        "kind": record.kind,
        "created_at": datetime.fromtimestamp(record.created_at).astimezone().isoformat(timespec="seconds"),
        "last_seen": datetime.fromtimestamp(record.last_seen).astimezone().isoformat(timespec="seconds"),
        "session": record.session,
        "turn": record.turn,
        "source": record.source,
        **truth_fields(record, history),
    }
    if isinstance(row, ScoredMemory):
        out["similarity"] = round(row.similarity, 4)
        out["score"] = round(row.score, 4)
    return out


def _print_memories(
    rows: list[MemoryRecord] | list[ScoredMemory], as_json: bool, empty: str, history: Sequence[Entry] = ()
) -> None:
    if as_json:
        typer.echo(_json([_as_json(r, history) for r in rows]))
        return
    if not rows:
        typer.echo(empty)
        return
    from agent.ui.render import memory_table

    print_stdout(memory_table(rows))


@memories_app.command("list")
@shared
def memories_list(
    as_json: JsonOpt = False,
    history: Annotated[bool, typer.Option("--history", help="Also the memories later ones replaced.")] = False,
    embedder: EmbedderOpt = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the newest N memories.")] = None,
    *,
    state: State,
) -> None:
    """List the current memories (or the newest N), oldest first (--json lists the replaced ones too, with
    superseded_by)."""
    service = state.service(embedder, ledger_only=True)
    records = service.list()
    if as_json or history:
        shown = records if limit is None else records[-limit:]
        _print_memories(shown, as_json, "No memories yet.", service.profile()[1])
        return
    current = [r for r in records if r.current]
    shown = current if limit is None else current[-limit:]
    _print_memories(shown, False, "No memories yet.")
    if len(shown) < len(current):
        typer.echo(f"the newest {len(shown):,} of {plural(len(current), 'memory', 'memories')}; without --limit, "
                   "every one", err=True)
    if len(current) < len(records):
        typer.echo(f"{len(records) - len(current)} replaced by later ones: `agent memories list --history` shows "
                   "them, `agent memories restore ID` makes one current again.")


@memories_app.command("profile")
@shared
def memories_profile(as_json: JsonOpt = False, embedder: EmbedderOpt = None, *, state: State) -> None:
    """The profile: stable facts read from what you said, the current value of each and the values replaced."""
    current, history = state.service(embedder, ledger_only=True).profile()
    if as_json:
        from agent.ui.truth_view import iso

        typer.echo(_json([
            {"kind": "profile", "key": e.key, "value": e.value, "memory": e.memory, "said_at": iso(e.said_at),
             "session": e.session, "turn": e.turn, "superseded_by": e.replaced_by or None,
             "superseded_at": iso(e.replaced_at)}
            for e in [*current, *history]
        ]))
        return
    if not current and not history:
        typer.echo("No profile facts yet.")
        return
    from agent.ui.truth_view import profile_table

    print_stdout(profile_table(current, history))


@memories_app.command("restore")
@shared
def memories_restore(
    memory: Annotated[str, typer.Argument(help="The id (or a unique prefix) of a replaced memory.")],
    embedder: EmbedderOpt = None,
    *,
    state: State,
) -> None:
    """Make a memory a later one replaced current again (the one that replaced it is replaced in turn)."""
    from agent.app.queries import Restore
    from agent.app.selectors import replaced_by_prefix

    service = state.service(embedder)
    matches = replaced_by_prefix(service.list(), memory.lower())
    if len(matches) != 1:
        problem = "matches no replaced memory" if not matches else f"matches {len(matches)} replaced memories"
        raise AgentError(f"{memory!r} {problem}: `agent memories list --history` shows them.")
    restored = Restore(matches[0])(service)
    assert restored is not None
    typer.echo(f"restored {restored.id[:8]}: {escape_terminal(restored.text)}")


@memories_app.command("search")
@shared
def memories_search(
    query: str,
    k: Annotated[int, typer.Option("--k", min=1, help="How many results at most.")] = 5,
    all_: Annotated[bool, typer.Option("--all", help="Ignore the similarity threshold.")] = False,
    as_json: JsonOpt = False,
    embedder: EmbedderOpt = None,
    *,
    state: State,
) -> None:
    """The memories most similar to QUERY above the threshold (what a chat turn would recall)."""
    service = state.service(embedder)
    results = service.search(query, k, None if all_ else service.threshold)
    _print_memories(results, as_json, f"Nothing above the similarity threshold {service.threshold:.2f}.")


@memories_app.command("add")
@shared
def memories_add(text: str, embedder: EmbedderOpt = None, *, state: State) -> None:
    """Store TEXT as an explicit memory."""
    if not text.strip():
        raise typer.BadParameter("the memory text is empty.", param_hint="TEXT")
    report = state.service(embedder).remember(text)
    for record in report.stored:
        typer.echo(f"{report.verb(record)} {record.id[:8]}: {escape_terminal(record.text)}")
    for record in report.evicted:
        _said_evicted(record)


def _said_evicted(record: MemoryRecord) -> None:
    typer.echo(f"evicted {record.id[:8]} (the least recently seen, past the capacity): {escape_terminal(record.text)}")


KeepOpt = Annotated[int | None, typer.Option("--to", min=0, help="Memories to keep (default: AGENT_MEMORY_CAPACITY).")]


@memories_app.command("evict")
@shared
def memories_evict(
    to: KeepOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="Evict them (without it, only list what would go).")] = False,
    as_json: JsonOpt = False,
    embedder: EmbedderOpt = None,
    *,
    state: State,
) -> None:
    """Evict the least recently seen memories down to N: lists what would go; with --yes, evicts it."""
    from agent.app import evict

    service = state.service(embedder)
    chosen = evict.plan(service, to)
    keep, count, going = chosen.keep, chosen.count, chosen.going
    if not going:
        typer.echo(f"Nothing to evict: {plural(count, 'memory', 'memories')}, {keep:,} may stay.")
        return
    if not yes:
        if as_json:
            typer.echo(_json([_as_json(r) for r in going]))
        else:
            for record in going:
                seen = datetime.fromtimestamp(record.last_seen).strftime("%Y-%m-%d %H:%M")
                typer.echo(f"{record.id[:8]}  last seen {seen}  {escape_terminal(record.text)}")
        these = "This least recently seen memory" if len(going) == 1 else f"These {len(going):,} least recently seen"
        print(f"{these} of {plural(count, 'memory', 'memories')} would be evicted to keep {keep:,}; "
              f"nothing was evicted: run `agent memories evict --to {keep} --yes` to evict them.", file=sys.stderr)
        return
    typer.echo(f"evicting {plural(len(going), 'memory', 'memories')}...")
    remain = evict.evict(service, chosen)
    first, last = (datetime.fromtimestamp(r.last_seen).strftime("%Y-%m-%d %H:%M") for r in (going[0], going[-1]))
    typer.echo(f"evicted {plural(len(going), 'memory', 'memories')}, the least recently seen (last seen {first} to "
               f"{last}); "
               f"{remain:,} remain")


@memories_app.command("forget")
@shared
def memories_forget(
    ids: Annotated[list[str] | None,
                   typer.Argument(help="Memory ids as `list` shows them (or unique prefixes of 4+ chars).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Forget every memory of this user.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation (--all, or an id prefix shorter "
                                                    "than the shown id).")] = False,
    pending: Annotated[bool, typer.Option("--pending", help="List the forgets some machine has not yet finished "
                                                            "in its own files.")] = False,
    embedder: EmbedderOpt = None,
    *,
    state: State,
) -> None:
    """Forget memories for good: their text leaves every file of the data directory (and, with a shared database,
    of every machine, at its next start or turn)."""
    if pending:
        if ids or all_:
            raise typer.BadParameter("--pending lists the forgets under way: give it alone.")
        _print_pending(state.service(embedder), state.places(state.settings().user).machine)
        return
    if all_ == bool(ids):
        raise typer.BadParameter("give memory ids, or --all --yes.")
    from agent import forget
    from agent.app.forgetting import forget_memories

    service = state.service(embedder)
    known = service.list()
    if all_:
        if not yes:
            if not sys.stdin.isatty():
                raise typer.BadParameter("--all needs --yes when not run in a terminal.", param_hint="--yes")
            typer.confirm(f"Forget all {plural(service.count(), 'memory', 'memories')} of {service.user}?",
                          abort=True)
        chosen = known
    else:
        chosen = [_one(known, given, asked=yes) for given in ids or []]
    places = state.places(service.user)
    result = forget_memories(forget.inline(service), chosen, places, everything=all_,
                             on_begun=lambda count: _said_forgotten(count, [] if all_ else chosen))
    for line in result.lines():
        typer.echo(escape_terminal(line))  # it names files found in the data directory
    if result.index_error is not None:
        _warn(f"the index keeps their vectors until the next start ({result.index_error})")


def _print_pending(service: MemoryService, here: str) -> None:
    """This user's forgets still under way, each with the machines it waits for: one that never comes back keeps
    the record, and the forgotten texts in it, in the database until it is retired."""
    from agent.app import machines

    records = machines.pending(service)
    if not records:
        typer.echo("No forget is waiting: every machine has removed the forgotten words from its files.")
        return
    names = {m.id: m for m in machines.machines(service)}
    for record in records:
        made = f"made {datetime.fromtimestamp(record.made_at):%Y-%m-%d %H:%M}, " if record.made_at else ""
        waiting = [_machine_named(names[m], here) if m in names else m[:SHOWN_MACHINE] for m in record.waiting]
        on = ", ".join(waiting) if waiting else "this machine's next start"
        typer.echo(f"forget {record.key} ({made}{plural(len(record.ids), 'memory', 'memories')}): waiting for {on}")
    if any(r.waiting and r.waiting != (here,) for r in records):
        typer.echo("Each machine finishes them at its next start or chat turn; one that will not come back: "
                   "`agent memories machines --retire ID`.", err=True)


SHOWN_MACHINE = 12  # characters of a machine id the lists show and --retire takes a prefix of


def _machine_named(machine: Machine, here: str) -> str:
    this = ", this machine" if machine.id == here else ""
    seen = datetime.fromtimestamp(machine.last_seen).strftime("%Y-%m-%d %H:%M")
    return f"{machine.id[:SHOWN_MACHINE]} ({escape_terminal(machine.name)}{this}, last seen {seen})"


@memories_app.command("machines")
@shared
def memories_machines(
    retire: Annotated[str | None, typer.Option("--retire", metavar="ID",
                                               help="Stop every forget waiting for this machine (its id or a "
                                                    "prefix of 4+ characters).")] = None,
    embedder: EmbedderOpt = None,
    *,
    state: State,
) -> None:
    """The machines that use the shared database for you: a forget waits until each has removed the forgotten
    words from its own sessions and input history."""
    from agent.app import machines
    from agent.app.selectors import machine_by_prefix

    service = state.service(embedder)
    here = state.places(service.user).machine
    known = machines.machines(service)
    if not here:
        typer.echo("This data directory's ledger is its own file: this is the only machine, and no forget waits "
                   "for another.")
        return
    if retire is None:
        for machine in known:
            typer.echo(f"{_machine_named(machine, here)}: {plural(machine.waiting, 'forget', 'forgets')} waiting")
        return
    matches = machine_by_prefix(known, retire)
    if len(matches) != 1:
        raise UsageError(f"{retire!r} names {'no' if not matches else 'more than one'} machine of yours: give at "
                         f"least {MIN_PREFIX} characters of an id `agent memories machines` lists.")
    [machine] = matches
    if machine.id == here:
        raise UsageError("That is this machine: retire a machine from another one (this one registers again at "
                         "its next start anyway).")
    machines.retire(service, machine)
    typer.echo(f"retired {_machine_named(machine, here)}: no forget waits for it any more, and what its own sessions "
               "and input history hold of the forgotten words stays there.")


def _said_forgotten(count: int, chosen: list[MemoryRecord]) -> None:
    """``forgot 1 memory: TEXT``, or the count then each memory: the user sees which went (``--all``: the count)."""
    if len(chosen) == 1:
        typer.echo(f"forgot 1 memory: {escape_terminal(chosen[0].text)}")
        return
    typer.echo(f"forgot {plural(count, 'memory', 'memories')}{':' if chosen else ''}")
    for record in chosen:
        typer.echo(f"  {_named(record)}")


def _one(known: list[MemoryRecord], given: str, asked: bool = False) -> MemoryRecord:
    """The memory ``given`` names, by the chat's rule (``/forget``): an id prefix of at least ``MIN_PREFIX``
    characters; one shorter than the ``SHOWN_ID`` the tables show could be a typo that names another memory, so it is
    shown and asked about (``asked``: the caller shows the memory itself, as ``edit`` does in the editor; ``--yes``
    passes for an answer). Not a row number of ``agent memories list``: numbers shift as memories come and go, and
    one character would pick a memory by chance. One line saying what to do when it names none for sure."""
    from agent.app.selectors import pick

    picked = pick(given.strip(), [record.id for record in known])
    if picked.short_number:
        row = int(picked.token)
        current = [record for record in known if record.current]
        there = (f" (row {row} there is {_named(current[row - 1])})"
                 if 1 <= row <= len(current) else "")
        raise UsageError(f"{given!r} is not a memory id: give the id column of `agent memories list`, not its # "
                         f"column{there}.")
    if picked.too_short:
        raise UsageError(f"{given!r} is too short to name a memory: give at least {MIN_PREFIX} characters of the "
                         "id shown by `agent memories list`.")
    if picked.id is None:
        problem = "matches no memory" if not picked.matches else f"matches {picked.matches} memories"
        raise AgentError(f"{given!r} {problem}: use `agent memories list` to see the ids.")
    found = next(record for record in known if record.id == picked.id)
    if picked.sure or asked:
        return found
    shown = _named(found)
    if not sys.stdin.isatty():
        raise UsageError(f"{given!r} is a short id prefix (it matches {shown}): give at least {SHOWN_ID} characters "
                         "of the id shown by `agent memories list`, or add --yes.")
    typer.confirm(f"{given} is memory {shown}. Forget it?", abort=True)
    return found


def _named(record: MemoryRecord) -> str:
    return f"{record.id[:SHOWN_ID]}: {escape_terminal(record.text)}"


@memories_app.command("edit")
@shared
def memories_edit(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's id (or a unique prefix).")],
    embedder: EmbedderOpt = None,
    *,
    state: State,
) -> None:
    """Rewrite a memory in $EDITOR: it keeps where it came from, is embedded again, and the old text is forgotten."""
    from agent import forget
    from agent.app.editing import Unchanged, edit_memory

    service = state.service(embedder)
    old = _one(service.list(), memory_id, asked=True)  # the editor shows it: saving it unchanged changes nothing
    edited = edit_memory(forget.inline(service), old, state.places(service.user))
    if isinstance(edited, Unchanged):
        typer.echo(edited.why)
        return
    typer.echo(f"edited {edited.stored.id[:8]}: {escape_terminal(edited.stored.text)} (was {old.id[:8]})")
    for line in [*forget.back_line(edited.back), *edited.result.outcome.lines()]:
        typer.echo(escape_terminal(line))
    if edited.result.index_error is not None:
        _warn(f"the index keeps the old vector until the next start ({edited.result.index_error})")


@memories_app.command("export")
@shared
def memories_export(
    format_: Annotated[str, typer.Option("--format", metavar="jsonl|markdown",
                                         help="jsonl (what import reads, lossless) or markdown (to read).")] = "jsonl",
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE",
                                                help="Write to FILE, readable by you alone (0600), instead of "
                                                     "stdout.")] = None,
    embedder: EmbedderOpt = None,
    *,
    state: State,
) -> None:
    """Every memory to stdout (or FILE): JSON Lines for `agent memories import`, or Markdown for a person."""
    from agent.memory import transfer

    if format_ not in transfer.FORMATS:
        raise typer.BadParameter(f"{format_!r} is not a format: use jsonl or markdown.", param_hint="--format")
    if output is not None:
        _check_output(output)
    service = state.service(embedder, ledger_only=True)
    records = service.list()
    if format_ == "markdown":
        lines = [escape_terminal(line) for line in transfer.markdown(records, service.user, time.time()).splitlines()]
    else:
        lines = [_json(transfer.portable(record), indent=None) for record in records]
    if output is None:
        for line in lines:
            typer.echo(line)
        _warn_if_others_can_read_stdout()
        return
    _write_export(output, lines)
    typer.echo(escape_terminal(f"exported {plural(len(records), 'memory', 'memories')} to {output}, readable by you "
                               "alone (0600)"))


def _check_output(output: Path) -> None:
    """Refuse what ``--output`` must not write through before anything is read: a symlink (it would be followed to
    wherever it points; the file itself must be named) and anything that is not a regular file."""
    if output.is_symlink():
        raise UsageError(f"{output} is a symbolic link, and the export never writes through one: give the path of the "
                         "file itself.")
    if output.exists() and not output.is_file():
        raise UsageError(f"{output} is not a regular file: give a file's path for --output.")


def _write_export(output: Path, lines: Sequence[str]) -> None:
    """The export written to ``output``, mode 0600, whole or not at all (``replaced_privately``)."""
    from agent.files import replaced_privately

    try:
        with replaced_privately(output, f".{output.name}") as handle:
            for line in lines:
                handle.write(line.encode() + b"\n")
    except OSError as exc:
        raise AgentError(f"The export could not be written to {output} ({exc.strerror or exc}); nothing was "
                         "written there.") from exc


def _warn_if_others_can_read_stdout() -> None:
    """One line when the export went into a file that other users may read (``> memories.jsonl`` under the usual
    umask makes it 0644): every memory is in it. The file is the shell's, so it is left as it is."""
    try:
        mode = os.fstat(sys.stdout.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # not a file descriptor (a test's captured stdout)
        return
    if stat.S_ISREG(mode) and mode & 0o077:
        _warn(f"the export went to a file other users can read (mode {mode & 0o777:04o}): `chmod 600` it, or "
              "use `agent memories export --output FILE`, which writes one only you can read.")


@memories_app.command("import")
@shared
def memories_import(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A JSON Lines export (`-` reads stdin).")],
    embedder: EmbedderOpt = None,
    *,
    state: State,
) -> None:
    """Add the memories of an export, embedded with this store's embedder; ones already stored are refreshed."""
    import tempfile

    from agent.memory import transfer

    with _import_source(file) as stream:
        service = state.service(embedder)
        where = state.settings().data_dir
        try:  # the memories the file gives wait here for their writing: private, nameless, gone with the process
            scratch = tempfile.TemporaryFile(dir=where, prefix=".import-")
        except OSError as exc:
            raise AgentError(f"The import could not make its private copy in {where} ({exc.strerror}); nothing was "
                             "imported.") from exc
        with scratch:
            report = transfer.import_stream(service, stream, "standard input" if str(file) == "-" else str(file),
                                            scratch)
    said = (f"imported {plural(report.new + report.refreshed, 'memory', 'memories')}: {report.new:,} new, "
            f"{report.refreshed:,} already remembered (refreshed)")
    typer.echo(said + (f"; refused {report.refused_count:,} (below)" if report.refused_count else ""))
    for line in report.refused:
        _warn(f"refused {line}")
    if report.refused_count > len(report.refused):
        _warn(f"and {plural(report.refused_count - len(report.refused), 'more line', 'more lines')} refused")
    for record in report.evicted:
        _said_evicted(record)


@contextmanager
def _import_source(file: Path) -> Iterator[BinaryIO]:
    """What ``memories import`` reads: standard input for ``-``, else a regular file, opened without blocking on
    what is not one (a FIFO, ``/dev/zero``, a directory), which is refused in one line."""
    if str(file) == "-":
        yield sys.stdin.buffer
        return
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"Cannot read {file}: {exc.strerror}.") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"{file} is not a regular file: import reads an export file, or standard input given as "
                         "`-` (`agent memories export | agent memories import -`).")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        yield handle


@memories_app.command("reindex")
@shared
def memories_reindex(
    embedder: Annotated[str, typer.Option("--embedder", help="The embedder to re-embed with: local or openai.")],
    *,
    state: State,
) -> None:
    """Re-embed every memory from its stored text with another embedder."""
    service = state.service(embedder, check=False)
    count = service.rebuild()
    typer.echo(f"re-embedded {plural(count, 'memory', 'memories')} with {embedder} ({service.embedder.model})")


@memories_app.command("rebuild")
@shared
def memories_rebuild(embedder: EmbedderOpt = None, *, state: State) -> None:
    """Rebuild the vector index from the ledger (after Chroma's files were lost or damaged)."""
    from agent.app.maintenance import rebuild_index

    state.data_dir()
    count, moved = rebuild_index(state.settings(), _embedder(embedder))
    if moved is not None:
        typer.echo(f"moved the damaged index aside to {moved}")
    typer.echo(f"rebuilt the index: {plural(count, 'memory', 'memories')}")


@memories_app.command("stats")
@shared
def memories_stats(as_json: JsonOpt = False, embedder: EmbedderOpt = None, *, state: State) -> None:
    """How many memories, of which kinds, the embedder and threshold, and the size on disk."""
    from agent.app.stats import stats as figures

    service = state.service(embedder)
    stats = figures(service, state.settings())
    kinds: dict[str, int] = stats["kinds"]
    ledger, index, root, size = stats["ledger"], stats["index"], stats["data_dir"], stats["bytes_on_disk"]
    if as_json:
        typer.echo(_json(stats))
        return
    by_kind = ", ".join(f"{kind} {count:,}" for kind, count in sorted(kinds.items()))
    lines = [
        ("user", service.user),
        ("memories", f"{stats['memories']:,}" + (f" ({by_kind})" if by_kind else "")),
        ("indexed", f"{stats['indexed']:,}"),
        ("embedder", f"{service.embedder.name} ({service.embedder.model}, {service.embedder.dimension} dimensions)"),
        ("threshold", f"{service.threshold:.2f}"),
        ("capacity", f"{service.policy.capacity:,}"),
        ("ledger", ledger),
        ("index", index),
        ("data directory", root),
        ("on disk", _size(size)),
    ]
    for label, value in lines:
        typer.echo(f"{label:16} {escape_terminal(value)}")


def _size(count: int) -> str:
    """A byte count as people read it: 812 bytes, 4.2 MB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return plural(count, "byte", "bytes")


@functools.cache
def _command() -> Any:
    """The click command typer makes of ``app``: made once per process, not at each run of ``main`` (6-8 ms of
    CPU each, which every in-process run of the command line paid again). ``app(...)`` would add only typer's
    pretty tracebacks, which are off."""
    return typer.main.get_command(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``agent`` script, on ``argv`` (default: the command line's arguments)."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        _command().main(args=args, prog_name="agent")
    except AgentError as exc:
        if debug:
            raise
        print(f"agent: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("agent: interrupted", file=sys.stderr)
        sys.exit(130)
