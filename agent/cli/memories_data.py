"""``agent memories ...`` that handle the store as a whole: export, import, reindex, rebuild, stats."""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, BinaryIO

import typer

from agent.cli.memories import _said_evicted
from agent.cli.root import EmbedderOpt, JsonOpt, State, _embedder, _json, _warn, memories_app, shared
from agent.errors import AgentError, UsageError
from agent.ui.render import (
    escape_terminal,
    plural,
)


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
    from agent.app import transfer

    if format_ not in transfer.FORMATS:
        raise typer.BadParameter(f"{format_!r} is not a format: use jsonl or markdown.", param_hint="--format")
    if output is not None:
        _check_output(output)
    service = state.service(embedder, ledger_only=True)
    if format_ == "markdown":
        count, page = transfer.markdown(service, time.time())
        lines = [escape_terminal(line) for line in page.splitlines()]
    else:
        lines = [_json(memory, indent=None) for memory in transfer.portable(service)]
        count = len(lines)
    if output is None:
        for line in lines:
            typer.echo(line)
        _warn_if_others_can_read_stdout()
        return
    _write_export(output, lines)
    typer.echo(escape_terminal(f"exported {plural(count, 'memory', 'memories')} to {output}, readable by you "
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
    from agent.app.transfer import import_export

    with _import_source(file) as stream:
        service = state.service(embedder)
        report = import_export(service, stream, "standard input" if str(file) == "-" else str(file),
                               state.settings().data_dir)
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
    from agent import wiring
    from agent.app.maintenance import rebuild_index

    state.data_dir()
    count, moved = rebuild_index(wiring, state.settings(), _embedder(embedder))
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
