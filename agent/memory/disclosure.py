"""Whether a line of chat discloses something about the user: the grammar behind the write gate.

A turn is cut into sentences and each sentence into clauses. A *statement* clause discloses when the user is its
subject ("I'm vegan", "we live in York", "my daughter is 6"), when chat has dropped that subject ("Allergic to
cats.", "Moving to Lisbon next month", "nurse here"), or chat has dropped the verb too: a description ("Huge Arsenal
supporter"), a choice ("tea over coffee any day"), a habit ("yoga twice a week"), a situation ("there are 5 of us",
"Lisbon is home now", "on a gap year"); when a family member is its subject ("Mom is in the hospital again"), or
when it says something safety-relevant (an allergy, an intolerance, a condition, a diet), whatever its length. It
does not when it is about the conversation ("that's wrong", "I think you misunderstood", "I'll go with option b"),
about a task at the keyboard ("I'm getting a segfault when I run it"), a passing state ("I'm back"), a hypothesis
("suppose I have 3 apples"), hearsay about the world ("I read somewhere that ...") or someone else who is not family
("a friend of mine just got a husky", "my colleague reckons ..."). A *question* or *request* (an order about how to
reply among them: "be more blunt with me") discloses only through what it says on the way: a clause
that is a disclosing statement ("..., I'm diabetic?"), the user's own people, pets, body or events ("how do I get
my daughter to sleep?"), or a first-person safety fact ("how do I tell my boss I'm pregnant"); a question that
asks the assistant to recall ("where do I live?", "when is my exam?") discloses nothing, and neither do the
words that frame a request ("near where I live", "order me my usual coffee").

Pure and deterministic: word lists and regular expressions, no model. What is kept is the disclosing sentences in
the user's own words (a disclosing question whole, since the question is the only form its disclosure has), so a
statement is never rewritten and the questions and remarks around it are not stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[a-z0-9][a-z0-9']*")
# Sentences end at . ! ? or a line break; an abbreviation's dot does not end one ("Dr. Okafor", "e.g. tea").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_ABBREVIATION = re.compile(r"\b(?:dr|mr|mrs|ms|st|prof|jr|sr|vs|etc|e\.g|i\.e|approx|no|mt|ft|lb|lbs|oz)\.$", re.I)
# Clauses: at punctuation, at a dash, and before a conjunction that opens a new statement.
_CLAUSE_END = re.compile(
    r"\s*[,;:()]\s*|\s+[-–—]+\s+|\s+(?=(?:but|though|although|because|cause|cuz|bc|since|whereas|plus)\s)"
    r"|\s+(?=and (?:i|i'm|i've|my|we|we're|our)\s)"
)
# Chat spells contractions without the apostrophe and shortens words; the grammar below reads one spelling.
_SPELLINGS = {
    "im": "i'm", "ive": "i've", "dont": "don't", "cant": "can't", "didnt": "didn't", "doesnt": "doesn't",
    "isnt": "isn't", "wasnt": "wasn't", "thats": "that's", "whats": "what's", "hows": "how's", "wheres": "where's",
    "its": "it's", "youre": "you're", "u": "you", "ur": "your", "pls": "please", "plz": "please", "wont": "won't",
    "havent": "haven't", "arent": "aren't", "shouldnt": "shouldn't", "couldnt": "couldn't", "whos": "who's",
    "lets": "let's", "theyre": "they're", "hes": "he's", "shes": "she's", "iam": "i'm", "whens": "when's",
}
_EXPANSIONS = {"i'm": ["i", "am"], "i've": ["i", "have"], "i'd": ["i", "would"], "i'll": ["i", "will"],
               "we're": ["we", "are"], "we've": ["we", "have"], "we'll": ["we", "will"], "we'd": ["we", "would"]}

_FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves".split())
_POSSESSIVE = frozenset("my our".split())
# Discourse words that open a clause without being its subject: "btw", "actually", "update:", "ok so".
_OPENERS = frozenset(
    """btw fyi actually also well oh ok okay so like honestly tbh anyway anyways basically lol haha hah yeah yes yep
    no nope nah hmm ugh um uh plus update correction news big and but then now just still finally recently currently
    really since because cause cuz bc though although hey hi hello hiya cheers thanks thank ps heh omg wow sadly
    luckily unfortunately apparently wait sorry oops whoops officially""".split()
)
_SMALL_TALK = frozenset(
    """hi hello hey hiya yo morning evening afternoon good night bye goodbye goodnight thanks thank you thx ty cheers
    ta ok okay k sure cool great nice awesome perfect fine yes yeah yep yup no nope nah lol lmao haha hah hehe wow
    sounds got it alright right indeed agreed exactly totally true interesting amazing wonderful excellent lovely
    appreciate that's that is so very much a lot again there all see later soon talk to care too and oh ah hmm well
    me mate brb np welcome please why not one more thing let think sorry omg gotcha same here also ikr""".split()
)
_GREETINGS = frozenset("hi hello hey hiya thanks thank bye goodbye wow congrats congratulations aww omg yay".split())
_WH = frozenset("what what's which who who's whom whose when when's where where's why why's how how's".split())
# These open a question whatever follows ("is oatmeal a good breakfast"); the other auxiliaries only before a
# subject, since chat drops the subject of a statement ("might move back to Ireland", "can't drive").
_ASKING_AUX = frozenset("is are am do does did can shall has isn't aren't".split())
_AUX = _ASKING_AUX | frozenset(
    """was were could would should will may might have wasn't don't doesn't didn't can't couldn't wouldn't
    shouldn't won't haven't hasn't""".split()
)
_SUBJECTS = frozenset(
    "i you it he she they we there this that these those the a an my your his her their our any anyone anybody "
    "someone something anything people dogs cats".split()
)
_REQUEST_VERBS = frozenset(
    """tell give show help write explain suggest recommend list make find summarize summarise translate describe
    create draft compose generate please rewrite rephrase check fix order pick book plan quiz teach convert compare
    calculate name remind read play imagine act pretend continue repeat define correct edit proofread shorten expand
    send search look try keep stop start use answer respond reply brainstorm outline review improve be talk
    polish format critique evaluate assess analyse analyze debug optimise optimize refactor simplify clarify grade
    rate ignore disregard""".split()
)
_SPEECH_VERBS = frozenset("speak talk write reply respond answer explain listen chat".split())
# A question that asks the assistant to recall what the user said discloses nothing new.
_RECALL = re.compile(
    r"^(?:(?:can|could|would|will) you (?:please )?|please )?"
    r"(?:(?:what|what's|when|when's|where|where's|who|who's|which|how old|how many|how much)\b[^?]{0,25}?"
    r"\b(?:is|are|was|were|'s|does|do|did)\s+(?:the\s+\w+\s+of\s+)?(?:my|our)\b"
    r"|(?:what|where|when|who|which)\b.{0,12}\b(?:do|did|am|was|have|were)\s+i\b"
    r"|(?:what|how old|who)\s+am\s+i\b|(?:do|did) you (?:know|remember|recall)\b|(?:did|have) i (?:tell|told|say|"
    r"said|mention)|remind me\b|what do you know\b|tell me (?:what you know|about me|about myself)"
    r"|(?:what|how much) (?:else )?(?:do|did) you (?:know|remember|recall)(?: about)? (?:me|my|what|where|when|who)\b"
    r"|am i\b|(?:do|did|have) i (?:have|own|like|live|work|tell|say|mention|study|go by)\b"
    r"|tell me again\b|tell me my\b|(?:list|tell me|give me|show me|say) (?:everything |all |what )?(?:you know|you "
    r"remember|you have on|you've got on)\b)"
)
_FAMILY = frozenset(
    """mom mum mommy mummy mama mother dad daddy papa father parents parent wife husband hubby partner spouse
    boyfriend girlfriend bf gf fiance fiancee fiancé son sons daughter daughters kid kids child children baby babies
    toddler newborn twins brother brothers sister sisters sibling siblings twin grandma grandpa granny gran nan nana
    grandmother grandfather grandparents grandson granddaughter aunt uncle cousin niece nephew stepdaughter stepson
    stepmom stepmum stepdad stepfather stepmother family youngest eldest oldest in-laws""".split()
)
# Said without "my", these still name the user's own people ("Mom is in the hospital again").
_FAMILY_NAMES = frozenset(
    "mom mum mommy mummy mama mother dad daddy papa father grandma grandpa granny gran nan nana hubby wifey wife "
    "husband partner son daughter sister brother boyfriend girlfriend fiance fiancee fiancé baby grandad granddad "
    "gramps nanna nonna auntie aunty stepdad stepmum stepmom".split()
)
# Verbs after which "me" is not the object of a request: "kiwi gives me hives" does not open with them anyway,
# but "call me Kate" and "everyone calls me Bex" do.
_ABOUT_ME = frozenset("call calls".split())
_PETS = frozenset(
    "dog dogs puppy pup cat cats kitten kitty pet pets hamster rabbit bunny parrot horse tortoise".split()
)
# What a question may mention of the user's own life to disclose something: people, pets, body and health, the
# events of their calendar, their home and their business. "My code", "my coffee", "my resume" are not in it.
_PERSONAL = _FAMILY | _PETS | frozenset(
    """knee knees back shoulder hip hips wrist ankle skin teeth tooth eyes ears heart stomach gut allergy allergies
    diabetes asthma condition meds medication medications medicine prescription pills insulin inhaler therapist
    doctor surgery pregnancy symptoms injury migraine migraines anxiety depression warfarin epipen cholesterol
    blood diet marathon wedding exam exams interview appointment trip birthday anniversary holiday vacation
    honeymoon graduation race finals thesis dissertation bakery shop business company startup restaurant cafe farm
    garden flat apartment house job first studio painting paintings artwork band novel album gig recital
    exhibition""".split()
)
# Safety-relevant words (allergies, intolerances, conditions, disabilities, diets): kept whatever the length.
_SAFETY = re.compile(
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
)


def safety_relevant(text: str) -> bool:
    """Whether ``text`` names an allergy, intolerance, condition, disability or diet: kept whatever its length."""
    return bool(_SAFETY.search(" ".join(_normal(text))))


# The words of a task at the keyboard: a first-person clause with one of them is about the task, not the user.
_TECH = re.compile(
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
)
_CODE = re.compile(
    r"[{}`\\]|</?\w+>|\w\(|\)\s*[:{;]|=>|==|!=|::|\b\w+_\w+\b|\b[a-z]{2,}[A-Z]\w*|;\s*$|"
    r"^\s*(?:def|class|import|from \w+ import|const|let|var|function|select|print|return)\b"
)
# Frames that make a first-person clause about the user even with a technical word: who they are, what they use.
_IDENTITY = re.compile(
    r"\bi (?:am|was) (?:a|an|the)\b|\b(?:i|we) (?:work|worked|use|used|prefer|love|like|hate|teach|study|studied|play|"
    r"played|sing|volunteer|coach|own|live|lived|grew up|was born)\b|\bwe (?:live|lived|own|run)\b|"
    r"\bi have been (?:a|an|coding|programming|working|using|writing|doing)\b|\bi am (?:learning|studying)\b|"
    r"\bmy (?:job|work|career)\b|\byears?\b|^(?:been|worked as|working as) (?:a|an)\b"
)
# A first-person clause about the conversation itself.
_REMARK = re.compile(
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
)
# "I think / I said / I told you / I meant that ...": the frame says nothing, what follows may.
_REPORTING = re.compile(
    r"^i (?:really |honestly |just |already |also |do |don't |do not |didn't |did not |never )?"
    r"(?:think|guess|suppose|believe|feel like|feel that|reckon|can't believe|cannot believe|"
    r"said|say|told you|tell you|mentioned|mention|meant|know|mean|swear)(?: that)?(?:\s+|$)"
)
# "I read somewhere that ...", "I saw a documentary saying ...": a claim about the world, whoever "we" are in it.
_HEARSAY = re.compile(
    r"^i (?:just |once |recently )?(?:(?:read|heard|saw|learned|learnt)(?: today| recently| yesterday| once)? that|"
    r"(?:saw|watched|read|heard) (?:a|an|this) (?:documentary|article|video|post|thread|study|book|paper|podcast|"
    r"programme|program) (?:saying|that|claiming|which said)|(?:read|heard|saw|seen) (?:somewhere|online|on (?:reddit|"
    r"twitter|tiktok|facebook|youtube|instagram|the news|the radio|tv|a forum|a podcast)|in (?:the news|a book|an "
    r"article|the paper))(?: that)?)(?:\s+|$)"
)
# Someone who is not family, as the subject: what "a friend of mine" did is theirs, not the user's, and what "my
# colleague says" is judged by what follows ("my friend says you can't get sunburnt through a window").
_OTHERS = (r"(?:\w+ )?(?:friend|mate|pal|buddy|colleague|coworker|co worker|neighbou?r|roommate|flatmate|housemate|"
           r"classmate|acquaintance|boss|manager|teacher|doctor|coach|guy|someone)s?(?=\b|')")
_SOMEONE_ELSE = re.compile(
    rf"^(?:(?P<distant>(?:a|one|some|two|three) {_OTHERS} of (?:mine|ours)(?:'s)?|(?:my|our) {_OTHERS}'s)|"
    rf"(?:a|my|our|one of my) {_OTHERS}|(?P<family>(?:my|our) (?:\w+ )?(?:{'|'.join(sorted(_FAMILY))})))"
    r"(?P<says> (?:always |once |used to )?(?:says|said|say|told me|told us|tells me|tells us|taught me|taught us|"
    r"thinks|thought|reckons|claims|swears|insists|read)(?: that)?)?"
)
# In a sentence about a task at the keyboard, "I need to ..." states the task ("... and i need to dedupe by email").
_TASK_FRAME = re.compile(r"^i (?:really |just )?(?:need|want|have|am trying|would like|wanna|gotta|must) to\b")
# A passing state is not a fact about the user: "I'm back", "I'm so confused", "I'm done for today", "I'm going
# to sleep now", "gotta go grab lunch".
_TRANSIENT = re.compile(
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
)
# "If it helps, I'm vegan": an aside that only opens a statement.
_ASIDE = re.compile(r"^if (?:it|that) (?:helps|matters|is relevant|makes a difference)$|^in case (?:it|that)")
# "Just Alex please", "Kate is fine": a name on its own, as capitalised as a name is.
# "Dr Patel, but Anil is fine", "Mrs Jones at school, Sarah to you", "not Katherine, Kate", "hey, it's Lou".
_NOT_NAMES = (r"(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|"
              r"July|August|September|October|November|December|Christmas|Easter|Ramadan|Diwali|Halloween|Google|"
              r"English|Python|Fine|Good|Ok|Okay|Back|Here|Sorry|Done|Ready|Sure|Home|Lost|Confused|Tired|Not|Me)\b)")
_BARE_NAME = re.compile(
    r"^(?:(?:[Jj]ust |[Ii]t'?s )[A-Z][a-z]+(?: [A-Z][a-z]+)?,? please|(?:[Jj]ust |[Ii]t'?s )?[A-Z][a-z]+"
    r"(?: [A-Z][a-z]+)?,? (?:is fine|will do|works|is good))[.!]*$|"
    r"(?:,\s*|\bbut\s+)[A-Z][a-z]+,? (?:is fine|will do|works|is good|to you|to my friends)[.!]*$|"
    r"^[Nn]ot [A-Z][a-z]+, [A-Z][a-z]+[.!]*$|"
    rf"^(?:(?:[Hh]i|[Hh]ey|[Hh]ello|[Hh]iya),? )?(?:[Ii]t'?s|[Tt]his is|[Ii]'?m) {_NOT_NAMES}[A-Z][a-z]+[.!]*$"
)
_HYPOTHETICAL = re.compile(
    r"^(?:if|suppose|supposing|imagine|hypothetically|assuming|assume|say|let's say|lets say|what if|pretend)\b"
)
_DEMONSTRATIVE = frozenset(
    "that that's this it it's you you're your yours there there's here here's which same exactly".split()
)
# A request in the first person: "I need a recipe for ...", "I'd like a summary of ...".
_WANTS = re.compile(
    r"^i (?:really )?(?:need|want|would like|would love|am looking for|could use) (?:a|an|some|the|any|more|another|"
    r"ideas|suggestions|advice|tips|recommendations|help)\b"
)
# A correction of what the assistant has on record: "actually it's Kate, not Katherine".
_CORRECTION = re.compile(
    r"^(?:actually|correction|no|scratch that|sorry|oops|wait|i mean|my bad|my mistake)\b.*\b\w+,? (?:not|rather than|"
    r"instead of) (?!it$|that$|this$|right$|correct$|true$|what\b|quite\b|really\b|exactly\b|helpful$)(?:the )?\w+$"
)
# "It reminds me why I love being a mom": in a clause about "it", the user is still the subject of a verb; in
# "that's what I needed" or "this is what I meant" the verb is about the reply.
_SPEAKER_VERB = re.compile(
    r"\b(?:i|we) (?!(?:needed|wanted|meant|mean|asked|said|expected|think|thought|guess|was looking|was hoping|"
    r"was asking|am asking|am looking|was expecting|was after|was going for|had in mind|know|knew|see|get|would|"
    r"will|can|could|should|do|did|don't|didn't)\b)[a-z']+"
)
# "My" of the conversation ("you misread my question") says nothing about the user.
_STRONG_FIRST_PERSON = re.compile(
    r"\b(?:my|our)\b(?! (?:question|questions|message|point|request|prompt|answer|reply|comment|last|previous|"
    r"words|typo)\b)|\b(?:ours|mine)\b|\b(?:i|we) (?:am|are|have|had|was|were)\b"
)
# Subject dropped: "Moved to Berlin last month", "Been a plumber for 20 yrs", "Allergic to cats".
_ELLIPTIC = re.compile(
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
)
# A description without subject or verb, the way chat introduces itself: "Huge Arsenal supporter", "Big sci-fi
# reader", "Not a morning person", "Retired firefighter, 62". Its head is a noun for a person by what they do or
# like; what comes before it describes them, what follows only places them ("... for 15 years", "... at heart").
_ROLE_NOUNS = (
    r"fan|supporter|reader|person|people person|lover|owner|player|runner|jogger|cyclist|swimmer|climber|hiker|"
    r"gamer|cook|baker|gardener|knitter|painter|photographer|musician|drummer|guitarist|pianist|singer|dancer|"
    r"writer|blogger|addict|nerd|geek|snob|junkie|buff|enthusiast|collector|drinker|eater|sleeper|riser|owl|bird|"
    r"introvert|extrovert|ambivert|homebody|parent|mum|mom|dad|father|mother|grandparent|grandma|grandad|grandpa|"
    r"graduate|grad|student|undergrad|postgrad|freelancer|contractor|expat|immigrant|native|local|smoker|"
    r"non smoker|teetotaller|teetotaler|beginner|newbie|novice|learner|speaker|user|worker|volunteer|member|"
    r"holder|subscriber|believer|atheist|christian|muslim|hindu|buddhist|catholic|veteran|vet|carer|caregiver|"
    r"widow|widower|retiree|pensioner|buyer|renter|tenant|landlord|landlady|homeowner|home owner|commuter|"
    r"traveller|traveler|foodie|vegan|vegetarian|child|only child|"
    r"middle child|eldest|youngest|oldest|twin|bookworm|couch potato|gym rat|sucker|softie|optimist|pessimist|"
    r"worrier|overthinker|procrastinator|saver|spender|"
    r"assistant|nurse|teacher|engineer|developer|manager|designer|doctor|lawyer|intern|analyst|consultant|chef|"
    r"driver|cleaner|officer|technician|scientist|researcher|accountant|director|founder|firefighter|"
    r"plumber|electrician|builder|farmer|pilot|paramedic|midwife|pharmacist|dentist|architect|programmer|coder|"
    r"dev|librarian|journalist|editor|translator|barista|waiter|waitress|bartender|mechanic|carpenter|soldier|"
    r"police officer|cop|surgeon|therapist|counsellor|counselor|professor|lecturer|tutor|coach|trainer|artist|"
    r"solicitor|barrister|paralegal|clerk|receptionist|secretary|administrator|admin|cashier|porter|caretaker|"
    r"janitor|nanny|childminder|au pair|mentor|physio|physiotherapist|optician|hairdresser|barber|beautician|"
    r"stylist|tailor|butcher|florist|landscaper|roofer|plasterer|decorator|welder|machinist|operator|surveyor|"
    r"estate agent|broker|banker|trader|actuary|auditor|economist|statistician|marketer|copywriter|recruiter|"
    r"salesman|saleswoman|sales rep|courier|postman|postwoman|trucker|cabbie|chauffeur|sailor|fisherman|miner|"
    r"marine|nun|priest|vicar|rabbi|imam|councillor|civil servant|actor|actress|comedian|dj|producer|animator|"
    r"illustrator|sculptor|potter|composer|violinist|cellist|carpenter|joiner|bricklayer|labourer|laborer|"
    r"housekeeper|cook|dietitian|dietician|nutritionist|psychologist|psychiatrist|social worker|youth worker|"
    r"support worker|care worker|healthcare assistant|teaching assistant|phd student|medic|gp|radiographer|"
    r"sonographer|optometrist|podiatrist|chiropractor|osteopath|hygienist|dental nurse|vet nurse|zookeeper"
)
_SELF_DESCRIPTION = re.compile(
    rf"^(?!(?:the|this|that|these|those|your|his|her|their|its|what|such|which|whose|you|he|she|they|it)\b)"
    rf"(?:(?:not|never|no|really|very|much|of|exactly|quite|such|a bit|kind|sort|bit|total|huge|big|massive|a|an|"
    rf"more|definitely|strictly|totally|proper|real|true|complete|absolute|always|mostly|generally|basically) )*"
    rf"(?:(?:keen|avid|passionate|lifelong|long time|amateur|hobby|weekend|casual|devoted|die hard|diehard|"
    rf"aspiring|former|ex|recovering|budding|wannabe|occasional|self taught|trainee|qualified|certified|"
    rf"professional|retired|proud|closet|reformed|lapsed) (?:[a-z0-9'-]+ )?(?!\w+ment\b)[a-z'-]+(?:er|ist|ian|ic|"
    rf"ant|ent|or|ee|ess)s?(?: .*)?$|"
    rf"(?:(?!(?:a|an|for|the|to|of|with|in|on|at|or|from|about|as|your|his|her|their|our|this|that|any|some|every|"
    rf"dear|hello|hi|hey|fellow|good|great|best|greatest|worst|better|amazing|awesome|brilliant|poor|lucky|"
    rf"thanks|thank)\b)[a-z0-9'-]+ |stay at home |work from home ){{0,3}}(?:{_ROLE_NOUNS})s?)"
    rf"(?: (?:at heart|by trade|through and through|at all|really|honestly|tbh|lol|haha|here|too|myself|though|"
    rf"actually|"
    rf"(?:of|at|in|for|from|since|by|with|and|who|on|to|\d+|\w+ing) .*))?$"
)
# A preference said as a choice, without subject or verb: "tea over coffee any day", "window seat every time".
_CHOICE = re.compile(
    r"^(?!(?:the|this|that|these|those|your|his|her|their|its|what|which|you|he|she|they|it|same|game|start|move|"
    r"hand|think|turn|go|come|get|run|look|take|fall|pull|switch|hang|roll|tip|head|works|worked|happens|fails|"
    r"rain|snow|sun|storm|clouds)\b)"
    r"(?:[a-z0-9'-]+ ){0,3}[a-z0-9'-]+ (?:over (?!(?:the|a|an|this|that|my|our|your|it|there|here|zoom|skype|"
    r"facetime|phone|text|email|video|weekend|night|summer|winter|christmas|easter|time|years?)\b)"
    r"(?:[a-z0-9'-]+ ){0,3}[a-z0-9'-]+(?: (?:any day|every time|every day|"
    r"always|hands down|for me|any time|anytime|forever|all day|100 percent))?|(?:every (?:single )?time|all the way|"
    r"any day"
    r"(?: of the week)?|hands down|all day every day|for life|or nothing|or bust))$"
)
# Subject dropped, and "did" opens it as if it asked: "did my undergrad in physics", "did a masters at LSE".
_DID_EXPERIENCE = re.compile(
    r"^did (?:a|an|my) (?:\w+ )?(?:degree|masters|master's|phd|doctorate|ba|bsc|msc|mba|undergrad|undergraduate|"
    r"postgrad|apprenticeship|internship|residency|placement|gap year|year abroad|stint|tour|marathon|10k|5k|"
    r"triathlon|ironman|bootcamp|diploma|pgce)\b"
)
# Verbs of request that chat also uses for the user's work or pastime, subject dropped: "teach at a primary school",
# "play in a band on weekends".
_WORK_PLACE = re.compile(
    r"^(?:teach|play|work|study|coach|volunteer) (?:(?:at|in|for) (?:a|an|the|my|our|\w+ (?:school|team|club|band|"
    r"orchestra|choir|hospital|charity))|part time|full time|on weekends)\b"
)
# Where and how the user lives, said without "I": "there are 5 of us", "Lisbon is home now", "London born and bred",
# "currently in hospital with pneumonia", "on a gap year in Australia", "female, 34", "no kids, no pets".
_SITUATION = re.compile(
    r"^(?:there's|there is|there are|there're) (?:\d+|two|three|four|five|six|seven|eight|nine|ten) of us\b|"
    r"\b(?:is|has been|became|was) (?:now |my |our )?home\b(?! to\b)|\bborn and (?:bred|raised)\b|"
    r"^(?:in (?:hospital|rehab|recovery|therapy|my (?:first|second|third|final|last) year)|off (?:sick|work)|"
    r"on (?:a gap year|sabbatical|holiday|leave|furlough|benefits|the dole|placement|secondment)|back (?:in|at|"
    r"home) (?!(?:the|a|an) (?:answer|reply|question|topic|point|day)\b))\b|"
    r"^(?:in year \d+(?: at (?:school|college))?|at (?:school|uni|university|college|sixth form))$|"
    r"^(?:nearly|almost|turning|turned|just turned) \d{1,3}\b(?! (?:degrees|percent)\b)|"
    r"^(?:male|female|non binary|nonbinary|trans (?:man|woman))$|"
    r"^no (?:kids|children|pets|car|siblings|partner)\b(?! (?:policy|allowed|rule)s?\b)|^semi retired\b|"
    r"^(?:a bit |quite |very |slightly )?(?:overweight|underweight|obese|unfit|out of shape|menopausal|"
    r"perimenopausal|postpartum|infertile)\b"
)
# Chat drops "my" before the user's own people, pets and body, and then a singular noun without an article is
# theirs ("cat's called Biscuit", "toddler won't sleep through", "knee's been bad since the marathon"); a plural
# is the user's only with a number or a state of theirs ("kids are 4 and 7", "parents are divorced"), since "kids are
# expensive" is about the world.
_OWN_BEING = (r"(?:little one|youngest|eldest|oldest|toddler|newborn|kid|child|stepson|stepdaughter|cat|dog|puppy|"
              r"kitten|bunny|rabbit|hamster|parrot|horse|pony|tortoise|budgie|guinea pig)")
_OWN_BODY = (r"(?:knee|back|shoulder|hip|wrist|ankle|neck|elbow|foot|skin|stomach|gut|eyesight|hearing|sleep|period|"
             r"cycle|bladder|chest|throat|jaw|tooth|migraine|asthma|eczema|anxiety|mood)")
_BODY_STATE = r"(?:been|getting|killing|still|playing|flaring|bad|sore|awful|terrible|worse|better|really|so|not)"
_OWN_WITHOUT_MY = re.compile(
    rf"^{_OWN_BEING}(?:'s \w+| (?:is|was|has|had|won't|can't|doesn't|didn't|isn't|wasn't|keeps|kept|starts|started|"
    rf"lives|loves|hates|turns|turned|needs|gets|got|goes|went|will|just|still|always|never|seems|sleeps|eats|barks|"
    rf"cries|snores)\b)|"
    rf"^{_OWN_BODY}(?:'s {_BODY_STATE}| (?:hurts|aches|flared|keeps|won't|has been|is {_BODY_STATE})\b)|"
    r"^(?:kids|children|parents|in laws|twins|grandparents|step kids|stepkids|periods|knees|eyes|ears) "
    r"(?:are|were) (?:\d+|both|all|divorced|separated|visiting|staying|away|off|home|grown|at|in|coming|really|"
    r"getting|still)\b"
)
# A habit said without subject or verb: "yoga three times a week", "gym every morning at 6".
_HABIT = re.compile(
    r"^(?!(?:the|this|that|these|those|your|his|her|their|its|what|which|you|he|she|they|it|same|game|works|"
    r"happens|fails|rain|snow|error|errors|crash|crashes|bug|meeting|meetings|update|updates|backup|backups)\b)"
    r"(?:[a-z0-9'-]+ ){0,2}[a-z0-9'-]+ (?:every (?:single |other )?(?:day|morning|evening|night|week|weekend|month|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:once|twice|\w+ times) a (?:day|week|month|year)|"
    r"on (?:weekends|weekdays|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|daily|weekly)\b"
)
# A verb in a clause without a subject makes it an event or an order, not a description ("love the reader").
_FINITE = frozenset(
    """is are was were be been am has have had do does did can could will would should may might must shall
    's love loves hate hates like likes need needs want wants get gets got make makes find try use""".split()
)
_UPDATE = re.compile(r"\b(?:anymore|any more|no longer|for good(?! measure))\b|^(?:correction|update)\b")
_NAME = re.compile(
    r"\b(?:call me(?! (?:when|if|back|later|crazy|tomorrow|tonight|a|an|after|before|asap|any ?time|old "
    r"fashioned|whatever|maybe|now|soon|sometime|whenever|every|daily)\b)(?! (?:at|on) (?!\d))|"
    r"calls me(?! (?:every|each|daily|on|at|when|twice|once|back|crazy|names|out)\b)|"
    r"my name is|my name's|my names|name's|i go by|i am called|i'm called|known as|"
    r"address me as|refer to me as|pronounced|spelled|spelt|with (?:one|two|a double|an?) [a-z]$|my pronouns|"
    r"pronouns are|they them|she her|he him|she they|he they)\b|^(?:it's|this is) [a-z]+ here$|^go(?:es)? by\b"
)


@dataclass(frozen=True)
class Reading:
    """What one turn discloses: the sentences that do (in the user's words), and why."""

    sentences: tuple[str, ...]
    reason: str


# "thrillers > romance" is a choice: ">" between words reads as "over".
_GREATER = re.compile(r"(?<=[a-z])\s*>\s*(?=[a-z])")


def _normal(text: str) -> list[str]:
    """Lower-cased words, apostrophes unified, chat spellings read as the usual contractions, the first person's
    contractions expanded ("i'm" becomes "i am")."""
    out: list[str] = []
    text = _GREATER.sub(" over ", text.lower().replace("’", "'").replace("‘", "'"))
    for word in _WORD.findall(text):
        word = _SPELLINGS.get(word, word)
        out += _EXPANSIONS.get(word, [word])
    return out


def sentences(text: str) -> list[str]:
    parts = [p for p in _SENTENCE_END.split(text.strip()) if p]
    merged: list[str] = []
    for part in parts:
        if merged and _ABBREVIATION.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


# "No" opens a clause as a discourse word ("no, the other one") but not in "no longer ..." or "no kids".
_NO_WHAT = frozenset("longer kids children pets car siblings partner".split())


def _strip_openers(words: list[str]) -> list[str]:
    while words and words[0] in _OPENERS and len(words) > 1 and not (words[0] == "no" and words[1] in _NO_WHAT):
        words = words[1:]
    return words


def _clauses(sentence: str) -> list[list[str]]:
    out = [_strip_openers(_normal(c)) for c in _CLAUSE_END.split(sentence)]
    return [c for c in out if c]


def _is_question(words: list[str]) -> bool:
    """The shape of a question or a request at the start of a clause, with or without its question mark."""
    first, second = words[0], words[1] if len(words) > 1 else ""
    if _DID_EXPERIENCE.match(" ".join(words)) or _WORK_PLACE.match(" ".join(words)):
        return False
    if first in _WH:
        # "when i was a kid we had a dog" is a statement: a wh-word followed by a subject opens a clause.
        return first.endswith("'s") or second not in {"i", "we", "my", "our"} or words[1:3] in (["do", "i"],
                                                                                                   ["can", "i"])
    if _WANTS.match(" ".join(words)):
        return True
    if first == "am" and second != "i":  # "am obsessed with taylor swift": the subject dropped, not a question
        return False
    if first in _ASKING_AUX:
        return True
    if first in {"don't", "never"} and second in _REQUEST_VERBS:  # "don't be so formal", "never use emojis"
        return True
    if first in _SPEECH_VERBS and words[1:3] == ["to", "me"]:  # "speak to me in french"
        return True
    if first in _AUX:
        return second in _SUBJECTS or second in _FAMILY or second in _PETS
    if first in {"any", "anyone", "anybody"} or words[:2] == ["i", "wonder"]:
        return True
    # An imperative: a verb of request, or any verb followed by "me" ("respond to me" aside, "get me a taxi").
    if first in _ABOUT_ME:  # "call me Kate" names the user, "call me when you can" asks
        return second in {"me", "us"} and not _NAME.search(" ".join(words))
    return first in _REQUEST_VERBS or first in {"let's", "let"} or second in {"me", "us"}


# "A laptop for a graphic designer like me": the question describes the user.
_LIKE_ME = re.compile(r"\blike (?:me|myself)\b")
# A safety word in a question is the user's only with the user as its owner ("I'm pregnant", "my allergy").
# Or with the user as the subject chat dropped: "On blood thinners, anything I should avoid?", "Is it safe to fly at
# 30 weeks pregnant?".
_SAFETY_OWNER = re.compile(
    r"\b(?:i|we) (?:am|are|have|had|was|were)\b|\bmy\b|^(?:allergic|intolerant|diabetic|asthmatic|epileptic|"
    r"coeliac|celiac|pregnant)\b|\b(?:on|taking) (?:blood thinners?|warfarin|insulin|antidepressants?|chemo|"
    r"medication|meds)\b|\b\d+ (?:weeks|months) pregnant\b"
)
_CHILD_BY_AGE = re.compile(r"\b(?:my|our) (?:(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten) (?:year|"
                           r"month|week)s? old|\d+ ?(?:yo|yr old|y o|mo|month old))\b")


def _personal_mention(words: list[str]) -> bool:
    """``my``/``our`` followed within three words by one of the user's people, pets, body or events."""
    for i, word in enumerate(words):
        if word in _POSSESSIVE and any(w.removesuffix("'s") in _PERSONAL for w in words[i + 1 : i + 5]):
            return True
    return bool(_CHILD_BY_AGE.search(" ".join(words)))


_MENTIONS_FIRST_PERSON = "a first-person statement"
_SAFETY_FACT = "a safety-relevant fact (allergy, intolerance, condition or diet)"


def _statement_discloses(words: list[str], about_someone: bool, technical: bool) -> str | None:
    """Why a statement clause discloses something about the user, or None. ``technical``: the sentence it is in
    has the words of a task at the keyboard, so a clause without its subject is about that task."""
    text = " ".join(words)
    if all(w in _SMALL_TALK for w in words):
        return None
    if _NAME.search(text):
        return "a name or form of address"
    reported = _REPORTING.match(text)
    if reported:
        rest = _strip_openers(words[len(reported.group(0).split()) :])
        return _statement_discloses(rest, about_someone, technical) if rest else None
    hearsay = _HEARSAY.match(text)
    if hearsay:
        rest = words[len(hearsay.group(0).split()) :]
        return _statement_discloses(rest, about_someone, technical) if {"i", "me", "my"} & set(rest) else None
    other = _SOMEONE_ELSE.match(text)
    if other and (other.group("says") or other.group("distant")):
        rest = words[len(other.group(0).split()) :]
        if other.group("says"):  # what the doctor says of a safety matter is the user's ("... with warfarin")
            why = _statement_discloses(rest, about_someone or bool(other.group("family")), technical) if rest else None
            return why or (_SAFETY_FACT if _SAFETY.search(text) else None)
        if not _FIRST_PERSON.intersection(rest):
            return None
    if technical and _TASK_FRAME.match(text) and not _personal_mention(words):
        return None
    if _REMARK.match(text) or _TRANSIENT.match(text) or _HYPOTHETICAL.match(text):
        return None
    if _SITUATION.search(text):
        return "a statement of the user's home, household or situation"
    if words[0] in _DEMONSTRATIVE and not _STRONG_FIRST_PERSON.search(text) and not _SPEAKER_VERB.search(text):
        return None
    if _SAFETY.search(text):
        return _SAFETY_FACT
    if _TECH.search(text) and not _IDENTITY.search(text) and not _personal_mention(words):
        return None
    if any(w in _FIRST_PERSON for w in words):
        return _MENTIONS_FIRST_PERSON
    if technical and not _IDENTITY.search(text) and not _SELF_DESCRIPTION.match(text):
        return None
    if _ELLIPTIC.match(text):
        return "a first-person statement without its subject"
    if _SELF_DESCRIPTION.match(text) and not _FINITE.intersection(words):
        return "a self-description without its subject"
    if _CHOICE.match(text) and not _FINITE.intersection(words):
        return "a preference said as a choice"
    if _HABIT.match(text) and not _FINITE.intersection(words):
        return "a habit said without its subject"
    if _DID_EXPERIENCE.match(text):
        return "a first-person statement without its subject"
    if words[0].removesuffix("'s") in _FAMILY_NAMES or (words[0] == "the" and len(words) > 1
                                                         and words[1].removesuffix("'s") in _FAMILY | _PETS):
        return "a statement about the user's family or pets"
    if _OWN_WITHOUT_MY.match(text):
        return "a statement about the user's family, pets or body"
    if about_someone and words[0] in {"he", "she", "they", "he's", "she's", "they're", "his", "her", "their"}:
        return "a statement about someone of the user's named just before"
    if words[-1] == "here" and len(words) <= 5 and words[0] not in _AUX:
        return "a self-description"
    if _UPDATE.search(text):
        return "an update of something said before"
    return None


def _question_discloses(clause: list[str]) -> str | None:
    """Why a clause shaped as a question or a request discloses something about the user on the way, or None."""
    text = " ".join(clause)
    if _RECALL.match(text):
        return None
    if _NAME.search(text):
        return "a name or form of address"
    if (_personal_mention(clause) or _LIKE_ME.search(text)) and not _TECH.search(text):
        return "a question that mentions the user's people, pets, health or plans"
    if _SAFETY.search(text) and _SAFETY_OWNER.search(text):
        return "a question that discloses a safety-relevant fact"
    return None


def _says_something(clause: list[str]) -> bool:
    """More than a greeting or an exclamation ("Hi Bo!", "That's so cool!"): two words that are not small talk."""
    return clause[0] not in _GREETINGS and sum(w not in _SMALL_TALK for w in clause) >= 2


def _sentence_discloses(sentence: str, about_someone: bool, transcript: bool) -> str | None:
    """Why one sentence discloses something about the user, or None: through one of its clauses, read as a
    statement or, in a question or request, as what the question says on the way. In a ``transcript`` (a record of
    people talking to each other) every statement clause that is not small talk counts: what one speaker says of
    the other is a fact about a person there, not a remark about an assistant's reply."""
    clauses = _clauses(sentence)
    normal = " ".join(_normal(sentence))
    if not clauses or (_CODE.search(sentence) and not _IDENTITY.search(normal)):
        return None
    if _HYPOTHETICAL.match(" ".join(clauses[0])) and not _ASIDE.match(" ".join(clauses[0])):
        return None
    if _CORRECTION.match(normal):
        return "a correction of something said before"
    if _BARE_NAME.search(sentence.strip()):
        return "a name or form of address"
    shapes = [_is_question(c) for c in clauses]
    # A sentence that ends with a question mark but opens no clause as a question asks with its last clause; what
    # comes before it may say something on the way ("not a fan of horror, something funny for tonight?"), but a
    # phrase that only names the user's things frames the question ("near where I live, good restaurants?").
    asked_whole = sentence.rstrip().endswith("?") and not any(shapes)
    technical = bool(_TECH.search(normal))
    for clause, shape in zip(clauses, shapes, strict=True):
        if shape or (asked_whole and clause is clauses[-1]):
            why = _question_discloses(clause)
        else:
            why = _statement_discloses(clause, about_someone, technical)
            if asked_whole and why == _MENTIONS_FIRST_PERSON and clause[0] not in {"i", "we"}:
                why = _question_discloses(clause)
            if not why and transcript and not technical and not asked_whole and _says_something(clause):
                why = "a statement in a transcript of people talking to each other"
        if why:
            return why
    return None


# A predicate that chat says without its subject: "allergic to nuts", "diagnosed with asthma in May".
_PREDICATE = re.compile(r"^(?:\w+ )?(?:(?:allergic|intolerant|sensitive) to|diagnosed with|pregnant with)\b")


def _has_subject(sentence: str) -> bool:
    """Whether a sentence names who it is about: the user, one of their people or pets, or a verb of its own (a
    statement whose subject chat dropped, "Moved to Lisbon"). "Shellfish" alone has none."""
    words = _normal(sentence)
    return (any(w in _FIRST_PERSON or w.removesuffix("'s") in _FAMILY | _PETS for w in words)
            or bool(_ELLIPTIC.match(" ".join(_strip_openers(words))) or _PREDICATE.match(" ".join(words))))


def read(text: str, *, transcript: bool = False) -> Reading:
    """The sentences of ``text`` that disclose something about the user, and the reason of the first one.
    ``transcript``: ``text`` is a line of a record of people talking to each other (see ``_sentence_discloses``)."""
    kept: list[str] = []
    reasons: list[str] = []
    about_someone = False
    asked = ""
    for sentence in sentences(text):
        why = _sentence_discloses(sentence, about_someone, transcript)
        if why and asked and not _has_subject(sentence):
            # "what am I allergic to? shellfish": the answer's subject is in the question; alone it is a fragment.
            kept.append(asked)
        if why:
            kept.append(sentence)
            reasons.append(why)
        asked = sentence if not why and sentence.rstrip().endswith("?") else ""
        about_someone = about_someone or any(_personal_mention(c) or c[0] in _FAMILY for c in _clauses(sentence))
    if not kept:
        return Reading((), "discloses nothing about the user (a question, request, remark or small talk)")
    return Reading(tuple(kept), reasons[0])
