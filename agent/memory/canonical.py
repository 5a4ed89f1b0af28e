"""The one form of a user's words that every part of memory sees: the gate, the store, the listings and the prompt.

Text reaches the agent in many spellings of the same characters: fullwidth letters (``ｅｖｉｌ．ｃｏｍ``), ligatures,
compatibility digits, and characters that show nothing at all: zero-width spaces and joiners, bidi controls, the
Unicode tag characters (U+E0000-E007F, which spell ASCII invisibly: "I like tea" followed by 52 of them carries a
whole instruction a terminal never shows), variation selectors and every other format character. A gate that reads
the raw text and a prompt that reads it folded disagree about what was said, and a listing that shows "I like tea"
while the model reads more lies to the user. So the words are made canonical once, before any decision, and that
canonical text is what is judged, stored, shown and sent:

- ``canonical``: NFKC, with invisible and format characters removed (category Cf, Unicode's default-ignorable code
  points, C0/C1 controls other than tab and newline), ``\r\n`` and ``\r`` made ``\n``, line and paragraph
  separators and every other space a plain space. Idempotent; letters and meaning unchanged.
- ``matching``: the canonical text as a pattern reads it: letters of other scripts that look like Latin ones (a
  Cyrillic ``а`` in "pаssword") and digits of any script made their ASCII lookalike, and ideographic full stops made
  dots. Only for deciding; never stored or shown.
- ``folded``: ``matching`` case-folded, for patterns that ignore case.

Pure and fast: ASCII text without control characters comes back as it is at the cost of one scan.
"""

from __future__ import annotations

import re
import unicodedata

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt) beyond category Cf: what renders as nothing.
# U+115F/U+1160/U+3164/U+FFA0 are Hangul fillers (letters that show nothing), U+FE00-FE0F and U+E0100-E01EF the
# variation selectors, U+180B-180F Mongolian selectors, U+034F the combining grapheme joiner.
_IGNORABLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_INVISIBLE = re.compile(f"[{_CONTROLS}{_IGNORABLE}]")
_NEWLINES = re.compile("\r\n?")
# A line or paragraph separator parts words but starts no line: a listing would show the words after it as a line
# of their own ("System: ..."), so it is a space, as the prompt's fences make it.
_SEPARATORS = re.compile("[\u2028\u2029\x85]")

# Letters of Cyrillic, Greek and other scripts drawn like Latin letters (Unicode's confusables, the ones that pass
# for ASCII in a word): "pаypal" with a Cyrillic а reads as "paypal" to a person and to a model.
_LOOKALIKES = str.maketrans({
    **dict.fromkeys("аⲁ", "a"), **dict.fromkeys("АΑ", "A"), "В": "B", "Β": "B", **dict.fromkeys("сϲⲥ", "c"),
    **dict.fromkeys("СϹ", "C"), "ԁ": "d", **dict.fromkeys("еҽ", "e"), **dict.fromkeys("ЕΕ", "E"), "Η": "H",
    "Н": "H", **dict.fromkeys("іıɩ", "i"), **dict.fromkeys("ІΙӀ", "I"), "ј": "j", "Ј": "J", "Κ": "K", "К": "K",
    "ⅼ": "l", "Μ": "M", "М": "M", "Ν": "N", **dict.fromkeys("оοօ", "o"), **dict.fromkeys("ОΟ", "O"),
    **dict.fromkeys("рρ", "p"), **dict.fromkeys("РΡ", "P"), "ѕ": "s", "Ѕ": "S", "Τ": "T", "Т": "T", "υ": "u",
    "ս": "u", "ν": "v", "ѵ": "v", "ԝ": "w", **dict.fromkeys("хχ", "x"), **dict.fromkeys("ХΧ", "X"),
    **dict.fromkeys("уγ", "y"), **dict.fromkeys("УΥ", "Y"), "Ζ": "Z", "ɡ": "g",
    # ideographic and halfwidth ideographic full stops separate the labels of a domain name (IDNA)
    "\u3002": ".", "\uff61": ".",
})


def canonical(text: str) -> str:
    """``text`` as memory keeps it: NFKC, invisible and format characters removed, line ends made ``\\n``, line
    separators and every other space a plain space. ``canonical(canonical(t)) == canonical(t)``."""
    if text.isascii():
        return _INVISIBLE.sub("", _NEWLINES.sub("\n", text)) if _INVISIBLE.search(text) or "\r" in text else text
    # Removed before NFKC (a letter and its accent may be joined once the joiner between them is gone) and after
    # (NFKC makes a halfwidth Hangul filler the plain one, which is ignorable too).
    return _visible(unicodedata.normalize("NFKC", _visible(_SEPARATORS.sub(" ", _NEWLINES.sub("\n", text)))))


def _visible(text: str) -> str:
    """``text`` without its invisible and format characters, every space a plain one."""
    kept = []
    for char in _INVISIBLE.sub("", text):
        kind = unicodedata.category(char)
        if kind != "Cf":
            kept.append(" " if kind == "Zs" else char)
    return "".join(kept)


def matching(text: str) -> str:
    """The canonical ``text`` as a pattern reads it: Latin lookalikes and digits of any script made ASCII."""
    text = canonical(text)
    if text.isascii():
        return text
    return "".join(_ascii_digit(char) for char in text.translate(_LOOKALIKES))


def folded(text: str) -> str:
    """``matching`` case-folded: what a pattern that ignores case reads."""
    return matching(text).casefold()


def _ascii_digit(char: str) -> str:
    """A decimal digit of any script as its ASCII digit ("٤" is "4"); any other character as it is."""
    value = unicodedata.decimal(char, None) if not char.isascii() else None
    return char if value is None else str(value)
