"""The root of the command line: the ``agent`` group (a first word that names no command is a prompt), the flags
every command shares and the run's ``State``, and the chat commands (``agent``, ``agent chat``, ``agent ask``).

This is the only place that turns an ``AgentError`` into one line on stderr and an exit code (``agent.cli.main``):
0 success, 1 runtime error, 2 usage error, 130 after Ctrl-C. A traceback appears only with ``--debug``.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import io
import json
import logging
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO

import typer
from typer.core import TyperGroup

from agent.config import EmbedderKind, Settings, embedder_kind, load_settings
from agent.errors import UsageError
from agent.sessions import SessionStore
from agent.ui.render import (
    escape_json,
    escape_terminal,
)

if TYPE_CHECKING:
    from typer import _click as click  # the click typer vendors: its commands and contexts are these

    from agent.app.data_dir import DataPaths
    from agent.app.memory import MemoryService
    from agent.attachments import OneMessage
    from agent.forget import Places
    from agent.ports import Ledger


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
        from agent import wiring
        from agent.app.data_dir import ensure_data_dir
        from agent.app.maintenance import finish_forgets

        settings = self.settings()
        paths = ensure_data_dir(settings.data_dir).for_user(settings.user)
        finish_forgets(wiring, settings, paths, _warn, ledger)
        return paths

    def session_store(self) -> SessionStore:
        """The sessions of this run's user (``--user``): no other user's are listed, shown or removed."""
        return self.data_dir().session_store()

    def service(self, embedder: str | None = None, check: bool = True, ledger_only: bool = False) -> MemoryService:
        """The memory of this run's user; ``ledger_only`` for a command that reads the ledger only (list, profile,
        export), which then works while the Chroma server is down or frozen (``open_memory``)."""
        from agent.app.data_dir import ensure_data_dir
        from agent.wiring import build_ledger, open_memory

        settings = self.settings()
        ledger = build_ledger(settings, ensure_data_dir(settings.data_dir))
        service = open_memory(settings, embedder=_embedder(embedder), check=check, ledger_only=ledger_only,
                              ledger=ledger)
        self.data_dir(ledger)  # the ledger just opened: a locked one is waited for once, not twice
        return service

    def places(self, user: str) -> Places:
        """Where a forget of ``user``'s scrubs on this machine: their session files and input history."""
        from agent.app.data_dir import ensure_data_dir, machine_of, places_of

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
    from agent.cli.run_chat import run_chat

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
