"""``agent memories export`` and ``agent memories import``: a lossless round trip between data directories,
re-embedded with the importing store's model, restatements merged, the refusals of every memory applied, and a
Markdown export a person reads. In-process (``tests.cli_harness``) with the real local model, and once through
real ``agent`` processes piped into each other."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.config import load_settings
from agent.wiring import open_memory
from tests.cli_harness import invoke
from tests.e2e_helpers import agent

pytestmark = pytest.mark.usefixtures("model_cache")

PEANUTS = "I can't eat peanuts, they make my throat swell"
SISTER = "My sister Ana lives in Lisbon with her two cats"
COFFEE = "My favourite coffee is a flat white"


def seed(embedder: LocalEmbedder) -> None:
    """Memories of every provenance: a chat turn with the reply it answered, an explicit one, with odd text."""
    memory = open_memory(load_settings(), embedder)
    memory.observe(PEANUTS, session="monday", turn=3, when=1_700_000_000.123456,
                   extra={"context": "Any allergies I should know about?"})
    memory.add(SISTER, session="monday", turn=4)
    memory.add(COFFEE + " \u00e9\u0301 \U0001f600")
    forget_clients()


def test_export_then_import_elsewhere_is_a_lossless_round_trip(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    seed(local_embedder)
    exported = invoke("memories", "export")
    assert exported.returncode == 0 and exported.stderr == ""
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [m["text"] for m in lines] == [PEANUTS, SISTER, COFFEE + " \u00e9\u0301 \U0001f600"]
    assert lines[0] == {"id": lines[0]["id"], "text": PEANUTS, "kind": "turn", "created_at": 1_700_000_000.123456,
                        "last_seen": 1_700_000_000.123456, "session": "monday", "turn": 3, "source": PEANUTS,
                        "extra": {"context": "Any allergies I should know about?"},
                        "facts": [{"key": "avoids", "value": "peanuts", "superseded_by": ""}],
                        "superseded_by": "", "superseded_at": 0.0, "restated": []}
    (tmp_path / "export.jsonl").write_text(exported.stdout)

    other = str(tmp_path / "other")
    imported = invoke("memories", "--data-dir", other, "import", str(tmp_path / "export.jsonl"))
    assert (imported.returncode, imported.stdout, imported.stderr) == (
        0, "imported 3 memories: 3 new, 0 already remembered (refreshed)\n", "")
    assert invoke("memories", "--data-dir", other, "export").stdout == exported.stdout
    found = json.loads(invoke("memories", "--data-dir", other, "search", "which foods am I allergic to?",
                              "--json").stdout)
    assert found[0]["text"] == PEANUTS, "re-embedded: the import is searchable by meaning"

    again = invoke("memories", "--data-dir", other, "import", str(tmp_path / "export.jsonl"))
    assert again.stdout == "imported 3 memories: 0 new, 3 already remembered (refreshed)\n"
    assert invoke("memories", "--data-dir", other, "export").stdout == exported.stdout


def test_what_replaced_what_and_restatements_survive_the_trip_to_another_user(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    memory = open_memory(load_settings(), local_embedder)
    memory.observe("I live in Boston, in a small flat near the river.", session="s1", turn=1, when=1_700_000_000.0)
    memory.observe("Big news: I moved to Berlin last month!", session="s2", turn=1, when=1_700_003_600.0)
    forget_clients()
    exported = invoke("memories", "export").stdout
    (tmp_path / "export.jsonl").write_text(exported)
    boston, berlin = (json.loads(line) for line in exported.splitlines())
    assert boston["superseded_by"] == berlin["id"] and boston["superseded_at"] == 1_700_003_600.0

    assert invoke("memories", "--user", "bob", "import", str(tmp_path / "export.jsonl")).returncode == 0
    moved = [json.loads(line) for line in invoke("memories", "--user", "bob", "export").stdout.splitlines()]
    assert [m["text"] for m in moved] == [boston["text"], berlin["text"]]
    assert moved[0]["id"] != boston["id"], "ids derive from the user: bob's are his own"
    assert moved[0]["superseded_by"] == moved[1]["id"], "what replaced what, in bob's ids"
    assert [f["superseded_by"] for f in moved[0]["facts"]] == [moved[1]["id"]], "the replaced home value too"
    assert {k: v for k, v in moved[0].items() if k not in ("id", "superseded_by", "facts")} == {
        k: v for k, v in boston.items() if k not in ("id", "superseded_by", "facts")}
    listed = invoke("memories", "--user", "bob", "list")
    assert "Berlin" in listed.stdout and "Boston" not in listed.stdout, "the replaced memory stays out of the list"


def test_import_merges_restatements_and_refuses_secrets_and_links(tmp_path: Path) -> None:
    assert invoke("memories", "add", PEANUTS).returncode == 0
    before = json.loads(invoke("memories", "list", "--json").stdout)
    lines = [
        {"text": PEANUTS.upper(), "kind": "turn", "created_at": 5.0},  # a restatement: the stored one stays
        {"text": "My api key is sk-live-abcdefghijklmnopqrstuvwx", "kind": "explicit", "created_at": 6.0},
        {"text": "I blog at https://example.org/me", "kind": "turn", "created_at": 7.0},
        {"text": SISTER, "kind": "fact", "created_at": 8.0, "source": "Ana is my sister, she has two cats"},
        {"text": "my  sister ana lives in lisbon with her two cats", "created_at": 9.0},  # the same, in the file
    ]
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    result = invoke("memories", "import", str(tmp_path / "in.jsonl"))

    assert result.returncode == 0
    assert result.stdout == "imported 2 memories: 1 new, 1 already remembered (refreshed); refused 2 (below)\n"
    assert result.stderr == (
        "agent: refused line 2: looks like a secret (a key, password or card number): never stored\n"
        "agent: refused line 3: carries a link, an e-mail address or a network address: never stored as memory "
        "(an injected instruction needs one to send data to)\n")
    sister, peanuts = json.loads(invoke("memories", "list", "--json").stdout)  # oldest first: 1970 comes first
    assert peanuts == before[0], "the stored memory keeps its text and dates"
    assert (sister["text"], sister["kind"], sister["source"]) == (SISTER, "fact", "Ana is my sister, she has two cats")
    assert "sk-live" not in "".join(p.read_text(errors="replace") for p in (tmp_path / "data").rglob("*.sqlite3"))


@pytest.mark.parametrize(("content", "problem"), [
    ('{"text": "ok", "created_at": 1}\n{"text": "broken"\n', "line 2 is not a memory (not JSON)"),
    ('{"text": "", "created_at": 1}\n', "line 1 is not a memory (no text)"),
    ('{"text": "hi there", "kind": "dream", "created_at": 1}\n',
     "line 1 is not a memory (kind 'dream' is none of turn, fact, explicit)"),
    ('{"text": "hi there"}\n', "line 1 is not a memory (created_at and last_seen must be epoch seconds)"),
    ("# Memories of default\n", "line 1 is not a memory (not JSON)"),
])
def test_a_file_with_a_line_that_is_no_memory_is_refused_whole(tmp_path: Path, content: str, problem: str) -> None:
    (tmp_path / "bad.jsonl").write_text(content)
    result = invoke("memories", "import", str(tmp_path / "bad.jsonl"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"agent: {tmp_path / 'bad.jsonl'} {problem}; nothing was imported. `agent memories "
                             "export` writes the format import reads (one JSON object a line).\n")
    assert json.loads(invoke("memories", "list", "--json").stdout) == []


def test_import_of_a_missing_file_is_one_line(tmp_path: Path) -> None:
    result = invoke("memories", "import", str(tmp_path / "nope.jsonl"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"agent: Cannot read {tmp_path / 'nope.jsonl'}: No such file or directory.\n"


def test_the_markdown_export_reads_as_a_document(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    seed(local_embedder)
    result = invoke("memories", "export", "--format", "markdown")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "# Memories of default"
    assert lines[2].startswith("3 memories, exported ")
    day = lines.index("## Tuesday 14 November 2023")
    assert lines[day + 2] == f"- {PEANUTS}  "
    peanuts_id = json.loads(invoke("memories", "export").stdout.splitlines()[0])["id"]
    assert lines[day + 3].startswith("  *turn, ")
    assert lines[day + 3].endswith(f", session monday, turn 3, id {peanuts_id[:8]}*")
    assert f"- {SISTER}  " in lines
    assert invoke("memories", "export", "--format", "yaml").returncode == 2


@pytest.mark.slow
def test_export_piped_into_import_through_real_processes(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    seed(local_embedder)
    env = dict(os.environ)
    exported = agent(env, "memories", "export")
    assert exported.returncode == 0, exported.stderr
    imported = agent(env, "memories", "--data-dir", str(tmp_path / "other"), "import", "-", stdin=exported.stdout)
    assert (imported.returncode, imported.stdout, imported.stderr) == (
        0, "imported 3 memories: 3 new, 0 already remembered (refreshed)\n", "")
    again = agent(env, "memories", "--data-dir", str(tmp_path / "other"), "export")
    assert again.stdout == exported.stdout


def test_the_markdown_export_marks_the_memories_a_later_one_replaced(local_embedder: LocalEmbedder) -> None:
    memory = open_memory(load_settings(), local_embedder)
    memory.observe("I live in Boston, in a small flat near the river.", session="monday", turn=1)
    memory.observe("Big news: I moved to Berlin last month!", session="tuesday", turn=1)
    forget_clients()
    lines = invoke("memories", "export", "--format", "markdown").stdout.splitlines()
    assert lines[2].startswith("2 memories (1 replaced by a later one, marked so), exported ")
    boston = lines.index("- I live in Boston, in a small flat near the river.  ")
    marked = [line for line in lines if "**replaced**" in line]
    assert len(marked) == 1 and lines.index(marked[0]) in (boston + 2, boston + 3)
    assert "by: “Big news: I moved to Berlin" in marked[0]
