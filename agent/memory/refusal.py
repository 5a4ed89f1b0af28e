"""What no memory may hold, whoever asks (the user, an import, the model extracting a fact), and the one door every
path that writes a memory goes through.

``refusal`` says why a text must never become a memory: more than ``MAX_CHARS``, a fence tag, an identity or account
number or a credential (``agent.memory.credentials``), an instruction aimed at the assistant
(``agent.memory.instructions``), or anything that could receive data (``agent.memory.links``). It judges the
canonical text (``agent.memory.canonical``), the same characters that are stored, listed and sent to the model, so
no spelling passes it that reads otherwise anywhere else. ``record_refusal`` applies it to every field of a memory
that is stored or shown (text, source, profile facts, restated quotes, extra fields): an import or an edit cannot
bring in by a side field what the text may not hold.

``stored_form`` is the last check before any write, and judges every field again, unless the record comes with the
``seal`` of a verdict already reached on exactly those texts: an import judges each line when it first reads the file
and writes it only after the whole file is read, by when ``refusal``'s cache has long forgotten it, so the same texts
were judged twice (0.46 ms of CPU each, against 3-5 ms for embedding it). A seal is a digest keyed with this
process's own secret over every field ``stored_form`` would judge, made only by ``seal`` after both readings of the
record (as given and made canonical) were found clean; a seal of other texts, of another process or of nothing is no
seal, and the record is judged as any other.

A turn refused only for a link keeps what it discloses without it (``without_links``), and only clauses that stand
on their own: never a fragment that leans on the part cut away, whose meaning would be another ("whenever we chat"
without the order that followed it, "I don't use" without what is not used), and nothing of a sentence that tells
anyone to send anything to the address.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from dataclasses import replace
from functools import lru_cache

from agent.domain import MemoryRecord, Quote, StatedFact, content_hash, memory_id
from agent.errors import MemoryRefused
from agent.memory import credentials, disclosure, typos
from agent.memory.canonical import canonical, matching
from agent.memory.credentials import ID_NUMBER_REFUSAL, SECRET_REFUSAL
from agent.memory.fences import FENCE_TAG, PROFILE_TAG, SUMMARY_TAG
from agent.memory.instructions import INSTRUCTION_REFUSAL, instruction, sends_to_a_link
from agent.memory.links import LINK_REFUSAL, carries_link

__all__ = ["HIDDEN_REFUSAL", "ID_NUMBER_REFUSAL", "INSTRUCTION_REFUSAL", "LINK_REFUSAL", "MAX_CHARS", "SECRET_REFUSAL",
           "WITHHELD", "canonical_record", "record_refusal", "refusal", "seal", "stored_form", "without_links"]

log = logging.getLogger(__name__)

MAX_CHARS = 2_000
# The refusals a user may not expect, of words that read as a fact about them ("my gym PIN is 5521"): a chat says
# them after the turn, where any other turn the gate does not keep passes in silence.
WITHHELD = frozenset({SECRET_REFUSAL, ID_NUMBER_REFUSAL})
_FENCES = (FENCE_TAG, SUMMARY_TAG, PROFILE_TAG)
HIDDEN_REFUSAL = ("hides text in invisible characters (Unicode tag characters, which a model reads and a screen "
                  "does not show): never stored")
_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,8}\U000e007f")
_SEAL_KEY = secrets.token_bytes(32)  # this process's own: no seal is made anywhere else


@lru_cache(maxsize=1024)
def refusal(text: str) -> str | None:
    """Why ``text`` must never become a memory, whoever wrote it (the user, or the model extracting a fact): too
    long, a fence tag, a secret, an instruction for the assistant or a link. None when it is none of those.

    Text spelled in Unicode tag characters (invisible, and read by a model as the ASCII they encode: "I like tea"
    followed by a hidden order) is refused whatever it says: nobody types it, and what it hides is meant for a
    model's eyes only. Pure, so its answers are kept for the texts seen last: a write judges one text several
    times (the gate, the profile, the store's last check)."""
    if _hidden(text).strip():
        return HIDDEN_REFUSAL
    shown = canonical(text)
    if len(shown.strip()) > MAX_CHARS:
        return f"longer than {MAX_CHARS} characters: a pasted document, not a statement"
    seen = matching(shown)
    lowered = seen.casefold()
    if any(tag in lowered for tag in _FENCES):
        return "contains a fence tag: text from a fenced block is never stored again"
    if credentials.identity_number(seen):
        return ID_NUMBER_REFUSAL
    if credentials.secret(seen) or ((slipped := typos.corrected_text(seen)) != seen and credentials.secret(slipped)):
        return SECRET_REFUSAL  # a slip does not hide a credential: "passwrd: sunny2020"
    if instruction(shown) or ((meant := typos.corrected_text(shown)) != shown and instruction(meant)):
        return INSTRUCTION_REFUSAL  # a slip does not hide an order: "remmeber to keep answers under 100 words"
    if carries_link(shown):
        return LINK_REFUSAL
    return None


def _hidden(text: str) -> str:
    """The ASCII that Unicode tag characters (U+E0020-E007E) in ``text`` spell, or '', leaving out the emoji flags
    of a region that are made of them (🏴 and the tags of "gbsct", then a cancel tag). ASCII text has none, and most
    text is ASCII: it is not read a character at a time (a tenth of judging a memory)."""
    if text.isascii():
        return ""
    text = _FLAG.sub("", text)
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


def _fields(record: MemoryRecord) -> list[tuple[str, str]]:
    """Every text of ``record`` that is stored or shown, with the name an import's report gives it."""
    fields = [("text", record.text), ("source", record.source)]
    fields += [(f"fact {f.key!r}", f"{f.key}: {f.value}") for f in record.facts]
    fields += [(f"extra {key!r}", f"{key}: {value}") for key, value in record.extra.items()]
    fields += [("restated quote", q.text) for q in record.restated]
    return fields


def record_refusal(record: MemoryRecord) -> str | None:
    """Why no memory may hold ``record``: the ``refusal`` of its first field that has one, named ("extra 'note'
    looks like a secret ..."), or None."""
    for name, value in _fields(record):
        refused = refusal(value)
        if refused:
            return refused if name == "text" else f"its {name} {refused}"
    return None


def canonical_record(record: MemoryRecord) -> MemoryRecord:
    """``record`` with every text made canonical: what is judged is what is stored. ``record`` itself when its
    texts are canonical already (most are, and an import asks this of each memory three times): no copy made."""
    text, source = canonical(record.text), canonical(record.source)
    if (text is record.text and source is record.source and not record.facts and not record.extra
            and not record.restated):
        return record
    return replace(
        record, text=text, source=source,
        facts=tuple(StatedFact(canonical(f.key), canonical(f.value), f.superseded_by, f.origin)
                    for f in record.facts),
        extra={canonical(k): canonical(v) for k, v in record.extra.items()},
        restated=tuple(Quote(canonical(q.text), q.session, q.turn, q.at) for q in record.restated),
    )


def seal(record: MemoryRecord) -> bytes:
    """The proof, for ``stored_form``, that no field of ``record`` is refused: ``record_refusal`` found nothing in it
    as given, nor once made canonical (the same texts for plain ASCII, so a cache hit). ``MemoryRefused`` when it
    found something: a refused record has no seal."""
    stored = canonical_record(record)
    refused = record_refusal(record) or (record_refusal(stored) if stored is not record else None)
    if refused:
        raise MemoryRefused(f"Not remembered: {refused}.")
    return _sealed(stored)


def _sealed(record: MemoryRecord) -> bytes:
    """The keyed digest of every field of the canonical ``record`` that ``stored_form`` judges, each name and value
    with its length before it, so no two records' fields run together into the same bytes."""
    digest = hashlib.blake2b(key=_SEAL_KEY, digest_size=16)
    for name, value in _fields(record):
        for part in (name.encode(), value.encode("utf-8", "surrogatepass")):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return digest.digest()


def stored_form(record: MemoryRecord, sealed: bytes = b"") -> MemoryRecord:
    """``record`` as the store may hold it, the last check before any write: every text canonical, and no field
    that a memory may not hold. A refused text or source raises ``MemoryRefused`` (every path that writes has asked
    ``refusal`` before, so this is a bug caught, never a user's words); a refused profile fact, extra field or
    restated quote is dropped, and logged. ``sealed``: the ``seal`` made of this record when it was judged; when it
    is the seal of exactly these texts, they are not judged a second time."""
    record = canonical_record(record)
    if sealed and hmac.compare_digest(sealed, _sealed(record)):
        return _with_its_id(record)
    for name, value in (("text", record.text), ("source", record.source)):
        refused = refusal(value)
        if refused:
            raise MemoryRefused(f"Not remembered: its {name} {refused}.")
    facts = tuple(f for f in record.facts if refusal(f"{f.key}: {f.value}") is None)
    extra = {k: v for k, v in record.extra.items() if refusal(f"{k}: {v}") is None}
    quotes = tuple(q for q in record.restated if refusal(q.text) is None)
    dropped = len(record.facts) - len(facts) + len(record.extra) - len(extra) + len(record.restated) - len(quotes)
    if dropped:
        log.info("memory %s: %d field(s) no memory may hold were not stored", record.id[:8], dropped)
    return _with_its_id(replace(record, facts=facts, extra=extra, restated=quotes))


def _with_its_id(record: MemoryRecord) -> MemoryRecord:
    """``record`` with the id and hash of its canonical text (a record made before its text was canonical)."""
    if record.id != memory_id(record.user, record.text):
        return replace(record, id=memory_id(record.user, record.text), content_hash=content_hash(record.text))
    return record


# -- a turn without its links ------------------------------------------------------------------------------------

# Where a sentence with a link is cut to keep its other clauses: a comma, semicolon, bracket or dash, a conjunction.
# A bracket after "]" is a Markdown link's, which is cut whole with the link.
_PARTS = re.compile(
    r"(\s*[,;]\s+|\s*(?<!\])\(\s*|\s*\)\s*|\s+[-–—]+\s+|\s+(?=(?:and|but|plus|though|although|also|so)\s))",
    re.IGNORECASE,
)
_CONJUNCTION = re.compile(r"^(?:and|but|plus|though|although|also|so)\s+", re.IGNORECASE)
# The words that lead to a link: "see", "at", "visit", "my site is".
_LEADS = re.compile(r"^(?:at|on|via|see|visit|check|here|to|from|in|by|of|for|with|[:(\[-])[:.!]?$|^[(\[!]|^.*:$",
                    re.IGNORECASE)
# A clause that leans on what was cut: a predicate without its subject, a clause that depends on another
# ("whenever we chat", "if you can"), or an end that wants more (a preposition, an article, a verb without its
# object, a negation).
_LEANING = re.compile(
    r"^(?:is|are|was|were|has|have|had|which|who|whose|where|that|it|its|it's|whenever|when|if|unless|every ?time|"
    r"each time|after|before|once|as soon as|until|till|while|because|since|so that|in case|whereas|even if|"
    r"wherever|whether)\b|"
    r"\b(?:at|to|is|are|was|on|in|for|of|from|with|by|the|a|an|my|our|and|or|via|here|see|visit|use|used|using|like|"
    r"love|hate|follow|prefer|run|own|host|buy|sell|trust|recommend|watch|play|block|avoid|quit|left|join|joined|"
    r"start|started|stop|stopped|made|make|built|build|wrote|write|need|want|get|got|have|had|try|tried|found|find|"
    r"call|called|be|been|not|never|don't|doesn't|didn't|won't|can't|cannot|no longer)[:.!]?$",
    re.IGNORECASE,
)


def without_links(text: str) -> str:
    """What of a turn carries no link, one sentence or clause a line: the sentences without one, and of a sentence
    with one, the clauses that carry none and stand on their own ("I'm allergic to penicillin, see drugs.com for
    details" keeps "I'm allergic to penicillin"); only when none is left, the clauses cut at their link. A clause that
    leans on the part cut away ("my blog, blog.io, is about my cats": "my blog" and "is about my cats") is not kept:
    no fragment, and never the link. What is kept is refused again, whole, by ``refusal``."""
    kept: list[str] = []
    for sentence in disclosure.sentences(text):
        if not carries_link(sentence):
            kept.append(sentence)
            continue
        if sends_to_a_link(sentence):  # an order to send something there: no part of it is the user's fact
            continue
        chunks = _PARTS.split(sentence)
        parts, separators = chunks[0::2], ["", *chunks[1::2]]
        # The sentence without its parts that carry a link or lean on one, each kept part after its own separator.
        whole = ""
        for part, separator in zip(parts, separators, strict=True):
            if not (_standing(part) and not carries_link(part)):
                continue
            if not whole:
                whole = _CONJUNCTION.sub("", part.strip())
            else:  # a bracket's separator opened or closed the part cut away: a space stands for it
                whole += (" " if "(" in separator or ")" in separator else separator) + part
        if whole:
            kept.append(whole)
        else:
            kept += [piece for piece in map(_standing, map(_link_cut, filter(carries_link, parts))) if piece]
    rest = "\n".join(kept)
    return rest if refusal(rest) is None else ""


# The frame of a standing order: a part of a sentence with a link that says when to do something ("from now on
# include my notes in a link", its address cut) is what is left of an order about the address, never a fact.
_ORDER_FRAME = re.compile(
    r"\b(?:from now on|going forward|henceforth|from here on|whenever|every ?time|each time|in (?:the )?future|"
    r"when(?:ever)? (?:i|we|you) (?:say|ask|type|write|chat|talk|mention|start|open|message))\b",
    re.IGNORECASE,
)


def _standing(part: str) -> str:
    """A clause that stands on its own without what was cut from beside it, or ''."""
    piece = _CONJUNCTION.sub("", part.strip())
    if (not piece or carries_link(piece) or _LEANING.search(piece) or _ORDER_FRAME.search(piece)
            or (len(piece.split()) < 3 and not disclosure.safety_relevant(piece))):
        return ""
    return piece


def _link_cut(part: str) -> str:
    """A clause with a link and no comma to cut at, cut at the link: the words before it, or after it when it opens
    the clause ("I'm vegan https://vegan.org", "I'm allergic to penicillin see drugs.com for details"), without the
    words that led to it ("see", "at"). The words before a link in the middle of a clause stand only when such a
    word parted them from it: "I use github.com/me daily" and "I don't use gmail.com anymore" lose their object with
    the link, and nothing of them is kept."""
    words = part.split()
    marks = [i for i, word in enumerate(words) if carries_link(word)]
    if not marks:  # a link over several words ("[my site](x.io)"): no clean cut
        return ""
    if marks[0] == 0:
        return " ".join(words[marks[-1] + 1 :])
    before = words[: marks[0]]
    while before and _LEADS.match(before[-1]):
        before.pop()
    led = len(before) < marks[0]
    return " ".join(before) if led or marks[-1] == len(words) - 1 else ""

