"""The scrub finds a forgotten memory in every form the store itself takes for that memory.

Ids fold text with NFKC and case folding (``normalise_text``): the NFD "Café Müller", "HAUPTSTRASSE" for
"Hauptstraße" and a fullwidth "１２" refresh one memory. Before, the scrub matched only case and spacing, so after a
forget the other sessions still held the whole sentence in those forms."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from agent.adapters.ledger import SqliteLedger
from agent.conversation import Turn
from agent.domain import fold_with_spans, memory_id, normalise_text
from agent.forget import FORGOTTEN, Forgotten
from agent.sessions import Session, SessionStore
from tests.builders import record
from tests.e2e_helpers import agent

pytestmark = pytest.mark.usefixtures("model_cache")

SAID = "My flat is in the Hauptstraße 12 above Café Müller"
FORMS = {
    "nfd": "My flat is in the Hauptstraße 12 above Cafe\u0301 Mu\u0308ller",
    "upper": "MY FLAT IS IN THE HAUPTSTRASSE 12 ABOVE CAFÉ MÜLLER",
    "fullwidth": "My flat is in the Hauptstraße １２ above Café Müller",
    "spaces": "my\u00a0flat is in the  hauptstrasse\n12 above\u3000café müller",
    "long-s": "My flat is in the Hauptstraſſe 12 above Café Müller",
}
# Every form holds "hauptstr" once lower-cased; the other needles catch a scrub that left part of a sentence. None is
# shorter than five bytes: a full run once found "caf" or "ller" in chroma.sqlite3, which holds no text (the index
# keeps no documents) but vectors and pages of binary data, where a run of three or four bytes occurs by chance.
NEEDLES = (b"hauptstr", "café".encode(), "cafe\u0301".encode(), "müller".encode(), "mu\u0308ller".encode(),
           "１２".encode(), "ſſ".encode())


def test_every_form_is_one_memory_to_the_store_and_one_match_to_the_scrub() -> None:
    forgotten = Forgotten([SAID])
    for name, form in FORMS.items():
        assert memory_id("me", form) == memory_id("me", SAID), name
        assert forgotten.scrub(f"He said: {form}. Then we ate.") == f"He said: {FORGOTTEN}. Then we ate.", name
        assert forgotten.within(f"x {form} y"), name


def test_text_whose_fold_differs_is_kept_and_a_match_covers_whole_characters() -> None:
    forgotten = Forgotten([SAID])
    near = "My flat is in the Hauptstrasse 13 above Café Müller"
    assert forgotten.scrub(near) == near and not forgotten.within(near)
    assert Forgotten(["strasse"]).scrub("Hauptstraße 12") == f"Haupt{FORGOTTEN} 12"
    assert Forgotten(["café"]).scrub("Cafe\u0301s") == f"{FORGOTTEN}s", "the accent goes with its letter"
    assert Forgotten(["12"]).scrub("Nr. １２!") == f"Nr. {FORGOTTEN}!"


def test_the_scrub_folds_exactly_as_the_ids_do_on_random_text() -> None:
    pool = [*"abcXYZ  \t\n.-", "ß", "ẞ", "ſ", "é", "É", "e\u0301", "u\u0308", "１", "２", "\u00a0", "\u3000", "\u1100",
            "\u1161", "\u11a8", "ﬁ", "İ", "\u00a8", "\u212a", "\u212b", "Σ", "ς", "ǰ", "\u0345", "\x1c", "\x85"]
    rng = random.Random(7)
    for _ in range(5000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 14)))
        fold, starts, ends = fold_with_spans(text)
        assert fold.strip() == normalise_text(text), repr(text)
        assert len(starts) == len(ends) == len(fold)
        assert all(0 <= s < e <= len(text) for s, e in zip(starts, ends, strict=True))


@pytest.mark.slow
def test_agent_memories_forget_takes_every_form_out_of_every_session(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = SessionStore(data / "sessions", "default")
    for name, form in FORMS.items():
        store.save(Session(name, 1.0, 2.0, [Turn(form, "Noted."), Turn("What is the capital of Peru?", "Lima.")]))
    entries = (form.replace("\n", "\n+") for form in FORMS.values())  # prompt-toolkit's format: "+" per line
    (data / "history").write_text("".join(f"\n# 2026-01-02 10:00:0{n}.000000\n+{entry}\n"
                                          for n, entry in enumerate(entries)))
    ledger = SqliteLedger(data / "ledger.sqlite3")
    ledger.put([record(SAID, "default", kind="explicit", session="cli", turn=0, at=1.0)])
    ledger.close()

    done = agent(dict(os.environ), "memories", "forget", memory_id("default", SAID)[:8])

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"forgot 1 memory: {SAID}",
        "The forgotten words were also removed from session fullwidth, session long-s, session nfd, session "
        "spaces, session upper, the input history."]
    held = [str(f) for f in data.rglob("*") if f.is_file() and any(n in f.read_bytes().lower() for n in NEEDLES)]
    assert held == []
    assert [t.user for t in store.load("nfd").turns] == [FORGOTTEN, "What is the capital of Peru?"]
