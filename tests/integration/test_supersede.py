"""Updates supersede with history, restatements merge, other facts stay: MemoryService with the real local
embedder on a temp store (agent/memory/truth.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent.adapters.ledger import SqliteLedger
from agent.adapters.local_embedder import LocalEmbedder
from agent.memory import truth
from agent.memory.policy import MemoryPolicy
from agent.memory.service import MemoryService
from tests.fakes import InMemoryIndex
from tests.truth_service import START, say


def live(memory: MemoryService) -> list[str]:
    return [r.source for r in memory.list() if r.current]


def test_a_move_supersedes_the_old_home_which_stays_in_history(memory: MemoryService) -> None:
    say(memory, "I live in Boston, in a small flat near the river.", "What's a good book?",
        "Big news: I moved to Berlin last month!")
    boston, berlin = (next(r for r in memory.list() if city in r.text) for city in ("Boston", "Berlin"))
    assert boston.superseded_by == berlin.id and boston.superseded_at == berlin.created_at
    block = memory.recall("Can you recommend a nice restaurant near where I live?").block.text
    assert "Berlin" in block and "Boston" not in block
    current, history = memory.profile()
    assert [(e.key, e.value) for e in current] == [("home", "Berlin")]
    assert [(e.value, e.replaced_by) for e in history] == [("Boston", berlin.id)]
    past = memory.recall("Where did I live before Berlin?").block.text
    assert "Boston (said" in past and "no longer current" in past


def test_restore_undoes_a_supersede(memory: MemoryService) -> None:
    say(memory, "I live in Boston", "I moved to Berlin")
    boston = next(r for r in memory.list() if "Boston" in r.text)
    restored = memory.restore(boston.id)
    assert restored is not None and restored.current
    berlin = next(r for r in memory.list() if "Berlin" in r.text)
    assert berlin.superseded_by == boston.id
    assert [e.value for e in memory.profile()[0]] == ["Boston"]


def test_a_new_job_replaces_the_old_one_and_a_name_the_user_prefers_replaces_the_name(memory: MemoryService) -> None:
    say(memory, "I work as a nurse at St. Mary's hospital.", "My name is Katherine, by the way.",
        "I started a new job last week as a software engineer at a fintech startup.",
        "Please just call me Kate, everyone does.")
    assert live(memory) == ["I started a new job last week as a software engineer at a fintech startup.",
                            "Please just call me Kate, everyone does."]
    block = memory.recall("What's my name?").block.text
    assert "Kate" in block and "Katherine" not in block
    assert "software engineer" in memory.recall("What do I do for a living?").block.text


def test_facts_that_do_not_contradict_both_stay(memory: MemoryService) -> None:
    pairs = [
        ("I play the cello", "I also started learning the piano"),
        ("I like coffee in the morning", "I like tea in the morning"),
        ("I'm allergic to peanuts.", "I'm allergic to shellfish too."),
        ("My sister lives in Rome", "My brother lives in Madrid"),
        ("I have two cats", "We just adopted a dog"),
        ("My daughter Emma is five", "My son Leo is seven"),
    ]
    for old, new in pairs:
        say(memory, old, new)
    assert sorted(live(memory)) == sorted(text for pair in pairs for text in pair)
    assert {e.value for e in memory.profile()[0] if e.key == "allergy"} == {"peanuts", "shellfish"}


def test_an_explicit_correction_supersedes_the_memory_it_corrects(memory: MemoryService) -> None:
    say(memory, "I play the cello in a community orchestra", "I walk to work every day",
        "Actually, I don't play the cello anymore, I sold it")
    assert "I play the cello in a community orchestra" not in live(memory)
    assert "I walk to work every day" in live(memory)


def test_a_retraction_takes_the_value_out_of_the_profile(memory: MemoryService) -> None:
    say(memory, "I'm vegan.", "I'm allergic to cats", "I'm not vegan anymore, I eat fish again")
    values = {(e.key, e.value) for e in memory.profile()[0]}
    assert ("diet", "no longer vegan") in values and ("diet", "vegan") not in values and ("allergy", "cats") in values


def test_a_memory_with_two_facts_keeps_the_one_not_contradicted_in_the_profile(memory: MemoryService) -> None:
    say(memory, "I live in Boston and I'm allergic to cats", "I moved to Berlin")
    current, history = memory.profile()
    assert [(e.key, e.value) for e in current] == [("allergy", "cats"), ("home", "Berlin")]
    assert [e.value for e in history] == ["Boston"]
    # The old memory leaves the block (its words say Boston); its cat allergy stays in the profile.
    assert live(memory) == ["I moved to Berlin"]
    block = memory.recall("Where should I go for dinner?").block.text
    assert "cats" in block and "Boston" not in block


def test_a_fact_said_four_ways_leaves_at_most_two_live_memories(memory: MemoryService) -> None:
    say(memory, "I'm allergic to peanuts.", "I have a peanut allergy, just so you know.",
        "Peanuts make my throat swell up, I'm allergic.", "Remember I can't eat peanuts at all, allergic.")
    peanut = [r for r in memory.list() if r.current and "eanut" in r.text]
    assert len(peanut) <= 2
    assert sum(len(r.restated) for r in peanut) >= 4 - len(peanut)


def test_a_plan_is_not_a_new_home(memory: MemoryService) -> None:
    say(memory, "I live in Boston", "I'm moving to Lisbon next month")
    assert [e.value for e in memory.profile()[0]] == ["Boston"]
    assert len(live(memory)) == 2


def test_the_profile_reaches_requests_that_share_no_word_with_it(memory: MemoryService) -> None:
    say(memory, "I'm allergic to peanuts.", "I moved to Berlin last month")
    for probe in ("What should I cook for dinner?", "Pick a Thai place for tonight", "Recommend a restaurant near me"):
        block = memory.recall(probe).block.text
        assert "peanuts" in block and "Berlin" in block


def test_what_do_you_know_about_me_gets_the_profile_and_memories(memory: MemoryService) -> None:
    say(memory, "I'm allergic to peanuts.", "I play the cello in a community orchestra", "I love hiking in the Alps")
    block = memory.recall("What do you know about me?").block
    assert "peanuts" in block.text and len(block.memories) >= 2


def test_tomorrow_is_stored_as_the_date_it_meant(memory: MemoryService) -> None:
    say(memory, "My dentist appointment is tomorrow at 3pm.")
    [record] = memory.list()
    assert record.text == "My dentist appointment is on 2026-12-02 at 3pm."
    assert record.source == "My dentist appointment is tomorrow at 3pm."
    assert "2026-12-02" in memory.recall("When is my dentist appointment?").block.text


def test_forget_erases_a_superseded_memory_and_its_replacement(memory: MemoryService) -> None:
    say(memory, "I live in Boston", "I moved to Berlin")
    assert memory.forget([r.id for r in memory.list()]) == 2
    assert memory.list() == [] and memory.profile() == ([], [])


def test_a_new_job_takes_the_old_employer_along(memory: MemoryService) -> None:
    say(memory, "I'm a student at McGill, studying biology.", "I graduated and now I work as a lab technician.")
    current = [(e.key, e.value) for e in memory.profile()[0]]
    # The studies McGill held are what the new memory says holds now, in its words ("I graduated, ...").
    assert ("job", "lab technician") in current and not any("McGill" in value for _, value in current), current
    assert {key for key, _ in current} <= {"job", "education"}


def test_a_correction_is_never_merged_as_a_restatement(memory: MemoryService) -> None:
    say(memory, "My brother works at a bakery in town.", "Actually my brother works at a brewery, not a bakery.")
    assert live(memory) == ["Actually my brother works at a brewery, not a bakery."]


def test_an_update_with_no_key_and_no_correction_replaces_nothing(memory: MemoryService) -> None:
    say(memory, "my spare keys are with the neighbour", "the spare key is with my sister these days")
    assert len(live(memory)) == 2  # a duplicate at worst, never a fact lost


def test_a_commute_said_now_replaces_the_one_before_and_keeps_it_in_the_history(memory: MemoryService) -> None:
    """The commute is a key of the profile, and "now" says the change: the 7:40 is history, not lost."""
    say(memory, "I take the 7:40 train to work.", "I take the 8:15 train now, they changed the timetable.")
    assert live(memory) == ["I take the 8:15 train now, they changed the timetable."]
    assert any(r.text == "I take the 7:40 train to work." and not r.current for r in memory.list())


def test_chatty_lines_in_similar_words_are_not_restatements(memory: MemoryService) -> None:
    say(memory, "Wow, Mel! The colours really blend nicely, painting looks like a great outlet for you.",
        "Thanks! Painting is a fun way to express my feelings and get creative.")
    assert len(live(memory)) == 2


def test_a_retraction_then_the_fact_again_makes_it_current(memory: MemoryService) -> None:
    say(memory, "I'm allergic to cats.", "I'm no longer allergic to cats after the treatment!",
        "Bad news, I'm allergic to cats again.")
    assert [(e.key, e.value) for e in memory.profile()[0]] == [("allergy", "cats")]


def test_questions_about_the_past_are_told_from_questions_about_now() -> None:
    from agent.memory.truth import asks_about_past

    for past in ("Where did I live before?", "What was my old job?", "Where did I use to work?",
                 "What was my previous address?", "What has changed since the move?", "Did my address change?"):
        assert asks_about_past(past), past
    for now in ("How old am I?", "Where do I live?", "What's my job?", "Recommend a restaurant near me",
                "How often should I get the oil changed on my car?", "What should I change in my diet?"):
        assert not asks_about_past(now), now


def test_a_new_favourite_replaces_the_old_one_for_the_same_thing_only(memory: MemoryService) -> None:
    say(memory, "My favourite coffee is a flat white.", "My favourite tea is chamomile.",
        "These days my favourite coffee is an oat latte.")
    block = memory.recall("Order me my usual coffee, please.").block.text
    assert "oat latte" in block and "flat white" not in block and "chamomile" in block


def test_the_old_home_said_again_is_current_again(memory: MemoryService) -> None:
    say(memory, "I live in Boston", "I moved to Berlin", "I live in Boston")
    assert [e.value for e in memory.profile()[0]] == ["Boston"]
    assert live(memory) == ["I live in Boston"]


def test_one_speaker_of_a_transcript_never_replaces_or_repeats_another(memory: MemoryService) -> None:
    say(memory, "(8 May 2023) Ada: I live in Boston, near the river.", "(9 May 2023) Bo: I moved to Denver last year.",
        "(9 May 2023) Bo: Actually, I don't live near the river, I live in the hills.")
    assert len(live(memory)) == 3  # Bo's move and Bo's correction leave Ada's memories as they are


def test_what_dated_lines_say_is_embedded_once_however_often_they_are_neighbours(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    embedded: list[str] = []

    class Counting:
        name, model, dimension = local_embedder.name, local_embedder.model, local_embedder.dimension

        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            embedded.extend(texts)
            return local_embedder.embed(texts)

    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    memory = MemoryService(ledger, InMemoryIndex(), Counting(), "alice", MemoryPolicy(), clock=lambda: START)
    lines = ["(8 May 2023) Ada: I live in Boston, near the river.", "(8 May 2023) Ada: My sister lives in Boston too.",
             "(9 May 2023) Ada: I walk along the river in Boston.", "(9 May 2023) Ada: Boston winters are long."]
    for n, line in enumerate(lines):
        memory.remember(line, session="s", turn=n)
    said = [truth.body(line) for line in lines]
    assert all(embedded.count(body) == 1 for body in said), embedded
    ledger.close()


def test_a_change_said_in_words_supersedes_the_close_memory_it_changes_with_the_reason(memory: MemoryService) -> None:
    say(memory, "I go to pilates every Monday evening", "What's a good podcast for a commute?",
        "gave up pilates, swimming twice a week now")
    pilates, swimming = (next(r for r in memory.list() if w in r.text) for w in ("Monday", "swimming"))
    assert pilates.superseded_by == swimming.id and swimming.current
    assert "swimming" in memory.recall("Plan my week of exercise").block.text


def test_a_description_or_an_addition_is_no_change_and_a_far_memory_is_not_what_changed(
        memory: MemoryService) -> None:
    say(memory, "My laptop is a ThinkPad X1", "my laptop is really slow lately",
        "I play the violin in a quartet", "I also started the flute, no more excuses",
        "My sister lives in Leeds", "switched my phone plan to a cheaper one")
    assert len(live(memory)) == 6


def test_the_change_cue_reads_changes_not_descriptions_or_additions() -> None:
    assert truth.states_a_change("switched to oat milk in my coffee")
    assert truth.states_a_change("kicked the energy drinks, green tea only")
    assert not truth.states_a_change("my laptop is really slow these days")
    assert not truth.states_a_change("I also switched to the cello, alongside the piano")


def test_a_change_said_in_words_no_rule_reads_replaces_the_memory_the_meaning_puts_on_the_same_attribute(
        memory: MemoryService) -> None:
    say(memory, "our phone and internet deal is with a small local company",
        "dropped the local company, it's a fibre deal with a big one now",
        "our old boy Rufus sleeps on the sofa all day",
        "rip rufus, he went in his sleep. we brought home a collie pup, Juno")
    local, fibre, rufus, juno = (next(r for r in memory.list() if w in r.source)
                                 for w in ("small local", "fibre", "sofa", "Juno"))
    assert local.superseded_by == fibre.id and rufus.superseded_by == juno.id
    assert fibre.current and juno.current
    block = memory.recall("what should I arrange for my dog while I'm away?").block.text
    assert "Juno" in block and "sofa" not in block


def test_a_value_added_beside_another_of_the_same_attribute_replaces_nothing(memory: MemoryService) -> None:
    # A child's age said now beside another child's, a habit started beside one kept: the same attribute, no
    # word that retires one.
    say(memory, "my son Tom is 9", "and my daughter Mia just turned 4",
        "I go bouldering on Tuesdays", "I've started doing yoga at home")
    assert len(live(memory)) == 4


def test_the_broad_change_cue_reads_the_users_own_changes_not_additions_or_other_peoples() -> None:
    assert truth.says_it_changed("cancelled the gym, way too packed. the pool for me now")
    assert truth.says_it_changed("rip rufus. we brought home a collie pup")
    assert not truth.says_it_changed("I also do yoga now")
    assert not truth.says_it_changed("my sister moved to Madrid")
    assert not truth.says_it_changed("should I switch to a new phone?")


def test_a_question_the_replaced_memory_answered_recalls_what_replaced_it(memory: MemoryService) -> None:
    say(memory, "learning the trumpet, lessons on saturdays", "sold the trumpet, it's the cello for me now")
    trumpet, cello = (next(r for r in memory.list() if w in r.source) for w in ("learning", "cello"))
    assert trumpet.superseded_by == cello.id
    # Near the trumpet's words, far from the cello's: the memory that holds now answers it, the old one does not.
    block = memory.recall("how long should my saturday lessons practice be?").block
    assert [m.record.id for m in block.memories] == [cello.id]
    assert "learning the trumpet" not in block.text


def test_a_thing_said_gone_by_name_replaces_the_memory_of_it_whatever_its_attribute(memory: MemoryService) -> None:
    say(memory, "Thursdays I volunteer at the Oxfam bookshop on Mill Road", "What should I cook tonight?",
        "Left Oxfam after six years, I help at the animal shelter on Thursdays now")
    oxfam, shelter = (next(r for r in memory.list() if word in r.text) for word in ("Mill Road", "shelter"))
    assert oxfam.superseded_by == shelter.id
    assert "Mill Road" not in memory.recall("What am I up to on Thursdays?").block.text


def test_a_new_one_of_a_thing_replaces_the_old_one(memory: MemoryService) -> None:
    say(memory, "my dentist is at the Smile Studio on Park Lane", "any ideas for a rainy weekend?",
        "new dentist since spring, dr Farouk, right next to work")
    old, new = (next(r for r in memory.list() if word in r.text) for word in ("Park Lane", "Farouk"))
    assert old.superseded_by == new.id
    block = memory.recall("Write a note to my dentist asking to move my appointment").block.text
    assert "Farouk" in block and "Smile Studio" not in block


def test_a_going_or_a_new_one_of_something_else_replaces_nothing(memory: MemoryService) -> None:
    say(memory, "my sister sings in the Bach choir", "I left the choir at school when I was 12",
        "my dentist is Dr Chen in Hove", "my brother has a new dentist he loves")
    assert all(r.current for r in memory.list())


def test_a_going_said_in_a_sentence_the_memory_does_not_keep_still_replaces(memory: MemoryService) -> None:
    """The gate keeps the sentence that discloses; what went may be in another one of the same words."""
    say(memory, "at the climbing gym everyone calls me Spider", "No more Spider... the new crew started calling me "
        "Gecko and honestly I like it better")
    spider = next(r for r in memory.list() if r.source.startswith("at the climbing"))
    assert not spider.current


def test_a_safety_value_said_in_two_parts_of_one_memory_keeps_both(memory: MemoryService) -> None:
    say(memory, "so... pregnant!! 12 weeks, only my sister knows")
    values = [e.value for e in memory.profile()[0] if e.key == "pregnancy"]
    assert any("pregnant" in v for v in values), values


def test_a_person_said_gone_by_name_replaces_the_memory_of_them(memory: MemoryService) -> None:
    """A memory about someone of the user's is theirs to lose when the going names that person, not otherwise."""
    say(memory, "my girlfriend Priya is a nurse, we met at uni", "my brother Sam sings in a choir",
        "Priya and me are not together anymore since june. I left the choir too")
    priya, sam = (next(r for r in memory.list() if r.source.startswith(s)) for s in ("my girlfriend", "my brother"))
    assert not priya.current and sam.current


def test_what_replaced_a_profile_value_reaches_every_request_in_the_users_words(memory: MemoryService) -> None:
    """No rule reads "ananya" (a name typed in lower case), but the going of Priya says what replaced her."""
    say(memory, "my girlfriend Priya is a nurse, we met at uni",
        "Priya and me are not together anymore. been seeing someone new for 2 months, ananya, a designer")
    block = memory.recall("plan a weekend in Lisbon").block.text
    assert "ananya" in block and "Priya" not in block.split("<memory_notes>")[0], block


def test_a_mood_said_in_passing_is_no_safety_value(memory: MemoryService) -> None:
    """"im fine" is near a disability's words, and would reach every request as one."""
    say(memory, "its fine. im fine. anyway been flat out at work", "coeliac here, so no gluten for me")
    keys = {e.key for e in memory.profile()[0]}
    assert "disability" not in keys and "intolerance" in keys, keys


def test_an_acronym_is_no_ones_name(memory: MemoryService) -> None:
    say(memory, "been seeing someone for a month, she's a UX designer")
    assert not any(e.key == "partner" and e.value == "UX" for e in memory.profile()[0])
