"""Word-level text helpers shared by the gate and the keyword side of retrieval."""

from __future__ import annotations

import re

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’]*")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few
    for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him
    himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
    myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to too under until up very was wasn't we
    we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's
    with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
    also just really yeah yes oh ok okay hey hi hello thanks thank much many lot get got go going gone know like
    one ever even still well did does tell said say says""".split()
)


def words(text: str) -> list[str]:
    """Lower-cased words, apostrophes kept inside a word."""
    return [w.lower().replace("’", "'") for w in WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """Words that carry meaning for keyword search: stop-words and possessive endings dropped, order kept."""
    out = []
    for word in words(text):
        if word.endswith("'s"):
            word = word[:-2]
        if word and word not in STOPWORDS:
            out.append(word)
    return out
