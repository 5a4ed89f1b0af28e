"""The one rule the command line and the chat share for what a typed word names (``agent.app.selectors``)."""

from __future__ import annotations

from agent.app.selectors import pick, pick_all

IDS = ["05177021aa", "0517ffff00", "abcdef1234"]


def test_a_listing_number_names_its_row_before_any_id() -> None:
    chosen = pick("2", IDS, listing=["abcdef1234", "05177021aa"])
    assert (chosen.id, chosen.sure) == ("05177021aa", True)


def test_a_short_prefix_names_one_memory_but_not_for_sure() -> None:
    chosen = pick("ABCD", IDS)
    assert (chosen.id, chosen.sure) == ("abcdef1234", False)
    assert pick("abcdef12", IDS).sure  # a whole shown id


def test_what_names_none_says_why() -> None:
    several, short, number = pick("0517", IDS), pick("abc", IDS), pick("7", IDS)
    assert (several.id, several.matches) == (None, 2)
    assert short.too_short and not short.short_number
    assert number.short_number and number.matches == 0


def test_the_ids_are_read_once_and_only_when_a_word_is_no_listing_number() -> None:
    asked: list[int] = []

    def known() -> list[str]:
        asked.append(1)
        return IDS

    assert [p.id for p in pick_all(["1"], known, ["abcdef1234"])] == ["abcdef1234"]
    assert not asked
    picks = pick_all(["1", "abcd", "zzzz", "0517"], known, ["abcdef1234"])
    assert [p.id for p in picks] == ["abcdef1234", "abcdef1234", None]  # stops at the first that names none
    assert asked == [1]
