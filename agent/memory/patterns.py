"""The named patterns of the disclosure grammar, each with the sentences it must and must not match.

A pattern is a regular expression, how it is applied (at the start of a clause, or anywhere in it) and the
examples that say what it is for: ``tests/unit/test_gate_patterns.py`` checks every pattern of ``ALL`` against its own
examples, so a change made for one sentence that breaks what the pattern was written for fails there, next to the
pattern's name, before any benchmark runs. The examples are read as the decisions read text: the words of
``lexicon.normal`` joined by spaces (lower case, "i'm" read as "i am"), or the sentence as typed for a pattern that
reads case (``raw``). The words the patterns are built of are in ``agent.memory.lexicon``; the decisions made with
them are in ``agent.memory.disclosure``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.memory import lexicon
from agent.memory.lexicon import (
    BODY_STATE,
    COURTESIES,
    FAMILY,
    FILLERS,
    NOT_NAMES,
    OTHERS,
    OWN_BEING,
    OWN_BODY,
    PETS,
    ROLE_NOUNS,
)

ANCHORED, ANYWHERE = True, False

@dataclass(frozen=True)
class Named:
    """One pattern of the grammar: its name, whether it is anchored at the start of what it reads, the regular
    expression, and the examples it must match and must not."""

    name: str
    anchored: bool
    regex: re.Pattern[str]
    matches: tuple[str, ...]
    misses: tuple[str, ...]
    raw: bool = False

    def __call__(self, text: str) -> re.Match[str] | None:
        """The pattern applied as the decisions apply it: at the start of ``text``, or anywhere in it."""
        return self.regex.match(text) if self.anchored else self.regex.search(text)

    def reads(self, example: str) -> str:
        """``example`` as this pattern sees it in a decision."""
        return example if self.raw else " ".join(lexicon.normal(example))


# A question that asks the assistant to recall what the user said discloses nothing new.
RECALL = Named(
    "recall", ANCHORED, re.compile(
    r"^(?:(?:can|could|would|will) you (?:please )?|please )?"
    r"(?:(?:what|what's|when|when's|where|where's|who|who's|which|how old|how many|how much)\b[^?]{0,25}?"
    r"\b(?:is|are|was|were|'s|does|do|did)\s+(?:the\s+\w+\s+of\s+)?(?:my|our)\b"
    r"|(?:what|where|when|who|which)\b.{0,12}\b(?:do|did|am|was|have|were)\s+i\b"
    r"|(?:what|how old|who)\s+am\s+i\b|(?:do|did) you (?:know|remember|recall)\b|(?:did|have) i (?:tell|told|say|"
    r"said|mention)|remind me\b|what do you know\b|tell me (?:what you know|about me|about myself)"
    r"|(?:what|how much) (?:else )?(?:do|did) you (?:know|remember|recall)(?: about)? (?:me|my|what|where|when|who)\b"
    r"|am i\b|(?:do|did|have) i (?:have|own|like|live|work|tell|say|mention|study|go by)\b"
    # "is my dog a beagle?", "is my sister still in Leeds?", "was my son's name Theo?": asks the assistant to confirm
    r"|(?:is|are|was|were) (?:my|our) (?:[\w']+ ){1,2}?(?:a|an|called|named|still|really|the one)\b"
    r"|(?:is|was) (?:my|our) [\w']+'s (?:name|birthday|surname|age)\b"
    r"|tell me again\b|tell me my\b|(?:list|tell me|give me|show me|say) (?:everything |all |what )?(?:you know|you "
    r"remember|you have on|you've got on)\b)"
),
    matches=("is my dog a beagle?", "is my sister still in Leeds?", "where do I live?", "what's my daughter's name?",
             "remind me what I said about the trip", "do you remember my dog?", "am I allergic to anything?"),
    misses=("is my dog allowed to eat grapes?", "where can I buy cheap flights?", "what is a good name for a dog?",
            "how do I get my daughter to sleep?"),
)


# Safety-relevant words (allergies, intolerances, conditions, disabilities, diets): kept whatever the length.
SAFETY = Named(
    "safety", ANYWHERE, re.compile(
    r"\b(?:allerg\w*|intoleran\w*|anaphyla\w*|epipen|coeliac|celiac|diabet\w*|insulin|epilep\w*|seizures?|asthma\w*|"
    r"vegan|vegetarian|pesc[ae]tarian|flexitarian|kosher|halal|keto|paleo|gluten|lactose|dairy|plant based|"
    r"low (?:sodium|salt|sugar|carb|fat|fodmap)|pregnan\w*|"
    r"wheelchair|deaf|hard of hearing|hearing aids?|(?:visually|hearing) impaired|blind|colou?r ?blind|"
    r"partially sighted|disabled|disabilit\w*|adhd|autis\w*|dyslex\w*|"
    r"crohn'?s?|ibs|hives|migraines?|sober|pacemaker|blood thinners?|warfarin|cancer|chemo|dementia|alzheimer'?s?|"
    r"arthritis|hypertension|blood pressure|cholesterol|heart condition|bipolar|depression|anxiety|ptsd|ocd|"
    r"transplant|(?:hip|knee) replacement|heart attack|(?:had a|mini) stroke|kidney (?:disease|stones?|failure)|"
    r"thyroid|hypothyroid\w*|hyperthyroid\w*|metformin|inhaler|eczema|psoriasis|lupus|multiple sclerosis|"
    r"parkinson'?s|fibromyalgia|endometriosis|pcos|sleep apnoea|sleep apnea|insomnia|gout|an(?:a)?emi[ac]|"
    r"long covid|chronic (?:pain|fatigue|illness)|"
    r"antidepressants?|medication|diagnosed|sulfa|penicillin|shellfish|peanuts?|nuts?|tree nuts?)\b"
),
    matches=('allergic to peanuts', "I'm coeliac", 'type 1 diabetic', 'on blood thinners', "she's pregnant"),
    misses=('I love chocolate cake', 'a nice walk', "I'm a keen cyclist"),
)


# The words of a task at the keyboard: a first-person clause with one of them is about the task, not the user.
TECH = Named(
    "tech", ANYWHERE, re.compile(
    r"\b(?:error|errors|exceptions?|traceback|bug|bugs|code|functions?|methods?|scripts?|compiler?|compil\w+|"
    r"install\w*|packages?|modules?|npm|pip|git|commits?|branch|branches|merge|docker|containers?|"
    r"kubernetes|servers?|localhost|databases?|postgres|mysql|sql|query|queries|regex|api|endpoints?|cors|css|html|"
    r"div|flexbox|javascript|js|typescript|(?<!lymph )nodes?|react native|components?|segfault|segmentation|repos?|"
    r"deploy|(?<!slim )(?<!small )(?<!stocky )(?<!athletic )(?<!heavy )(?<!big )(?<!petite )build|"
    r"(?<!is )(?<!was )terminal(?! (?:illness|ill|diagnosis|condition|patient|care|stage|cancer))|console|"
    r"undefined|null|(?<!in the )loops?|variables?|arrays?|dicts?|dictionary|dictionaries|"
    r"strings?(?! (?:quartet|section|instruments?|lights|bag|beans?)\b)|json|csv|ssh|port(?! (?:wine|town|city|of)\b)|"
    r"permission denied|[45]0\d (?:error|on|code|status|response)|login|status code|http\w*|times out|"
    r"timeout|syntax|import(?! (?:business|export|company|duties|tax)\b)|directory|directories|folders?|browser|"
    r"(?<!car )(?<!bike )(?<!motorbike )(?<!motorcycle )(?<!plane )(?<!ski )(?<!skiing )(?<!cycling )crash\w*"
    r"(?! (?:course|diet|my (?:car|bike)|into))|"
    r"website|webpage|wordpress|(?<!pet )(?<!ball )(?<!royal )python|java|rust|excel(?! at\b)|spreadsheets?|"
    r"(?:(?<=a )|(?<=the )|(?<=this )|(?<=that )|(?<=excel )|(?<=sheets )|(?<=my ))formulas?"
    r"(?! (?:1|one|e|milk|fed|feeding)\b)|pivot|wifi|printer)\b"
),
    matches=("I'm getting a segfault", 'the function returns null', 'my python script crashes', 'the build fails'),
    misses=('I had a car crash last year', 'slim build, brown hair', "I'm a string quartet player",
            'I excel at chess'),
)


CODE = Named(
    "code", ANYWHERE, re.compile(
    r"[{}`\\]|</?\w+>|\w\(|\)\s*[:{;]|=>|==|!=|::|\b\w+_\w+\b|\b[a-z]{2,}[A-Z]\w*|;\s*$|"
    r"^\s*(?:def|class|import|from \w+ import|const|let|var|function|select|print|return)\b"
),
    matches=('x = foo(bar)', 'def main():', 'use `git rebase`', 'the snake_case name'),
    misses=("I'm allergic to cats.", 'My name is Kate.'),
    raw=True,
)


# Frames that make a first-person clause about the user even with a technical word: who they are, what they use.
IDENTITY = Named(
    "identity", ANYWHERE, re.compile(
    r"\bi (?:am|was) (?:a|an|the)\b|\b(?:i|we) (?:work|worked|use|used|prefer|love|like|hate|teach|study|studied|play|"
    r"played|sing|volunteer|coach|own|live|lived|grew up|was born)\b|\bwe (?:live|lived|own|run)\b|"
    r"\bi have been (?:a|an|coding|programming|working|using|writing|doing)\b|\bi am (?:learning|studying)\b|"
    r"\bmy (?:job|work|career)\b|\byears?\b|^(?:been|worked as|working as) (?:a|an)\b"
),
    matches=('I am a data engineer', 'we live in Leeds', 'I have been coding for years', 'my job is mostly SQL'),
    misses=('the query is slow', 'it throws an error'),
)


# A first-person clause about the conversation itself.
REMARK = Named(
    "remark", ANCHORED, re.compile(
    r"^not (?:what|(?:quite|really|exactly)(?! (?:a|an|into|keen|fond|big on|much of)\b)|it|that|right|correct|"
    r"true|helpful|the|sure|bad)\b|"
    r"^(?:i (?:have |just |actually )?)?changed my mind$|^(?:my|our) (?:bad|mistake|apologies|fault)$|"
    r"^you (?:know|remember) my (?:[\w']+ )?[\w']+(?: right| yeah| yes)?$|"
    r"^i (?:really |totally |completely |just |still |also |already |actually |even |kind of |kinda |sort of )*(?:"
    r"will be (?:right )?back|"
    r"(?:do not|don't|didn't|did not) (?:understand|get|follow|see|think so|know|care|mind|agree|like (?:that|this|it"
    r"|your))|(?:don't|didn't|did not|do not) read|"
    r"understand(?: now)?$|get it|see(?: now)?$|see (?:what|that|your|why|how|now)|agree|disagree|meant|mean|"
    r"ask(?:ed)? (?:for|about|you|what|how|why|if|a|that|this)|(?:was|am|wasn't|was not) (?:not )?(?:asking|talking)|"
    r"(?:never |didn't |hadn't |had not )?(?:thought|think|considered|realized|realised|knew) (?:of |about )?"
    r"(?:it|that|this)\b|(?:was |am )?(?:hoping|expecting|looking) for (?:something|more|less|a (?:shorter|"
    r"longer|simpler|better|different|clearer))|am (?:just )?(?:testing|messing with|playing with) you|"
    r"(?:will |would )?(?:try|check|test|look into|have a look|take a look|think about|get back|let you know|do that|"
    r"give it a)|tried (?:that|this|it|those|these|your|both|again|already)|"
    r"(?:expected|wanted|needed|was expecting|was hoping for)(?! to\b)|"
    r"(?:love|like|hate|adore|miss|trust|believe|thank|owe|appreciate) you\b|"
    r"am (?:so |really |very )?(?:glad|happy|grateful|thankful|relieved) (?:you|that you|for you|for your|to hear|"
    r"we)\b|"
    r"(?:am|was|were|may be|might be|could be|must be|stand) (?:totally |completely |so |probably )?(?:wrong|"
    r"mistaken|incorrect|corrected)\b|(?:am|was|were) (?:so |totally )?right(?:$| about| on| again| after all|"
    r" this time)|"
    r"am (?:so |very |really |pretty |quite |fairly |not |100% )?(?:sure|certain|positive|convinced) (?:that|this|"
    r"it|you|there|so|of (?:that|it|this)|about (?:that|it|this)|the (?:answer|reply|first|second|last))\b|"
    r"(?:like|love|hate|appreciate|prefer|liked|loved|hated|enjoyed) (?:that|this|it|your|yours|how|when you|the "
    r"way you|what you|the (?:answer|reply|response|first|second|last|other)|(?:the|that) (?:\w+ )?(?:one|ones|"
    r"version|option|options|draft|suggestion|wording)\b)|"
    r"hope (?:you|so|not|that|this|it)|am (?:not sure|confused|lost|not convinced|not following|asking)|"
    r"wonder\b|was (?:just )?(?:wondering|curious|kidding|joking)|have (?:a|another|one more|some|two|a few|a quick) "
    r"(?:question|questions|idea)|"
    r"(?:don't |do not )?need (?:help|you to|a hand|that|this|it|all that|all this|so much|the)|want you to|"
    r"would like you to|read (?:that|this|it|all|your)|misread|misunderstood|misheard|mistyped|misspel(?:led|t)|"
    r"made a typo|(?:sent|pasted|copied|attached) the wrong|(?:was|wasn't|was not|am not|haven't been) (?:very |being |"
    r"too )?(?:clear|specific|precise)|should have (?:said|been clearer|mentioned|specified|explained)|"
    # the task at hand, done or stuck: "I fixed it", "I got it working", "I tried restarting it"
    r"(?:have )?(?:fixed|solved|sorted|figured|worked|got|typed|found|managed|did) (?:it|that|this)(?: (?:out|working|"
    r"wrong|right|now|finally|myself|lol|haha|thanks|again))*$|tried (?:restarting|rebooting|reinstalling|updating|"
    r"clearing|turning|unplugging|resetting|deleting|refreshing|reloading|logging|signing)\b|"
    # choosing among the options of the reply: "I'll go with option b", "I can't decide between the two"
    r"(?:can't|cannot|couldn't|can not) (?:decide|choose|pick)(?: between (?:them|these|those|the two|both|the "
    r"options)| which one)?$|will (?:go with|take|pick|choose|use) (?:the|option|"
    r"that|this|it|both|number|a|b|c|\d)\b|like (?:both|neither|all of them|them both|none of them)$|"
    r"have (?:no|not a) (?:idea|clue)\b|(?:hate|love) (?:it )?when (?:that|this|you)\b|feel you$|"
    r"was thinking the same|(?:totally |completely |almost |nearly )?forgot(?: (?:about )?(?:that|this|it))?$|"
    # curiosity about a topic is a request: "I want to learn about black holes", "I'm curious about ..."
    r"(?:want|would like|wanna) to (?:learn|know|hear|read|understand) (?:more )?(?:about|how|why|what|if|whether)\b|"
    r"am (?:just )?(?:curious|intrigued) about\b|am (?:interested|curious) (?:in )?(?:how|why|what|whether)\b|"
    r"am just (?:browsing|looking|chilling|killing time|messing around|testing)|am trying to (?:remember|recall|think "
    r"of|understand|work out|figure out) (?:the|what|how|why|which|where|when|who|if|whether)\b)"
),
    matches=("I don't understand", 'I meant the other one', 'not what I meant', "I'll go with option b",
             'I fixed it'),
    misses=("I don't eat meat", 'I run marathons', 'I love hiking'),
)


# "I think / I said / I told you / I meant that ...": the frame says nothing, what follows may.
REPORTING = Named(
    "reporting", ANCHORED, re.compile(
    r"^i (?:really |honestly |just |already |also |do |don't |do not |didn't |did not |never )?"
    r"(?:think|guess|suppose|believe|feel like|feel that|reckon|can't believe|cannot believe|"
    r"said|say|told you|tell you|mentioned|mention|meant|know|mean|swear)(?: that)?(?:\s+|$)"
),
    matches=("I think I'm getting a cold", 'I told you I live in York', 'I guess'),
    misses=('I live in York', 'I thought about it'),
)


# "I read somewhere that ...", "I saw a documentary saying ...": a claim about the world, whoever "we" are in it.
HEARSAY = Named(
    "hearsay", ANCHORED, re.compile(
    r"^i (?:just |once |recently )?(?:(?:read|heard|saw|learned|learnt)(?: today| recently| yesterday| once)? that|"
    r"(?:saw|watched|read|heard) (?:a|an|this) (?:documentary|article|video|post|thread|study|book|paper|podcast|"
    r"programme|program) (?:saying|that|claiming|which said)|(?:read|heard|saw|seen) (?:somewhere|online|on (?:reddit|"
    r"twitter|tiktok|facebook|youtube|instagram|the news|the radio|tv|a forum|a podcast)|in (?:the news|a book|an "
    r"article|the paper))(?: that)?)(?:\s+|$)"
),
    matches=('I read somewhere that coffee is good for you', 'I saw a documentary saying we only use 10 percent',
             'I heard on the radio that it will rain'),
    misses=('I read a lot of fantasy', 'I saw my sister yesterday'),
)


# A claim about the world marked as one, with no one of the user's in it: "honey never spoils apparently", "fun fact:
# octopuses have three hearts", "supposedly it rains more in Rome than in London".
WORLD_CLAIM = Named(
    "world_claim", ANYWHERE, re.compile(
    r"^(?!.*\b(?:i|me|my|we|us|our)\b)(?:(?:fun fact|did you know|apparently|supposedly|reportedly|allegedly|"
    r"they say|scientists say|studies show)\b|.*\b(?:apparently|supposedly|reportedly|allegedly)$)"
),
    matches=("honey never spoils apparently", "fun fact octopuses have three hearts",
             "supposedly it rains more in Rome than in London"),
    misses=("apparently I'm allergic to cats now", "my sister is moving to Rome apparently", "honey never spoils"),
)


SOMEONE_ELSE = Named(
    "someone_else", ANCHORED, re.compile(
    rf"^(?:(?P<distant>(?:a|one|some|two|three) {OTHERS} of (?:mine|ours)(?:'s)?|(?:my|our) {OTHERS}'s)|"
    rf"(?:a|my|our|one of my) {OTHERS}|(?P<family>(?:my|our) (?:\w+ )?(?:{'|'.join(sorted(FAMILY))})(?:'s)?\b))"
    r"(?P<says> (?:always |once |used to )?(?:says|said|say|told me|told us|tells me|tells us|taught me|taught us|"
    r"thinks|thought|reckons|claims|swears|insists|read)(?: that)?)?"
),
    matches=('a friend of mine just got a husky', 'my colleague reckons it will rain', 'my mum says I should rest',
             "my neighbour's cat"),
    misses=('my cat is called Biscuit', 'I have a friend in Rome', 'my grandad is 90'),
)


# In a sentence about a task at the keyboard, "I need to ..." states the task ("... and i need to dedupe by email").
TASK_FRAME = Named(
    "task_frame", ANCHORED,
    re.compile(r"^i (?:really |just )?(?:need|want|have|am trying|would like|wanna|gotta|must) to\b"),
    matches=('I need to dedupe by email', 'I want to sort the list', 'I am trying to parse it'),
    misses=('I need a holiday', 'I love to sort things'),
)


# A passing state is not a fact about the user: "I'm back", "I'm so confused", "I'm done for today", "I'm going
# to sleep now", "gotta go grab lunch".
TRANSIENT = Named(
    "transient", ANCHORED, re.compile(
    r"^(?:i (?:am|will|have to|need to|must|should|gotta|better) )?(?:just |about to |going to |gonna |off to |"
    r"heading (?:off )?to |about to go to |going to go to |gonna go to |go to |go |to )*(?:sleep|bed|nap|take a nap|"
    r"rest|have a rest|lie down|log off|sign off|head off|head out|go|leave|take a break|shower|grab (?:a |some )?"
    r"(?:coffee|food|lunch|dinner|breakfast|a snack|a bite|a drink)|(?:heading|going|popping|stepping|logging|"
    r"signing|checking|nodding) (?:out|off)|going to (?:sleep|bed))"
    r"(?: now| soon| for now| for a bit| for a while| for the night| tonight| early| lol| haha| bye| then| too"
    r"| rn| right now)*$|"
    r"^i am (?:so |very |really |a bit |kinda |kind of |just |still |not |pretty |a little )*(?:confused|lost|stuck|"
    r"unsure|not sure)\b|"
    r"^i am (?:so |very |really |a bit |kinda |kind of |just |still |not |pretty )*(?:back|here|done|ready|sorry|"
    r"good|fine|ok|okay|great|confused|lost|stuck|curious|bored|tired|hungry|sleepy|busy|sure|kidding|joking|"
    r"listening|waiting|glad|happy|thinking|serious|in|out|home|off|alright|well|interested|impressed|excited)"
    r"(?: now| today| tonight| rn| right now| lol| haha| too| though| then| thanks| for now| for today)*$"
),
    matches=("I'm back", "I'm so confused", 'going to bed now', 'I have to go grab lunch', "I'm done for today"),
    misses=("I'm back in London", "I'm going to Spain in May", "I'm a nurse"),
)


# "If it helps, I'm vegan": an aside that only opens a statement.
ASIDE = Named(
    "aside", ANCHORED,
    re.compile(r"^if (?:it|that) (?:helps|matters|is relevant|makes a difference)$|^in case (?:it|that)"),
    matches=('if it helps', 'if that matters', 'in case it matters'),
    misses=('if I move to Paris', 'in case of rain'),
)


BARE_NAME = Named(
    "bare_name", ANYWHERE, re.compile(
    rf"^(?:(?:[Jj]ust |[Ii]t'?s ){NOT_NAMES}[A-Z][a-z]+(?: [A-Z][a-z]+)?(?:,? please)?|(?:[Jj]ust |[Ii]t'?s )?"
    rf"{NOT_NAMES}[A-Z][a-z]+(?: [A-Z][a-z]+)?,? (?:is fine|will do|works|is good))[.!]*$|"
    r"(?:,\s*|\bbut\s+)[A-Z][a-z]+,? (?:is fine|will do|works|is good|to you|to my friends)[.!]*$|"
    r"^[Nn]ot [A-Z][a-z]+, [A-Z][a-z]+[.!]*$|"
    rf"^(?:(?:[Hh]i|[Hh]ey|[Hh]ello|[Hh]iya),? )?(?:[Ii]t'?s|[Tt]his is|[Ii]'?m) {NOT_NAMES}[A-Z][a-z]+[.!]*$"
),
    matches=('Just Alex please', 'Kate is fine', 'not Katherine, Kate', "hey, it's Lou", 'Dr Patel, but Anil is fine'),
    misses=("It's Monday", 'the answer is fine', 'just checking', 'That is fine', 'Just Kidding', 'Monday works'),
    raw=True,
)


HYPOTHETICAL = Named(
    "hypothetical", ANCHORED, re.compile(
    r"^(?:if|suppose|supposing|imagine|hypothetically|assuming|assume|say|let's say|lets say|what if|pretend|"
    r"picture|in (?:a|an|some|another) (?:other |parallel |alternate |alternative |different )?(?:universe|world|life|"
    r"timeline|reality)|"
    r"for (?:argument's|the sake of argument)|let us pretend)\b"
),
    matches=("picture this", "in a parallel universe I'd be a chef", "suppose I have 3 apples", "imagine I'm a pirate",
             "what if I moved to Mars",
             'say I had a million pounds', "in some other life i'd be a marine biologist"),
    misses=('I suppose so', 'saying goodbye is hard', "I imagine it's cold there"),
)


# A request in the first person: "I need a recipe for ...", "I'd like a summary of ...".
WANTS = Named(
    "wants", ANCHORED, re.compile(
    r"^i (?:really )?(?:need|want|would like|would love|am looking for|could use) (?:a|an|some|the|any|more|another|"
    r"ideas|suggestions|advice|tips|recommendations|help)\b"
),
    matches=('I need a recipe for dinner', "I'd like a summary of this", 'I am looking for ideas'),
    misses=('I need to rest', 'I would like to live by the sea'),
)


# A correction of what the assistant has on record: "actually it's Kate, not Katherine".
CORRECTION = Named(
    "correction", ANCHORED, re.compile(
    r"^(?:actually|correction|no|scratch that|sorry|oops|wait|i mean|my bad|my mistake)\b.*\b\w+,? (?:not|rather than|"
    r"instead of) (?!it$|that$|this$|right$|correct$|true$|what\b|quite\b|really\b|exactly\b|helpful$)(?:the )?\w+$"
),
    matches=("actually it's Kate, not Katherine", 'no, I live in Leeds not York',
             'sorry, I meant tea rather than coffee'),
    misses=('actually I live in Leeds', 'no, not really'),
)


# "It reminds me why I love being a mom": in a clause about "it", the user is still the subject of a verb; in
# "that's what I needed" or "this is what I meant" the verb is about the reply.
SPEAKER_VERB = Named(
    "speaker_verb", ANYWHERE, re.compile(
    r"\b(?:i|we) (?!(?:needed|wanted|meant|mean|asked|said|expected|think|thought|guess|was looking|was hoping|"
    r"was asking|am asking|am looking|was expecting|was after|was going for|had in mind|know|knew|see|get|would|"
    r"will|can|could|should|do|did|don't|didn't)\b)[a-z']+"
),
    matches=('it reminds me why I love being a mom', "that's the car we bought"),
    misses=("that's what I needed", 'this is what I meant'),
)


# "My" of the conversation ("you misread my question") says nothing about the user.
STRONG_FIRST_PERSON = Named(
    "strong_first_person", ANYWHERE, re.compile(
    r"\b(?:my|our)\b(?! (?:question|questions|message|point|request|prompt|answer|reply|comment|last|previous|"
    r"words|typo)\b)|\b(?:ours|mine)\b|\b(?:i|we) (?:am|are|have|had|was|were)\b"
),
    matches=("that's my dog", 'this one is mine', "that's why I am here"),
    misses=('you misread my question', "that's what you said"),
)


# Subject dropped: "Moved to Berlin last month", "Been a plumber for 20 yrs", "Allergic to cats".
ELLIPTIC = Named(
    "elliptic", ANCHORED, re.compile(
    r"^(?:got (?!it\b|that\b|this\b|you\b|a (?:question|sec)\b)|went|started|finished|moved|bought|had|been|was "
    r"(?!it\b|that\b|this\b|he\b|she\b|there\b)|ran|lost|broke|quit|joined|graduated|adopted|visited|learned|learnt|"
    r"met|spent|signed|switched|grew|lived|worked|used to|studied|retired|flying|heading|going (?:to|back|on|home)|"
    r"moving|starting|working|living|studying|planning|hoping|learning|training|leaving|travell?ing|staying|"
    r"expecting|recovering|dealing|struggling|getting married|based|born|raised|originally|am (?!i\b)|"
    r"(?:would |'d )?rather (?:have|be|go|do|eat|stay|watch|read|live|work|take|pay|spend|drink)\b|"
    r"(?:can't|cannot|can not) get enough of\b|anything but (?!(?:that|this|it)\b)|"
    r"(?:coffee|tea|latte|flat white|cappuccino|espresso) (?:black|white|strong|weak|with|no|milky|decaf)\b|"
    # irregular pasts whose subject chat dropped: "flew to Berlin last week", "became a dad in March"
    r"(?:took|gave|made|wrote|drove|flew|rode|swam|sold|left|found|won|came|began|became|fell|kept|taught|caught|"
    r"brought|built|sent|hurt|wore|ate|drank|chose|woke|slept|held|led|paid|sang|threw|hit|beat|stole|spoke|tore|"
    r"froze|dug|ran) (?!(?:it|that|this|those|these|you|your|a (?:mistake|typo|point)|too|sense|up with|out (?:wrong|"
    r"weird|badly|fine|ok))\b)|"
    r"(?:play|sing|teach|work|coach|volunteer) (?:in|for|at|with) (?:a|an|the|my|our)\b|"
    r"(?:run|study|teach) (?:a|an|two|three|\d+|marathons|ultras|law|medicine|nursing|history|maths|english|music|"
    r"art|at|in|for|part time|full time)\b|go (?:to (?:the gym|church|mass|school|uni|college|university|work|yoga|"
    r"pilates|the mosque|temple|synagogue)|(?!(?:on|ahead|back|away)\b)\w+ing\b)|"
    r"from (?!(?:the|this|that|these|those|here|there|now|scratch|what|which|where|a|an|it|your|time)\b)[a-z]+|"
    r"work (?:as|in|at|for|from|nights|shifts)|live (?:in|with|near|alone|on|out|about|just|outside|close|by|right|"
    r"abroad|overseas|up|down|off|next|across|around|a|an|\d+|two|three|five|ten|walking|upstairs|downstairs|"
    r"together|apart)|love|hate|enjoy|prefer|"
    r"(?:drive|own|rent|speak|coach|volunteer|commute|cycle|swim|knit|bake|surf|sail|ski|climb|sew) (?:a|an|two|"
    r"three|\d+|for|at|in|to|by|every|each|most|on|fluent|some|mostly|about|around|weekly|daily)|"
    r"(?:don't|never|can't|cannot|rarely|always|usually|only) (?:eat|drink|smoke|like|have|own|drive|speak|live|work|"
    r"sleep|stand|handle|tolerate|take|do|swim|cook|sing|dance|ski|skate|ride|spell|whistle|digest|afford|walk|hear|"
    r"order(?! me\b)|choose|pick|buy|go for|book(?! me\b)|wear|watch|read|listen to|carry|"
    r"focus|concentrate)|(?:haven't|have not|hadn't) (?!(?:tried|checked|looked|read|seen|heard|started|decided|done|"
    r"finished|got|gotten|had|used|tested|run|received|noticed|thought|figured|understood|asked|found|been able)\b)"
    r"[a-z]+(?! (?:that|this|it|them|those|these|yet|one|any|your|a clue|time)\b)|"
    r"(?:so |very |really |pretty |quite |totally |kinda |a bit |deathly |absolutely |super |fairly |"
    r"terribly )*(?:unemployed|jobless|redundant|laid off|between jobs|out of work|on (?:maternity|paternity|sick|"
    r"parental) leave|furloughed|self employed|freelancing|skint|in debt|homeschooling|tone deaf|(?:scared|afraid|"
    r"terrified|frightened) of|fluent in|(?:bad|terrible|rubbish|hopeless|useless|awful) at|addicted to|hooked on|"
    r"new to|obsessed with|bad with)(?! (?:that|this|it|so|not|what|which)\b)|"
    r"not a (?:big )?fan|(?:big|huge) fan|fan of|favou?rite|fave|fav|faves|favs|name's|"
    r"(?:mom|mum|mother|dad|father) of|proud|happily|newly|single|married|divorced|engaged|widowed|retired|"
    r"home is|home's|hometown|going \w+ing|(?:can't|cannot|can not) wait|looking forward|"
    r"(?:never|always|already|once) (?:been|had|tried|done|seen|visited|met|liked|eaten|owned|lived|worked|played|"
    r"learned|wanted)|(?!(?:something|nothing|anything|everything|thing|morning|evening|during|spring|string|bring|"
    r"king|ring|sing|wing|ceiling|building|meaning|feeling|wedding|pudding|darling|being|sibling|thanksgiving|"
    r"according|interesting|amazing|boring|exciting|loving|caring)\b)[a-z]{2,}ing (?!.*\b(?:is|are|was|were|"
    r"can|will|would|makes?|sounds?|seems?|helps?|brings?|gives?)\b)|"
    r"(?:new|first|my first) (?:job|role|position|house|home|flat|"
    r"apartment|car|baby|puppy|kitten|day at)|(?:really |totally |so |not |not really |not much )?(?:into|keen on|"
    r"big on|fond of) [a-z]+|(?:\w+ ){0,2}(?:assistant|nurse|teacher|engineer|developer|manager|"
    r"designer|doctor|lawyer|student|intern|analyst|consultant|chef|driver|cleaner|carer|officer|technician|worker|"
    r"scientist|researcher|accountant|director|owner|founder)s? (?:at|in|for|with)\b|as an? \w+$|"
    r"have (?:a|an|two|three|four|five|\d+|no|my|got) "
    r"(?!look|great|good|nice|lovely|question|go|try|minute|sec)|"
    r"(?:might|may|will|would|could|should|gonna|wanna|going to|want to|hope to|plan to|hoping to|need to|have to|"
    r"got to|gotta) (?:move|go back|start|quit|retire|visit|buy|sell|switch|learn|apply|leave|travel|study|marry|"
    r"get married|have a baby|change jobs|emigrate|relocate)|"
    r"(?:slim|stocky|athletic|petite|curvy|heavy|skinny|broad|muscular|lean) (?:build|frame)|"
    r"(?:always |never |once |already |only |even )?"
    r"(?!(?:asked|answered|mentioned|explained|described|suggested|listed|mixed|confused|surprised|amazed|"
    r"impressed|used|need|feed|speed|seed|shed|bed|red|tired|formatted|saved|exported|converted|printed|marked|"
    r"tagged|flagged|labelled|labeled|uploaded|downloaded|rendered|displayed|returned|defined|declared|typed|"
    r"encoded|stored|cached|attached|pasted|copied|added)\b)[a-z]{3,}ed (?:to|from|with|in|at|on|for|into|"
    r"back|up|out|last|this|over|a|an|the|my|our|as)|[a-z]{3,}ed\b.*\b(?:yesterday|last|ago|this morning|in \d{4})|"
    r"changed (?:jobs|careers|schools|teams|roles|departments|banks|doctors|gp)|"
    r"(?:freelance|self employed|part time|full time|former|ex) [a-z]+|left handed|right handed|ambidextrous|"
    r"(?:short|near|long|far) sighted|off to [a-z]+ (?:next|this|tomorrow|on|in|for|soon)|"
    r"(?:night|day|early|late|double|long|weekend|evening|morning|\d+ hour) shifts?|on call|"
    r"(?:an? )?(?:big |first |job |final |driving |hospital |dentist |doctor's |doctors )?(?:interview|exam|exams|"
    r"appointment|surgery|operation|op|flight|wedding|driving test|viva|presentation|audition|gig|recital|race|"
    r"scan|check up|checkup|funeral|graduation|court date|shift) (?:tomorrow|today|tonight|this|next|on|in|at)|"
    r"(?:with |got )?(?:\d+|one|two|three|four|five|six) (?:\w+ )?(?:kids|children|sons|daughters|boys|girls|grandkids|"
    r"grandchildren|cats|"
    r"dogs|guinea pigs|rabbits|bunnies|hamsters|chickens|hens|horses|ponies|ferrets|budgies|parrots|goldfish|"
    r"tortoises|snakes|lizards|rats|mice|gerbils|goats|sheep|cows|pigs|ducks)|"
    r"(?:a )?(?:bad|dodgy|weak|sore|gammy|busted|broken|injured|stiff|painful|arthritic|torn|slipped|herniated|"
    r"pulled|fractured|bad) (?:knees?|back|shoulders?|hips?|wrists?|ankles?|neck|elbows?|hamstrings?|disc|"
    r"ligaments?|acl|achilles|foot|feet|hands?|eyes?|ears?|stomach|gut|heart|lungs?|teeth|tooth|ribs?|leg|legs|"
    r"arm|arms))\b"
),
    matches=('moved to Berlin last month', 'been a plumber for 20 yrs', 'live in a flat in York', 'fluent in Spanish',
             'huge fan of jazz', 'have two dogs'),
    misses=('got it', 'thanks a lot', 'the weather is nice'),
)


SELF_DESCRIPTION = Named(
    "self_description", ANCHORED, re.compile(
    rf"^(?!(?:the|this|that|these|those|your|his|her|their|its|what|such|which|whose|you|he|she|they|it)\b)"
    rf"(?:(?:not|never|no|really|very|much|of|exactly|quite|such|a bit|kind|sort|bit|total|huge|big|massive|a|an|"
    rf"more|definitely|strictly|totally|proper|real|true|complete|absolute|always|mostly|generally|basically) )*"
    rf"(?:(?:keen|avid|passionate|lifelong|long time|amateur|hobby|weekend|casual|devoted|die hard|diehard|"
    rf"aspiring|former|ex|recovering|budding|wannabe|occasional|self taught|trainee|qualified|certified|"
    rf"professional|retired|proud|closet|reformed|lapsed) (?:[a-z0-9'-]+ )?(?!\w+ment\b)[a-z'-]+(?:er|ist|ian|ic|"
    rf"ant|ent|or|ee|ess)s?(?: .*)?$|"
    rf"(?:(?!(?:a|an|for|the|to|of|with|in|on|at|or|from|about|as|your|his|her|their|our|this|that|any|some|every|"
    rf"dear|hello|hi|hey|fellow|good|great|best|greatest|worst|better|amazing|awesome|brilliant|poor|lucky|"
    rf"thanks|thank)\b)[a-z0-9'-]+ |stay at home |work from home ){{0,3}}(?:{ROLE_NOUNS})s?)"
    rf"(?: (?:at heart|by trade|through and through|at all|really|honestly|tbh|lol|haha|here|too|myself|though|"
    rf"actually|"
    rf"(?:of|at|in|for|from|since|by|with|and|who|on|to|\d+|\w+ing) .*))?$"
),
    matches=('huge Arsenal supporter', 'big sci-fi reader', 'not a morning person', 'retired firefighter, 62',
             'keen cyclist'),
    misses=('the best teacher', 'your manager', 'great answer'),
)


# A preference said as a choice, without subject or verb: "tea over coffee any day", "window seat every time".
CHOICE = Named(
    "choice", ANCHORED, re.compile(
    r"^(?!(?:the|this|that|these|those|your|his|her|their|its|what|which|you|he|she|they|it|same|game|start|move|"
    r"hand|think|turn|go|come|get|run|look|take|fall|pull|switch|hang|roll|tip|head|works|worked|happens|fails|"
    r"rain|snow|sun|storm|clouds)\b)"
    r"(?:[a-z0-9'-]+ ){0,3}[a-z0-9'-]+ (?:over (?!(?:the|a|an|this|that|my|our|your|it|there|here|zoom|skype|"
    r"facetime|phone|text|email|video|weekend|night|summer|winter|christmas|easter|time|years?)\b)"
    r"(?:[a-z0-9'-]+ ){0,3}[a-z0-9'-]+(?: (?:any day|every time|every day|"
    r"always|hands down|for me|any time|anytime|forever|all day|100 percent))?|(?:every (?:single )?time|all the way|"
    r"any day"
    r"(?: of the week)?|hands down|all day every day|for life|or nothing|or bust))$"
),
    matches=('tea over coffee any day', 'window seat every time', 'thrillers > romance'),
    misses=('the game is over', 'game over', 'switch over to the other one'),
)


# Subject dropped, and "did" opens it as if it asked: "did my undergrad in physics", "did a masters at LSE".
DID_EXPERIENCE = Named(
    "did_experience", ANCHORED, re.compile(
    r"^did (?:a|an|my) (?:\w+ )?(?:degree|masters|master's|phd|doctorate|ba|bsc|msc|mba|undergrad|undergraduate|"
    r"postgrad|apprenticeship|internship|residency|placement|gap year|year abroad|stint|tour|marathon|10k|5k|"
    r"triathlon|ironman|bootcamp|diploma|pgce)\b"
),
    matches=('did my undergrad in physics', 'did a masters at LSE', 'did a marathon in May'),
    misses=('did you see that', 'did it work'),
)


# Verbs of request that chat also uses for the user's work or pastime, subject dropped: "teach at a primary school",
# "play in a band on weekends".
WORK_PLACE = Named(
    "work_place", ANCHORED, re.compile(
    r"^(?:teach|play|work|study|coach|volunteer) (?:(?:at|in|for) (?:a|an|the|my|our|\w+ (?:school|team|club|band|"
    r"orchestra|choir|hospital|charity))|part time|full time|on weekends)\b"
),
    matches=('teach at a primary school', 'play in a band on weekends', 'work part time'),
    misses=('teach me French', 'play some music'),
)


# Where and how the user lives, said without "I": "there are 5 of us", "Lisbon is home now", "London born and bred",
# "currently in hospital with pneumonia", "on a gap year in Australia", "female, 34", "no kids, no pets".
SITUATION = Named(
    "situation", ANYWHERE, re.compile(
    r"^(?:there's|there is|there are|there're) (?:\d+|two|three|four|five|six|seven|eight|nine|ten) of us\b|"
    r"\b(?:is|has been|became|was) (?:now |my |our )?home\b(?! to\b)|\bborn and (?:bred|raised)\b|"
    r"^(?:in (?:hospital|rehab|recovery|therapy|my (?:first|second|third|final|last) year)|off (?:sick|work)|"
    r"on (?:a gap year|sabbatical|holiday|(?:\w+ )?leave|furlough|benefits|the dole|placement|secondment)|"
    r"back (?:in|at|"
    r"home) (?!(?:the|a|an) (?:answer|reply|question|topic|point|day)\b))\b|"
    r"^(?:in year \d+(?: at (?:school|college))?|at (?:school|uni|university|college|sixth form))$|"
    r"^(?:nearly|almost|turning|turned|just turned) \d{1,3}\b(?! (?:degrees|percent)\b)|"
    r"^(?:male|female|non binary|nonbinary|trans (?:man|woman))$|"
    r"^no (?:kids|children|pets|car|siblings|partner)\b(?! (?:policy|allowed|rule)s?\b)|^semi retired\b|"
    r"^(?:a |an )?(?:\d+|half an?|an?|one|two|three|ten|twenty|forty) ?(?:min|mins|minute|minutes|hour|hours|hr|hrs|"
    r"mile|miles|km)? commute\b|"
    r"^(?:down|up|lost|gained|dropped) (?:\d+|a) ?(?:lbs?|pounds|kgs?|kilos?|stone|st)\b|"
    r"^(?:a bit |quite |very |slightly )?(?:overweight|underweight|obese|unfit|out of shape|menopausal|"
    r"perimenopausal|postpartum|infertile)\b"
),
    matches=('there are 5 of us', 'Lisbon is home now', 'London born and bred', 'on a gap year in Australia',
             'no kids, no pets', 'turned 40 last week', 'on mat leave til october', 'down 20 lbs since january'),
    misses=('there are 5 of them', 'no kids allowed', 'on the table'),
)


OWN_WITHOUT_MY = Named(
    "own_without_my", ANCHORED, re.compile(
    rf"^{OWN_BEING}(?:'s \w+| (?:named|called) [a-z]+$| (?:is|was|has|had|won't|can't|doesn't|didn't|isn't|wasn't|"
    rf"keeps|kept|starts|started|"
    rf"lives|loves|hates|turns|turned|needs|gets|got|goes|went|will|just|still|always|never|seems|sleeps|eats|barks|"
    rf"cries|snores)\b)|"
    rf"^{OWN_BODY}(?:'s {BODY_STATE}| (?:hurts|aches|flared|keeps|won't|has been|is {BODY_STATE})\b)|"
    r"^(?:kids|children|parents|in laws|twins|grandparents|step kids|stepkids|periods|knees|eyes|ears) "
    r"(?:are|were) (?:\d+|both|all|divorced|separated|visiting|staying|away|off|home|grown|at|in|coming|really|"
    r"getting|still|with)\b|^(?:kids|children|twins|boys|girls) (?:turn|turned|turning|just turned) \d+\b|"
    # "kids go to Greenfield Primary": a school of their own, while "kids go to school at 5 in France" is the world's
    r"^(?:kids|children|twins|stepkids|step kids) (?:(?:both )?(?:go|went) to|attend|attended) "
    r"(?!school\b|bed\b|sleep\b)(?:[a-z']+ ){1,3}(?:primary|secondary|school|academy|high|elementary|middle|"
    r"nursery|college|montessori)\b"
),
    matches=("kids go to Greenfield Primary", "cat's called Biscuit", "toddler won't sleep through",
             "knee's been bad since the marathon", "kids are 4 and 7", "parents are divorced",
             "twins turn 8 in june", "kids are with their dad every 2nd weekend", "parrot named Mango"),
    misses=("kids are expensive these days", "cats are great", "back to the topic", "kids go to school at 5 in France"),
)


# The user's people and pets with a determiner for "my": "the kids are at school", "both kids are at school", "the
# two dogs", "all three boys" (boys and girls only counted: "the boys" may be anyone's), never "all kids".
_COUNT = r"(?:two|three|four|five|six|\d+)"
_DETERMINER = rf"(?:the|both|both of the|both the|all the|all of the|the {_COUNT}|all {_COUNT}(?: of the)?)"
OWN_BY_DETERMINER = Named(
    "own_by_determiner", ANCHORED,
    re.compile(rf"^{_DETERMINER} (?:{'|'.join(sorted(FAMILY | PETS))})(?:'s)?(?= |$)|"
               rf"^(?:both|the {_COUNT}|all {_COUNT}) (?:boys|girls|grandkids|little ones)\b"),
    matches=("the kids are at school", "both kids are at school", "the two dogs are sick", "all three boys play",
             "both twins start school in September", "the dog's sick again"),
    misses=("all kids need sleep", "the boys at work", "kids are expensive", "the dogma of it"),
)


# A habit said without subject or verb: "yoga three times a week", "gym every morning at 6".
HABIT = Named(
    "habit", ANCHORED, re.compile(
    r"^(?!(?:the|this|that|these|those|your|his|her|their|its|what|which|you|he|she|they|it|same|game|works|"
    r"happens|fails|rain|snow|error|errors|crash|crashes|bug|meeting|meetings|update|updates|backup|backups)\b)"
    r"(?:[a-z0-9'-]+ ){0,4}[a-z0-9'-]+ (?:(?:every|most) (?:single |other )?(?:days?|mornings?|evenings?|nights?|"
    r"weeks?|"
    r"weekends?|months?|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:once|twice|\w+ times) a (?:day|week|month|year)|"
    r"on (?:weekends|weekdays|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|daily|weekly)\b"
),
    matches=('yoga three times a week', 'gym every morning at 6', 'swim on weekends', 'take the 99 b line most days'),
    misses=('the meeting every monday', 'backups every night', 'it happens every day'),
)


UPDATE = Named(
    "update", ANYWHERE, re.compile(r"\b(?:anymore|any more|no longer|for good(?! measure))\b|^(?:correction|update)\b"),
    matches=("I don't eat meat anymore", 'no longer vegan', 'correction: I live in Leeds', 'quit smoking for good'),
    misses=('for good measure', 'more questions?'),
)


NAME = Named(
    "name", ANYWHERE, re.compile(
    r"\b(?:call me(?! (?:when|if|back|later|crazy|tomorrow|tonight|a|an|after|before|asap|any ?time|old "
    r"fashioned|whatever|maybe|now|soon|sometime|whenever|every|daily)\b)(?! (?:at|on) (?!\d))|"
    r"calls me(?! (?:every|each|daily|on|at|when|twice|once|back|crazy|names|out)\b)|"
    r"my name is|my name's|my names|name's|i go by|i am called|i'm called|known as|"
    r"address me as|refer to me as|pronounced|spelled|spelt|with (?:one|two|a double|an?) [a-z]$|my pronouns|"
    r"pronouns are|they them|she her|he him|she they|he they)\b|^(?:it's|this is) [a-z]+ here$|^go(?:es)? by\b"
),
    matches=('call me Kate', 'my name is Ana', 'I go by Bex', 'my pronouns are they/them', 'everyone calls me Bex'),
    misses=('call me when you can', 'call me back later', "what's his name?"),
)


# "A laptop for a graphic designer like me": the question describes the user.
LIKE_ME = Named(
    "like_me", ANYWHERE, re.compile(r"\blike (?:me|myself)\b"),
    matches=('a laptop for a designer like me', 'a plan for someone like myself'),
    misses=('I like memes', 'a laptop like this one'),
)


# A safety word in a question is the user's only with the user as its owner ("I'm pregnant", "my allergy").
# Or with the user as the subject chat dropped: "On blood thinners, anything I should avoid?", "Is it safe to fly at
# 30 weeks pregnant?".
SAFETY_OWNER = Named(
    "safety_owner", ANYWHERE, re.compile(
    r"\b(?:i|we) (?:am|are|have|had|was|were)\b|\bmy\b|^(?:allergic|intolerant|diabetic|asthmatic|epileptic|"
    r"coeliac|celiac|pregnant)\b|\b(?:on|taking) (?:blood thinners?|warfarin|insulin|antidepressants?|chemo|"
    r"medication|meds)\b|\b\d+ (?:weeks|months) pregnant\b"
),
    matches=("I'm allergic", 'my allergy', 'on blood thinners, anything to avoid?', '30 weeks pregnant'),
    misses=('are peanuts allergens', 'is aspirin a blood thinner'),
)


CHILD_BY_AGE = Named(
    "child_by_age", ANYWHERE,
    re.compile(r"\b(?:my|our) (?:(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten) (?:year|month|week)s? old|"
               r"\d+ ?(?:yo|yr old|y o|mo|month old))\b"),
    matches=("my 3 year old won't eat", 'our 6 month old', 'my 4yo'),
    misses=('my 3 year plan', 'a 3 year old car'),
)


# A predicate that chat says without its subject: "allergic to nuts", "diagnosed with asthma in May".
PREDICATE = Named(
    "predicate", ANCHORED,
    re.compile(r"^(?:\w+ )?(?:(?:allergic|intolerant|sensitive) to|diagnosed with|pregnant with)\b"),
    matches=('allergic to nuts', 'diagnosed with asthma in May', 'severely allergic to bees'),
    misses=('allergies are common', 'a diagnosis of asthma'),
)


# What the user asks to be edited, checked or translated is material, not a statement: "proofread: I has been ...",
# "grammar check pls: my husband and me went ...", "is this correct: ...". The sentence is read up to the colon.
MATERIAL = Named(
    "material", ANCHORED,
    re.compile(
        r"^(?:(?:can|could|would) you |please |pls |plz )?(?:(?:please |pls )?(?:proof ?read|grammar check|"
        r"spell ?check|check|fix|correct|translate|rephrase|rewrite|reword|paraphrase|polish|improve|edit|"
        r"tidy up|clean up|shorten)\b[^:\n]{0,40}|is (?:this|that|it|the following) (?:sentence |phrase |text )?"
        r"(?:correct|right|grammatical|good english|ok|okay|natural|proper english)[^:\n]{0,20}|"
        r"(?:grammar|spelling|punctuation)(?: check)?[^:\n]{0,20}|how (?:do|would) (?:you|i) say)[?]?\s*:\s*(?=\S)",
        re.I),
    matches=("proofread: I has been working", "grammar check pls: my husband and me went", "is this correct: I am",
             "can you check the grammar: I has went to school", "translate to French: I live in Lyon"),
    misses=("I proofread books for a living", "check this out, I got a new job", "note: I'm vegan"),
    raw=True,
)
# Words in quotation marks, two or more of them, are someone's line or a text to work on: "'I'm the king of the
# world!' best movie line ever", "\"we all live in a yellow submarine\", which album?".
QUOTED = Named(
    "quoted", ANYWHERE,
    re.compile(r"(?<!\w)[\"“][^\"”\n]*\s[^\"”\n]*[\"”]|(?<!\w)['‘](?=\S)[^\n]*?\s[^\n]*?(?<=\S)['’](?!\w)"),
    matches=('"I think therefore I am" said Descartes', "'I'm the king of the world!' best line", "“I have a dream”"),
    misses=("call me 'Bex'", "I'm vegan and I don't eat eggs", "my kids' school"),
    raw=True,
)
# Sarcasm says the opposite of a fact: "oh sure, I just LOVE waiting two hours", "yeah because I'm definitely a
# millionaire lol", "great, another Monday, my favourite thing in the world", "I *adore* waiting on hold", "/s".
SARCASM = Named(
    "sarcasm", ANYWHERE,
    re.compile(
        r"(?:^|\s)/s\s*$|\*(?:love|adore|enjoy|like)\w*\*|(?-i:\bjust (?:LOVE|ADORE)\b)|"
        r"^(?:(?:oh|ah|yeah|well),? )?(?:sure|great|yay|wow|fantastic|wonderful|brilliant|perfect|lovely|right|"
        r"of course)\b[,!.]+ .*\b(?:(?:just|really|absolutely|totally) (?:love|adore|enjoy)|favou?rite thing|"
        r"best (?:part|thing) of my|definitely|totally|obviously|clearly|can't wait)\b|"
        r"^(?:(?:honestly|btw|tbh|fyi|lol|ok|okay|so|and|but|also|well)[,:]?\s+)*"
        r"(?:(?:oh|ah),? )?(?:yeah|sure|oh),? (?:because|cause|cos|coz|as if)\b|"
        # lower case loses the capitals: "oh yeah i just love mondays, best day ever"
        r"\b(?:just|really|totally|absolutely) (?:love|adore|enjoy) (?:mondays?|waiting|queues?|traffic|taxes|"
        r"the dmv|being on hold|being ignored|meetings|paperwork|commuting)\b.*\b(?:best|favou?rite|greatest)\b|"
        # "oh i just love when tram breaks down in rain": loving a thing going wrong
        r"\b(?:just|really|totally|absolutely) (?:love|adore|enjoy) (?:it )?when\b[^.!?]*\b(?:breaks? down|broke down|"
        r"is late|runs? late|(?:is|gets?|got) cancell?ed|gets? stuck|crash(?:es)?|fails?|(?:is|gets?) delayed)\b|"
        r"^oh (?:great|sure|joy|goody|wonderful|fantastic|brilliant|perfect|lovely)\b[,!.]+ .*\b(?:love|adore|enjoy)\b|"
        r"\b(?:favou?rite|best) thing in the (?:whole )?world\b(?=.*\b(?:another|again|waiting|queue|traffic|"
        r"monday|taxes|dmv|hold)\b)|"
        # the marks that turn what comes before into its opposite: "..., shocker", "... and pigs fly"
        r"[,.!]\s*(?:shocker|what a (?:surprise|shock)|big surprise|surprise surprise|color me shocked|"
        r"colour me shocked)[.!]*\s*$|\b(?:and|when) pigs (?:fly|might fly)\b|\bsaid no one ever\b|"
        r"^love (?:that|this) for (?:me|us)\b",
        re.I),
    matches=("oh sure, I just LOVE waiting two hours at the DMV", "yeah because I'm definitely a millionaire lol",
             "great, another Monday, my favourite thing in the world", "oh I just *adore* waiting on hold",
             "I love meetings /s", "oh great, I love being ignored", "btw yeah because I'm totally rich",
             "oh yeah i just love traffic, best part of my day", "the bus was late again, shocker",
             "i just love it when the printer breaks down on a deadline",
             "the kids tidied up without being asked, and pigs fly", "love that for me. truly"),
    misses=("shocker of a day at work, my boss quit", "great, I'm moving to Lisbon next month",
            "I just love being a mum", "yeah I'm vegan because of my health",
            "my favourite thing in the world is my dog", "i just love when my son reads to me before bed"),
    raw=True,
)
# What the stars, the cards or a fortune say of the user is no fact about them: "my horoscope says I'll meet someone",
# "according to my tarot reading I'm going to be rich".
FORTUNE = Named(
    "fortune", ANYWHERE,
    re.compile(r"\b(?:(?:my|the|today's|this week's|this month's|a) (?:\w+ )?(?:horoscope|stars|star sign|tarot|"
               r"tarot reading|tarot cards|cards|fortune|fortune cookie|fortune teller|palm reading|reading|psychic|"
               r"astrologer|astrology app|birth chart) (?:says|said|reckons|predicts|predicted|told me|tells me|"
               r"claims|thinks)|according to (?:my|the) (?:\w+ )?(?:horoscope|stars|tarot|cards|fortune|psychic|"
               r"astrologer|birth chart|star sign))\b"),
    matches=("my horoscope says I'll meet someone new", "according to my horoscope I'm going to be rich",
             "the tarot cards told me I'd travel"),
    misses=("my horoscope app is fun", "I'm a Scorpio", "my doctor says I'm fine"),
)
# A daydream: what the user would do with a lottery win, or a wish they mark as one ("..., who knows", "a girl can
# dream") is no plan of theirs.
DAYDREAM = Named(
    "daydream", ANYWHERE,
    re.compile(r"\bwin(?:s|ning)? (?:the|a) (?:lottery|lotto|jackpot|euromillions|powerball)\b|"
               r"\b(?:who knows|a (?:girl|guy|man|woman|boy) can dream|one can dream|i can dream|in my dreams|"
               r"dream on)\W*$"),
    matches=("maybe one day we'll win the lottery and get a pool, who knows", "sure i'll just win the lottery",
             "a villa in tuscany, a girl can dream"),
    misses=("my uncle won the lottery in 1998", "I play the lottery every week", "we might move to Leeds next year"),
)
# A question asked for someone else is theirs: "asking for a friend: how do you get a toddler to stop biting".
FOR_SOMEONE_ELSE = Named(
    "for_someone_else", ANCHORED,
    re.compile(r"^(?:i am |just )?(?:asking|this is|it is|it's|its|question) for a (?:friend|mate|colleague|coworker|"
               r"co worker|neighbou?r|relative|pal|buddy)\b"),
    matches=("asking for a friend: how do you get a toddler to stop biting", "this is for a friend, she's vegan"),
    misses=("I'm asking for a raise", "a friend of mine is vegan", "asking for advice on my knee"),
)
# A chant, a song or a test of the keyboard: a word three times running ("doo doo doo", "no no no"), or a line that
# is one word said twice ("testing testing").
CHANT = Named(
    "chant", ANYWHERE,
    re.compile(r"\b([a-z]+) \1 \1\b|^([a-z]+) \2$"),
    matches=("baby shark doo doo doo doo", "we dont talk about bruno no no no", "testing testing"),
    misses=("I'm very very tired", "my son is 7", "bye"),
)
# A story the user writes, a game they run: what its people are and do is not the user's ("in my novel the heroine
# is a baker").
FICTION = Named(
    "fiction", ANCHORED,
    re.compile(r"^(?:in|for) (?:my|our|the|a) (?:\w+ )?(?:novel|story|book|screenplay|script|short story|fanfic|"
               r"fan fiction|comic|play|campaign|game|dnd campaign|d d campaign|world|universe|manuscript|draft)\b"),
    matches=("in my novel the heroine, Anna, is a baker in Prague", "for my story my main character is a nurse"),
    misses=("in my job I write novels", "I'm writing a novel", "my novel comes out in May"),
)
# The user's own events named without "my", with when or where they are: "the recital is the day after tomorrow",
# "the wedding's in Lisbon, 3rd of May", "Flight to Seoul leaves at 6:40 on Saturday", "Dentist thursday at 10",
# "shift starts at 6 tomorrow", "bday is 11 March". A public event ("the world cup final is on sunday") is none.
_EVENTS = (r"(?:wedding|recital|interview|job interview|exam|exams|final exam|test|driving test|appointment|surgery|"
           r"operation|op|flight|shift|dentist|doctor|doctor's|doctors|gp|check ?up|scan|funeral|graduation|viva|"
           r"presentation|audition|gig|race|marathon|court date|hearing|party|birthday|bday|anniversary|move|"
           r"moving day|trip|holiday|vacation|honeymoon|meeting|conference|deadline|due date|results|first day|"
           r"concert|recital|play date|playdate|parents evening|school run|physio|therapy|session|lesson|class|"
           r"induction|orientation|defence|defense|hen do|stag do|baby shower|christening|bar mitzvah|bat mitzvah|"
           r"report|essay|assignment|thesis|dissertation|rent|tax return|taxes|last day|last shift|visa|lease|"
           r"school play|sports day|open day|photo day|picture day|school photos|inset day|field trip|school trip|"
           r"parent teacher (?:interviews?|conferences?|meeting|evening)|tryouts?|trials?|pickup|drop off)")
# Who of the user's comes and goes: "parents arrive on wednesday", "the in-laws visit this weekend".
_COMING = (r"(?:parents|in[- ]?laws|grandparents|folks|family|kids|cousins|mum|mom|dad|sister|brother|son|daughter|"
           r"wife|husband|partner|boyfriend|girlfriend|nan|gran|grandma|grandpa)")
_WHEN = (r"(?:today|tomorrow|tonight|day after tomorrow|next|this|on|at|in|from|until|till|by|end of|monday|tuesday|"
         r"wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|sat|sun|weekend|morning|evening|"
         r"afternoon|noon|midday|january|february|march|april|may|june|july|august|september|october|november|"
         r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|\d{1,2}(?:st|nd|rd|th)?|\d{1,2} \d{2}|"
         r"\d{1,2}(?:am|pm))")
OWN_EVENT = Named(
    "own_event", ANCHORED,
    re.compile(rf"^(?:the |our |my |[a-z]+'s )?(?:\w+ )?{_EVENTS}(?:'s)?(?: (?:to|in|with|for|before|of|at) "
               rf"(?:the |my )?"
               rf"[a-z]+(?: [a-z]+)?)?"
               rf"(?: (?:is|was|will be|starts|started|begins|leaves|lands|got moved|got postponed|got cancelled|"
               rf"moved|has been moved|went|goes|got|finishes|ends|are|were|is due|are due|due))?"
               rf"(?: (?:really|all|so|pretty|quite))?(?: the)? {_WHEN}\b|"
               # "tomorrow night concert", "saturday: dentist at 10": the day first
               rf"^(?:today|tomorrow|tonight|this weekend|next week|(?:this |next )?(?:monday|tuesday|wednesday|"
               rf"thursday|friday|saturday|sunday))(?: (?:morning|afternoon|evening|night))?[:,-]? (?:the |my |our )?"
               rf"{_EVENTS}\b|"
               rf"^(?:the |our |my )?{_COMING} (?:arrives?|visits?|comes?|lands?|leaves?|flies in|fly in|"
               rf"(?:is|are) (?:coming|visiting|arriving|flying in|staying))\b(?: [a-z]+){{0,3}}? {_WHEN}\b|"
               rf"^(?:the |our |my )?(?:\w+ )?{_EVENTS}(?:'s)? (?:went|is going|was|were)(?: really| so| pretty|"
               r" very)? (?:well|badly|great|fine|ok|okay|awful|terribly|amazing|brilliantly)\b"),
    matches=("the recital is the day after tomorrow", "the wedding's in Lisbon, 3rd of May", "Dentist thursday at 10",
             "Flight to Seoul leaves at 6:40 on Saturday", "shift starts at 6 tomorrow", "bday is 11 March",
             "interview went really well", "essay is due on friday", "tomorrow night gig", "saturday: dentist at 10",
             "the in-laws visit this weekend", "last day before the holidays is the 18th",
             "Mia's hockey tryouts are this sunday at 7am"),
    misses=("the world cup final is on sunday", "weddings are expensive", "the flight was cheap",
            "a meeting is a waste of time", "weather tomorrow in paris", "tomorrow is another day",
            "parents are the worst", "the match is on saturday"),
)


# A date ahead with the user's household named without "my": "flu shots for the whole family tomorrow morning", "the
# car goes into the shop a week from tomorrow", "the 5yo starts swimming on monday". Either alone is not enough:
# "daylight saving ends this sunday" is the world's, "the car is the easiest way" a remark.
_AHEAD = (r"(?:today|tomorrow|tonight|day after tomorrow|(?:this|next|on|coming) (?:week|weekend|month|monday|tuesday|"
          r"wednesday|thursday|friday|saturday|sunday)|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
          r"(?:a|one|two|three|\d+) (?:days?|weeks?|fortnight) from|in (?:a|one|two|three|four|\d+) (?:days|weeks))")
_HOUSEHOLD = (r"(?:the (?:whole )?family(?! of\b)|the (?:kids|boys|girls|twins|baby|little ones?|toddler|dog|dogs|"
              r"cat|cats|puppy|car|van|house|flat|boiler)|the \d+ ?(?:yo|y o|yr old|year old))")
OWN_DATED = Named(
    "own_dated", ANYWHERE,
    re.compile(rf"^(?=.*\b{_AHEAD}\b)(?=.*\b{_HOUSEHOLD}\b)"),
    matches=("flu shots for the whole family tomorrow morning at the pharmacy",
             "the car goes into the shop a week from tomorrow for the brakes", "the 5yo starts swimming on monday"),
    misses=("daylight saving ends this sunday", "the car is the easiest way to get there",
            "the family of the bride arrives tomorrow", "the world cup final is on sunday"),
)


def _alternation(words: tuple[str, ...]) -> str:
    """The words as one group of a pattern, the longest first so that "thanks a lot" is read before "thanks"."""
    return "(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")"


# The words that only frame a sentence, at its start ("honestly, ...", "btw ...") or its end ("..., thanks").
FRAME = Named(
    "frame", ANYWHERE,
    re.compile(rf"^(?:{_alternation(FILLERS)}\b[,:]?\s+)+|[,.!]?\s+{_alternation(COURTESIES)}[.!]*$", re.I),
    matches=("honestly, it's Kate", "btw just Alex please", "Alex is fine, thanks", "tbh not Katherine, Kate"),
    misses=("actually it's Kate, not Katherine", "Sophie is fine", "sorry, Kate", "thanksgiving plans"),
    raw=True,
)

ALL = tuple(value for value in dict(globals()).values() if isinstance(value, Named))
