"""The words the disclosure grammar reads (``agent.memory.disclosure``): data, kept apart from the patterns built of
them (``agent.memory.patterns``) and the decisions made with those (``agent.memory.disclosure``), so that a word a
new sentence needs is added to a list here, where every pattern that reads the list sees it.

Sets of words are looked up one word at a time; an alternation (a string "a|b|c") is spliced into a pattern. How
text is read into words (``normal``) is here too: every list is written in that form, lower case with the first
person's contractions expanded ("i'm" is "i am").
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9']*")
# "thrillers > romance" is a choice: ">" between words reads as "over".
_GREATER = re.compile(r"(?<=[a-z])\s*>\s*(?=[a-z])")

# Chat spells contractions without the apostrophe and shortens words; the grammar below reads one spelling.
SPELLINGS = {
    "im": "i'm", "ive": "i've", "dont": "don't", "cant": "can't", "didnt": "didn't", "doesnt": "doesn't",
    "isnt": "isn't", "wasnt": "wasn't", "thats": "that's", "whats": "what's", "hows": "how's", "wheres": "where's",
    "its": "it's", "youre": "you're", "u": "you", "ur": "your", "pls": "please", "plz": "please", "wont": "won't",
    "havent": "haven't", "arent": "aren't", "shouldnt": "shouldn't", "couldnt": "couldn't", "whos": "who's",
    "lets": "let's", "theyre": "they're", "hes": "he's", "shes": "she's", "iam": "i'm", "whens": "when's",
    # "kids r 3, 6 and 9", "hubbys a firefighter": chat's "are", and a possessive whose plural is not made with "s"
    "r": "are", "hubbys": "hubby's", "wifes": "wife's", "babys": "baby's",
}

EXPANSIONS = {"i'm": ["i", "am"], "i've": ["i", "have"], "i'd": ["i", "would"], "i'll": ["i", "will"],
              "we're": ["we", "are"], "we've": ["we", "have"], "we'll": ["we", "will"], "we'd": ["we", "would"],
              "dunno": ["don't", "know"]}

FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves".split())

POSSESSIVE = frozenset("my our".split())

# Discourse words that open a clause without being its subject: "btw", "actually", "update:", "ok so".
OPENERS = frozenset(
    """btw fyi actually also well oh ok okay so like honestly tbh anyway anyways basically lol haha hah yeah yes yep
    no nope nah hmm ugh um uh plus update correction news big and but then now just still finally recently currently
    really since because cause cuz bc though although hey hi hello hiya cheers thanks thank ps heh omg wow sadly
    luckily unfortunately apparently wait sorry oops whoops officially""".split()
)

# Words that only frame a sentence, before it ("honestly,", "btw", "tbh") or after it (", thanks", " please"): the
# patterns that read a sentence whole read it without them.
FILLERS = ("btw", "fyi", "honestly", "tbh", "tbf", "imo", "imho", "anyway", "anyways", "basically", "lol", "haha",
           "ok so", "okay so", "so", "well", "oh", "um", "uh", "hmm", "frankly", "seriously", "ok", "okay", "also",
           "plus", "and", "oh and", "and also")
COURTESIES = ("thanks", "thank you", "thx", "ty", "cheers", "please", "pls", "plz", "lol", "haha", "tbh", "btw",
              "thanks a lot", "thanks so much", "thank you so much")

SMALL_TALK = frozenset(
    """hi hello hey hiya yo morning evening afternoon good night bye goodbye goodnight thanks thank you thx ty cheers
    ta ok okay k sure cool great nice awesome perfect fine yes yeah yep yup no nope nah lol lmao haha hah hehe wow
    sounds got it alright right indeed agreed exactly totally true interesting amazing wonderful excellent lovely
    appreciate that's that is so very much a lot again there all see later soon talk to care too and oh ah hmm well
    me mate brb np welcome please why not one more thing let think sorry omg gotcha same here also ikr""".split()
)

GREETINGS = frozenset("hi hello hey hiya thanks thank bye goodbye wow congrats congratulations aww omg yay".split())

WH = frozenset("what what's which who who's whom whose when when's where where's why why's how how's".split())

# These open a question whatever follows ("is oatmeal a good breakfast"); the other auxiliaries only before a
# subject, since chat drops the subject of a statement ("might move back to Ireland", "can't drive").
ASKING_AUX = frozenset("is are am do does did can shall has isn't aren't".split())

AUX = ASKING_AUX | frozenset(
    """was were could would should will may might have wasn't don't doesn't didn't can't couldn't wouldn't
    shouldn't won't haven't hasn't""".split()
)

SUBJECTS = frozenset(
    "i you it he she they we there this that these those the a an my your his her their our any anyone anybody "
    "someone something anything people dogs cats".split()
)

REQUEST_VERBS = frozenset(
    """tell give show help write explain suggest recommend list make find summarize summarise translate describe
    create draft compose generate please rewrite rephrase check fix order pick book plan quiz teach convert compare
    calculate name remind read play imagine act pretend continue repeat define correct edit proofread shorten expand
    send search look try keep stop start use answer respond reply brainstorm outline review improve be talk
    polish format critique evaluate assess analyse analyze debug optimise optimize refactor simplify clarify grade
    rate ignore disregard""".split()
)

# Verbs of request that are also what people do, said without the subject chat drops: "play roller derby on
# wednesdays", "teach maths in Cork", "use a standing desk": as the start of a request they ask of someone.
DOING = frozenset("play start keep use try read stop book plan teach order pick look talk send run coach".split())

SPEECH_VERBS = frozenset("speak talk write reply respond answer explain listen chat".split())

FAMILY = frozenset(
    """mom mum mommy mummy mama mother dad daddy papa father parents parent wife husband hubby partner spouse
    boyfriend girlfriend bf gf fiance fiancee fiancé son sons daughter daughters kid kids child children baby babies
    toddler newborn twins brother brothers sister sisters sibling siblings twin grandma grandpa granny gran nan nana
    grandmother grandfather grandparents grandson granddaughter aunt uncle cousin niece nephew stepdaughter stepson
    stepmom stepmum stepdad stepfather stepmother family youngest eldest oldest in-laws""".split()
)

# Said without "my", these still name the user's own people ("Mom is in the hospital again").
FAMILY_NAMES = frozenset(
    "mom mum mommy mummy mama mother dad daddy papa father grandma grandpa granny gran nan nana hubby wifey wife "
    "husband partner son daughter sister brother boyfriend girlfriend fiance fiancee fiancé baby grandad granddad "
    "gramps nanna nonna auntie aunty stepdad stepmum stepmom".split()
)

# Verbs after which "me" is not the object of a request: "kiwi gives me hives" does not open with them anyway,
# but "call me Kate" and "everyone calls me Bex" do.
ABOUT_ME = frozenset("call calls".split())

PETS = frozenset(
    "dog dogs puppy pup cat cats kitten kitty pet pets hamster rabbit bunny parrot horse tortoise".split()
)

# What a question may mention of the user's own life to disclose something: people, pets, body and health, the
# events of their calendar, their home and their business. "My code", "my coffee", "my resume" are not in it.
PERSONAL = FAMILY | PETS | frozenset(
    """knee knees back shoulder hip hips wrist ankle skin teeth tooth eyes ears heart stomach gut allergy allergies
    diabetes asthma condition meds medication medications medicine prescription pills insulin inhaler therapist
    doctor surgery pregnancy symptoms injury migraine migraines anxiety depression warfarin epipen cholesterol
    blood diet marathon wedding exam exams interview appointment trip birthday anniversary holiday vacation
    honeymoon graduation race finals thesis dissertation bakery shop business company startup restaurant cafe farm
    garden flat apartment house job first studio painting paintings artwork band novel album gig recital
    exhibition""".split()
)

# Someone who is not family, as the subject: what "a friend of mine" did is theirs, not the user's, and what "my
# colleague says" is judged by what follows ("my friend says you can't get sunburnt through a window").
OTHERS = (r"(?:\w+ )?(?:friend|mate|pal|buddy|colleague|coworker|co worker|neighbou?r|roommate|flatmate|housemate|"
           r"classmate|acquaintance|boss|manager|teacher|doctor|coach|guy|someone)s?(?=\b|')")

# "Just Alex please", "Kate is fine": a name on its own, as capitalised as a name is.
# "Dr Patel, but Anil is fine", "Mrs Jones at school, Sarah to you", "not Katherine, Kate", "hey, it's Lou".
NOT_NAMES = (r"(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|"
              r"July|August|September|October|November|December|Christmas|Easter|Ramadan|Diwali|Halloween|Google|"
              r"English|Python|Fine|Good|Ok|Okay|Back|Here|Sorry|Done|Ready|Sure|Home|Lost|Confused|Tired|Not|Me|"
              r"That|This|It|Which|Either|Both|Neither|Any|Anything|Everything|Whatever|Tomorrow|Today|Tonight|Now|"
              r"Later|Email|Text|Kidding|Joking|Checking|Curious|Looking|Wondering|Browsing|Asking|Testing|Thanks|"
              r"Yes|No|Yeah|Nope|Cash|Card|Coffee|Tea|Water)\b)")

DEMONSTRATIVE = frozenset(
    "that that's this it it's you you're your yours there there's here here's which same exactly".split()
)

# A description without subject or verb, the way chat introduces itself: "Huge Arsenal supporter", "Big sci-fi
# reader", "Not a morning person", "Retired firefighter, 62". Its head is a noun for a person by what they do or
# like; what comes before it describes them, what follows only places them ("... for 15 years", "... at heart").
ROLE_NOUNS = (
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
    r"sonographer|optometrist|podiatrist|chiropractor|osteopath|hygienist|dental nurse|vet nurse|zookeeper|"
    r"president|vice president|vp|ceo|cto|cfo|coo|executive|partner|principal|headteacher|chair|chairman|"
    r"chairwoman|supervisor|coordinator|specialist|strategist|advisor|adviser|associate"
)

# Chat drops "my" before the user's own people, pets and body, and then a singular noun without an article is
# theirs ("cat's called Biscuit", "toddler won't sleep through", "knee's been bad since the marathon"); a plural
# is the user's only with a number or a state of theirs ("kids are 4 and 7", "parents are divorced"), since "kids are
# expensive" is about the world.
OWN_BEING = (r"(?:little one|youngest|eldest|oldest|toddler|newborn|kid|child|stepson|stepdaughter|cat|dog|puppy|"
              r"kitten|bunny|rabbit|hamster|parrot|horse|pony|tortoise|budgie|guinea pig)")

OWN_BODY = (r"(?:knee|back|shoulder|hip|wrist|ankle|neck|elbow|foot|skin|stomach|gut|eyesight|hearing|sleep|period|"
             r"cycle|bladder|chest|throat|jaw|tooth|migraine|asthma|eczema|anxiety|mood)")

BODY_STATE = r"(?:been|getting|killing|still|playing|flaring|bad|sore|awful|terrible|worse|better|really|so|not)"

# A verb in a clause without a subject makes it an event or an order, not a description ("love the reader").
FINITE = frozenset(
    """is are was were be been am has have had do does did can could will would should may might must shall
    's love loves hate hates like likes need needs want wants get gets got make makes find try use""".split()
)

# "No" opens a clause as a discourse word ("no, the other one") but not in "no longer ..." or "no kids".
NO_WHAT = frozenset("longer kids children pets car siblings partner".split())


def normal(text: str) -> list[str]:
    """Lower-cased words, apostrophes unified, chat spellings read as the usual contractions, the first person's
    contractions expanded ("i'm" becomes "i am")."""
    out: list[str] = []
    text = _GREATER.sub(" over ", text.lower().replace("’", "'").replace("‘", "'"))
    for word in _WORD.findall(text):
        word = SPELLINGS.get(word, word)
        out += EXPANSIONS.get(word, [word])
    return out
