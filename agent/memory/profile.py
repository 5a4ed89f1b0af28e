"""The profile: stable facts about the user, one current value per key, read from the user's own words.

Three classes of memory, three lifetimes: the recent turns (the conversation window), exact-lookup facts (this
profile) and semantic search (the memory store). A profile fact reaches every request whatever its words: "pick a
Thai place for tonight" shares no word with "I'm allergic to peanuts", and the allergy must still arrive.

Facts are found by patterns, deterministically, in each sentence the user stated (a question states nothing:
"do I live in Berlin?" is not a home). A plan is not yet a fact ("I'm moving to Lisbon next month" leaves the home
as it is), nor is the past ("I used to live in Boston"). A statement that a value no longer holds ("I'm not vegan
anymore", "I'm no longer allergic to cats", "I quit my job") is a retraction, and its own value stands in the
profile ("diet: no longer vegan") until a later statement gives the key another.

Keys are single-valued (a new home replaces the old one) or sets (several allergies hold at once: a new one never
replaces another, only a retraction removes one). Values are kept as the user wrote them; ``same_value`` compares
them loosely (case, articles, a plural "s").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent.domain import AS_SAID, MemoryRecord, StatedFact
from agent.memory import disclosure, preferences, things, values
from agent.memory.attributes import CHANGING, OPEN, SAFETY, Meaning, Reading

# Keys whose values co-exist: a second allergy is one more allergy, not a correction of the first.
# Single-valued keys also include "best friend", a manager or doctor by role, and each "favourite <thing>".
SET_KEYS = values.SEVERAL
# How each key reads in the prompt, in the order lines are given the profile's budget: safety first.
LABELS: dict[str, str] = {
    "allergy": "allergies",
    "intolerance": "intolerances",
    "avoids": "does not eat",
    "condition": "medical conditions",
    "medication": "medications",
    "pregnancy": "pregnancy",
    "disability": "disability or access needs",
    "diet": "diet",
    "name": "name (what to call them)",
    "home": "lives in",
    "timezone": "time zone",
    "job": "job",
    "employer": "works at",
    "second job": "also works as",
    "second employer": "also works at",
    "partner": "partner",
    "child": "children",
    "pet": "pets",
    "language": "languages",
    "hometown": "comes from",
    "birthday": "birthday",
    "age": "age",
    "pronouns": "pronouns",
    "studies": "studies",
    "best friend": "best friend",
    "work city": "works in",
    "commute": "commutes",
}
FAVOURITE = "favourite "
NO_LONGER = "no longer "


@dataclass(frozen=True)
class Statement:
    """What one user turn says about the profile: facts that hold now, and facts it says no longer hold (a
    retraction with an empty value retracts whatever the key held)."""

    facts: tuple[StatedFact, ...] = ()
    retracts: tuple[StatedFact, ...] = ()
    # The attributes a change said in words may be about, by meaning ("ok i switched sides, Sporting is my club
    # now": a sport, or a team): which of them changed is the nearest memory's to say (``agent.memory.truth``).
    changed: tuple[str, ...] = ()
    # The attributes of one value the meaning named with confidence where no rule read a value and no word adds
    # ("back at work!! part time pharmacy tech": a job): the value held is replaced, change said in words or not,
    # as a value a rule reads replaces it (``agent.memory.truth``).
    holds: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.facts or self.retracts)


def single_valued(key: str) -> bool:
    return key not in SET_KEYS and key not in CHANGING and not preferences.multi_valued(key)


def said_only(fact: StatedFact) -> bool:
    """A value no rule read, kept as the user said it, of an attribute that is not a safety one: it replaces no
    other value by differing from it (every sentence differs), only by saying a change (``agent.memory.values``)."""
    return fact.origin == AS_SAID and fact.key not in SAFETY


def is_thing(key: str) -> bool:
    """A key of ``agent.memory.things`` ("phone", "car", "bank"), not one of the profile's own."""
    return key not in _KEYS and not key.startswith(FAVOURITE) and not preferences.is_preference(key)


def one_at_a_time(fact: StatedFact) -> bool:
    """Whether a value replaces the other values of its key by differing from them: a single-valued key's, or a
    thing's named by a rule ("my bank is Monzo"): an open attribute holds several values kept as said, but a bank
    named replaces the bank named before. A value kept as said replaces none so."""
    return not said_only(fact) and (single_valued(fact.key) or fact.key in OPEN)


def label(key: str) -> str:
    return preferences.label(key) if preferences.is_preference(key) else LABELS.get(key, key)


_ARTICLE = re.compile(r"^(?:a|an|the|my|some|any)\s+", re.IGNORECASE)
# "Max (dog)" and "Max (golden retriever)" are one pet: names are compared without the relation.
_RELATION_NOTE = re.compile(r"\s*\([^()]*\)$")


def normal(value: str) -> str:
    """The form two values share when they are the same: case-folded, no article, no plural "s"."""
    words = _ARTICLE.sub("", value.strip().casefold()).replace("’", "'").split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


def same_value(a: str, b: str) -> bool:
    return normal(_RELATION_NOTE.sub("", a)) == normal(_RELATION_NOTE.sub("", b))


# -- the patterns ---------------------------------------------------------------------------------------------

# A question typed without its mark: "where should we eat in Porto tonight", "do you know a vet in Leeds".
_ASKS = re.compile(r"^\W*(?:(?:where|what|when|how|which|who|whom|whose|why)(?:'s|\s+(?:should|shall|can|could|would|"
                   r"will|do|does|did|is|are|was|were|to|about|much|many|long|far|often))|(?:should|shall|can|could|"
                   r"would|will|do|does|did|is|are)\s+(?:i|we|you|it|there|my|our)|any\s+(?:tips|ideas|"
                   r"recommendations|suggestions))\b", re.IGNORECASE)
_SENTENCE = re.compile(
    r"(?<!\bSt\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<=[.!?;])\s+|\s+(?:but|and then|although|though)\s+",
    re.IGNORECASE,
)
def _sentences(text: str) -> list[str]:
    """The sentences of ``text``, a topic trailed off joined to the sentence it opens (``disclosure.opens_topic``)."""
    out: list[str] = []
    for part in (p for p in _SENTENCE.split(text.strip()) if p):
        if out and disclosure.opens_topic(out[-1]):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


_LETTERS = r"(?:[^\W\d_]|['’-])+"  # "Tomás", "O'Neill", "Anne-Marie"
_NAME = r"(?P<v>(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z]" + _LETTERS + r"(?:\s+[A-Z]" + _LETTERS + r")?)"
# A place: capitalised words ("New York", "the Bay Area", "Frankfurt am Main"), or one lower-case word at the end
# of the clause, as people type in chat ("i live in berlin now").
_PLACE = (r"(?P<v>(?:the\s+)?[A-Z][\w.'’-]*(?:[ -](?:[A-Z][\w.'’-]*|(?:am|an|de|del|da|do|la|le|upon|on)(?= [A-Z])))"
          r"{0,3}|[a-z]{3,}(?=\s*(?:[.,!;]|$|\s+(?:now|these days|with|since|for|last|this|and|but|because))))")
# The end of a role or an organisation: punctuation, or a word that starts another clause.
_END = (r"(?<!\bSt)(?<!\bDr)(?<!\bMt)(?=\s*(?:[.,!?;()]|$|\s+(?:and|but|since|for|because|so|now|these days|"
        r"though|at|as|in|with|last|this|next|from|after|before|which|who|where|when|until|again)\b))")
_ROLE = r"(?:an?\s+|the\s+)?(?P<v>[\w'’-]+(?:\s+[\w'’-]+){0,3}?)" + _END
_ORG = r"(?P<v>(?:an?\s+|the\s+)?[\w'’&.-]+(?:\s+[\w'’&.-]+){0,4}?)" + _END
_PROFESSIONS = (
    r"nurse|doctor|physician|surgeon|teacher|engineer|developer|programmer|designer|lawyer|attorney|accountant|"
    r"architect|chef|cook|pharmacist|dentist|vet|veterinarian|scientist|researcher|professor|lecturer|writer|"
    r"journalist|photographer|musician|electrician|plumber|carpenter|mechanic|pilot|firefighter|officer|"
    r"paramedic|therapist|psychologist|psychiatrist|consultant|analyst|manager|barista|waiter|waitress|cashier|"
    r"librarian|translator|artist|actor|actress|farmer|soldier|midwife|worker|salesperson|realtor|banker|"
    r"entrepreneur|freelancer|student|intern|editor|baker|butcher|tailor|driver|electrician|technician|"
    r"administrator|secretary|receptionist|clerk|economist|statistician|mathematician|physicist|chemist|"
    r"biologist|geologist|historian|coach|trainer|instructor|tutor|counselor|counsellor|caregiver|carer|"
    r"hairdresser|barber|dancer|singer|composer|illustrator|animator|copywriter|marketer|recruiter|"
    r"paralegal|judge|detective|firefighter|optometrist|physiotherapist|radiologist|sonographer|"
    r"founder|ceo|cto|cfo|director|executive|specialist|coordinator|assistant|officer|retiree"
)
# A list ends at a clause of its own (", they make my throat swell", "and I carry an EpiPen"), not at its "and".
_LIST_END = (r"(?=(?i:\s*(?:[.!?;()]|$|,\s*(?:and\s+|but\s+)?(?:i|i'm|it|it's|they|my|we|so|which|that|who|even)\b|"
             r"\s+(?:and|but|or)\s+(?:i|i'm|it|they|my|we)\b|\s+(?:but|since|because|so|which|when|too|as well|now|"
             r"these days|at|in|if|though|from|after|before|lately|nowadays|again)\b)))")
_ALLERGENS = r"(?P<v>[\w'’-]+(?: [\w'’-]+){0,2}?(?:\s*(?:,|and|&|or)\s*[\w'’-]+(?: [\w'’-]+){0,2}?)*?)" + _LIST_END
_LANGUAGE = r"(?P<v>[A-Z][a-z]+(?:\s*(?:,|and|&)\s*[A-Z][a-z]+)*)"
_DIETS = r"vegan|vegetarian|pescatarian|pescetarian|keto|paleo|flexitarian|carnivore|halal|kosher|plant-based"
_CONDITIONS = (
    r"type [12] diabetes|diabetes|asthma|epilepsy|celiac disease|coeliac disease|adhd|autism|dyslexia|"
    r"high blood pressure|hypertension|migraines|arthritis|crohn'?s(?: disease)?|ibs|a heart condition|anxiety|"
    r"depression|multiple sclerosis|ms|a pacemaker|tinnitus|lupus|fibromyalgia"
)
_CONDITION_ADJECTIVES = r"diabetic|asthmatic|epileptic|celiac|coeliac|deaf|blind|colou?rblind|autistic|dyslexic|" \
                        r"pregnant|hard of hearing|immunocompromised"
_BREEDS = (r"golden retriever|retriever|labrador|poodle|terrier|spaniel|collie|beagle|bulldog|shepherd|husky|dachshund|"
           r"greyhound|whippet|corgi|pug|tabby|siamese|maine coon")
_PETS = r"dog|cat|puppy|kitten|parrot|rabbit|bunny|hamster|bird|horse|turtle|tortoise|snake|lizard|guinea pig|ferret"
_SEVERITY = r"severe|bad|mild|serious|deadly|life-threatening|nasty"
_RELATION = r"(?:'s name is| is called| is named| named| called|,)?\s+"
_I_AM = r"(?:i'm|i am|im)"
_NOW = r"(?:now |currently |still |actually |really |finally |officially )?"

_ROLES = ("manager", "boss", "doctor", "gp", "therapist", "dentist", "landlord", "landlady", "roommate", "flatmate")
# How the user asks to be called from now on: a wish in form ("i'd like to go by Juliette"), the name in substance.
_ADDRESSED = r"\b(?:i'?d like to|i would like to|i want to|i'?d prefer to|i'?d rather) (?:go by|be called|be known as)"
_FACTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (key, re.compile(pattern))
    for key, pattern in (
        ("name", r"(?i:\bmy name(?:'s| is)|\bi'm called|\bi am called|\bcall me|\bi go by|\b(?:everyone|people|"
                 r"friends|everybody) calls? me|\bmy friends call me|\bplease call me|" + _ADDRESSED + r")\s+" + _NAME),
        ("home", r"(?i:\b(?:i|we) " + _NOW + r"live in|\b(?:i'm|i am|we're|we are) " + _NOW + r"(?:living|based) in"
                 r"|\b(?:i|we)(?:'ve| have)? (?:just |recently |finally |now |officially )?(?:moved|relocated) "
                 r"(?:back )?to|\bmy home is(?: in)?|\bi(?:'m| am) settled in|\b(?:i|we)(?:'ve| have) (?:been )?"
                 r"(?:lived|living) in|^\W*(?:just |finally |recently |so |we )?(?:moved|relocated) (?:back )?to|"
                 r"\bhome (?:is|these days is) (?-i:(?=[A-Z])))\s*" + _PLACE),
        ("hometown", r"(?i:\b" + _I_AM + r" (?:originally )?from|\bi grew up in|\bi was born in)\s+" + _PLACE),
        ("timezone", r"(?i:\bmy time ?zone is|\b" + _I_AM + r" on)\s+(?P<v>[A-Z][\w/+-]*(?:\s[A-Z][a-z]+)?"
                     r"(?: time)?|UTC[+-]\d{1,2})(?=\s*(?:[.,!?]|$|\s+(?:time|now)))"),
        ("job", r"(?i:\bi " + _NOW + r"work as|\b" + _I_AM + r" " + _NOW + r"working as|\bmy (?:new )?job is"
                r"|\bmy (?:new )?(?:role|position|title) is|\bnew job\b(?:\s+\w+){0,3}?\s+as|\bi(?:'ve| have)? "
                r"(?:just )?started (?:working )?as|(?:\bi )?\bgot (?:a|the|my first|a new) job as|"
                r"\bjoined [^.!?]{1,40}? as|\bi(?:'ve| have)? (?:just )?(?:been|got) promoted to|"
                r"\b" + _I_AM + r" employed as)\s+" + _ROLE),
        ("job", r"(?i:\b" + _I_AM + r" " + _NOW + r"(?:an?|the)\s+)(?P<v>(?:[\w-]+\s+){0,2}(?i:" + _PROFESSIONS
                + r"))(?=\s*(?:[.,!?;]|$|\s+(?:at|for|in|and|but|by|now|these days|since)\b))"),
        ("employer", r"(?i:\b" + _I_AM + r" " + _NOW + r"(?:an?|the)\s+(?:[\w-]+\s+){0,2}(?:" + _PROFESSIONS
                     + r")\s+(?:at|for))\s+" + _ORG),
        ("job", r"(?i:\b" + _I_AM + r" " + _NOW + r")(?P<v>retired|self-employed|unemployed|a stay-at-home "
                r"(?:mom|mum|dad|parent))\b"),
        ("employer", r"(?i:\bi " + _NOW + r"work (?:at|for)|\b" + _I_AM + r" " + _NOW + r"working (?:at|for)|"
                     r"\bnew job\b[^.!?]{0,60}?\bat|\bi(?:'ve| have)? (?:just )?started (?:a new job |working )?at|"
                     r"\bwork as (?:an? )?[\w -]{2,30}? (?:at|for)|\bi(?:'ve| have)? (?:just )?joined (?-i:(?=[A-Z]))|"
                     r"\bi got (?:a|the) job (?:as [\w -]+? )?at)\s*" + _ORG),
        ("diet", r"(?i:\b" + _I_AM + r" " + _NOW + r"(?:a |strictly |fully |mostly |100% )?|\bi(?:'ve| have)? "
                 r"(?:just )?(?:gone|went|turned|become|became) (?:full |fully |completely |totally |strictly )?|"
                 r"\bi eat |\bi follow an? |\bi keep |\bi(?:'m| am) on an? )(?P<v>" + _DIETS + r")\b"
                 r"(?!\s+(?:chef|cook|restaurant|food|recipe|place|friend|option))"),
        ("diet", r"^\W*(?P<v>(?i:" + _DIETS + r"))(?=\s+here\b|\s*,|\s+btw\b|\s+by the way\b|\s*[.!]|$)"),
        ("allergy", r"(?i:(?:\b(?:i'm|i am|im|i've been|i have been|i've become|i became|i got|i'm also|i am also)"
                    r"\s+(?:\w+\s+)?|^\W*(?:\w+\s+)?)allergic to)\s+" + _ALLERGENS),
        ("allergy", r"(?i:(?:\bi have|\bi've got|^\W*)\s*(?:an?\s+)?(?:\w+\s+)?allerg(?:y|ies) to)\s+" + _ALLERGENS),
        ("allergy", r"(?i:(?:\bi have (?:an?\s+)?|\bi've got (?:an?\s+)?|\bmy |^\W*)(?:(?:" + _SEVERITY + r")\s+)?)"
                    r"(?P<v>(?!(?i:" + _SEVERITY + r"|food|an|a|no|my|any|the|seasonal|known|some|few|other|skin|"
                    r"environmental|many)\b)[\w-]+)(?i: allerg(?:y|ies))\b(?! to)"),
        ("intolerance", r"(?i:\b" + _I_AM + r" " + _NOW + r")(?P<v>[\w-]+)(?i: intolerant)\b"),
        ("avoids", r"(?i:\bi (?:can't|cannot|can not|don't|do not|never|can't ever) eat|\bi avoid eating|"
                   r"\bi(?:'m| am) not allowed to eat)\s+" + _ALLERGENS),
        ("intolerance", r"(?i:\b" + _I_AM + r" " + _NOW + r"intolerant to)\s+" + _ALLERGENS),
        ("condition", r"(?i:\bi have (?:got )?|\bi(?:'ve| have) been diagnosed with |\bi suffer from |\bi live with )"
                      r"(?P<v>(?i:" + _CONDITIONS + r"))\b"),
        ("condition", r"(?i:\b" + _I_AM + r" " + _NOW + r")(?P<v>(?i:" + _CONDITION_ADJECTIVES + r"))\b"),
        ("partner", r"(?i:\bmy (?:wife|husband|partner|girlfriend|boyfriend|fiancée?|spouse)" + _RELATION + r")"
                    + _NAME),
        ("partner", r"(?i:\b" + _I_AM + r" (?:married|engaged) to\s+)" + _NAME),
        ("partner", r"(?i:\b" + _I_AM + r" " + _NOW + r")(?P<v>single|divorced|widowed)\b"),
        ("best friend", r"(?i:\bmy best friend(?:'s name)? (?:is|these days is|now is|is now)(?: called| named)?\s+)"
                        + _NAME),
        ("child", r"(?i:\bmy (?:son|daughter|kid|child|baby|little boy|little girl|stepson|stepdaughter)"
                  + _RELATION + r")" + _NAME),
        ("pet", r"(?i:\bmy (?:" + _PETS + r")" + _RELATION + r")" + _NAME),
        ("pet", r"(?i:\b(?:i|we) (?:have|own|got|adopted|rescued)|\bi've got|\bwe've got)\s+(?i:an?|two|three|a new)\s+"
                r"(?:[\w-]+\s+){0,2}?(?:" + _PETS + r"|" + _BREEDS + r")\s+(?i:named|called)\s+" + _NAME),
        ("pet", r"^\W*" + _NAME + r",\s+(?i:my\s+(?:[\w-]+\s+){0,2}?(?:" + _PETS + r"|" + _BREEDS + r"))\b"),
        ("pet", r"(?i:\b(?:i|we) (?:have|own|just got|got|adopted|rescued)|\bi've got|\bwe've got)\s+"
                r"(?P<v>(?i:an?|two|three|four|a new)\s+(?:[\w-]+\s+)?(?:" + _PETS + r"|" + _BREEDS + r")s?)\b"),
        ("work city", r"(?i:\bmy (?:office|workplace) is in|\bi work in (?-i:(?=[A-Z]))|\bi commute to)\s*" + _PLACE),
        *((role, r"(?i:\bmy (?:new )?" + role + r"(?:'s name is| is called| is named| is now| now is| is))\s+" + _NAME)
          for role in _ROLES),
        ("language", r"(?i:\bi speak(?: fluent)?|\b" + _I_AM + r" (?:fluent|a native speaker) in|\bmy (?:native|"
                     r"first|mother) (?:language|tongue) is)\s+" + _LANGUAGE),
        ("birthday", r"(?i:\bmy birthday is(?: on)?|\bi was born on)\s+(?P<v>[\w ,]{3,25}?)" + _END),
        ("age", r"(?i:\b" + _I_AM + r" (?:now )?|\bi (?:just )?turned )(?P<v>\d{1,2})(?i:(?: years old| now)?)"
                r"(?=\s*(?:[.,!?]|$|\s+(?:years|now|today|yesterday|last|this|on|in|and|so|but)\b))"),
        ("pronouns", r"(?i:\bmy pronouns are)\s+(?P<v>\w+/\w+(?:/\w+)?)"),
        ("studies", r"(?i:\bi (?:now )?study|\b" + _I_AM + r" " + _NOW + r"studying|\bi(?:'m| am) (?:doing|taking)"
                    r" (?:a|my) (?:degree|masters|master's|phd|bachelor's) in)\s+" + _ROLE),
    )
)
# The keys the patterns above read: a thing of ``agent.memory.things`` never takes one of them.
_KEYS = frozenset({*LABELS, *SET_KEYS, *_ROLES, "native language", "first language", "mother tongue", "time zone",
                   "birthday", "favourite", "favorite", "best friend", "office", "workplace"})
_FAVOURITE = re.compile(
    r"(?i:\bmy (?:new |all[- ]time |absolute |current )?favou?rite\s+)(?P<thing>[a-z][\w -]{1,25}?)"
    r"(?i:\s+(?:is|are|has to be|would be|these days is|now is|is now)\s+)" + _ROLE
)
# "Tacos are my favourite food now": the value first.
_FAVOURITE_AFTER = re.compile(
    r"(?:^|[,:;]\s*)(?P<v>[\w'’ -]{2,30}?)(?i:\s+(?:is|are) (?:now |still |definitely )?my (?:new |all[- ]time |"
    r"absolute )?favou?rite\s+)(?P<thing>[a-z]+)\b"
)
# The child, pet and partner patterns name a relation: it is kept with the name ("Emma (daughter)").
_RELATION_WORD = re.compile(
    r"\bmy (wife|husband|partner|girlfriend|boyfriend|fiancée?|spouse|son|daughter|kid|child|baby|stepson|"
    r"stepdaughter|" + _PETS + r")\b", re.IGNORECASE)

# A sentence about the future or a wish is not yet a fact; one about the past no longer is.
_PLAN = re.compile(
    r"\b(?:going to|gonna|will|'ll|plan(?:ning)? to|thinking (?:about|of)|might|hope to|hoping to|"
    r"want to|wanna|would like to|'d like to|about to|considering|if|moving to|dream of|wish)\b",
    re.IGNORECASE,
)
# "I used to live in Boston" is the past; "still getting used to it" is not.
_PAST = re.compile(r"\b(?:(?<!getting )(?<!get )(?<!got )(?<!am )(?<!'m )(?<!be )used to|formerly|previously|"
                   r"back when|when i was|as a kid|as a child|years ago i|until)\b",
                   re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|never|don't|do not|no|isn't|wasn't|n't)\b\W+(?:\w+\W+){0,2}$", re.IGNORECASE)
_NO_LONGER = re.compile(r"(?:\bnot\b|n't\b).*\b(?:anymore|any more|any longer)\b|\bno longer\b|\bstopped being\b|"
                        r"\bgrew out of\b|\boutgrew\b|\bnot .* now\b", re.IGNORECASE)
_CLAUSE = re.compile(r"\s*(?:[,;]|\bbut\b)\s*", re.IGNORECASE)
_RETRACT_JOB = re.compile(r"\b(?:i (?:quit|left|lost) my job|i(?:'ve| have)? (?:been )?(?:laid off|fired|let go)|"
                          r"i(?:'m| am) between jobs|i(?:'ve| have)? stopped working)\b", re.IGNORECASE)
_MEAT_AGAIN = re.compile(r"\b(?:eat|eating|ate) (?P<food>meat|fish|animal products|dairy)\b.*\b(?:again|now)\b",
                         re.IGNORECASE)
# Values that the patterns catch but that are not what the key means ("I work at home", "I live in fear").
_NOT_VALUES = frozenset({
    "home", "the home", "night", "nights", "weekends", "the weekend", "the moment", "the same place", "my own",
    "myself", "fear", "hope", "peace", "a flat", "a house", "an apartment", "a small flat", "a studio", "the city",
    "the country", "the suburbs", "here", "there", "it", "this", "that", "everything", "anything", "something",
    "nothing", "work", "the end", "a lot", "all of them", "at least", "a while", "a bit", "now", "you", "sure",
})
SINGLE_PLACES = frozenset({"home", "hometown"})
# "Boston and Paris", "Boston, New York and Paris"; not "Berlin, Germany" nor "Boston and I love it".
_LIST_AFTER = re.compile(r"\s*,\s*[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*\s*(?:,|and|or)\s+[A-Z]|"
                         r"\s+(?:and|or)\s+(?!I\b|I')[A-Z]")
_RETRACTABLE = ("allergy", "intolerance", "avoids", "diet", "condition", "home", "employer", "job", "pet", "partner")


def _clean(value: str, key: str) -> str | None:
    value = value.strip(" ,.;:!-'\"").strip()
    if not value or value.casefold() in _NOT_VALUES or len(value) > 60:
        return None
    if key in {"job", "studies"} or key.startswith(FAVOURITE):
        value = _ARTICLE.sub("", value)
    return value or None


# A list item that only says how bad ("shellfish, severe", "nuts, very mild") is no item of its own.
_ONLY_SEVERITY = re.compile(r"(?i)(?:very |quite |really |extremely |super )?(?:" + _SEVERITY +
                            r"|anaphylactic|mildly|badly|seriously)(?: (?:one|case|reaction))?")


def _split_items(value: str) -> list[str]:
    items = re.split(r"\s*(?:,|\band\b|&|\bor\b)\s*", value)
    return [item for item in (i.strip() for i in items) if item and not _ONLY_SEVERITY.fullmatch(item)]


def _with_relation(sentence: str, start: int, value: str, key: str) -> str:
    relation = _RELATION_WORD.search(sentence, max(0, start - 40), start + 1)
    kind = relation.group(1).lower() if relation else (values.kind_near(sentence, start) if key == "pet" else None)
    return f"{value} ({kind})" if kind and value[:1].isupper() else value


# Words that change nothing a pattern needs: "I'm also allergic", "I really live in", "I still work at".
_FILLER_WORDS = re.compile(r"\b(?:also|too|really|still|actually|honestly|definitely|literally|basically)\s+",
                           re.IGNORECASE)


def _sentence_facts(sentence: str) -> list[StatedFact]:
    owned = things.read(_FILLER_WORDS.sub("", sentence), _KEYS) if not things.ADDITIVE.search(sentence) else []
    sentence = _FILLER_WORDS.sub("", sentence)
    found: list[StatedFact] = []
    for key, pattern in _FACTS:
        for match in pattern.finditer(sentence):
            if key not in {"name", "avoids"} and _NEGATED.search(sentence[: match.start("v")]):
                continue
            raw = match.group("v")
            if key in SINGLE_PLACES and _LIST_AFTER.match(sentence, match.end("v")):
                continue  # "I've lived in Boston, New York and Paris": places of a life, not one home
            values = _split_items(raw) if key in {"allergy", "intolerance", "avoids", "language"} else [raw]
            for value in values:
                cleaned = _clean(value, key)
                if cleaned is None:
                    continue
                if key in {"child", "pet", "partner"}:
                    cleaned = _with_relation(sentence, match.start("v"), cleaned, key)
                found.append(StatedFact(key, cleaned))
    if any(f.key == "pet" and f.value[:1].isupper() for f in found):  # "a golden retriever named Max": Max
        found = [f for f in found if f.key != "pet" or f.value[:1].isupper()]
    for match in [*_FAVOURITE.finditer(sentence), *_FAVOURITE_AFTER.finditer(sentence)]:
        thing = normal(match.group("thing"))
        cleaned = _clean(match.group("v"), FAVOURITE + thing)
        if cleaned is not None:
            found.append(StatedFact(FAVOURITE + thing.replace("color", "colour"), cleaned))
    return found + owned


def _retractions(sentence: str) -> tuple[list[StatedFact], list[StatedFact]]:
    """What a sentence says no longer holds ("I'm not vegan anymore", "I quit my job"), and the values it states
    in their place: "diet: no longer vegan", "job: no job now"."""
    out: list[StatedFact] = []
    stated: list[StatedFact] = []
    if _RETRACT_JOB.search(sentence):
        out += [StatedFact("job", ""), StatedFact("employer", "")]
        stated.append(StatedFact("job", "no job now"))
    if (again := _MEAT_AGAIN.search(sentence)) is not None:
        out += [StatedFact("diet", ""), StatedFact("avoids", again.group("food"))]
    for clause in _CLAUSE.split(sentence):  # "I'm not vegan anymore, I'm vegetarian now": only the first
        if not _NO_LONGER.search(clause):
            continue
        positive = re.sub(r"\b(?:not|no longer|never)\s+|n't\b|\b(?:anymore|any more|any longer)\b", "",
                          clause.replace("don't ", "").replace("doesn't ", ""), flags=re.IGNORECASE)
        positive = re.sub(r"\bstopped being\b", "am", positive, flags=re.IGNORECASE)
        gone = [f for f in _sentence_facts(positive) if f.key in _RETRACTABLE]
        out += gone
        stated += [StatedFact(f.key, f"{NO_LONGER}{f.value}") for f in gone]
    return out, stated


# "On weekends I also work at a bar": a second job, not a new one.
_SECOND_JOB = re.compile(r"\b(?:also|too|as well|on the side|side (?:job|gig|hustle)|second job|in addition|"
                         r"days off|spare time|free time|extra (?:cash|money|income)|"
                         r"on (?:the )?weekends?|at weekends?|evenings?)\b", re.IGNORECASE)
_SECOND = {"job": "second job", "employer": "second employer"}
# Another person's fact, said by the user: "my friend is vegan", "my dad takes metformin", "she's a nurse".
_SOMEONE_ELSE = re.compile(r"^\W*(?:(?:my|our|his|her|their)\s+(?P<who>\w+(?:\s+\w+)?)|he|she|they|he's|she's)\b",
                           re.IGNORECASE)
# Attributes whose sentences name another person on purpose: the user's partner, children, family, pets.
_ABOUT_OTHERS = frozenset({"partner", "child", "family", "pet", "child's school"})
# The attributes a reading may give, and the keys of the profile's own patterns that already answer each.
_ANSWERS: dict[str, frozenset[str]] = {
    "job": frozenset({"job", "employer"}), "employer": frozenset({"job", "employer"}),
    "diet": frozenset({"diet", "avoids"}), "condition": frozenset({"condition", "allergy", "intolerance"}),
}


def _someone_else(sentence: str, reading: Reading) -> bool:
    return reading.attribute not in _ABOUT_OTHERS and of_someone_else(sentence)


def past_clause(clause: str) -> bool:
    """A clause of the past ("when I was 18", "used to", "years ago I"): what it says went is history, not news."""
    return bool(_PAST.search(clause))


def of_someone_else(sentence: str) -> bool:
    """A sentence about another person: "my dad has epilepsy", "she's a nurse"."""
    match = _SOMEONE_ELSE.match(sentence)
    if match is None:
        return False
    who = match.group("who")
    return who is None or any(word in things.PEOPLE for word in who.casefold().split())


def _by_meaning(sentence: str, part: str, reading: Reading | None, found: list[StatedFact]
                ) -> tuple[list[StatedFact], list[StatedFact]]:
    """The facts and retirements the sentence's meaning adds to what the patterns ``found``: the patterns' value
    stands where they read the attribute; where they read nothing, the value is read by the attribute's rule
    (``agent.memory.values``) in the ``part`` of the sentence that says it. Where the patterns read another
    attribute ("my best friend is Tom" is not a partner) their reading stands, but a safety attribute they missed
    is added. A set's retirement ("Biscuit died") is read whatever the patterns found."""
    if reading is None or _someone_else(sentence, reading):
        return [], []
    # A set's values and retirements are read clause by clause in the whole sentence: "Pip died :( we got two
    # budgies, Kiwi and Mango"; a single value in the part that says it.
    # A safety value and a value kept as said keep all the sentence's words.
    # A device's or a vehicle's kind may be in another clause ("got a framework laptop, running ubuntu").
    whole = (reading.attribute in SET_KEYS or reading.attribute in SAFETY or reading.attribute in OPEN
             or reading.attribute in {"device", "vehicle"})
    # "took my wife's surname when we married, it's Lindqvist now": the part first, then the whole sentence.
    facts, retired = values.read(reading.attribute, sentence, "" if whole else part)
    answered = _ANSWERS.get(reading.attribute, frozenset({reading.attribute}))
    # What no pattern reads (a safety value, an open attribute: "my son Leo is at Oakfield primary") is added to
    # what the patterns found in the same sentence.
    beside = (reading.attribute in SAFETY and not any(f.key in SAFETY for f in found)) or reading.attribute in OPEN
    if any(f.key in answered for f in found) or (found and not beside):
        facts = []
    elif not facts and (role := _role_said(part, reading)):
        facts = [role]
    return facts, retired


# How sure the meaning must be of a job or an employer said in a short clause no rule reads ("part time pharmacy
# tech") for the clause to be the value: sure, or likely and naming a trade ("part time florist" is a job at 0.61).
ROLE_PROBABILITY = 0.85
ROLE_NAMED_PROBABILITY = 0.5
ROLE_WORDS_MAX = 8
_WORK_KEYS = frozenset({"job", "employer"})
_TRADE = re.compile(r"(?i)\b(?:" + _PROFESSIONS + r"|tech|\w{3,}(?:ist|ian))s?\b")


def _role_said(part: str, reading: Reading) -> StatedFact | None:
    """A job said in a clause no rule reads, as said: the clause is the value when the meaning is sure of it."""
    words = part.strip(" .!").split()
    sure = reading.score >= ROLE_PROBABILITY or (reading.score >= ROLE_NAMED_PROBABILITY and _TRADE.search(part))
    if (reading.attribute not in _WORK_KEYS or not sure or not 0 < len(words) <= ROLE_WORDS_MAX
            or things.ADDITIVE.search(part) or _SECOND_JOB.search(part)):
        return None
    return StatedFact("job", " ".join(words), origin=AS_SAID)


_PARTS = re.compile(r"\s*(?:[,;!()]|:(?!\d)|\s[—–-]\s|\.\s|\s+and\s+)\s*")  # "the 8:15 train" is one part


def _parts(sentence: str) -> list[str]:
    """The sentence and, when it has several, its clauses: "Porto is home these days, the move finally happened in
    March" speaks of the home in its first clause, and the rest dilutes its meaning."""
    parts = [p for p in _PARTS.split(sentence) if len(p.split()) >= 2]
    return [sentence, *parts] if len(parts) > 1 else [sentence]


def _readings(sentences: Sequence[str], meaning: Meaning | None) -> list[list[tuple[str, Reading | None]]]:
    """For each sentence, the part of it that speaks to an attribute most clearly and that attribute, then any
    other part that speaks clearly to another attribute read by a rule: "I took his surname when we married, Ana
    Duarte now" says a marriage and a name."""
    if meaning is None or not sentences:
        return [[(s, None)] for s in sentences]
    parts = [_parts(s) for s in sentences]
    read = iter(meaning([p for group in parts for p in group]))
    out: list[list[tuple[str, Reading | None]]] = []
    for sentence, group in zip(sentences, parts, strict=True):
        found = [(part, reading) for part in group if (reading := next(read)) is not None]
        whole = found[0][1] if found and found[0][0] == sentence else None
        # A clause's safety reading pooled from several attributes is too weak a sign in a few words ("3 a day");
        # a question typed without its mark asks ("where should we eat in Porto tonight, i'm vegan").
        found = sorted(((part, reading) for part, reading in found if not _of_another(part, reading, whole)
                        and not (reading.pooled and part != sentence) and not _ASKS.match(part)
                        and not _safety_against_whole(part, reading, whole)),
                       key=lambda pair: -pair[1].score)
        if not found:
            out.append([(sentence, None)])
            continue
        chosen: list[tuple[str, Reading | None]] = [found[0]]
        for part, reading in found[1:]:
            if (reading.score >= ANOTHER_PART and reading.attribute not in OPEN
                    and all(r is None or r.attribute != reading.attribute for _, r in chosen)):
                chosen.append((part, reading))
        out.append(chosen)
    return out


# How likely a second clause's attribute must be for it to be read too: a value kept as said (an open attribute)
# is read only from the clause that speaks most clearly, or every clause of a ramble would become a value.
ANOTHER_PART = 0.7


# The attributes of the user's own self a clause about another being may look like (a name is said of the user
# in such a sentence: "I took his surname when we married, Ana Duarte now"), and the attributes of another being.
_ANOTHER_BEING = frozenset({"pet", "child", "family", "partner", "manager"})
_OWN_SELF = frozenset({"age", "birthday", "job", "employer", "home", "hometown"}) | (OPEN - _ABOUT_OTHERS)
_FIRST_PERSON = re.compile(r"(?i)\b(?:i|i'm|im|i've|ive|me|my|mine)\b")


def _of_another(part: str, reading: Reading, whole: Reading | None) -> bool:
    """A clause that, read alone, looks like the user's own age, job or pastime but belongs to the being the
    sentence is about: "and Ana, my daughter, just turned 4", "a tortoise, Gustavo, 40 years old", "my husband is a
    lawyer, works crazy hours". It says "I" or "my" where it is the user's ("my son started school, I turned 41
    on Saturday")."""
    return (whole is not None and whole.attribute in _ANOTHER_BEING and reading.attribute in _OWN_SELF
            and _FIRST_PERSON.search(part) is None)


# A clause that states the user's own state or treatment: "i'm hard of hearing", "i have asthma", "i take statins".
_OWN_STATE = re.compile(r"(?i)^\W*(?:i'?m|im|i am|i have|i've|ive|i've got|i got|i take|i suffer|i carry|i can'?t|"
                        r"i cannot|i need my)\b")


def _safety_against_whole(part: str, reading: Reading, whole: Reading | None) -> bool:
    """A clause that, read alone, looks like a safety fact in a sentence whose meaning is sure of another attribute
    and finds no safety one likely at all: "I work as stress engineer at Nova Chemicals, mostly pressure vessels"
    (a job), "57 and I can still touch my toes" (an age), "trumpet in the band, second chair". A clause that states
    the user's own state ("i'm autistic and phone calls stress me out, how do i cancel my gym") is a safety fact
    whatever the rest of the sentence is about."""
    return (whole is not None and reading.attribute in SAFETY and whole.attribute not in SAFETY
            and not SAFETY & set(whole.alternatives) and _OWN_STATE.match(part) is None)


# The user's household and family, whose safety the user looks after (they cook for them, travel and plan with them):
# a sentence about one of them opens with who ("my daughter Zoe", "our youngest", "hubby", "levi (my 6yo)", "Ana,
# my wife,"). Friends, colleagues and strangers are not among them: "my colleague takes warfarin" is nobody's the
# profile holds.
_KIN = (r"(?:wife|husband|hubby|wifey|partner|spouse|fianc[ée]e?|girlfriend|boyfriend|son|daughter|kids?|child|"
        r"children|baby|babies|toddler|twins?|teen|teenager|boy|girl|boys|girls|stepson|stepdaughter|stepkids?|"
        r"mom|mum|mam|mother|dad|father|parents?|grandma|grandpa|grandmother|grandfather|granny|gran|nan|nana|"
        r"sister|brother|siblings?|in-laws|mother-in-law|father-in-law|mil|fil|youngest|oldest|eldest|little one|"
        r"little ones|middle one|\d{1,2} ?(?:yo|y/o|year old))")
_HOUSEHOLD = re.compile(
    r"^\W*(?:"
    rf"(?:both\s+)?(?:my|our)\s+(?:(?:little|baby|youngest|oldest|eldest|older|younger|middle|twin|step|\d{{1,2}}|two|"
    rf"three|four|\d{{1,2}} ?yo)\s+)?{_KIN}(?:'s)?(?:\s+(?-i:[A-Z][\w'’-]+))?(?:\s*\([^()]{{1,30}}\))?|"
    rf"(?:hubby|wifey|the (?:kids?|baby|twins|wife|husband|missus))\b|"  # "hubby uses a wheelchair"
    rf"[\w'’-]+\s*\((?:my|our)\s+[^()]{{1,30}}\)|"  # "levi (my 6yo)"
    rf"(?-i:[A-Z][\w'’-]+),\s*(?:my|our)\s+(?:\w+\s+)?{_KIN},"  # "Ana, my wife,"
    r")",
    re.IGNORECASE,
)


def household_safety(sentence: str, meaning: Meaning | None, found: Sequence[StatedFact]) -> list[StatedFact]:
    """A safety fact of one of the user's household or family ("my daughter Zoe is celiac, even crumbs make her
    sick"): it must reach every request as the user's own does, with the person named. Which attribute it is, is
    asked of the meaning of the sentence without its opening who (the words "my daughter Zoe" pull a sentence
    towards the children, away from the allergy); its value is the sentence as said, which names the person. A
    sentence whose safety fact was read already, or that opens with no one of the household, gives none."""
    who = _HOUSEHOLD.match(sentence)
    if meaning is None or who is None or any(f.key in SAFETY for f in found):
        return []
    rest = sentence[who.end() :].strip(" ,")
    if len(rest.split()) < 2:
        return []
    reading = meaning([rest])[0]
    if reading is None or reading.attribute not in SAFETY or _ASKS.match(rest):
        return []
    said = values.as_said(sentence.strip(), values.OPEN_WORDS_MAX)
    return [StatedFact(reading.attribute, said, origin=AS_SAID)] if said else []


# Words that open a sentence and say nothing of it ("btw", "tbh", "ok so"): read without them, a sentence means
# what it means with them (in words near a threshold of the meaning's, "btw" was enough to lose a job).
_LEADING = re.compile(r"^\W*(?:(?:btw|by the way|fyi|tbh|honestly|ok(?:ay)?|so|well|anyway|oh|um+|hey|lol)\b\W*)+",
                      re.IGNORECASE)


# An order to the assistant states nothing of the user's: "dont suggest me russian things - books, films" speaks no
# Russian, "never recommend horse riding" has no horse.
_ORDER = re.compile(r"^\W*(?:(?:ok|so|and|also|pls|please|btw)\W+)*(?:never|don'?t|do not|dont|stop)\s+(?:ever\s+)?"
                    r"(?:suggest|recommend|propose|offer|give|show|send|tell|use|write|answer|reply|mention)\b",
                    re.IGNORECASE)


def read(text: str, meaning: Meaning | None = None) -> Statement:
    """The profile facts and retractions ``text`` states, sentence by sentence; questions, plans and the past state
    none. ``meaning`` names the attribute each sentence speaks to (``agent.memory.attributes``); without it the
    patterns alone read."""
    facts: list[StatedFact] = []
    retracts: list[StatedFact] = []
    no_longer: list[StatedFact] = []
    changed: list[str] = []
    holds: list[str] = []
    sentences = [s for s in _sentences(text) if not s.rstrip().endswith("?") and not _ORDER.match(s)]
    said = [_LEADING.sub("", sentence if _retractions(sentence)[0] else _present(sentence)) for sentence in sentences]
    readings = iter(_readings([s for s in said if s], meaning))
    for whole, sentence in zip(sentences, said, strict=True):
        retracted, stated = _retractions(whole)
        retracts += retracted
        no_longer += stated
        if not sentence:
            continue
        found = _sentence_facts(sentence)
        by_patterns = list(found)
        for part, reading in next(readings):
            if not retracted:
                added, retired = _by_meaning(sentence, part, reading, by_patterns)
                found += added
                retracts += retired
            if reading is not None and values.states_a_change(sentence) and not _someone_else(sentence, reading):
                changed += [reading.attribute, *reading.alternatives]
            holds += [f.key for f in found if f.key in _WORK_KEYS and f.origin == AS_SAID
                      and not _SECOND_JOB.search(sentence)]
        if _SECOND_JOB.search(sentence):
            found = [replace(f, key=_SECOND[f.key]) if f.key in _SECOND else f for f in found]
        if not retracted:
            found += household_safety(sentence, meaning, found)
        facts += found
    # "we adopted a greyhound. our old boy passed in august": a pet come and one gone unnamed, in one turn.
    if (any(f.key == "pet" for f in facts) and not any(r.key == "pet" for r in retracts)
            and any(values.pet_gone_unnamed(s) for s in sentences)):
        retracts.append(StatedFact("pet", ""))
    # What no longer holds is a value too ("diet: no longer vegan"), unless the turn gives the key a new one.
    facts += [f for f in no_longer if not any(g.key == f.key and single_valued(f.key) for g in facts)]
    return Statement(tuple(dict.fromkeys(facts)), tuple(dict.fromkeys(retracts)), tuple(dict.fromkeys(changed)),
                     tuple(dict.fromkeys(holds)))


def attributes_read(text: str, meaning: Meaning) -> list[Reading]:
    """The attributes the sentences ``text`` states (its questions aside) speak to, as ``read`` finds them: each
    sentence's clearest part, whether or not a value is then read from it."""
    sentences = [s for s in _sentences(text) if not s.rstrip().endswith("?") and not _ORDER.match(s)]
    return [reading for group in _readings(sentences, meaning) for _, reading in group if reading is not None]


def with_safety(text: str, statement: Statement) -> Statement:
    """``statement`` with the user's words as a safety value, when the gate kept ``text`` as a safety fact
    ("epilepsy, mostly controlled with lamotrigine") and neither a pattern nor the meaning read one: a safety
    fact reaches every request however it was said."""
    if any(f.key in SAFETY for f in statement.facts) or of_someone_else(text):
        return statement
    said = values.as_said(text.strip(), values.OPEN_WORDS_MAX)
    return replace(statement, facts=(*statement.facts, StatedFact("condition", said, origin=AS_SAID))) if said \
        else statement


def _present(sentence: str) -> str:
    """``sentence`` without its clauses of a plan or the past: "allergic to penicillin, found out as a kid" states
    the allergy, "I'm moving to Lisbon next month" states nothing yet (empty)."""
    clauses = [c for c in _CLAUSE.split(sentence) if c]
    planned = [c for c in clauses if (_PLAN.search(c) and not re.search(_ADDRESSED, c, re.I)) or _PAST.search(c)]
    return ", ".join(c for c in clauses if c not in planned) if planned else sentence


# -- the profile as the store holds it ------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One value of the profile, from the memory that stated it; ``replaced_by``/``replaced_at`` are set for a value
    of the history (a later memory replaced it)."""

    key: str
    value: str
    memory: str
    said_at: float
    session: str
    turn: int
    replaced_by: str = ""
    replaced_at: float = 0.0
    origin: str = ""  # ``domain.EXTRACTOR`` for a value the model proposed
    # For a safety value read narrower than it was said ("coeliac" of "im coeliac so gluten is a no go for me"): the
    # user's sentence, which the profile line shows beside it, so what it says of severity, triggers and what to
    # leave out ("even crumbs", "anaphylactic", "no gluten") reaches every request too.
    said: str = ""


# The user's sentence shown beside a safety value is a sentence, not a paste.
_SAID_WORDS_MAX = values.OPEN_WORDS_MAX


def _said_beside(key: str, value: str, text: str) -> str:
    """The sentence of ``text`` that states the safety ``value`` of ``key``, when it says more than the value and is
    short enough for the profile's line; '' otherwise (no safety key, or the value is the sentence)."""
    if key not in SAFETY:
        return ""
    wanted = normal(value)
    for sentence in _sentences(text):
        words = sentence.strip(" .!").split()
        if wanted and wanted in normal(sentence) and normal(sentence) != wanted and len(words) <= _SAID_WORDS_MAX:
            return " ".join(words)
    return ""


def _order(key: str) -> tuple[int, str]:
    keys = list(LABELS)
    if preferences.is_preference(key):  # every answer follows them: right after the safety keys
        return keys.index("name"), key
    return (keys.index(key), key) if key in LABELS else (len(keys), key)


def view(records: Sequence[MemoryRecord]) -> tuple[list[Entry], list[Entry]]:
    """The current profile and its history from the memories that state facts (a fact is current until a later
    memory replaced it, whether or not its memory was superseded for another fact): one value per single-valued key
    (the newest, should two current memories both hold one), every value of a set (each once), safety keys
    first; the history holds every replaced value, newest first."""
    current: dict[str, list[Entry]] = {}
    history: list[Entry] = []
    for record in sorted(records, key=lambda r: r.created_at):
        # The words of a memory that a later one replaced, in part or whole, say what is no longer true ("I live in
        # Boston and I'm allergic to cats" after "I moved to Berlin"): its safety values go without them.
        words = record.text if record.current and not any(f.superseded_by for f in record.facts) else ""
        for fact in record.facts:
            # A memory superseded for one of its facts keeps the others in the profile.
            replaced_by = fact.superseded_by
            entry = Entry(fact.key, fact.value, record.id, record.created_at, record.session, record.turn,
                          replaced_by, record.superseded_at if replaced_by else 0.0, fact.origin,
                          _said_beside(fact.key, fact.value, words))
            if replaced_by:
                history.append(entry)
                continue
            held = current.setdefault(fact.key, [])
            held[:] = [e for e in held if not same_value(e.value, fact.value)]
            if one_at_a_time(fact):
                # A safety value said in two parts of one memory ("pregnant!! 10 weeks, nobody at work knows yet")
                # is one fact in both: the memory replaces the values before it, not its own.
                own = [e for e in held if e.memory == record.id and fact.key in SAFETY
                       and AS_SAID in (e.origin, fact.origin)]
                history += [replace(e, replaced_by=record.id, replaced_at=record.created_at)
                            for e in held if e not in own]
                held[:] = own
            held.append(entry)
    ordered = [entry for key in sorted(current, key=_order) for entry in current[key]]
    return ordered, sorted(history, key=lambda e: -e.said_at)
