"""The command line: ``agent`` (chat), ``agent memories ...``, ``agent sessions ...``, ``agent config``.

This is the only place that turns an ``AgentError`` into one line on stderr and an exit code: 0 success,
1 runtime error, 2 usage error, 130 after Ctrl-C. A traceback appears only with ``--debug``.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from agent.config import Settings, load_settings
from agent.domain import MemoryRecord, ScoredMemory
from agent.errors import AgentError
from agent.memory.profile import Entry
from agent.memory.service import MemoryService
from agent.sessions import SessionStore
from agent.ui.render import escape_terminal

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    help="A terminal chat agent that remembers you. Run `agent` to chat.",
)
memories_app = typer.Typer(help="Inspect and manage long-term memory (non-interactive).", no_args_is_help=True)
app.add_typer(memories_app, name="memories")


@dataclass
class State:
    """Flags of the root command that every subcommand shares."""

    flags: dict[str, Any] = field(default_factory=dict)
    debug: bool = False

    warned: bool = False

    def settings(self, **more: Any) -> Settings:
        settings = load_settings({**self.flags, **{k: v for k, v in more.items() if v is not None}})
        if not self.warned:
            for warning in settings.warnings:
                print(f"agent: warning: {warning}", file=sys.stderr)
            self.warned = True
        return settings


STATE = State()

DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default: agent_memory_db/).")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show debug logs and full tracebacks.")]
UserOpt = Annotated[str | None, typer.Option("--user", help="Whose memories to use (default: AGENT_USER).")]
EmbedderOpt = Annotated[str | None, typer.Option("--embedder", help="local or openai (default: the store's own).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
SessionOpt = Annotated[str | None, typer.Option("-s", "--session", help="Resume or start the session NAME.")]
ContinueOpt = Annotated[bool, typer.Option("-c", "--continue", help="Resume the most recent session.")]
ModelOpt = Annotated[str | None, typer.Option("-m", "--model", help="Chat model.")]
NoMemoryOpt = Annotated[bool, typer.Option("--no-memory", help="Neither read nor write long-term memory.")]
PlainOpt = Annotated[bool, typer.Option("--plain", help="Plain text output, no colour or Markdown.")]


def _json(value: Any) -> str:
    """JSON for a terminal or a pipe: readable Unicode, but DEL and the C1 controls (which JSON leaves raw, and
    which include 8-bit escape introducers) written as \\u escapes like the C0 ones."""
    return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False, indent=2))


def _apply_common(data_dir: Path | None, debug: bool, user: str | None = None) -> None:
    if data_dir is not None:
        STATE.flags["data_dir"] = data_dir
    if user is not None:
        STATE.flags["user"] = user
    if debug:
        STATE.debug = True
        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    session: SessionOpt = None,
    continue_: ContinueOpt = False,
    model: ModelOpt = None,
    no_memory: NoMemoryOpt = False,
    plain: PlainOpt = False,
    data_dir: DataDirOpt = None,
    user: UserOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Chat with a model that remembers you. With no subcommand, opens the chat."""
    STATE.flags.clear()
    STATE.debug = False
    STATE.warned = False
    _apply_common(data_dir, debug, user)
    if ctx.invoked_subcommand is None:
        _chat(session, continue_, model, no_memory, plain)


@app.command()
def chat(
    session: SessionOpt = None,
    continue_: ContinueOpt = False,
    model: ModelOpt = None,
    no_memory: NoMemoryOpt = False,
    plain: PlainOpt = False,
    data_dir: DataDirOpt = None,
    user: UserOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Open the chat (the same as `agent` alone)."""
    _apply_common(data_dir, debug, user)
    _chat(session, continue_, model, no_memory, plain)


def _chat(session: str | None, continue_: bool, model: str | None, no_memory: bool, plain: bool) -> None:
    from agent.ui.repl import ChatOptions, run_chat

    settings = STATE.settings(model=model)
    code = run_chat(
        settings,
        ChatOptions(session=session, resume_latest=continue_, no_memory=no_memory, plain=plain, debug=STATE.debug),
    )
    raise typer.Exit(code)


@app.command("config")
def config_cmd(data_dir: DataDirOpt = None, debug: DebugOpt = False) -> None:
    """Print every effective setting and where it came from (flag, environment, .env, default)."""
    _apply_common(data_dir, debug)
    from rich.table import Table

    settings = STATE.settings()
    table = Table("setting", "variable", "value", "source")
    for name, env, shown, source in settings.describe():
        table.add_row(name, env, shown, source)
    Console(highlight=False).print(table)


# -- agent sessions ---------------------------------------------------------------------------------------

sessions_app = typer.Typer(help="List, show and remove chat sessions.", no_args_is_help=True)
app.add_typer(sessions_app, name="sessions")
NameArg = Annotated[str, typer.Argument(help="The session name (as `agent sessions list` shows it).")]


@sessions_app.callback()
def sessions_root(data_dir: DataDirOpt = None, debug: DebugOpt = False) -> None:
    _apply_common(data_dir, debug)


def _session_store() -> SessionStore:
    from agent.sessions import SessionStore
    from agent.wiring import ensure_data_dir

    return SessionStore(ensure_data_dir(STATE.settings().data_dir).sessions)


@sessions_app.command("list")
def sessions_list(as_json: JsonOpt = False) -> None:
    """Every session, most recently updated first."""
    infos = _session_store().list()
    if as_json:
        rows = [{"name": i.name, "turns": i.turns, "updated_at": i.updated_at, "path": str(i.path),
                 "first_line": i.first_line, "error": i.error} for i in infos]
        typer.echo(_json(rows))
        return
    if not infos:
        typer.echo("No sessions yet: `agent -s NAME` starts one.")
        return
    from agent.ui.sessions_view import sessions_table

    Console(highlight=False).print(sessions_table(infos))


@sessions_app.command("show")
def sessions_show(name: NameArg, as_json: JsonOpt = False) -> None:
    """The whole conversation of session NAME."""
    session = _session_store().load(name)
    if as_json:
        typer.echo(_json(session.to_json()))
        return
    from agent.ui.sessions_view import transcript

    Console(highlight=False).print(transcript(session))


@sessions_app.command("rm")
def sessions_rm(name: NameArg) -> None:
    """Delete session NAME (its file; memories it led to stay: `agent memories` manages those)."""
    _session_store().remove(name)
    typer.echo(f"removed session {name}")


# -- agent memories ---------------------------------------------------------------------------------------


@memories_app.callback()
def memories_root(data_dir: DataDirOpt = None, user: UserOpt = None, debug: DebugOpt = False) -> None:
    _apply_common(data_dir, debug, user)


def _service(embedder: str | None = None, check: bool = True) -> MemoryService:
    from agent.wiring import open_memory

    if embedder is not None and embedder not in {"local", "openai"}:
        raise typer.BadParameter(f"{embedder!r} is not an embedder: use local or openai.", param_hint="--embedder")
    return open_memory(STATE.settings(), embedder=embedder, check=check)


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

    Console(highlight=False).print(memory_table(rows))


@memories_app.command("list")
def memories_list(
    as_json: JsonOpt = False,
    history: Annotated[bool, typer.Option("--history", help="Also the memories later ones replaced.")] = False,
    embedder: EmbedderOpt = None,
) -> None:
    """List the current memories, oldest first (--json lists the replaced ones too, with superseded_by)."""
    service = _service(embedder)
    records = service.list()
    if as_json or history:
        _print_memories(records, as_json, "No memories yet.", service.profile()[1])
        return
    current = [r for r in records if r.current]
    _print_memories(current, False, "No memories yet.")
    if len(current) < len(records):
        typer.echo(f"{len(records) - len(current)} replaced by later ones: `agent memories list --history` shows "
                   "them, `agent memories restore ID` makes one current again.")


@memories_app.command("profile")
def memories_profile(as_json: JsonOpt = False, embedder: EmbedderOpt = None) -> None:
    """The profile: stable facts read from what you said, the current value of each and the values replaced."""
    current, history = _service(embedder).profile()
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

    Console(highlight=False).print(profile_table(current, history))


@memories_app.command("restore")
def memories_restore(
    memory: Annotated[str, typer.Argument(help="The id (or a unique prefix) of a replaced memory.")],
    embedder: EmbedderOpt = None,
) -> None:
    """Make a memory a later one replaced current again (the one that replaced it is replaced in turn)."""
    service = _service(embedder)
    matches = [r for r in service.list() if r.id.startswith(memory.lower()) and not r.current]
    if len(matches) != 1:
        problem = "matches no replaced memory" if not matches else f"matches {len(matches)} replaced memories"
        raise AgentError(f"{memory!r} {problem}: `agent memories list --history` shows them.")
    restored = service.restore(matches[0].id)
    assert restored is not None
    typer.echo(f"restored {restored.id[:8]}: {escape_terminal(restored.text)}")


@memories_app.command("search")
def memories_search(
    query: str,
    k: Annotated[int, typer.Option("--k", min=1, help="How many results at most.")] = 5,
    all_: Annotated[bool, typer.Option("--all", help="Ignore the similarity threshold.")] = False,
    as_json: JsonOpt = False,
    embedder: EmbedderOpt = None,
) -> None:
    """The memories most similar to QUERY above the threshold (what a chat turn would recall)."""
    service = _service(embedder)
    results = service.search(query, k, None if all_ else service.threshold)
    _print_memories(results, as_json, f"Nothing above the similarity threshold {service.threshold:.2f}.")


@memories_app.command("add")
def memories_add(text: str, embedder: EmbedderOpt = None) -> None:
    """Store TEXT as an explicit memory."""
    if not text.strip():
        raise typer.BadParameter("the memory text is empty.", param_hint="TEXT")
    record = _service(embedder).add(text)
    typer.echo(f"remembered {record.id[:8]}: {escape_terminal(record.text)}")


@memories_app.command("forget")
def memories_forget(
    ids: Annotated[list[str] | None, typer.Argument(help="Memory ids (or unique prefixes, as `list` shows).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Forget every memory of this user.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation (with --all).")] = False,
    embedder: EmbedderOpt = None,
) -> None:
    """Forget memories for good: their text leaves every file of the data directory."""
    if all_ == bool(ids):
        raise typer.BadParameter("give memory ids, or --all --yes.")
    service = _service(embedder)
    known = service.list()
    if all_:
        if not yes:
            if not sys.stdin.isatty():
                raise typer.BadParameter("--all needs --yes when not run in a terminal.", param_hint="--yes")
            typer.confirm(f"Forget all {service.count()} memories of {service.user}?", abort=True)
        typer.echo(f"forgot {service.forget_all()} memories")
        _erase_traces(service, known)
        return
    resolved = []
    for given in ids or []:
        matches = [record for record in known if record.id.startswith(given.lower())]
        if len(matches) != 1:
            problem = "matches no memory" if not matches else f"matches {len(matches)} memories"
            raise AgentError(f"{given!r} {problem}: use `agent memories list` to see the ids.")
        resolved.append(matches[0])
    typer.echo(f"forgot {service.forget([record.id for record in resolved])} memories")
    _erase_traces(service, resolved)


def _erase_traces(service: MemoryService, records: list[MemoryRecord]) -> None:
    """The words of forgotten memories leave the other memories' reply context, the session files and the input
    history too."""
    from agent.ui.commands import erase_traces
    from agent.ui.render import escape_terminal
    from agent.wiring import ensure_data_dir

    paths = ensure_data_dir(STATE.settings().data_dir)
    for line in erase_traces(SessionStore(paths.sessions), paths.history, records, lambda task: task(service)):
        typer.echo(escape_terminal(line))  # it names files found in the data directory


@memories_app.command("reindex")
def memories_reindex(
    embedder: Annotated[str, typer.Option("--embedder", help="The embedder to re-embed with: local or openai.")],
) -> None:
    """Re-embed every memory from its stored text with another embedder."""
    service = _service(embedder, check=False)
    count = service.rebuild()
    typer.echo(f"re-embedded {count} memories with {embedder} ({service.embedder.model})")


@memories_app.command("rebuild")
def memories_rebuild(embedder: EmbedderOpt = None) -> None:
    """Rebuild the vector index from the ledger (after Chroma's files were lost or damaged)."""
    from agent.recovery import rebuild_index

    count, moved = rebuild_index(STATE.settings(), embedder)
    if moved is not None:
        typer.echo(f"moved the damaged index aside to {moved}")
    typer.echo(f"rebuilt the index: {count} memories")


@memories_app.command("stats")
def memories_stats(as_json: JsonOpt = False, embedder: EmbedderOpt = None) -> None:
    """How many memories, of which kinds, the embedder and threshold, and the size on disk."""
    from agent.wiring import ensure_data_dir

    service = _service(embedder)
    settings = STATE.settings()
    records = service.list()
    kinds: dict[str, int] = {}
    for record in records:
        kinds[record.kind] = kinds.get(record.kind, 0) + 1
    root = ensure_data_dir(settings.data_dir).root
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    stats = {
        "user": service.user,
        "memories": len(records),
        "kinds": kinds,
        "indexed": service.index.count(),
        "embedder": service.embedder.name,
        "embedding_model": service.embedder.model,
        "dimension": service.embedder.dimension,
        "threshold": service.threshold,
        "capacity": service.policy.capacity,
        "data_dir": str(root),
        "bytes_on_disk": size,
    }
    if as_json:
        typer.echo(_json(stats))
        return
    for key, value in stats.items():
        typer.echo(f"{key:16} {value}")


def main() -> None:
    """Entry point of the ``agent`` script."""
    debug = "--debug" in sys.argv
    try:
        app(prog_name="agent")
    except AgentError as exc:
        if debug:
            raise
        print(f"agent: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("agent: interrupted", file=sys.stderr)
        sys.exit(130)
