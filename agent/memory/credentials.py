"""Credentials and identity numbers: what no memory may hold, because every memory may be sent to a model provider
with a later request and shown on any screen the user opens.

Three kinds, each read on the canonical text (``agent.memory.canonical``), so a fullwidth ``ｐａｓｓｗｏｒｄ``, a
Cyrillic letter in it, or a card number with zero-width spaces between its digits reads as what it shows:

- machine secrets: API keys, tokens, private keys. The shapes of known issuers come from ``detect-secrets``
  (Yelp's maintained detector: AWS, GitHub, GitLab, Slack, Stripe, JWT, private-key blocks, keyword assignments and
  more, its plugins used in-process on one line, never on the network) beside a few of our own (``AIza`` Google
  keys, ``sk-`` keys, an OpenSSH key's body); any other long random token by its entropy (detect-secrets'
  Shannon entropy, against a bar that rises with the token's length so a long ordinary word never reaches it).
- credentials said in words: a password, PIN, passcode, combination or door, alarm, Wi-Fi or one-time code, and
  what it is ("the alarm code at the office is 4471", "wifi password: bluebird", "4471 is the garage code"). A
  credential named without its value ("my PIN changed yesterday", "my password is too weak") is no secret. Chat
  also names one shortly or roundabout, or not at all (``UNSAID``): "pass is", "pw", "the word to get in ... is",
  a network's pass after its name, a security question's answer, a mother's maiden name told for the bank. Whose
  account it opens does not matter: a login kept for a son or a grandmother is as much a way in.
- numbers that open an account or prove an identity: card numbers (Luhn over the digits, whatever separates
  them), IBANs in any case (mod-97 checksum), social security numbers with dashes, dots or spaces, and numbers
  named as passport, licence, tax or national insurance numbers.

A phone number, a dosage, a year, a version, a street address, a zip code is none of these and is kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from agent.memory.canonical import matching
from agent.memory.patterns import ANYWHERE, Named
from agent.memory.prefilter import Guarded

SECRET_REFUSAL = "looks like a secret (a key, password or card number): never stored"
ID_NUMBER_REFUSAL = ("looks like an identity or account number (social security, national insurance, passport, "
                     "IBAN): never stored")

# -- machine secrets -------------------------------------------------------------------------------------------

# Prefixes of keys that detect-secrets has no plugin for.
_OWN_KEYS = re.compile(
    r"\bsk-[A-Za-z0-9_-]{16,}|\bAIza[0-9A-Za-z_-]{30,}|\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{10,}|"
    r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bglpat-[A-Za-z0-9_-]{16,}|"
    r"\bhf_[A-Za-z0-9]{30,}|\bAKIA[0-9A-Z]{16}\b|"
    # a private key's armour, whatever kind, and the body of an OpenSSH one ("openssh-key-v1" in base64)
    r"-----\s*BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s*-----|b3BlbnNzaC1rZXktdjE|"
    r"\baws_?secret_?access_?key\b\W{0,3}[A-Za-z0-9/+=]{20,}",
    re.IGNORECASE,
)
# The detect-secrets plugins that read a line of chat without false alarms on ordinary words and in linear time
# (IPPublicDetector is left to the link rules; ArtifactoryDetector takes capitalised words like "APEXLegends" for
# keys; the Cloudant and IBM plugins, for services' keyword assignments, took 8-12 ms on a pasted run of "[" or
# "x=" where the others take well under one; the entropy plugins only read quoted strings: ``_random_token``
# applies their entropy to bare tokens instead). The keyword plugin runs only on a line that names a secret.
_PLUGINS = (
    "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector", "DiscordBotTokenDetector",
    "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector", "KeywordDetector", "MailchimpDetector",
    "NpmDetector", "OpenAIDetector", "PrivateKeyDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector",
    "SoftlayerDetector", "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector", "TwilioKeyDetector",
)
_KEYWORD_BAIT = re.compile(r"pass|pwd|secret|key|contrase", re.IGNORECASE)
# What any of those plugins needs to find anything: a long token, an assignment, a key's armour. A line without
# one (most of chat) skips them, and never imports detect-secrets.
_PLUGIN_BAIT = re.compile(r"\S{16,}|=|PRIVATE KEY|PuTTY", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9+/_=-]{20,}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_BLOB = 64  # a run of base64 this long is a key, a token or a certificate, whatever its entropy


@cache
def _detectors() -> tuple[list[Callable[[str], Iterator[str]]], Callable[[str], float], Callable[[str], float]]:
    """The chosen detect-secrets plugins, each as a function of a line to the secrets it finds, and the entropy
    functions of its base64 and hex plugins: imported and built once, on the first line that needs them."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    found: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    classes: dict[str, Any] = {plugin.__name__: plugin for plugin in found}
    # Assignments only ("password = x", 'api_key: "x"'): its plain "word: value" form takes "secretary: Jane"
    # for a secret, and credentials said in words are read by ``_SAID_FORMS`` below.
    assignments: dict[Any, int] = {keyword.FOLLOWED_BY_EQUAL_SIGNS_REGEX: 5,
                                   keyword.FOLLOWED_BY_COLON_EQUAL_SIGNS_REGEX: 4,
                                   keyword.FOLLOWED_BY_QUOTES_AND_SEMICOLON_REGEX: 3,
                                   keyword.FOLLOWED_BY_COLON_QUOTES_REQUIRED_REGEX: 5}
    words = keyword.KeywordDetector()

    def assigned(line: str) -> Iterator[str]:
        if not _KEYWORD_BAIT.search(line):
            return iter(())
        return words.analyze_string(line, denylist_regex_to_group=assignments)

    found = [assigned if name == "KeywordDetector" else classes[name]().analyze_string for name in _PLUGINS]
    return found, Base64HighEntropyString().calculate_shannon_entropy, HexHighEntropyString().calculate_shannon_entropy


def _transitions(token: str) -> int:
    """How often a token switches between lower case, upper case and digit (symbols aside): a random key does it
    at about every other character, "CustomerServiceRep2023" four times, a path ("lib/python3/site-packages") once
    a word."""
    kinds = ["l" if c.islower() else "u" if c.isupper() else "d" for c in token if c.isalnum()]
    return sum(a != b for a, b in zip(kinds, kinds[1:], strict=False))


def _random_token(text: str) -> bool:
    """A bare token as random as a key: long, of letters and digits mixed at every turn, and above detect-secrets'
    entropy for a random string of its length (the bar is log2(length) - 0.95: 99% of random base62 strings of
    20 to 40 characters clear it, and no English word or CamelCase name does)."""
    _, base64_entropy, hex_entropy = _detectors()
    for match in _TOKEN.finditer(text):
        token = match.group().strip("=-_/+")
        if len(token) >= _BLOB and re.search(r"\d", token) and re.search(r"[A-Za-z]", token):
            return True
        if (len(token) < 20 or not re.search(r"\d", token) or not re.search(r"[A-Za-z]", token)
                or _transitions(token) < 0.3 * len(token)):
            continue
        if base64_entropy(token) > math.log2(len(token)) - 0.95:
            return True
    return any(hex_entropy(m.group()) > 3.0 for m in _HEX.finditer(text) if re.search(r"[a-fA-F]", m.group()))


def machine_secret(text: str) -> bool:
    """An API key, token, private key or other machine credential in ``text`` (the ``matching`` view: case kept)."""
    if _GUARDED_KEYS.search(text):
        return True
    if not _PLUGIN_BAIT.search(text):
        return False
    plugins, _, _ = _detectors()
    return any(any(True for _ in find(text)) for find in plugins) or _random_token(text)


# -- credentials said in words ----------------------------------------------------------------------------------

# The names of a credential one slip of the keyboard hides ("pasword", "passwrd", "alram"): ``agent.memory.typos``
# reads a slip of these as the word, and ``agent.memory.refusal`` asks ``secret`` of the text so read too.
SLIPPED_WORDS = ("password", "passwords", "passcode", "passphrase", "combination", "alarm", "padlock", "lockbox",
                 "keypad", "security", "recovery", "authenticator", "credentials", "passwort", "kennwort",
                 "wachtwoord", "contrasena")

# What only a code opens: a thing said with a value after a colon ("wifi: SunnyDay#77") or as "is" and a bare run
# of digits ("the alarm is 4411") is its code.
_LOCKS = (r"(?:alarm|alarm system|door|front door|back door|garage|garage door|lock|padlock|bike lock|locker|safe|"
          r"vault|keypad|lockbox|key ?box|key ?safe|wi-? ?fi|router|network|login|admin|root)")
# "Password" in other languages and scripts, each also as ``matching`` reads it (Cyrillic "пароль" with its
# lookalike letters made Latin is "пapoль").
_PASSWORD_WORDS = ("lösenord", "adgangskode", "passord", "salasana", "jelszó", "heslo", "geslo", "şifre", "sifre",
                   "пароль", "парола", "κωδικός", "पासवर्ड", "密码", "密碼", "パスワード", "暗証番号", "비밀번호",
                   "암호", "كلمة المرور", "كلمة السر", "סיסמה", "รหัสผ่าน", "mật khẩu", "kata sandi")
_OTHER_TONGUES = "|".join(sorted({re.escape(form) for word in _PASSWORD_WORDS for form in (word, matching(word))}))
# Words of other tongues for a password or a PIN that are no English words (a plain "code" is not one: "el código
# postal es 28013" is an address): after one, a value that is no
# word (``_STRONG``) is the credential whatever joins them ("haslo do maila to Zielony_Kot88", "密码是maple1988",
# "la clave del wifi: Gato#2019"), since no list of each tongue's verbs and prepositions is ever whole. English names
# of a credential still need a verb or a colon: "password for netflix2" is no value.
_FOREIGN_WORDS = ("contraseña", "contrasena", "clave", "passwort", "kennwort", "mot de passe", "wachtwoord",
                  "senha", "hasło", "haslo", "geheimzahl", "pincode", "pin-code",
                  "口令", "验证码", "暗码", "パスコード", *_PASSWORD_WORDS)
_FOREIGN = "|".join(sorted({re.escape(form) for word in _FOREIGN_WORDS for form in (word, matching(word))},
                           key=len, reverse=True))
# Scripts written without spaces (Chinese, Japanese, Korean): a word there starts right after another letter.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_WORD_START = rf"(?:(?<!\w)|(?<=[{_CJK}]))"
# Credentials whose value may be a plain word ("the wifi password is bluebird").
_WORDY = (r"(?:pass ?word|passwd|pwd|pw|(?:wi-? ?fi|router|network|login|account|e-?mail|bank|admin) pass|"
          r"pass ?phrase|pass ?code|contrase[nñ]a|passwort|kennwort|mot de passe|"
          rf"wachtwoord|senha|has[lł]o|{_OTHER_TONGUES}|(?:seed|recovery|backup|secret|mnemonic) (?:phrase|words)|"
          r"security (?:answer|question answer)|memorable (?:word|answer))")
# What a code, PIN or key opens.
_THINGS = (r"(?:alarm|door|front door|back door|gate|garage|garage door|lock|locker|padlock|bike lock|safe|vault|"
           r"entry|entrance|keypad|house|flat|apartment|lockbox|key ?box|key ?safe|phone|unlock|screen|lock ?screen|"
           r"sim|voicemail|atm|debit card|credit card|card|bank card|login|wi-? ?fi|router|admin|root|master|"
           r"security|access|verification|confirmation|one-?time|2fa|mfa|otp|sms|auth|authentication|"
           r"authenticator|recovery|backup|alarm system|suitcase|briefcase|pin)")
_NAMED = (rf"(?:{_WORDY}s?|{_THINGS}(?: [a-z]+)? (?:codes?|pin|pin code|passcode|combination|combo)|"
          r"(?:alarm|door|gate|garage|lock|safe|vault|entry|keypad|master|admin|root|api|secret|private|license|"
          r"licence|product|recovery|encryption|ssh|gpg|pgp|wi-?fi|wpa2?|network|activation|registration|serial|"
          r"access|auth|bearer|refresh) keys?|(?:access|auth|bearer|refresh|session|personal access|bot|github|"
          r"gitlab|slack|discord|api|secret) tokens?|pins?|pin numbers?|pin codes?|cvv2?|cvc2?|csc|otp)")
# Names of a credential that are also ordinary words ("the code I wrote", "a token of thanks"): only with a value.
_GENERIC = r"(?:code|token|secret|combination|combo|key|c[oó]digo|codice|kod|код|clé|chiave|schlüssel)"
# A credential's name that is part of another noun: "my password manager is great", "the pin screen".
_COMPOUND = (r"(?!\s+(?:managers?|resets?|policy|policies|requirements?|rules?|hints?|strength|generators?|fields?|"
             r"prompts?|protected|changes?|updates?|expiry|apps?|box|boxes|screens?|pages?|forms?|hygiene|length|"
             r"history|reminders?|recovery)\b)")
_NAME = rf"(?:{_NAMED}{_COMPOUND})"
# What a value is not: the words that describe a credential instead of giving it.
_NOT_VALUE = (
    r"(?:too|very|so|really|quite|pretty|super|extremely|way|ridiculously|insanely|kind of|kinda|sort of|actually|"
    r"probably|definitely|basically|not|no|still|now|just|also|always|never|only|being|getting|going|the|a|an|my|"
    r"your|his|her|our|their|its|this|that|these|those|same|different|changed|expired|expiring|wrong|right|"
    r"correct|incorrect|weak|strong|long|short|easy|hard|simple|complicated|complex|impossible|secure|insecure|"
    r"safe|unsafe|something|nothing|anything|what|which|in|on|at|under|inside|behind|written|saved|stored|stuck|"
    r"broken|reset|locked|forgotten|lost|new|old|required|needed|case|set|based|like|about|for|of|with|to|from|"
    r"somewhere|hidden|known|shared|fine|ok|okay|good|bad|great|terrible|awful|annoying|sensitive|unique|"
    r"memorable|random|generated|printed|taped|blank|empty|none|missing|gone|due|overdue|invalid|valid|working|"
    r"mandatory|optional|enough|all|both|either|one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
    r"\d{1,2} (?:digits?|characters?|letters?|words?)|digits?|characters?|letters?|words?|numbers?|numeric|"
    r"alphanumeric|easy to|hard to|impossible to|"
    # the same words in the tongues whose names of a password are read: "mi contraseña es muy larga"
    r"muy|demasiado|bastante|nueva|nuevo|très|trop|nouveau|nouvelle|sehr|zu|neu|molto|troppo|nuova|muito|nova|"
    r"bardzo|zbyt|nowe|очень|слишком|новый|zeer|te|nieuw)"
)
# A value that is no word: a token with a digit (not a lone one) or a symbol, or anything quoted. Atomic groups keep
# each try linear: a 2,000-digit run costs one pass, not a cube of it.
_STRONG = (r"(?:(?>\d(?:[ -]\d){3,})\b|(?!{_MEASURE})(?=[^\s\d]*+\d)(?!\d(?!\S))(?>\S+)|"
           r"(?!{_MEASURE})(?=\S*?[^\w\s'’.,!?;:()\"“”-])(?>\S+)|[\"“'‘][^\"”'’\n]{3,}[\"”'’])")
# A token with a digit that is a quantity, not a value: "72-hour", "24/7", "3x", "2nd", "10am", "100%", "$50",
# "2500m" (a mountain pass is no password).
_MEASURE = (r"(?:[$£€]\d|\d+(?:st|nd|rd|th|x|%|am|pm|s|k)(?!\w)|\d+[/:]\d+(?![\w/:-])|\d+(?:\.\d+)?-?(?:hours?|days?|"
            r"weeks?|months?|years?|minutes?|seconds?|miles?|km|inch(?:es)?|foot|feet|kg|lbs?|points?|steps?|parts?|"
            r"pages?|words?|times?|percent|degrees?|m|cm|mm|mg|mcg|ml|g|oz|kcal|mph)(?!\w))")
_STRONG = _STRONG.replace("{_MEASURE}", _MEASURE)
# The verbs and prepositions of the languages whose names of a password ``_WORDY`` reads ("la contraseña del wifi es").
_VERB = (r"(?:is|was|are|were|will be|has been|is now|now is|'s|’s|=|:|->|changed to|set to|reads|becomes|became|"
         r"(?<!\w)(?:es|est|ist|é|è|jest|är|er|je|on|это|है|हैं)(?!\w)|是|は|는|은|هي|הוא)")
_PREP = r"(?:at|for|to|of|on|in|from|with|by|del|de|du|des|von|vom|da|do|di|för|til)"
# Words no list of recovery words holds (BIP-39's 2,048 hold none of these): a run with them is a sentence.
_FUNCTION_WORD = (r"(?:the|and|for|are|was|were|with|that|this|have|has|had|but|you|not|from|they|she|his|her|our|"
                  r"its|then|when|what|who|will|would|can|could|just|like|very|some|into|about|there|their|them)")
# What names a machine's secret, said with its value: a seed, a token, a key, a secret, a recovery or backup code.
_SECRET_NOUN = (r"seed|tokens?|(?:api |secret |private |recovery |backup |license |licence |product |ssh |gpg |"
                r"encryption |access )?keys?|secrets?|totp|2fa|mfa|otp|authenticator|recovery codes?|backup codes?")
# A value as random as a key: twelve or more letters and digits, or groups of them between dashes, two digits
# and a letter at least in it, or a base32 seed of sixteen or more capitals and digits 2-7 (an authenticator's).
_KEYLIKE = (r"(?:(?=(?:[A-Za-z-]*\d){2})(?=[A-Za-z0-9-]*[A-Za-z])"
            r"(?>[A-Za-z0-9]{12,}|[A-Za-z0-9]{3,6}(?:-[A-Za-z0-9]{3,6}){2,})(?![\w-])|"
            r"(?-i:(?>[A-Z2-7]{16,}))(?![\w-]))")
# The forms of a credential said in words, compiled on the first line that names one (it takes 30 ms, which every
# command would otherwise pay at start).
_SAID_FORMS = (
    # "the wifi password is bluebird", "wifi password: bluebird", "my password for the cabin is bluebird"
    rf"{_WORD_START}{_WORDY}(?:'s|’s)?(?: {_PREP}\b[^.!?;,\n]{{0,40}}?)?\s*{_VERB}\s*(?!{_NOT_VALUE}\b)"
    r"[\"“'‘]?[^\s.,;:!?\"“”'‘’]|"
    # "the alarm code at the office is 4471", "pin: 4471", "the combination I use is 12-34-56"
    rf"{_WORD_START}(?:{_NAME}|{_GENERIC}{_COMPOUND})(?:'s|’s)?(?: [^.!?;\n]{{0,40}}?)?\s*{_VERB}\s*(?:now\s+)?"
    rf"{_STRONG}|"
    # "pin 4471", "door code #8842", "password hunter2", "pin no. 3366", "the same password, m0nkeyb1z", "alarm: 3311"
    rf"\b{_NAME}(?:\s+(?:number|no\.?|num))?\s*[#,:;–-]?\s*(?:(?>\d(?:[ -]?\d){{2,}})|(?=\S*\d)(?=\S*[a-z])\S{{4,}})"
    rf"(?![\w/])|\b{_THINGS}\s*[:=]\s*\d(?:[ -]?\d){{2,}}\b|"
    # "4471 is the alarm code", "hunter2 is my password", "2-7-1-9, that's the combination"
    rf"(?:^|(?<![\d-])\s){_STRONG}[,;]?\s+(?:is|was|'s|’s|that'?s|that’s|that is|which is)"
    rf"(?: the| my| our| his| her| their| its)? (?:[\w'’-]+ ){{0,3}}(?:{_NAMED}|{_GENERIC})\b|"
    # "gpg passphrase 'correct horse'", "wifi: SunnyDay#77", "security code on my card 884", "the alarm is 4411"
    rf"\b{_NAME}\s*[#,:;=–-]?\s*[\"“'‘][^\"”'’\n]{{3,}}[\"”'’]|\b{_LOCKS}\s*[:=]\s*{_STRONG}|"
    rf"\b{_NAME} (?:on|for|of|at) (?:my|the|our|his|her|their|this|that) [a-z]+(?: [a-z]+)?\s*[#:=]?\s*"
    rf"(?:is\s+)?\d{{3,8}}\b(?![.,]\d)|"
    # "the lockbox is 3-9-5-1", "the lockbox at the cottage is 3-9-5-1", "the safe in mum's room: 4471"
    rf"(?:\b(?:the|my|our|his|her|their) |^\s*)(?:[a-z]+ )?{_LOCKS}"
    rf"(?: (?:at|in|on|of|for|by|behind|under) [^.!?;,\n]{{1,30}}?)?"
    rf"(?: (?:is|'s|’s)|\s*[:=])\s+(?>\d(?:[ -]?\d){{3,7}})(?=\s*(?:$|[.,;!?)]))|"
    # a named secret and a value as random as a key after it, a word or two between: "vpn token seed
    # JBSWY3DPEHPK3PXP", "2fa secret: KZXW6YTB", "the recovery key 8H2K-PQ7Z-..."
    rf"\b(?:{_SECRET_NOUN})(?:\s+[a-z]+){{0,2}}?\s*[#:=–-]?\s*{_KEYLIKE}|"
    # recovery words: twelve or more plain words after what names them ("wallet seed words: apple banana ...")
    rf"\b(?:seed|recovery|mnemonic|backup|wallet|secret|(?:12|24|18|twelve|twenty-four) words?)\b[^.!?\n]{{0,40}}?"
    rf"(?:\b(?!{_FUNCTION_WORD}\b)[a-z]{{3,8}}[ ,]+){{11,}}(?!{_FUNCTION_WORD}\b)[a-z]{{3,8}}\b|"
    # a dial's combination: "combination: left 12 right 34 left 56"
    r"\b(?:combination|combo)\b[^.!?\n]{0,20}?\b(?:left|right|l|r)\s*\d{1,2}\b"
    r"(?:[ ,]*(?:left|right|l|r)\s*\d{1,2}\b){2,}|"
    # a word of another tongue for a password or code, then a value that is no word: "haslo do maila to Zielony_Kot88"
    rf"{_WORD_START}(?:{_FOREIGN})(?!\w)[^.!?;\n]{{0,40}}?(?:(?<=[\s:：={_CJK}])|(?<=^))(?!(?:19|20)\d\d\b|\d{{1,2}}\s)"
    rf"{_STRONG}|"
    # the name asked, then its value: "door code? 4471", "wifi's password? it's Tr0ub4dor&3"
    rf"\b{_NAME}\s*\?+\s*(?:(?:it'?s|it’s|its|it is|=|:)\s*)?(?:now\s+)?{_STRONG}|"
    # a login said as user and password: "work login jsmith / Spring2026!", "creds: admin | hunter22", "login: jdoe
    # pass: Summer22"
    rf"\b(?:log-? ?in|sign-? ?in|user(?: ?name)?|account|e-?mail)\b[^.!?\n]{{0,30}}?\bpass\s*[:=]\s*{_STRONG}|"
    rf"\b(?:log-? ?in|sign-? ?in|credentials?|creds)\b[^.!?\n]{{0,20}}?\S+\s*[/|]\s*{_STRONG}|"
    # "the padlock opens with 2719", "punch in 4471 to disarm it"
    r"\b(?:opens?|unlocks?|disarms?|arms?|gets? (?:you|me|us) in)\s+with\s+(?:the code\s+|code\s+)?\d(?:[ -]?\d){2,}|"
    # "mum's house alarm, it's 2580"
    rf"\b{_THINGS}\b[^.!?\n]{{0,20}}?\b(?:it'?s|it’s|it is)\s+(?:now\s+)?(?>\d(?:[ -]?\d){{3,}})(?=\s*(?:$|[.,;!?)]))|"
    # "I changed my wifi password, it's now bluebird42"
    rf"\b{_NAME}\b[^.!?\n]{{0,40}}?\b(?:it'?s|it’s|it is|which is|that is|that's)\s+(?:now\s+)?{_STRONG}|"
    # "the code to get in is 4471", "my code is 4471"
    r"\bcode (?:to|for) (?:get(?:ting)? in|enter\w*|open\w*|unlock\w*|the \w+(?: \w+)?)\b[^.!?\n]{0,30}?"
    rf"\s*{_VERB}\s*{_STRONG}|\b(?:the|my|our|his|her|their|its) code\s*{_VERB}\s*\d{{3,}}|"
    # "the alarm at the flat, code 4471", "code: 4471", "the bank texted me a code 558120"
    r"(?:^|[,:;(]\s*|\b(?:a|the|my|this|that|your|new) )code\s*[:#]?\s*\d(?:[ -]?\d){3,7}\b|"
    # a password's name, whatever words of whatever tongue join it to a value of mixed case and digits, as only a
    # password is: "ang password ko sa email ay SantoNino1986" ("password for netflix2" names an account)
    rf"{_WORD_START}{_WORDY}{_COMPOUND}\b[^.!?;\n]{{0,40}}?(?<![\w-])(?-i:(?=\S*[a-z])(?=\S*[A-Z])(?=\S*\d))"
    r"[^\s.,;:!?]{6,}"
)


@cache
def _said() -> re.Pattern[str]:
    return re.compile(_SAID_FORMS, re.IGNORECASE)


# -- credentials said without the usual words ---------------------------------------------------------------------
# Chat names a credential shortly or roundabout ("pass is", "the word to get in ... is"), or gives what opens an
# account without calling it a password at all (a security question's answer, a mother's maiden name told for the
# bank). Each form is named, with what it must read and what it must not (``tests/unit/test_refusal_named.py``
# reads them on the ``matching`` view, as ``said_credential`` does); whose account it opens does not matter: a
# password kept for a son or a grandmother is as much a secret, and as much a way in, as the user's own.

# A value that may be a plain word ("the answer is fluffy"), but not a word that describes the credential instead
# ("the answer is easy") nor a pronoun that opens a clause ("security questions: i hate them").
_PLAIN = (rf"(?!{_NOT_VALUE}\b|(?:i|we|they|he|she|it|you|is|was|are)\b)[\"“'‘]?[^\s.,;:!?\"“”'‘’]{{2,}}")
# What a "pass" is when it is no password: a ticket ("bus pass is monthly", "boarding pass: 14B").
_TICKETS = ("bus", "boarding", "ski", "season", "train", "rail", "travel", "transit", "metro", "tram", "subway",
            "day", "week", "weekly", "monthly", "annual", "yearly", "gym", "museum", "park", "parking", "festival",
            "event", "press", "backstage", "hall", "free", "fast", "mountain", "vip", "all-access", "covid", "green",
            "visitor", "student", "zoo", "pool", "cinema", "concert", "show", "gig", "match", "stadium", "bike",
            "library", "hiking", "boat", "ferry", "airport", "lounge", "travel card", "e")
_TICKET_WORDS = "|".join(re.escape(word) for word in _TICKETS if len(word) > 1)
_NOT_A_TICKET = "".join(rf"(?<!\b{re.escape(word)} )(?<!\b{re.escape(word)}-)" for word in _TICKETS)
_SHORT_PASS = Named(
    "a short name of a password, then a value that is no word", ANYWHERE, re.compile(
        rf"(?<![\w-]){_NOT_A_TICKET}pass(?: (?:for|to|of|on|at|in) (?!(?:the |a |my |our )?(?:{_TICKET_WORDS})\b)"
        rf"[^.!?;,\n]{{0,40}}?)?\s*(?:is|was|'s|’s|:|=|->|is now|now is|changed to|set to)\s*(?:now\s+)?"
        rf"(?!\d{{1,3}}(?![\w-]))(?!{_TICKET_WORDS}\b){_STRONG}",
        re.IGNORECASE),
    matches=("my pass is zielony77, dont forget", "pass: Kasia#1990", "and pass is kartoplya2024!",
             "pass for the school portal is Zosia2015", "for my wife's email the pass is Kwiatek88"),
    misses=("bus pass is monthly, 110 zl", "boarding pass: 14B", "the pass rate was 85% this year",
            "bus pass: £20 a week", "my pass is in my wallet", "I passed my driving test", "the pass is 2500m high",
            "i bought a pass for the pool: 20 zl", "my pass: 12 rides left"),
    raw=True,
)
# Where a network or a login is named first, "pass" and "pw" need no verb: "wifi Orange_5G pass Tomek1985".
_ACCESS_THINGS = (r"(?:wi-? ?fi|network|router|ssid|hotspot|log-? ?in|user(?: ?name)?|account|e-?mail|gmail|"
                  r"facebook|instagram|netflix|app|portal)")
_PASS_AFTER_LOGIN = Named(
    "a login or a network named, then its pass", ANYWHERE, re.compile(
        rf"\b{_ACCESS_THINGS}\b[^.!?\n]{{0,40}}?(?<![\w-]){_NOT_A_TICKET}(?:pass|pw|pwd)\s*[-–:=]?\s*(?:is\s+)?"
        rf"{_STRONG}",
        re.IGNORECASE),
    matches=("home wifi is Orange_5G pass Tomek1985", "keep my grandpas login for him: user jan_w pass Jan1948",
             "guest wifi: CafeNet / pw coffee4all"),
    misses=("the wifi at the station, pass 3 stops and get off", "my account pass expired",
            "the app says my bus pass 2024 is valid"),
    raw=True,
)
# A word that lets one in, named by what it does: "the word to get in mama's bank app is sonechko1959". A magic,
# secret or code word ("the magic word is please") is a game's unless its value is no word.
_WORD_TO_GET_IN = Named(
    "the word that lets one in", ANYWHERE, re.compile(
        r"\bword\s+(?:to|for)\s+(?:get(?:ting)?\s+in(?:to)?|log(?:ging)?\s*(?:in(?:to)?|on)|sign(?:ing)?\s*in(?:to)?|"
        r"enter(?:ing)?|unlock(?:ing)?|access(?:ing)?|open(?:ing)?)\b"
        rf"[^.!?;\n]{{0,40}}?\s*{_VERB}\s*{_PLAIN}|"
        rf"\b(?:magic|secret|safe|code|pass)\s+word\b[^.!?;\n]{{0,40}}?\s*{_VERB}\s*{_STRONG}",
        re.IGNORECASE),
    matches=("the word to get in mama's privatbank app is sonechko1959",
             "the word to get into the staff portal is bluemoon42", "word to get in the app is Sloneczko!",
             "the magic word for the vpn is tangerine99"),
    misses=("the word for bread in polish is chleb", "the word to describe him is stubborn",
            "the magic word is please", "the word to get in is long"),
    raw=True,
)
# A security question's answer, which opens the account as a password does: "security question 'first pet name'
# answer is murzik", "the answer to my security question is fluffy", "security q first pet name - murka".
_QUESTION = r"(?:security|secret|verification|challenge|memorable|bank)\s+(?:q|qs|questions?)\b"
_SECURITY_ANSWER = Named(
    "a security question's answer", ANYWHERE, re.compile(
        rf"\b{_QUESTION}[^.!?\n]{{0,50}}?\banswer\b\s*(?:(?:is|was|'s|:|=|-|–|->)\s*{_PLAIN}|{_STRONG})|"
        rf"\banswers?\s+(?:to|for|of)\s+(?:\S+\s+){{0,3}}?{_QUESTION}[^.!?\n]{{0,40}}?\s*(?:is|was|:|=|-|–)\s*"
        rf"{_PLAIN}|"
        rf"\b{_QUESTION}\s+[^.!?\n:=–-]{{3,40}}?\s[-–:=]\s*{_PLAIN}",
        re.IGNORECASE),
    matches=("security question 'first pet name' answer is murzik", "the answer to my security question is fluffy",
             "security q first pet name - murka", "secret question is name of first pet, answer: burek",
             "answer to security question (first school) = szkola12",
             "for the bank security question the answer is 'rex'"),
    misses=("my security question is about my first pet", "what is a good answer for a security question?",
            "security question answer is easy to guess", "security questions: i hate them",
            "the security question, I answered it wrong"),
    raw=True,
)
# A mother's maiden name told for a bank or a login is the answer it asks for; told as family history, it is
# family history ("my mother's maiden name was Kowalska, her family is from Krakow").
_FOR_ACCESS = r"\b(?:bank|banking|security|verification|account|login|app|card|password|pin|answer|verify)\b"
_MAIDEN_NAME = Named(
    "a maiden name told for an account", ANYWHERE, re.compile(
        rf"\bmaiden\s+name\b[^.!?;\n]{{0,40}}?{_FOR_ACCESS}[^.!?;\n]{{0,20}}?\s*{_VERB}\s*{_PLAIN}|"
        rf"\bmaiden\s+name\s*{_VERB}\s*{_PLAIN}[^.!?\n]{{0,30}}?\b(?:for|at|with|on|in)\s+(?:the\s+|my\s+|our\s+)?"
        rf"(?:\w+\s+)?{_FOR_ACCESS}",
        re.IGNORECASE),
    matches=("my mother's maiden name for the bank is Nowak", "mothers maiden name for bank verification: petrenko",
             "mom's maiden name is Smith, for the bank app"),
    misses=("my mother's maiden name was kowalska, her family is from krakow",
            "my mother's maiden name for the bank is the same as my granny's", "what's a maiden name?"),
    raw=True,
)
# A word a bank or an account asks for, named by what it is for: "code word with the bank is heron", "memorable word
# galway". Its value may be any word: the bank asks for that word.
_ACCOUNTS = r"(?:bank|banking|account|card|app|login|helpline|phone line)"
_ACCOUNT_WORD = Named(
    "a word an account asks for", ANYWHERE, re.compile(
        rf"\bmemorable\s+(?:word|phrase)\b(?:\s+(?:with|for|at|on|of)\s+(?:the\s+|my\s+|our\s+)?(?:\w+\s+)?{_ACCOUNTS})?"
        rf"(?:\s*{_VERB}\s*|\s+(?!(?:for|to|of|in|is|that|a|an|the|and|or|with)\b)){_PLAIN}|"
        rf"\b(?:code|secret|security|safe|pass)\s*(?:word|phrase)\s+(?:with|for|at|on|of)\s+(?:the\s+|my\s+|our\s+)?"
        rf"(?:\w+\s+)?{_ACCOUNTS}\s*{_VERB}\s*{_PLAIN}",
        re.IGNORECASE),
    matches=("code word with the bank is heron", "online banking user id 66123098, memorable word galway",
             "my memorable word for the bank: kestrel", "security word for the card is Bran"),
    misses=("what's a memorable word for a toast?", "the code word is a nice idea for the party game",
            "i hate memorable words", "the safe word at the club is pineapple lol"),
    raw=True,
)
# A login said as a name and a password-shaped value apart: "login for the school portal is dmurphy / Chem1stry!".
_LOGIN_PAIR = Named(
    "a login's name and its value", ANYWHERE, re.compile(
        rf"\b(?:log-?\s?in|sign-?\s?in|credentials?|user(?:\s?name)?|account)\b[^.!?\n]{{0,40}}?\S+\s*[/|]\s*{_STRONG}",
        re.IGNORECASE),
    matches=("login for the school portal is dmurphy / Chem1stry!", "netflix account: declan.m | Bran99!x"),
    misses=("login page is on the left / top corner", "my account is with AIB / Bank of Ireland"),
    raw=True,
)
# The code that unlocks a SIM: "my PUK is 88231904".
_PUK = Named(
    "a SIM's unlock code", ANYWHERE, re.compile(r"\bpuk2?\b(?:\s+code)?[^.!?\n\d]{0,12}?\d{4,}", re.IGNORECASE),
    matches=("my PUK is 88231904 in case the sim locks again", "puk code: 12345678"),
    misses=("what is a puk code?", "the puk is on the card somewhere"),
    raw=True,
)
UNSAID = (_SHORT_PASS, _PASS_AFTER_LOGIN, _WORD_TO_GET_IN, _SECURITY_ANSWER, _MAIDEN_NAME, _ACCOUNT_WORD, _LOGIN_PAIR,
          _PUK)
# A code that is an address or a label, never a secret: "my zip code is 90210", "the dress code is formal".
_PUBLIC_CODES = re.compile(
    r"\b(?:zip|postal|post|area|country|dialling|dialing|dial|phone|dress|source|morse|promo|promotional|discount|"
    r"coupon|voucher|referral|gift|tax|sort|bar|qr|error|status|http|exit|return|colou?r|hex|iso|airport|course|"
    r"class|room|product|language|iata|icao|building|station|flight|train|booking|reference|tracking|order) ?codes?\b|"
    # the same in the tongues whose word for a code is read: "el código postal es 28013"
    r"\b(?:c[oó]digo|codice|code|kod)\s+(?:postal|postale|pocztowy|de (?:área|area|país|descuento|promoci[oó]n))\b|"
    r"\bpostleitzahl\b|\bпочтовый индекс\b",
    re.IGNORECASE,
)


# India's postal code is a "pin code" too, said with the place it names: "my pin code is 110001, delhi area".
_POSTAL_PIN = re.compile(r"\bpin ?code\b[^.!?\n]{0,30}\b(?:area|district|locality|post office|city|town|village|"
                         r"state|pincode)\b", re.IGNORECASE)


# A word that every form of ``_SAID_FORMS`` needs: a line without one (most of chat) is not read further.
_SAID_BAIT = re.compile(r"pass|login|creds|credential|router|network|admin|root|keypad|"
                        r"pwd|\bpw\b|\bpins?\b|code|combin|combo|key|token|secret|cvv|cvc|\bcsc\b|otp|phrase|"
                        r"open|unlock|disarm|alarm|lock|door|gate|safe|vault|wi-?fi|garage|"
                        r"security|memorable|mnemonic|maiden|answer|word (?:to|for)|(?:magic|secret|safe|code) word|"
                        r"contrase|kennwort|mot de passe|wachtwoord|senha|has[lł]o|"
                        rf"seed|totp|2fa|mfa|authenticator|mnemonic|recovery|wallet|words|c[oó]dig|codice|kod|код|clé|chiave|schlüssel|{_FOREIGN}",
                        re.IGNORECASE)


# How far from the word that names it a credential's value is read: every form of ``_SAID_FORMS`` spans less.
_REACH = 90


# Searched only where it can match (``agent.memory.prefilter``): its 60 words, case-insensitive, were tried at every
# position of every line, 50 us a line judged, and one line in fifteen holds one of them.
_BAIT = Guarded(_SAID_BAIT)


def _windows(text: str) -> list[str]:
    """The stretches of ``text`` around each word ``_SAID_FORMS`` needs, merged and widened to whole words: a 2,000-
    character paste is read where a credential could be, so a long run of digits or dashes costs linear time."""
    spans: list[list[int]] = []
    for match in _BAIT.finditer(text):
        start, end = max(0, match.start() - _REACH), min(len(text), match.end() + _REACH)
        if spans and start <= spans[-1][1]:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    pieces = []
    for start, end in spans:
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        while end < len(text) and not text[end].isspace():
            end += 1
        pieces.append(text[start:end])
    return pieces


# Digits said as words ("four four seven one", "nine-oh-two-six"): a code read aloud is still the code.
_DIGIT_WORDS = {"zero": "0", "oh": "0", "o": "0", "nought": "0", "one": "1", "two": "2", "three": "3", "four": "4",
                "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9"}
_DIGIT_WORD = r"(?:zero|oh|o|nought|one|two|three|four|five|six|seven|eight|nine)"
_SPELLED_RUN = re.compile(rf"\b{_DIGIT_WORD}(?:[ ,-]+{_DIGIT_WORD}){{2,}}\b", re.IGNORECASE)


def _spelled_digits(text: str) -> str:
    """``text`` with each run of three or more digits said as words written as the digits: "is four four seven one"
    reads "is 4471", so every form of ``_SAID_FORMS`` reads a code said aloud as it reads one typed."""
    return _SPELLED_RUN.sub(
        lambda m: "".join(_DIGIT_WORDS[w.lower()] for w in re.split(r"[ ,-]+", m.group()) if w), text)


# Single digits apart, whatever parts them: "4_4_7_1", "4 - 4 - 7 - 1", "4/4/7/1" are the code "4-4-7-1".
_PARTED_DIGITS = re.compile(r"(?<![\w.])\d(?:\s*[-_./·•]\s*\d|\s\d){3,}(?![\w.])")


def _joined_digits(text: str) -> str:
    """``text`` with each run of four or more single digits, parted by any separator, written "d-d-d-d"."""
    return _PARTED_DIGITS.sub(lambda m: "-".join(re.findall(r"\d", m.group())), text)


def said_credential(text: str) -> bool:
    """A credential and its value said in words (the ``matching`` view), its digits typed or said as words, and
    parted by any separator."""
    spelled = _joined_digits(_spelled_digits(text))
    for view in (text, spelled) if spelled != text else (text,):
        for piece in _windows(view):
            for match in _said().finditer(piece):
                if not _PUBLIC_CODES.search(piece[max(0, match.start() - 12) : match.end()]) and not (
                        _POSTAL_PIN.search(piece[max(0, match.start() - 12) : match.end() + 40])):
                    return True
            if any(form(piece) for form in UNSAID):
                return True
    return False


# -- identity and account numbers -------------------------------------------------------------------------------

_ID_NAMES = (r"ssn|social security(?: number| no)?|national insurance(?: number| no)?|ni (?:number|no)|nino|"
             r"passport(?: number| no)|(?:driver'?s |driving )licen[cs]e(?: number| no)|tax (?:id|number|code)|"
             r"itin|iban|sort code|(?:bank )?account (?:number|no)|routing number|medicare number|"
             r"nhs number|personal (?:id|identity) number|id (?:number|no)|bsn|pesel|aadhaar|sin number|"
             r"social insurance number|steuer-?id|codice fiscale|dni|nif|curp|cpf|personnummer|personal number|"
             r"henkilötunnus|cpr(?: number| nummer)?|fødselsnummer|rijksregisternummer|pps(?: number| no)|"
             # a health or insurance card's number proves who is insured: "health card number 1234 567 890"
             r"health (?:card|insurance)(?: card)?(?: number| no)|health number|ohip(?: number| no)?|"
             r"(?:insurance|patient|member) id(?: number| no)?|policy number")
_NAMED_NUMBER = re.compile(
    rf"\b(?:{_ID_NAMES})\b\s*(?:is|was|:|=|#|number|no\.?)?\s*[a-z]{{0,2}}[ -]?(?:\d[ -]?){{3}}",
    re.IGNORECASE,
)
# A document named without "number" ("passport A12345678", "PAN ABCDE1234F", "sin 046 454 286"): the name and
# a value right after it of letters and digits, its first word with a digit, holding at least four, so "my
# passport expires in 2031" and "the green card interview" are no numbers.
_DOCUMENTS = (r"passport|(?:driver'?s|drivers|driving) licen[cs]e|licen[cs]e(?! plates?\b)|medicare|medicaid|sin|pan|"
              r"green card|aadhaa?r|nhs|national id|id card|voter id|residence permit|tax id|tfn|ein|nric|nie|"
              r"social security|national insurance|ssn|nino|personal id")
_DOCUMENT_NUMBER = re.compile(
    rf"\b(?:{_DOCUMENTS})\b(?:\s*(?:is|was|:|=|#|number|num|no\.?|nr\.?)){{0,2}}\s*"
    r"(?=[a-z]{0,8}\d)(?=(?:[a-z -]{0,8}\d){4})([a-z0-9]{1,20}(?:[ -][a-z0-9]{2,6}){0,3})(?![\w-])",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?:19|20)\d\d")
# A social security number: area 001-899 but 666, group 01-99, serial 0001-9999, one separator throughout.
_SSN = re.compile(r"(?<![\d.-])(?!000|666|9\d\d)(\d{3})([- .])(?!00)\d{2}\2(?!0000)\d{4}(?![\d-]|\.\d)")
# A national insurance number is written in capitals, which keeps ordinary words out of it (the ``matching`` view).
_NINO = re.compile(r"\b[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
# An IBAN: country, check digits, then the account in groups of four or in one run.
_IBAN = re.compile(r"\b([a-z]{2}\d{2})((?:[ -]?[a-z0-9]{4}){2,8}(?:[ -]?[a-z0-9]{1,3})?)\b", re.IGNORECASE)
# A card number: 13 to 19 digits in one run, or in groups of four (Amex: 4-6-5), any separator between the groups:
# spaces, dashes, dots, slashes (canonical text has already dropped the zero-width ones and made NBSP a space).
_SEP = r"[ \-./_·•]{1,2}"
_CARD = re.compile(
    rf"(?<![\d+])(?<![\d+][ -])(?<!\d[.,])\b([1-9]\d{{12,18}}|[1-9]\d{{3}}(?:{_SEP}\d{{4}}){{2,3}}(?:{_SEP}\d{{1,4}})?|"
    rf"3\d{{3}}{_SEP}\d{{6}}{_SEP}\d{{5}})(?![\d]|[.,]\d)"
)
_CARD_NAMED = re.compile(r"\b(?:card|visa|mastercard|master card|amex|american express|credit|debit|cc|maestro|"
                         r"discover|diners|jcb)\b", re.IGNORECASE)


# Searched only where they can match (``agent.memory.prefilter``): a document's or a key's name is in few lines, and
# these were the slowest searches of a line without one (7-14 us each).
_GUARDED_KEYS, _GUARDED_NAMED, _GUARDED_DOCUMENT = Guarded(_OWN_KEYS), Guarded(_NAMED_NUMBER), Guarded(_DOCUMENT_NUMBER)


def luhn(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _iban_valid(candidate: str) -> bool:
    """ISO 13616: length 15-34, and the number formed by moving the first four characters to the end (letters as
    10-35) is 1 modulo 97; most real IBANs hold several digits past the check digits."""
    compact = re.sub(r"[ -]", "", candidate).upper()
    if not 15 <= len(compact) <= 34 or sum(c.isdigit() for c in compact[4:]) < 6:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _iban(text: str) -> bool:
    for match in _IBAN.finditer(text):
        groups = re.split(r"[ -]", match.group(2).strip(" -"))
        # the account may be followed by other words of four letters: try every length of it
        for end in range(len(groups), 0, -1):
            if _iban_valid(match.group(1) + "".join(groups[:end])):
                return True
    return False


def card_number(text: str) -> bool:
    """A payment card number: its digits pass Luhn, or the text names a card beside it (the ``matching`` view)."""
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group(1))
        if 13 <= len(digits) <= 19 and (luhn(digits) or _CARD_NAMED.search(text)):
            return True
    return False


# An Italian codice fiscale: six letters of the name, the year, a month letter, the day, a place and a check letter.
_FISCAL_CODE = re.compile(r"\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]\b", re.IGNORECASE)


def _document_number(text: str) -> bool:
    """A document's number after its name: a value that is no year ("passport 2031" is when it expires)."""
    return any(not _YEAR.fullmatch(m.group(1)) for m in _GUARDED_DOCUMENT.finditer(text))


def identity_number(text: str) -> bool:
    """A number that opens an account or proves an identity (``matching`` view)."""
    return (bool(_GUARDED_NAMED.search(text) or _SSN.search(text) or _NINO.search(text) or _FISCAL_CODE.search(text))
            or _document_number(text)
            or _iban(text))


def secret(text: str) -> bool:
    """A machine secret, a credential said in words, or a card number in ``text`` (``matching`` view)."""
    return machine_secret(text) or card_number(text) or said_credential(text)
