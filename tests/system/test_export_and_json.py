"""What leaves the store for a program or a file (issue 19, items 13 and 18).

13: ``list --json``, ``profile --json``, ``sessions show --json`` and the export printed U+202E and the other bidi
controls raw, which the terminal listings escape: a pipe that ends on a terminal showed the text reversed. Every
machine-readable output now writes each character a listing escapes as a ``\\u`` escape, and stays JSON that loads
to the very strings stored.

18: ``agent memories export > file`` leaves the file as the shell made it, 0644 under the usual umask, with every
memory in it. ``--output FILE`` writes it 0600, atomically, never through a symlink; the plain export into a file
others can read says so."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agent.app.data_dir import ensure_data_dir
from agent.config import load_settings
from agent.domain import MemoryRecord, StatedFact, Turn, content_hash, memory_id
from agent.memory.canonical import canonical
from agent.sessions import Session, SessionStore
from agent.ui.render import escape_terminal
from agent.wiring import open_memory
from tests.cli_harness import invoke
from tests.helpers_store import ledger_of
from tests.warm_agent import WarmAgent, WarmProcess

pytestmark = pytest.mark.usefixtures("model_cache")

# Bidi override and isolate, the line and paragraph separators, a C1 control (NEL), DEL, a left-to-right mark.
ODD = "\u202e\u2066\u2028\u2029\x85\x7f\u200e"
SISTER = "My sister Ana lives in Lisbon"


def stored_by_hand(tmp_path: Path) -> MemoryRecord:
    """A memory as an older version or a hand edit left it in the ledger, every text field holding ``ODD``."""
    text = f"I like tea{ODD}evil"
    record = MemoryRecord(memory_id("default", text), text, "explicit", "default", f"s{ODD}", 1, 1_700_000_000.0,
                          1_700_000_000.0, content_hash(text), f"source{ODD}", {"context": f"ctx{ODD}"},
                          (StatedFact("name", f"Ana{ODD}"),))
    memory = open_memory(load_settings())
    ledger_of(memory).put([record])
    return record


def test_every_json_output_escapes_what_the_listings_escape_and_loads_to_the_stored_strings(tmp_path: Path) -> None:
    record = stored_by_hand(tmp_path)
    store = SessionStore(ensure_data_dir(tmp_path / "data").sessions, "default")
    store.save(Session("talk", 1_700_000_000.0, 1_700_000_000.0, [Turn(f"hello{ODD}", f"hi{ODD}")]))

    outputs = {args: invoke(*args) for args in (("memories", "list", "--json"), ("memories", "profile", "--json"),
                                                 ("memories", "export"), ("sessions", "show", "talk", "--json"),
                                                 ("sessions", "list", "--json"))}
    for args, done in outputs.items():
        assert done.returncode == 0, (args, done.stderr)
        raw = [char for char in ODD if char in done.stdout]
        assert raw == [], f"{' '.join(args)} printed {raw!r} raw"
        assert escape_terminal(done.stdout) == done.stdout, "nothing left for a listing to escape"

    [listed] = json.loads(outputs[("memories", "list", "--json")].stdout)
    assert (listed["text"], listed["source"], listed["session"]) == (record.text, record.source, record.session)
    [fact] = json.loads(outputs[("memories", "profile", "--json")].stdout)
    assert fact["value"] == f"Ana{ODD}"
    exported = json.loads(outputs[("memories", "export",)].stdout)
    assert (exported["text"], exported["extra"]) == (record.text, record.extra)
    turns = json.loads(outputs[("sessions", "show", "talk", "--json")].stdout)["turns"]
    assert (turns[0]["user"], turns[0]["reply"]) == (f"hello{ODD}", f"hi{ODD}")


def test_the_escaped_export_imports_back(tmp_path: Path) -> None:
    """The escapes are JSON's own: import reads them back to the stored characters, then stores them as every
    import does, in canonical form."""
    record = stored_by_hand(tmp_path)
    (tmp_path / "export.jsonl").write_text(invoke("memories", "export").stdout)
    other = str(tmp_path / "other")
    imported = invoke("memories", "--data-dir", other, "import", str(tmp_path / "export.jsonl"))
    assert imported.stdout == "imported 1 memory: 1 new, 0 already remembered (refreshed)\n", imported.stderr
    [again] = json.loads(invoke("memories", "--data-dir", other, "list", "--json").stdout)
    assert again["text"] == canonical(record.text)


def export_to(output: Path | str, umask: int = 0o022) -> tuple[int, str, str]:
    """``agent memories export --output OUTPUT`` as a process of its own, under ``umask``."""
    run = WarmProcess("agent", ["memories", "export", "--output", str(output)], dict(os.environ), umask=umask)
    out, err = run.communicate()
    return run.returncode or 0, out, err


@pytest.mark.slow
def test_export_output_is_0600_under_umask_022_and_replaces_the_file_whole(tmp_path: Path) -> None:
    assert invoke("memories", "add", SISTER).returncode == 0
    target = tmp_path / "memories.jsonl"
    target.write_text("an older export, readable by anyone\n")
    target.chmod(0o644)

    code, out, err = export_to(target)
    assert (code, err) == (0, "")
    assert out == f"exported 1 memory to {target}, readable by you alone (0600)\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text() == invoke("memories", "export").stdout
    code, _, _ = export_to(tmp_path / "md.md", umask=0o000)  # even a umask that masks nothing
    assert code == 0 and stat.S_IMODE((tmp_path / "md.md").stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == [], "no temp file left"


@pytest.mark.slow
def test_export_output_never_writes_through_a_symlink_or_into_what_is_not_a_file(tmp_path: Path) -> None:
    assert invoke("memories", "add", SISTER).returncode == 0
    elsewhere = tmp_path / "someone-elses.txt"
    elsewhere.write_text("kept as it is\n")
    link = tmp_path / "memories.jsonl"
    link.symlink_to(elsewhere)

    code, out, err = export_to(link)
    assert (code, out) == (2, "")
    assert err == (f"agent: {link} is a symbolic link, and the export never writes through one: give the path of the "
                   "file itself.\n")
    assert link.is_symlink() and elsewhere.read_text() == "kept as it is\n"
    (tmp_path / "dir").mkdir()
    assert export_to(tmp_path / "dir")[:2] == (2, "")
    code, _, err = export_to(tmp_path / "missing" / "x.jsonl")
    assert code == 1 and err.startswith(f"agent: The export could not be written to {tmp_path / 'missing'}")


@pytest.mark.slow
def test_an_export_redirected_into_a_file_others_can_read_says_so(tmp_path: Path, warm_agent: WarmAgent) -> None:
    assert invoke("memories", "add", SISTER).returncode == 0
    shell_made = os.open(tmp_path / "out.jsonl", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)  # `> out.jsonl`
    os.fchmod(shell_made, 0o644)  # as a shell's umask 022 makes it
    err_r, err_w = os.pipe()
    with open(os.devnull, "rb") as stdin:
        pid = warm_agent.start(["memories", "export"], dict(os.environ), [stdin.fileno(), shell_made, err_w])
    os.close(shell_made)
    os.close(err_w)
    with os.fdopen(err_r) as err:
        said = err.read()
    assert warm_agent.wait(pid) == 0
    assert SISTER in (tmp_path / "out.jsonl").read_text()
    assert said == ("agent: the export went to a file other users can read (mode 0644): `chmod 600` it, or use "
                    "`agent memories export --output FILE`, which writes one only you can read.\n")
