"""The links between memories when one of them goes or changes: what a forgotten memory had replaced, what a write
replaces, and what an edited memory replaces and is replaced by. Pure: the service reads the memories and writes the
links these functions return.

A memory that replaced another holds the other's place: "I'm not allergic to shellfish anymore" replaced "I'm
allergic to shellfish" in the memory block, and the shellfish value in the profile. When the newer one goes (forgotten,
or its turn undone), the user takes that statement back, and what it replaced stands again: the older memory and
its value are current again, unless something said later had replaced the one that goes (Boston replaced by
Berlin, Berlin by Munich: forgetting Berlin leaves Boston replaced, by Munich). So each link to a memory that goes
passes to whatever replaced that memory, for the same profile key, and is cut where nothing did. A link is never
left pointing at a memory that is not there: the profile would then hold neither value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from agent.domain import Links, MemoryRecord, StatedFact
from agent.memory import profile, truth
from agent.memory.profile import NO_LONGER, same_value, single_valued
from agent.memory.truth import Outcome


def _successor(by: str, gone: Mapping[str, MemoryRecord], fact: StatedFact | None) -> str:
    """What replaced ``by`` (a memory that goes), followed through the ones that go too: for a ``fact``, what replaced
    the memory's value of the same key; "" when nothing did."""
    seen: set[str] = set()
    while by in gone and by not in seen:
        seen.add(by)
        replacer = gone[by]
        if fact is None:
            by = replacer.superseded_by
            continue
        same = [f for f in replacer.facts if f.key == fact.key and (
            single_valued(f.key) or same_value(f.value.removeprefix(NO_LONGER), fact.value))]
        by = same[0].superseded_by if same else ""
    return by


def inherited(pointing: Iterable[MemoryRecord], gone: Mapping[str, MemoryRecord]) -> dict[str, Links]:
    """The new links of the memories ``pointing`` at memories that go (``gone``, by id): each link passes to what
    replaced the memory that goes, or is cut. Only the memories whose links change are in the result."""
    out: dict[str, Links] = {}
    for record in pointing:
        if record.id in gone:
            continue
        by = _successor(record.superseded_by, gone, None)
        facts = tuple(replace(f, superseded_by=_successor(f.superseded_by, gone, f)) if f.superseded_by in gone
                      else f for f in record.facts)
        link = Links(by, record.superseded_at if by else 0.0, facts)
        if link != Links.of(record):
            out[record.id] = link
    return out


def back_again(before: MemoryRecord, link: Links) -> bool:
    """Whether ``link`` makes ``before`` current again, or one of its values."""
    if before.superseded_by and not link.superseded_by:
        return True
    return any(old.superseded_by and not new.superseded_by for old, new in zip(before.facts, link.facts, strict=False))


def replaced(outcome: Outcome, by: str, at: float, records: Mapping[str, MemoryRecord]) -> dict[str, Links]:
    """The links ``outcome`` gives the memories it replaces (``records`` holds them, by id): those it supersedes are
    replaced by memory ``by`` at ``at``, and each value it replaces is marked with ``by``."""
    values: dict[str, list[StatedFact]] = {}
    for memory, fact in outcome.replaces_facts:
        values.setdefault(memory, []).append(fact)
    out: dict[str, Links] = {}
    for memory in dict.fromkeys([*outcome.supersedes, *values]):
        old = records.get(memory)
        if old is None:
            continue
        facts = tuple(
            replace(f, superseded_by=by)
            if not f.superseded_by and any(f.key == g.key and f.value == g.value for g in values.get(memory, ()))
            else f
            for f in old.facts
        )
        link, when = (by, at) if memory in outcome.supersedes else (old.superseded_by, old.superseded_at)
        out[memory] = Links(link, when if link else 0.0, facts)
    return out


def linked(record: MemoryRecord, link: Links | None) -> MemoryRecord:
    """``record`` with ``link`` (None: as it is)."""
    if link is None:
        return record
    return replace(record, superseded_by=link.superseded_by, superseded_at=link.superseded_at, facts=link.facts)


def rederived(old: MemoryRecord, new: MemoryRecord, statement: profile.Statement, profiled: Sequence[MemoryRecord],
              pointing: Sequence[MemoryRecord], read: Callable[[str], profile.Statement] = profile.read
              ) -> tuple[MemoryRecord, dict[str, Links]]:
    """The links of an edit, read again from the new words as if they had been said instead of the old ones, when
    the old ones were: ``new`` (the memory ``old`` becomes, stating ``statement``) with what replaces it, and the new
    links of the other memories (``profiled``: those stating facts; ``pointing``: those ``old`` replaced), only those
    that change.

    First what pointed at ``old`` is passed on as if it had never been said; a memory it replaced as a whole (an
    explicit correction, no value) stays replaced, by ``new``, and so does ``new`` when ``old`` was replaced so. Then
    the new words replace, among the memories said before them, what they contradict; and each memory said after
    them replaces them as it would have replaced them (its words read by ``read``, as every write reads them)."""
    links = inherited(pointing, {old.id: old})
    for p in pointing:
        if p.superseded_by == old.id and not any(f.superseded_by == old.id for f in p.facts):
            links[p.id] = Links(new.id, p.superseded_at, p.facts)
    if old.superseded_by and not any(f.superseded_by == old.superseded_by for f in old.facts):
        new = replace(new, superseded_by=old.superseded_by, superseded_at=old.superseded_at)
    earlier = {r.id: linked(r, links.get(r.id)) for r in profiled if r.created_at <= old.created_at}
    outcome = truth.decide(new.text, statement, list(earlier.values()), [])
    links.update(replaced(outcome, new.id, old.created_at, earlier))
    for later in sorted((r for r in profiled if r.created_at > old.created_at), key=lambda r: r.created_at):
        then = truth.decide(later.text, read(later.source), [new], [])
        new = linked(new, replaced(then, later.id, later.created_at, {new.id: new}).get(new.id))
    was = {**{r.id: r for r in profiled}, **{r.id: r for r in pointing}}
    return new, {m: link for m, link in links.items() if m in was and link != Links.of(was[m])}
