"""``agent memories ...`` that read and change memories one by one: list, profile, restore, search, add, evict,
forget, machines, edit (the use cases are ``agent.app``'s; this says what they did)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agent.app.selectors import MIN_PREFIX, SHOWN_ID
from agent.cli.root import EmbedderOpt, JsonOpt, State, _json, _warn, memories_app, shared
from agent.domain import Machine, MemoryRecord, ScoredMemory
from agent.errors import AgentError, UsageError
from agent.ui.render import escape_terminal, plural, print_stdout

if TYPE_CHECKING:
    from agent.app.memory import MemoryService
    from agent.app.profile import Entry


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
    from agent.ui.editor import edit_text

    service = state.service(embedder)
    old = _one(service.list(), memory_id, asked=True)  # the editor shows it: saving it unchanged changes nothing
    edited = edit_memory(forget.inline(service), old, state.places(service.user), edit_text)
    if isinstance(edited, Unchanged):
        typer.echo(edited.why)
        return
    typer.echo(f"edited {edited.stored.id[:8]}: {escape_terminal(edited.stored.text)} (was {old.id[:8]})")
    for line in [*forget.back_line(edited.back), *edited.result.outcome.lines()]:
        typer.echo(escape_terminal(line))
    if edited.result.index_error is not None:
        _warn(f"the index keeps the old vector until the next start ({edited.result.index_error})")
