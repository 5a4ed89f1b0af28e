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
from pathlib import Path

from agent.config import load_settings
from agent.domain import MemoryRecord, StatedFact, Turn, content_hash, memory_id
from agent.memory.canonical import canonical
from agent.sessions import Session, SessionStore
from agent.ui.render import escape_terminal
from agent.wiring import ensure_data_dir, open_memory
from tests.cli_harness import invoke

# Bidi override and isolate, the line and paragraph separators, a C1 control (NEL), DEL, a left-to-right mark.
ODD = "\u202e\u2066\u2028\u2029\x85\x7f\u200e"


def stored_by_hand(tmp_path: Path) -> MemoryRecord:
    """A memory as an older version or a hand edit left it in the ledger, every text field holding ``ODD``."""
    text = f"I like tea{ODD}evil"
    record = MemoryRecord(memory_id("default", text), text, "explicit", "default", f"s{ODD}", 1, 1_700_000_000.0,
                          1_700_000_000.0, content_hash(text), f"source{ODD}", {"context": f"ctx{ODD}"},
                          (StatedFact("name", f"Ana{ODD}"),))
    memory = open_memory(load_settings())
    memory.ledger.put([record])
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

