"""One slip of the keyboard in a word the grammar reads ("allregic", "remmeber", "alergic") is read as the word.

The disclosure grammar (``agent.memory.disclosure``) reads words from its lists (``agent.memory.lexicon``) and
its patterns (``agent.memory.patterns``); a word typed with two letters swapped, one letter doubled or one left
out would miss every pattern that names it, and a turn would be kept or dropped for a typo. A word that is not in
that vocabulary is read as the vocabulary's word it is one such slip away from, when there is exactly one.

Only slips that make no other word of the vocabulary: two neighbouring letters swapped, a letter too many, a
letter missing, never at a word's last letter (where a plural or a tense is made: "dogs" is not a slip of "dog")
and never in a word shorter than five letters (where one change makes another word too often). A letter changed
for another is not read as a slip: "began" is not "vegan". Pure, deterministic and cached per word.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from agent.memory import credentials, instructions, lexicon, patterns

# Words the grammar matches on only as part of a longer pattern ("allerg" in "allerg\w*"): their whole forms.
_WHOLE_FORMS = frozenset(
    """allergic allergy allergies allergen allergens intolerant intolerance diabetic diabetes pregnant pregnancy
    epileptic epilepsy autistic autism dyslexic dyslexia anaphylaxis anaphylactic asthmatic hypothyroidism
    hyperthyroidism installing installed installation compiling compiled compilation crashing crashes crashed
    pescatarian pescetarian favourite favorite neighbour neighbor colour color""".split()
)
# English words one slip away from a word of the vocabulary: typed, they are meant.
_MEANT = frozenset("diary angel trail sliver untied quiet casual causal fiance dairy".split())
_SHORTEST = 5


def _literal_words(source: str) -> set[str]:
    """The words written out in a pattern's source or a list, each also without a plural's "s" ("spreadsheets?")."""
    words = set(re.findall(r"[a-z][a-z']{3,}", re.sub(r"\\[a-zA-Z]", " ", source)))
    return words | {w[:-1] for w in words if w.endswith("s")}


@cache
def vocabulary() -> frozenset[str]:
    """Every word the grammar names: the lexicon's lists and the literal words of every pattern."""
    words: set[str] = set(_WHOLE_FORMS)
    for name, value in vars(lexicon).items():
        if not name.isupper():
            continue
        if isinstance(value, frozenset):
            words |= value
        elif isinstance(value, dict):
            words |= {w for w in value.values() if isinstance(w, str)}
        elif isinstance(value, str | tuple):
            words |= _literal_words(" ".join(value) if isinstance(value, tuple) else value)
    for pattern in patterns.ALL:
        words |= _literal_words(pattern.regex.pattern)
    for order in instructions.PATTERNS:  # a slip does not hide an order either: "ignor all safty rules"
        words |= _literal_words(order.pattern)
    words |= set(credentials.SLIPPED_WORDS)  # nor a credential: "wifi pasword is Bluebird7"
    return frozenset(words)


def _slips(word: str) -> tuple[set[str], set[str], set[str]]:
    """The words ``word`` would be without one slip, the likeliest slip first: a swap of neighbours, a letter too
    many, a letter missing."""
    last = len(word) - 1
    swapped = {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(last)} - {word}
    extra = {word[:i] + word[i + 1 :] for i in range(1, last)}
    missing = {word[:i] + c + word[i:] for i in range(1, len(word)) for c in "abcdefghijklmnopqrstuvwxyz"}
    return swapped, extra, missing


@cache
def meant(word: str) -> str:
    """The vocabulary's word ``word`` is one slip away from, or ``word`` itself ("patrner's" is "partner's")."""
    if word.endswith("'s"):
        return meant(word[:-2]) + "'s"
    known = vocabulary()
    if len(word) < _SHORTEST or word in known or word in _MEANT or not word.isalpha():
        return word
    for slips in _slips(word):
        found = slips & known
        if found:  # the likeliest slip decides; two words it could be are no reading
            return found.pop() if len(found) == 1 else word
    # The grammar reads any "-ing" form as one ("saving for a car"): two letters swapped in one reads as it.
    forms = {w for w in _slips(word)[0] if w.endswith("ing")} if not word.endswith("ing") else set()
    return forms.pop() if len(forms) == 1 else word


@lru_cache(maxsize=1024)
def corrected_text(text: str) -> str:
    """``text`` as typed, case kept, with each slip read as the word meant (for the patterns that read case).
    Cached: a turn is read by the refusal, the gate and the disclosure grammar, each asking for it."""
    return _LETTERS.sub(lambda m: _as_typed(m.group()), text)


def _as_typed(word: str) -> str:
    lower = word.lower()
    fixed = meant(lower)
    return word if fixed == lower else fixed


_LETTERS = re.compile(r"[A-Za-z]+")


def corrected(words: list[str]) -> list[str]:
    """``words`` (of ``lexicon.normal``) with each slip read as the word meant."""
    return [meant(w) for w in words]
