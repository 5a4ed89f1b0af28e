"""The ids a held index wrote since its last catch-up (``agent.adapters.written_ids``): a set whose memory ids are
kept as the 16 bytes their hex digits spell, and which answers as a set of the ids themselves."""

from __future__ import annotations

from agent.adapters.written_ids import WrittenIds
from agent.domain import memory_id


def test_memory_ids_come_back_as_written_less_those_taken_out() -> None:
    ids = [memory_id("u", f"line {n}") for n in range(5)]
    written = WrittenIds()
    written.update(ids[:3])
    written.update(ids[2:])  # one written twice is one id
    written.difference_update([ids[1], memory_id("u", "never written")])
    assert written.ids() == {ids[0], *ids[2:]}
    assert len(written) == 4


def test_an_id_written_again_after_it_was_taken_out_is_there_again() -> None:
    mid = memory_id("u", "tea")
    written = WrittenIds()
    written.update([mid])
    written.difference_update([mid])
    assert written.ids() == set()
    written.update([mid])
    assert written.ids() == {mid}


def test_ids_of_another_form_are_kept_as_they_are() -> None:
    odd = ["m1", "ABCDEF0123456789ABCDEF0123456789", "x" * 32, memory_id("u", "a")[:31]]
    written = WrittenIds()
    written.update([*odd, memory_id("u", "a")])
    written.difference_update(["m1"])
    assert written.ids() == {*odd[1:], memory_id("u", "a")}


def test_a_memory_id_takes_its_sixteen_bytes_and_a_clear_empties_it() -> None:
    written = WrittenIds()
    written.update(memory_id("u", f"line {n}") for n in range(1000))
    assert len(written._packed) == 16 * 1000 and not written._other
    written.clear()
    assert written.ids() == set() and len(written._packed) == 0
