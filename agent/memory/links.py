"""Links: anything an injected instruction could send the user's data to, which no memory may hold.

A URL with any scheme, ``www.``, a Markdown link or image, an e-mail address, a domain with a path or a port, an
IP address (v4 or v6, bracketed or not, with a port or not), a defanged address ("evil[.]com", "alice [at] evil
[dot] com"), and a bare domain under any suffix of the Public Suffix List (the ``publicsuffixlist`` package, its
bundled copy of the list: nothing is fetched). A hand-kept list of top-level domains let "catlady.co", "evil.shop"
and "jane.design" through; the list knows every one.

Two kinds of suffix are words first: a bare name under them is a domain only where a domain stands.
- File extensions that are also country codes (``notes.md``, ``setup.py``, ``run.sh``, ``clip.mov``) name files,
  but for a country's suffix chat uses for sites (``.pl``, ``.md``, ``.in``, ...) where the words around the name
  are the web's or a shop's and none a file's ("remember site for cheap buses: flixbus.pl", "i buy most stuff on
  allegro.pl"), or under a country's own second level ("dobremiasto.gov.pl").
- English words that open a sentence (``it``, ``is``, ``me``, ``us``, ``in``, ``now``, ...): "it was great in
  Berlin.it is cold" lost a space, it named no domain. Such a name is a domain when nothing follows it but the end
  of the clause ("notes live on notes.me", "I run pawsandclaws.us."), as an address does; followed by more words, it
  is a sentence run on.

Every pattern reads the ``matching`` view (``agent.memory.canonical``): a fullwidth ``ｅｖｉｌ．ｃｏｍ``, an ``＠``
and a Cyrillic letter in a name read as the ASCII they show. Each starts only where a name can start and its
repeated parts are bounded, so a pasted run of "a.a.a..." or "[[[" costs linear time.
"""

from __future__ import annotations

import ipaddress
import re
from functools import cache

from agent.memory.canonical import canonical, matching
from agent.memory.prefilter import Guarded

LINK_REFUSAL = ("carries a link, an e-mail address or a network address: never stored as memory (an injected "
                "instruction needs one to send data to)")

_LABEL = r"[^\W_](?:[\w-]{0,62}[^\W_])?"
# Where a name may start: not inside a word, a number, a path or an address.
_START = r"(?<![\w.@%+-])"
# After a dot, these end a file name ("notes.md/", "app.js/"), not a domain.
_FILE_EXTENSIONS = (
    "js|mjs|ts|tsx|jsx|py|md|txt|json|html?|css|scss|exe|rs|rb|cpp|hpp|java|kt|php|pdf|png|jpe?g|gif|svg|csv|ya?ml|"
    "toml|lock|log|vue|xml|ini|cfg|conf|docx?|xlsx?|pptx?|zip|gz|tar|mp[34]|wav|sh|bat|ps1|go|c|h|o|so|dll|env|sql|"
    "db|ipynb|mov|pl|pm|ps|ml|mk|ac|am|in|cc|rst|tex|bak|tmp|pyc|whl|dat|bin|iso|img|apk|deb|rpm|dmg"
)
_FILE_SUFFIXES = frozenset(_FILE_EXTENSIONS.replace("?", "").split("|")) | {"htm", "html", "jpg", "jpeg", "yml",
                                                                           "yaml", "doc", "xls", "ppt"}
# Suffixes of the list that are English words able to open a sentence: a domain only at the end of its clause.
SENTENCE_WORDS = frozenset(
    "am as at be by do go in is it me my no so to us ye one now how here you new next got today like yes boo wow "
    "lol day".split()
)

_SCHEME = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://|\bwww\d{0,3}\.", re.IGNORECASE)
_MARKDOWN = re.compile(r"\[[^\]\n]{0,300}\]\([^)\n]{0,1000}\)")
_EMAIL = re.compile(rf"(?<![\w.%+-])[\w.%+-]{{1,64}}@{_LABEL}(?:\.{_LABEL})+", re.IGNORECASE)
# A domain with a path, a query or a port: any suffix of letters that is no file extension.
_WITH_PATH = re.compile(
    rf"{_START}(?:{_LABEL}\.)+(?!(?:{_FILE_EXTENSIONS})\b)[^\W\d_]{{2,24}}(?::\d{{1,5}}(?!\d)|/\S*|[?#]\S+)",
    re.IGNORECASE,
)
_BARE = re.compile(rf"{_START}((?:{_LABEL}\.)+)((?:xn--)?[^\W\d_][\w-]{{0,62}})(?![\w-])(\.?[\w-]?)", re.IGNORECASE)
# What may follow a name under a sentence word for it to stand as a domain: the end of the clause.
_CLAUSE_END = re.compile(r"\s*(?:[,;:!?)\]\"]|['”’](?![a-z])|\.(?:\s|$)|$)", re.IGNORECASE)
# Defanged addresses, written so that no link detector sees them: "evil[.]com", "evil (dot) com", "alice [at]".
_DEFANGED = re.compile(
    r"[\[({]\s*(?:\.|dot)\s*[\])}]\s*[^\W\d_]{2,24}\b|[\w.-]\s*[\[({]\s*(?:@|at)\s*[\])}]\s*\w|"
    r"(?<![\w-])(?!(?:a|an|the|that|this)\s)[\w-]{2,}\s+(?:dot|\[dot\])\s+(?:com|net|org|io|co|info|biz|xyz|dev|app|"
    r"uk|de|ru|cn)\b",
    re.IGNORECASE,
)
# A URL needs no top-level domain to reach an address: dotted quads and IPv6, bracketed or not, with a port or not.
_ADDRESS = re.compile(r"(?<![\w:.%])\[?[0-9a-f:.%]*[:.][0-9a-f:.%]*\]?(?::\d{1,5})?(?![\w:])", re.IGNORECASE)
_FOUR_NUMBERS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")


@cache
def _suffixes() -> object:
    """The Public Suffix List, parsed once (about 60 ms) from the copy the package ships."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


def is_public_suffix(name: str) -> bool:
    """Whether ``name`` (``evil.shop``, ``catlady.co.uk``, ``пример.рф``) ends in a suffix of the Public Suffix List
    with a name of its own before it."""
    psl = _suffixes()
    return psl.privatesuffix(name.lower(), accept_unknown=False) is not None  # type: ignore[attr-defined]


def _bare_domain(seen: str, shown: str) -> bool:
    """A bare domain in ``seen`` (the ``matching`` view of ``shown``, position for position)."""
    for match in _BARE.finditer(seen):
        if match.group(3) and match.group(3) != ".":  # "v1.2.3", "a.b-": part of something longer
            continue
        suffix = match.group(2).lower()
        name = match.group(1) + match.group(2)
        if not is_public_suffix(name):
            # a lookalike map may have made a Cyrillic suffix Latin: the name as written ("пример.рф")
            written = shown[match.start(1) : match.end(2)]
            if written == name or not is_public_suffix(written):
                continue
        if suffix in _FILE_SUFFIXES and not (suffix in _SITE_SUFFIXES and _names_a_site(seen, match.start(1),
                                                                                       match.end(2))):
            continue
        if suffix in SENTENCE_WORDS and not _CLAUSE_END.match(seen, match.end(2)):
            continue
        return True
    return False


# A name under a suffix that is a file's and a country's ("flixbus.pl", "cooking.md", "backup.pl") is a site where
# the words around it are the web's or a shop's ("remember site for cheap buses: flixbus.pl", "i buy most stuff on
# allegro.pl", "news i read: onet.pl") and none is a file's ("I wrote a script backup.pl", "notes are in todo.md"),
# or when it sits under a country's own second level ("dobremiasto.gov.pl", "firma.com.pl"), where no file does.
# A name with an underscore, or in a path ("/site-packages/foo.py"), is no host name at all; nor is one under the
# suffix of a program's source (".py", ".rs", ".sh", ".pm"), which chat names as a file whatever words surround it.
_SITE_SUFFIXES = frozenset({"pl", "md", "am", "ac", "cc", "ml", "in", "mk", "ps"})
_SITE_BEFORE = re.compile(
    r"\b(?:sites?|website|web ?site|web ?page|webpage|page|portal|shop|store|e-?shop|domain|url|link|online|internet|"
    r"web|blog|visit|go to|check out|browse|bookmark|remember|order\w* from|buy\w*(?: \w+){0,3} (?:on|from|at)|on|"
    r"from|at|via|read|news)\b[^.!?\n]{0,40}$",
    re.IGNORECASE,
)
_SITE_AFTER = re.compile(r"^\S*\s+(?:\w+\s+){0,3}?(?:sites?|website|shop|store|page|portal|app)\b", re.IGNORECASE)
_FILE_WORDS = re.compile(
    r"\b(?:files?|scripts?|folders?|director(?:y|ies)|dir|repo|repository|code|run|runs|ran|running|execute\w*|edit\w*|"
    r"open\w*|sav(?:e|ed|ing)|wr(?:ite|ote|itten|iting)|commit\w*|perl|markdown|readme|document\w*|docs?|"
    r"attach\w*|renam\w*|chmod|bash|shell|python|vim|nano|git|path|module|compil\w*|import\w*|notes?|"
    r"extension)\b",
    re.IGNORECASE,
)


def _names_a_site(seen: str, start: int, end: int) -> bool:
    """Whether the name at ``seen[start:end]``, under a suffix that is a file's and a country's, names a site."""
    name = seen[start:end]
    if "_" in name or seen[max(0, start - 1) : start] in ("/", "\\"):
        return False
    psl = _suffixes()
    if "." in (psl.publicsuffix(name.lower(), accept_unknown=False) or ""):  # type: ignore[attr-defined]
        return True
    clause_start = max(seen.rfind(c, 0, start) for c in ".!?\n") + 1
    before, after = seen[clause_start:start], seen[end : end + 40]
    if _FILE_WORDS.search(before) or _FILE_WORDS.search(after.split(".")[0]):
        return False
    return bool(_SITE_BEFORE.search(before) or _SITE_AFTER.match(after))


def has_ip_address(text: str) -> bool:
    """An IPv4 or IPv6 address, bracketed or not, with a port or not ("203.0.113.7:8080", "[2001:db8::1]:80")."""
    if any(_is_ip(m.group(0)) for m in _FOUR_NUMBERS.finditer(text)):
        return True
    for match in _ADDRESS.finditer(text):
        candidate = match.group(0)
        if candidate.count(":") < 2:
            continue
        if candidate.startswith("["):
            candidate = candidate[1:].split("]", 1)[0]
        if _is_ip(candidate.split("%", 1)[0]) and any(c.isalnum() for c in candidate):
            return True
    return False


def _is_ip(candidate: str) -> bool:
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        return False
    return True


# Searched only where they can match (``agent.memory.prefilter``): most lines hold no "@", "/", "://" or "[.]".
_SCHEME_G, _EMAIL_G, _WITH_PATH_G, _DEFANGED_G = map(Guarded, (_SCHEME, _EMAIL, _WITH_PATH, _DEFANGED))


def carries_link(text: str) -> bool:
    """Whether ``text`` holds anything data could be sent to: a URL, an address, a domain (module docstring)."""
    shown = canonical(text)
    seen = matching(shown)
    return bool(
        _SCHEME_G.search(seen) or _MARKDOWN.search(seen) or _EMAIL_G.search(seen) or _WITH_PATH_G.search(seen)
        or _DEFANGED_G.search(seen) or (("." in seen) and _bare_domain(seen, shown)) or has_ip_address(seen)
    )
