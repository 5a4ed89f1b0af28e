"""The classes of line the gate missed on batches written by someone who had never seen it (bench/RESULTS.md
section 5), each tried in phrasings that are in no labelled file, beside the lines that share their words and must
not be kept: the grammar is judged, not the sentences it was fixed on."""

from __future__ import annotations

import pytest

from agent.memory.gate import decide


@pytest.mark.parametrize(
    "turn",
    [
        # a description without subject or verb, headed by a noun for a person
        "Lifelong Everton supporter, sadly.",
        "Avid gardener, mostly veg.",
        "keen amateur potter",
        "not much of a beach person tbh",
        "stay at home mum of three",
        "Eldest of four, so used to chaos.",
        # a preference said as a choice, a habit said without its verb
        "mountains over beaches, every time",
        "aisle seat every time",
        "more of a dog person tbh",
        "indie rock all the way",
        "dogs > cats, obviously",
        "am addicted to sudoku",
        "can't get enough of spicy ramen",
        "always order the fish",
        "pilates twice a week, swimming on sundays",
        # states, skills and events whose subject chat dropped
        "Terrified of spiders.",
        "fluent in german, rusty italian",
        "Can't cook to save my life.",
        "haven't eaten meat since 2015",
        "did a masters in history at york",
        "doing an apprenticeship in plumbing, any tips for the exam",
        "live just outside Dublin with my partner",
        "night shifts all this month",
        # forms of address
        "goes by Mo, short for Mohammed",
        "Professor Adeyemi at work, but Tunde is fine",
        "not Elizabeth, Liz",
        "hiya, it's Gwen",
        "please use she/her for me",
        # a statement before a question that has no question word
        "not really a dog person, low maintenance pets?",
        "been a data analyst for six years, mostly sql, thinking about going into teaching",
        "ml engineer, mostly pytorch and kubernetes",
        # a safety fact in a question whose subject chat dropped
        "on warfarin, can i have grapefruit?",
        "Is it safe to eat brie at 20 weeks pregnant?",
        # what a doctor says of a safety matter is the user's, what family says of themselves is the family's
        "my gp says i should avoid ibuprofen because of my kidneys",
        "my wife says she wants to go back to uni",
        # words of the keyboard in another sense: a crash, a terminal illness, formula milk, a guitar string
        "had a motorbike crash in 2019 and my shoulder still aches",
        "my grandad is terminal and we're planning one last trip",
        "our baby is on formula and keeps getting colic",
        "i play violin in an orchestra and snapped a string mid concert",
        "we keep a ball python and two geckos",
        "stocky build, always struggled to find shirts that fit",
        "i want to set up a website for my dog grooming business",
        # an event with its day, a child by age, a body part that hurts, counted animals
        "scan tomorrow at 10, bit nervous",
        "my 6yo won't eat vegetables",
        "dodgy knee, so no running routes please",
        "three rescue hens and a goat",
        # the user's own people, pets and body without "my"
        "dog's called Pepper and she's 3",
        "baby won't settle at night",
        "wrist's been sore since I fell",
        "kids are 2 and 5",
        # home, household and situation said without "I"
        "there's four of us, me, my wife and two teenagers",
        "Glasgow has been home since 2010",
        "Manchester born and bred",
        "currently on maternity leave",
        "off sick with flu this week",
        "turning 50 in the spring",
        "no kids, one very spoilt cat",
        # irregular pasts and the work or pastime said without "I"
        "flew back from Lagos yesterday",
        "became a grandad last month",
        "teach at a secondary school in Hull",
        "play in a brass band",
    ],
)
def test_disclosures_without_the_usual_grammar_are_kept(turn: str) -> None:
    assert decide(turn).keep, decide(turn).reason


@pytest.mark.parametrize(
    "turn",
    [
        # someone else's report or doings
        "my flatmate reckons microwaving water is dangerous, true?",
        "a colleague of mine just bought a tesla, are they reliable",
        "my friend's cat keeps sneezing, should she see a vet",
        "i read online that you can freeze eggs in the shell",
        # orders about how the assistant replies, given as imperatives or to remember
        "talk to me like a pirate",
        "be less wordy",
        "don't be so cheerful",
        "remember to keep replies short",
        "speak to me in german for the rest of this",
        # the task stated in a sentence about a task at the keyboard
        "i have two csv files and i need to join them on the id column, whats the best way",
        # a recall question in a polite frame, a remark about misreading, a phrase that only frames a question
        "can you remind me what my daughter's teacher is called?",
        "could you list everything you know about my health",
        "you remember my son's name right",
        "oh i misread your last message",
        "near where i work, decent lunch spots?",
        "changed my mind, i prefer the second version",
        # what was read, learned or heard about the world
        "i learned recently that honey never spoils",
        "i watched a video saying we only use 10% of our brains, is that true",
        "my uncle always says you lose most heat through your head",
        # the task at hand done, the options of the reply weighed, curiosity about a topic
        "i sorted it, thanks",
        "i'll go with the second one",
        "i can't choose, both look good",
        "i want to know more about how volcanoes form",
        "i'm getting a 500 error on checkout",
        "my laptop fan is loud when i run the build",
        "i want longer answers from now on",
        # the same words about the world or the conversation
        "Paris is home to the Louvre",
        "back in the day nobody had phones",
        "turned 30 degrees here today",
        "no pets policy at a rental, is that legal",
        "play for me",
        "call me when you're free",
        "It's Friday!",
        "came out wrong",
        "my bad",
        "kids are exhausting these days, says every parent",
        "sleep is important for teenagers",
        # choices and descriptions that are not the user's
        "works every time",
        "rain over the weekend",
        "Messi, greatest player of all time",
        "hi fellow gamer",
    ],
)
def test_lines_that_share_those_words_but_disclose_nothing_are_dropped(turn: str) -> None:
    assert not decide(turn).keep, decide(turn).reason
