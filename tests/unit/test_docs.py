"""The manual stays true to the code and to itself: its table of settings is generated from ``agent/config.py``
(``python -m agent.docs_settings``) and fails here when it drifts, as ``.env.example`` does, and every relative link
of the README and of ``docs/`` (and of ``bench/RESULTS.md``, which they point into) leads to a file that exists and,
when it names one, to a heading that file has: the README's sections moved into ``docs/``, and a link left pointing
at the old place would otherwise go nowhere without a word. The map of the package in ``docs/development.md`` names
every module and package of ``agent/`` and of ``agent/app/``: the README's list once went stale without a word."""

from __future__ import annotations

import re
from pathlib import Path

from agent import docs_settings

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "RESULTS.md"]
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.M)


def prose(text: str) -> str:
    """``text`` without its code blocks and code spans, where a ``](...)`` is an example, not a link."""
    return _CODE.sub("", _FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of ``text``: lower case, punctuation dropped, spaces as hyphens, a
    repeated one numbered."""
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or heading does not exist."""
    bad = []
    for target in _LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            bad.append(target)
        elif anchor and (file.is_dir() or anchor not in anchors(file.read_text())):
            bad.append(target)
    return bad


def test_the_settings_page_is_generated_from_the_settings() -> None:
    committed = docs_settings.DOC.read_text()
    assert committed == docs_settings.rendered(committed), "run python -m agent.docs_settings"


def test_every_relative_link_of_the_readme_and_the_manual_leads_somewhere() -> None:
    assert {str(page.relative_to(ROOT)): broken(page) for page in PAGES if broken(page)} == {}


def test_the_map_of_the_package_names_every_module() -> None:
    page = (ROOT / "docs" / "development.md").read_text()
    tree = page[page.index("```\nagent/\n"):page.index("```", page.index("```\nagent/\n") + 3)]
    package = ROOT / "agent"
    names = {f"{path.name}/" if path.is_dir() else path.name for path in package.iterdir()
             if (path.suffix == ".py" or (path / "__init__.py").exists()) and not path.name.startswith("__")}
    names |= {path.name for path in (package / "app").glob("*.py") if not path.name.startswith("__")}
    assert {name for name in names if not re.search(rf"(?<![\w/]){re.escape(name)}", tree)} == set()


def test_anchors_are_made_as_github_makes_them() -> None:
    text = "# Reliability: what happens\n## One tool: `agent mcp`\n## Forget\n### Forget\n```\n# not one\n```\n"
    assert anchors(text) == {"reliability-what-happens", "one-tool-agent-mcp", "forget", "forget-1"}
    assert prose("a [x](y.md) `[z](w.md)`\n```\n[v](u.md)\n```\n") == "a [x](y.md) \n\n"
