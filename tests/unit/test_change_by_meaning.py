"""A change said in words whose attribute the meaning named with others ("ok i switched sides, Sporting is my club
now": a sport, or a team) replaces the value of the nearest memory that holds one of them, and nothing else.

Pure: the statements are built by hand as ``profile.read`` builds them with the model (``changed`` holds the
reading's attribute and its alternatives), the neighbours with the similarity the service would hand in."""

from __future__ import annotations

from agent.domain import AS_SAID, StatedFact
from agent.memory import truth, values
from agent.memory.profile import Statement
from tests.builders import record

TEAM = record("forever a Benfica fan, dont judge",
              facts=(StatedFact("team", "forever a Benfica fan, dont judge", origin=AS_SAID),))
CLIMBING = record("I climb on saturdays", facts=(StatedFact("sport", "I climb on saturdays", origin=AS_SAID),))
SWITCHED = "ok i switched sides, Sporting is my club now"
SPORTING = Statement(facts=(StatedFact("sport", SWITCHED, origin=AS_SAID),), changed=("sport", "team"))


def test_the_held_value_of_an_attribute_the_meaning_named_is_what_changed() -> None:
    outcome = truth.decide(SWITCHED, SPORTING, [TEAM], [(TEAM, 0.31)])
    assert outcome.supersedes == (TEAM.id,)
    assert [fact.key for _, fact in outcome.replaces_facts] == ["team"]
    assert "a change of" in outcome.reason


def test_a_memory_too_far_or_of_another_attribute_stays() -> None:
    assert truth.decide(SWITCHED, SPORTING, [TEAM], [(TEAM, truth.CHANGED_SIMILARITY - 0.01)]).supersedes == ()
    languages = Statement(facts=SPORTING.facts, changed=("sport", "language"))
    # (closer than CHANGE_SIMILARITY, a change said replaces a memory holding no value read by a rule anyway)
    assert truth.decide(SWITCHED, languages, [TEAM], [(TEAM, truth.CHANGE_SIMILARITY - 0.05)]).supersedes == ()


def test_without_a_change_said_nothing_is_replaced() -> None:
    added = Statement(facts=SPORTING.facts)  # "Sporting is my club too": no change, no ``changed``
    assert truth.decide("Sporting is my club too", added, [TEAM], [(TEAM, 0.6)]).supersedes == ()


def test_the_nearest_memory_holding_one_of_them_is_the_one() -> None:
    outcome = truth.decide(SWITCHED, SPORTING, [CLIMBING, TEAM], [(TEAM, 0.31), (CLIMBING, 0.28)])
    assert outcome.supersedes == (TEAM.id,)


def test_a_value_said_again_is_not_what_changed() -> None:
    same = record("I climb", facts=(StatedFact("sport", SWITCHED, origin=AS_SAID),))
    assert truth.decide(SWITCHED, SPORTING, [same], [(same, 0.3)]).supersedes == ()


def test_a_change_said_with_the_thing_between() -> None:
    assert values.states_a_change("switched provider to Digi, half the price lol")
    assert values.states_a_change("ok i switched sides, Sporting is my club now")
    assert values.states_a_change("changed my bank to Revolut")
    assert values.states_a_change("handed in my notice last week")
    assert not values.states_a_change("i switched it off and on again")


def test_a_safety_fact_said_again_under_another_safety_key_is_said_again() -> None:
    """The meaning may read "cats make me sneeze" as a condition where the allergy held is "cats": one fact."""
    old = record("im allergic to cats", facts=(StatedFact("allergy", "cats"),))
    for text, key in (("cats make me sneeze like crazy", "condition"), ("cant be around cats, allergy", "allergy")):
        said = Statement(facts=(StatedFact(key, text, origin=AS_SAID),))
        assert truth.says_again(text, said, old, 0.7), text
    dogs = "dogs make me sneeze like crazy"
    assert not truth.says_again(dogs, Statement(facts=(StatedFact("condition", dogs, origin=AS_SAID),)), old, 0.7)


# -- one value at a time, named by meaning (issue 20) ----------------------------------------------------------

STAY_HOME = record("I'm a stay at home dad for now", facts=(StatedFact("job", "stay at home dad"),))
FLORIST = "back at it!! part time florist, mon/wed"
NEW_ROLE = Statement(facts=(StatedFact("job", "part time florist", origin=AS_SAID),), holds=("job",))


def test_a_job_the_meaning_named_replaces_the_job_held_without_a_word_of_change() -> None:
    """As a job a rule reads does: one job follows another, however far apart their words are."""
    outcome = truth.decide(FLORIST, NEW_ROLE, [STAY_HOME], [(STAY_HOME, 0.2)])
    assert outcome.supersedes == (STAY_HOME.id,)
    assert [fact.key for _, fact in outcome.replaces_facts] == ["job"]
    assert "named by meaning" in outcome.reason


def test_without_a_job_named_by_meaning_a_value_kept_as_said_replaces_nothing() -> None:
    added = Statement(facts=NEW_ROLE.facts)  # a word that adds kept it out of ``holds``
    assert truth.decide(FLORIST, added, [STAY_HOME], [(STAY_HOME, 0.7)]).supersedes == ()


def test_a_value_said_with_a_word_that_adds_replaces_no_single_value() -> None:
    outback = record("we drive a Subaru Outback", facts=(StatedFact("car", "Subaru Outback"),))
    second = Statement(facts=(StatedFact("car", "Silverado"),))
    assert truth.decide("hubby's also got an old Silverado", second, [outback], []).supersedes == ()
    assert truth.decide("we've got an old Silverado now", second, [outback], []).supersedes == (outback.id,)
    # "too" that only says how much adds nothing
    assert truth.decide("the Outback was too small, a Silverado now", second, [outback], []).supersedes == (
        outback.id,)


def test_a_pet_retired_without_its_name_is_the_one_held_and_only_then() -> None:
    mochi = record("our cat Mochi is 15", facts=(StatedFact("pet", "Mochi (cat)"),))
    rex = record("we have a dog called Rex", facts=(StatedFact("pet", "Rex (dog)"),))
    text = "we said goodbye to our old girl in march, there's a kitten now, Waffles"
    came = Statement(facts=(StatedFact("pet", "Waffles (kitten)"),), retracts=(StatedFact("pet", ""),))
    assert truth.decide(text, came, [mochi], []).supersedes == (mochi.id,)
    # two held: which one went is not said, and both stay
    assert truth.decide(text, came, [mochi, rex], []).supersedes == ()


def test_a_pet_gone_unnamed_is_told_from_a_pet_gone_by_name() -> None:
    assert values.pet_gone_unnamed("our old boy passed in august")
    assert values.pet_gone_unnamed("we said goodbye to her last week")
    assert not values.pet_gone_unnamed("Biscuit passed away in june")
    assert not values.pet_gone_unnamed("we adopted a kitten called Moss")


def test_a_job_named_again_by_meaning_is_not_a_change() -> None:
    medic = record("i'm a paramedic", facts=(StatedFact("job", "paramedic"),))
    text = "being a paramedic means i see everything lol"
    again = Statement(facts=(StatedFact("job", text, origin=AS_SAID),), holds=("job",))
    assert truth.decide(text, again, [medic], [(medic, 0.7)]).supersedes == ()
    assert truth.decide("working again!! part time pharmacist", NEW_ROLE, [medic], []).supersedes == (medic.id,)
