"""What a follow-up is read against: the prior request and the reply, tokenised once (`Exchange`).

The contradiction signal (`contradiction.py`, `relations.py`) asks the same few
questions of every exchange: did the request ask for one value (`is_value_request`), a yes/no answer, a meaning, a
comparison? Which numbers are the reply's own (not the request's) and of what kind — a year where the exchange is
about time, a quantity otherwise? Does the reply answer with a name, a number, a term or a piece of code, and
does it say yes or no? Did it end by asking the user something? The answers are built here, from words only: no
lexicon beyond function words, no model. A follow-up value is then "new" when it names something the exchange has
not (`is_new_value`) and "of the reply's kind" when it has the reply's answer's form (`kind_matches`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

STRONG = 1.0  # a contradiction shape that is a correction on its own
WEAK = 0.5  # one that needs company

WORD_RE = re.compile(r"[a-z0-9][a-z0-9_+#]*(?:'[a-z]+)?")
# A number, but not the digits inside an identifier ("utf-8", "mp3", "ipv6").
NUMBER_RE = re.compile(r"(?<![\w.])(?<![a-z]-)-?\d[\d,]*(?:\.\d+)?")
NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        " seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100}

# Words that carry no "what" (articles, pronouns, auxiliaries, prepositions, quantifiers): a subject or value made
# only of these names nothing.
FUNCTION = frozenset(
    """a an the it its it's this that that's thats these those they they're them their there there's here he he's
    she she's him her his one ones it'd that'd what's
    is are was were be been being am 's 're do does did has have had can could will would should may might must
    of in on at to for with by from as into about than then and or but so just only also too even very really
    not no yes some any all each every more most less least much many own same other another such
    what which who whom whose when where why how""".split()
)
# Words that judge or react rather than name a value ("wrong", "cool", "hmm"): a "value" made of them is none.
NOT_A_VALUE = frozenset(
    """wrong right correct incorrect true false fine ok okay good bad great perfect broken backwards off wild weird
    odd interesting cool nice neat lovely sweet amazing awesome brilliant fascinating helpful useful better worse
    close closer exactly indeed noted understood gotcha bingo enough useless nonsense sure pretty quite oh ah ahh
    ooh hmm hm um uh er erm huh ha lol haha wow yikes oops damn well wait sorry please thanks thank nope nah yes
    yeah yep yup no not never again also just still actually basically technically whoa woah crazy insane nuts
    surprising unexpected incredible impressive classic fair facts agreed same ditto definitely absolutely totally
    obviously naturally figures duh phew lmao rofl omg wtf til tbh sheesh yay heh hah bummer shame huge tiny
    ridiculous strange funny hilarious cute sad cheers ta ty thx kudos bravo legend mhm aha yay woo nifty solid
    superb excellent splendid wonderful fantastic terrific fun blown saved bookmarked source sources citation proof
    seriously honestly literally interestingly apparently hopefully unfortunately luckily surely example examples
    more details elaborate explain continue next why how""".split()
)
# A predicate that describes rather than identifies: "is in Ontario", "is often blocked", "is short for list".
DESCRIPTIVE = frozenset(
    """in on at from for by near into inside outside within under over part short often usually always sometimes
    rarely never very so too pretty really quite also still only kind sort like similar famous known called
    located based named""".split()
)
ADJECTIVE_SUFFIXES = tuple("ous ful ive able ible al ic ish less ed ing ine ant ent ary y".split())
PRONOUN_SUBJECT = re.compile(r"^(?:it|that|this|those|these|they|he|she|which)(?:'s|'d|'re| is| was| are| were)?\b")
DETERMINERS = frozenset({"the", "this", "these", "those", "my", "our", "your"})
CODE_RE = re.compile(r"[<>()\[\]{}_=/\\#*`^|]|\w\.\w|^-|\s--?\w|\w~\d|[a-z][A-Z]")

# A request for one value ("What's …", "Who …", "How many …", "Convert …", "Is a whale a fish?"), as opposed to a
# task ("Write …", "How do I …") or an open-ended ask with many right answers ("a good name", "recommend …").
_VALUE_REQUEST = re.compile(
    r"^[\W_]*(?:(?:hey|hi|quick question|question)[\W_]+)?(?:(?:in|on|at|by|from|since|for|to|of) (?=wh))?"
    r"(?:what(?:'s|s| is| are| was| were| does| do| did)?\b"
    r"|which|who|whom|whose|when|where|how (?:many|much|long|old|far|big|tall|fast|heavy|often|high|deep)\b"
    r"|(?:is|are|was|were|does|did|has|have)\b(?! (?:you|there any)\b)|compute|calculate|convert|translate|solve"
    r"|evaluate|simplify|round|spell|define|name the|give me the|tell me the|list the)\b"
)
_OPEN_ENDED = re.compile(
    r"\b(?:a (?:good|nice|great|fun|cool|catchy|short|random)|some|any|recommend|suggest|ideas?|best|favou?rite"
    r"|opinion|should i use)\b"
)
# A yes/no question ("Is a whale a fish?", "Is 0 an even number?"): its subject is what a claim would be about.
_YES_NO_REQUEST = re.compile(
    r"^[\W_]*(?:is|are|was|were|does|do|did|has|have|can|will|should)\b(?! (?:you|i|we|there any)\b)"
)
# A request for what something means ("Translate …", "What does RSVP stand for?", "Define …").
_MEANING_REQUEST = re.compile(r"^[\W_]*(?:translate|define|what does .{1,40} (?:mean|stand for)|what is the meaning)\b")
# A request for what something does ("What does `git pull` do?", "What does int('3.5') give?").
_BEHAVIOUR_REQUEST = re.compile(
    r"^[\W_]*what (?:does|do|did|will|would) .{1,60}\b(?:do|return|give|print|output|produce|evaluate to|count)\b"
)
# An exchange about time: a four-digit number in it is a year ("When did …", "What year …", "… released?").
_TIME_REQUEST = re.compile(
    r"\b(?:when|what year|which year|what date|which date|what century|since when|how long ago|born|founded"
    r"|released|invented|published|built|discovered|died|launched|happen(?:ed)?|start(?:ed)?|end(?:ed)?|fell)\b"
)
_YEAR_PRECEDERS = frozenset(
    "in since from until till circa year by january february march april may june july august september october"
    " november december jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_YES_LEAD = re.compile(r"^[\W_]*(?:yes|yeah|yep|yup|correct|true|right|indeed|absolutely|definitely|sure)\b")
_NO_LEAD = re.compile(r"^[\W_]*(?:no|nope|nah|not|false|never|incorrect)\b")
NEGATION_RE = re.compile(r"\b(?:not|no|never|none|cannot)\b|n't\b|\b(?:isnt|doesnt|dont|cant|wont|arent|wasnt)\b")
_OFFER = re.compile(
    r"\b(?:would you like|do you want|want me to|shall i|should i|anything else|is there anything|need anything"
    r"|does that (?:help|answer|make sense)|let me know|any (?:other|more) questions)\b"
)

# Dimensions a comparison can be about; the comparative forms are derived ("bigger", "largest", "earlier").
_DIMENSION_GROUPS = (
    "big large great huge vast",
    "small little tiny",
    "long",
    "short",
    "tall high",
    "low",
    "heavy dense",
    "light",
    "close near",
    "far distant",
    "fast quick",
    "slow",
    "old early first before",
    "young new late recent last after",
    "hot warm",
    "cold cool",
    "deep",
    "shallow",
    "wide broad",
    "narrow",
    "thick",
    "thin",
    "cheap",
    "rich",
    "poor",
    "strong",
    "weak",
    "bright",
    "dark",
    "loud",
    "common",
    "rare",
    "salty",
    "sweet",
    "populous",
)
_DIMENSIONS = {word: group.split()[0] for group in _DIMENSION_GROUPS for word in group.split()}
_IRREGULAR = {
    "first": "old",
    "earlier": "old",
    "earliest": "old",
    "before": "old",
    "last": "young",
    "after": "young",
    "later": "young",
    "latest": "young",
    "farther": "far",
    "further": "far",
    "farthest": "far",
}


@lru_cache(maxsize=8192)
def dimension(word: str, comparative_only: bool) -> str | None:
    """The dimension a comparative or superlative names ("bigger" → "big", "earliest" → "old"), else None."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if not comparative_only and word in _DIMENSIONS:
        return _DIMENSIONS[word]
    for suffix in ("est", "er"):
        if not word.endswith(suffix) or len(word) <= len(suffix) + 2:
            continue
        stem = word[: -len(suffix)]
        candidates = [stem, stem + "e", stem[:-1] + "y" if stem.endswith("i") else stem]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])  # bigg → big
        for candidate in candidates:
            if candidate in _DIMENSIONS:
                return _DIMENSIONS[candidate]
    return None


# -er / -est words that are no comparatives ("water", "the best", "the rest").
_NOT_COMPARATIVE = frozenset(
    """water number order paper user server computer letter layer player finger river winter summer center centre
    matter other another never ever either neither over under after offer power tower corner member master answer
    character cluster filter parameter manner whether together rather latter former super hour per her after
    best rest west nest test forest interest request guest chest quest""".split()
)


@lru_cache(maxsize=8192)
def is_comparative(word: str) -> bool:
    """A comparative or superlative adjective by its form ("hotter", "easier", "saltiest", "more"), known
    dimension or not."""
    if word in {"more", "less", "fewer", "better", "worse", "best", "worst", "most", "least"}:
        return True
    if word in _NOT_COMPARATIVE or len(word) < 5:
        return False
    if dimension(word, comparative_only=True) is not None:
        return True
    return word.endswith(("ier", "iest")) or word.endswith("est") and len(word) > 6


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A crude stem, enough to match "whales" with "whale" and "keeping" with "keep"."""
    word = word.removesuffix("'s")
    if len(word) <= 4:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]  # "status" → "statu" on both sides alike: matching only needs consistency
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def words_of(text: str) -> list[str]:
    return WORD_RE.findall(text)


def content(words: list[str]) -> set[str]:
    """Content stems of `words`: function words and numbers dropped."""
    return {stem(w) for w in words if w not in FUNCTION and not (w[0].isdigit() and NUMBER_RE.fullmatch(w))}


def subject_words(words: list[str]) -> set[str]:
    """Content stems of a subject, numbers included ("1984 is Orwell" is about the reply's 1984)."""
    return {stem(w) for w in words if w not in FUNCTION}


def _raw(token: str) -> str:
    token = token.strip(".,;:!?\"'`$€£%°~") or token.strip(".,;:!?\"'`")  # "$" and "¥" stay themselves
    if token.startswith("(") and ")" not in token:
        token = token[1:]
    if token.endswith(")") and "(" not in token:
        token = token[:-1]
    return token


def raw_tokens(text: str) -> set[str]:
    """Whitespace tokens with outer punctuation stripped ("count(*)", "-a", "2024-03-14"): code keeps its form."""
    return {t for t in map(_raw, text.split()) if t}


def _number_list(text: str) -> list[float]:
    values: list[float] = []
    for raw in NUMBER_RE.findall(text):
        try:
            values.append(float(raw.replace(",", "")))
        except ValueError:
            continue
    words = WORD_RE.findall(text)
    for i, w in enumerate(words):
        pronoun = w == "one" and (i > 0 and words[i - 1] in _ONE_AS_PRONOUN or words[i + 1 : i + 2] == ["of"])
        if w in NUMBER_WORDS and not pronoun:  # not "the only even one", "one of them"
            values.append(float(NUMBER_WORDS[w]))
    return values


_ONE_AS_PRONOUN = frozenset(
    "the a an this that which each every any some no another only other same right wrong last first next new old big"
    " small good bad even odd little".split()
)


def numbers(text: str) -> set[float]:
    return set(_number_list(text))


def number_kinds(text: str, about_time: bool) -> set[str]:
    """"year" for a four-digit number where the exchange is about time or the text says "in 1989", "quantity"
    for any other number: "27" is no answer to "in 1975", nor "1000 grams" to "When …"."""
    kinds: set[str] = set()
    for m in NUMBER_RE.finditer(text):
        raw = m.group(0).rstrip(",")  # "April 15, 1915, after …": the comma is no part of the year
        before = text[: m.start()].split()[-1:]
        year = re.fullmatch(r"1\d{3}|20\d{2}|2100", raw) is not None and (
            about_time or bool(before) and before[0].strip(",.") in _YEAR_PRECEDERS
        )
        kinds.add("year" if year else "quantity")
    if _number_list(NUMBER_RE.sub(" ", text)):
        kinds.add("quantity")  # a number word that counts ("six", "one moon"; not "the only even one")
    return kinds


_CAPITALISED_RE = re.compile(r"\b([A-Z][\w'-]+)")
_CAPITALISED_INSIDE_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w'-]+)")


def names(original: str, sentence_starts: bool = False) -> set[str]:
    """Lowercased words the user capitalised ("It's Ottawa"); at the start of a sentence only if asked to."""
    pattern = _CAPITALISED_RE if sentence_starts else _CAPITALISED_INSIDE_RE
    return {name.lower() for name in pattern.findall(original.strip())}


@lru_cache(maxsize=8192)
def value_shape(token: str) -> tuple[bool, bool]:
    """(has digits, has code punctuation) of a value token: "2024-03-14" and "03/14/2024" share a shape, as do
    "len(list)" and "list.length"; "3.9.7" and "python --version" do not."""
    return any(c.isdigit() for c in token), re.search(r"[()\[\]{}<>=_#/\\*`.:-]", token.strip(".")) is not None


def case_shape(token: str) -> str:
    """The letter-case form of a token: "upper" (COUNT, JPY), "camel" (getFullYear), "capital" (Paris), "lower"."""
    letters = [c for c in token if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return "upper"
    if letters and letters[0].islower() and any(c.isupper() for c in letters[1:]):
        return "camel"
    return "capital" if letters and letters[0].isupper() else "lower"


@dataclass(frozen=True)
class Exchange:
    """What the follow-up is read against: the prior request and the reply, tokenised once."""

    request: str  # normalised
    reply: str  # normalised
    request_words: set[str]  # content stems of the request
    reply_words: set[str]  # content stems of the reply
    request_tokens: set[str]  # stems of every word of the request, numbers included
    reply_tokens: set[str]  # stems of every word of the reply, numbers included
    raw: set[str]  # raw tokens of both (`raw_tokens`)
    numbers: set[float]  # every number in the request or the reply
    request_numbers: set[float]
    reply_numbers: set[float]  # numbers the reply states more often than the request ("15% … is $15")
    number_kinds: set[str]  # kinds of every number in the exchange
    reply_number_kinds: set[str]  # kinds of the reply's own numbers
    about_time: bool  # the request asks when
    reply_names: set[str]  # words the reply capitalised that the request did not name
    reply_is_term: bool  # the reply is a short lowercase term ("master", "biblioteca")
    reply_is_code: bool
    reply_value_tokens: set[str]  # the raw tokens of a short reply (a bare answer: "03/14/2024", "`list.length`")
    reply_code_tokens: set[str]  # the reply's tokens with digits or code punctuation ("//", "03/14/2024")
    value_request: bool  # the request asked for one right value
    yes_no_request: bool
    meaning_request: bool
    behaviour_request: bool  # "What does X do / return?"
    dimensions: set[str]  # the properties the request or the reply compare on
    reply_polarity: int  # +1 the reply says yes / asserts, -1 it says no / negates, 0 neither
    reply_case_shapes: set[str]  # distinctive letter-case forms of the reply's answer ("COUNT": "upper")
    reply_names_only: bool  # the reply's answer is all capitalised words ("The Atlantic.", not "AB positive.")
    reply_answer: set[str]  # content stems of the reply the request did not give: its answer
    options: tuple[set[str], ...]  # the choices of "Which …, A or B?" (content stems of each)
    chosen: set[str]  # the option the reply named first (its pick), or empty

    @property
    def reply_answer_short(self) -> bool:
        """The reply answered in a word or two ("Pera.", "Plants absorb oxygen."), not with a number."""
        return 0 < len(self.reply_answer) <= 2 and not self.reply_numeric

    @property
    def words(self) -> set[str]:
        return self.request_words | self.reply_words

    @property
    def reply_numeric(self) -> bool:
        """The reply's answer is (or contains) a number the request did not give."""
        return bool(self.reply_numbers)


@lru_cache(maxsize=512)
def exchange(prior_norm: str, reply_norm: str, reply_original: str) -> Exchange:
    """The `Exchange` of a normalised request and reply (cached: the scorer asks several times per message)."""
    prior_words, reply_words = words_of(prior_norm), words_of(reply_norm)
    # "largest", "heavier", "how tall": not the adjective of a name ("How many Great Lakes …").
    asked_how = re.findall(r"\bhow ([a-z]+)", prior_norm)
    dimensions = {d for w in prior_words + reply_words if (d := dimension(w, comparative_only=True))}
    dimensions |= {d for w in asked_how if (d := dimension(w, comparative_only=False))}
    request_counts, reply_counts = Counter(_number_list(prior_norm)), Counter(_number_list(reply_norm))
    request_numbers = set(request_counts)
    # "Aldous Huxley wrote 1984.": 1984 was asked about; "A 15% tip on $80 is $15": the second 15 is the answer.
    reply_numbers = {n for n, count in reply_counts.items() if count > request_counts[n]}
    if len(reply_norm.split()) <= 3:
        reply_numbers = set(reply_counts)  # "3" after "What's 10 % 3?": a bare reply is all answer
    about_time = _TIME_REQUEST.search(prior_norm) is not None
    value_request = is_value_request(prior_norm)
    request_stems = {stem(w) for w in prior_words}
    capitalised = names(reply_original, sentence_starts=value_request)
    reply_names = {n for n in capitalised if n not in FUNCTION | NOT_A_VALUE and stem(n) not in request_stems}
    answer_tokens = [t for t in re.findall(r"[A-Za-z][\w+#-]*", reply_original) if stem(t.lower()) not in request_stems]
    answer_tokens += [t for t in re.findall(r"[A-Z][A-Z0-9]+", reply_original) if t.lower() not in FUNCTION]
    first_sentence = re.split(r"(?<=[.!?])\s", reply_norm, maxsplit=1)[0]
    polarity = 1 if _YES_LEAD.match(reply_norm) else -1 if _NO_LEAD.match(reply_norm) else 0
    if polarity == 0 and first_sentence and not first_sentence.rstrip().endswith("?"):
        polarity = -1 if NEGATION_RE.search(first_sentence) else 1
    short_reply = len(reply_norm.split()) <= 3
    request_words = content(prior_words)
    return Exchange(
        request=prior_norm,
        reply=reply_norm,
        request_words=request_words,
        reply_words=content(reply_words),
        request_tokens=request_stems,
        reply_tokens={stem(w) for w in reply_words},
        raw=raw_tokens(prior_norm) | raw_tokens(reply_norm),
        numbers=request_numbers | reply_numbers,
        request_numbers=request_numbers,
        reply_numbers=reply_numbers,
        number_kinds=number_kinds(prior_norm + " " + reply_norm, about_time),
        reply_number_kinds=number_kinds(reply_norm, about_time) if reply_numbers else set(),
        about_time=about_time,
        reply_names=reply_names,
        reply_is_term=len(reply_words) <= 3 and not reply_numbers and reply_original == reply_original.lower(),
        reply_is_code=CODE_RE.search(reply_norm) is not None,
        reply_value_tokens=raw_tokens(reply_norm) if short_reply else set(),
        reply_code_tokens={t for t in raw_tokens(reply_norm) if any(value_shape(t)) and not NUMBER_RE.fullmatch(t)},
        value_request=value_request,
        yes_no_request=_YES_NO_REQUEST.match(prior_norm) is not None,
        meaning_request=_MEANING_REQUEST.match(prior_norm) is not None,
        behaviour_request=_BEHAVIOUR_REQUEST.match(prior_norm) is not None,
        dimensions=dimensions,
        reply_polarity=polarity,
        reply_case_shapes={case_shape(t) for t in answer_tokens if t.lower() not in FUNCTION} - {"lower", "capital"},
        reply_names_only=bool(reply_names) and all(
            w[:1].isupper() for w in re.findall(r"[A-Za-z][\w'-]{3,}", reply_original.split(".")[0])
            if stem(w.lower()) not in request_stems and w.lower() not in FUNCTION
        ),
        reply_answer=content(words_of(first_sentence)) - request_words,
        options=(options := _options(prior_norm)),
        chosen=_chosen(options, reply_norm),
    )


def _chosen(options: tuple[set[str], ...], reply_norm: str) -> set[str]:
    """The option the reply names first: "Ice is denser than water." picks ice."""
    first: tuple[int, set[str]] | None = None
    for option in options:
        at = min((m.start() for w in option if (m := re.search(r"\b" + re.escape(w), reply_norm))), default=None)
        if at is not None and (first is None or at < first[0]):
            first = (at, option)
    return first[1] if first else set()


def _options(prior_norm: str) -> tuple[set[str], ...]:
    """The choices of "Which is heavier, a litre of water or a litre of olive oil?" / "POST or PUT?"."""
    if " or " not in prior_norm:
        return ()
    tail = re.split(r"[,:;]\s", prior_norm.rstrip(" ?.!"))[-1]
    if tail.count(" or ") != 1:
        return ()
    left, right = tail.split(" or ")
    left = re.sub(r"^.*\b(?:is|are|was|were|does|do|did|has|have|came|comes)\s", "", left)
    left_words, right_words = subject_words(words_of(left)), subject_words(words_of(right))
    shared = left_words & right_words  # "Windows 95 or Windows 98": the options differ in "95" and "98"
    options = (left_words - shared, right_words - shared)
    return options if all(0 < len(o) <= 4 for o in options) else ()


def is_value_request(prior_norm: str) -> bool:
    """The request asked for one right value ("What's 7 factorial?", "Who wrote …", "Convert …")."""
    return _VALUE_REQUEST.match(prior_norm) is not None and _OPEN_ENDED.search(prior_norm) is None


def reply_requests_info(reply_norm: str) -> bool:
    """The reply ended by asking the user for information ("What's your budget?"), not just offering more."""
    tail = reply_norm[-240:].rstrip()
    last_sentence = re.split(r"(?<=[.!?])\s+", tail)[-1] if tail else ""
    return last_sentence.endswith("?") and _OFFER.search(last_sentence) is None


# "it's a conda environment", "this is an old Mac": after a task ("How do I install …"), "it" is the user's thing.
_CLASSIFIES_IT = re.compile(r"^[\W_]*(?:it'?s|it is|this is|this's|its) (?:a|an)\b")
# A request about the user's own system ("… which python version I have", "my IP"): the follow-up may report it.
_ABOUT_OWN_SYSTEM = re.compile(
    r"\b(?:i have|i've got|i'?m (?:on|using|running)|my|mine|our)\b|^[\W_]*how (?:do|can) i (?:check|see|find)\b"
)
_READING = re.compile(
    r"^[\W_]*(?:it|that|this)(?: just| now)? (?:says|shows|reads|prints|outputs|gives|returns|reports)\s+"
    r"(?P<value>.+)$"
)


def describes_own_setup(norm: str, prior_norm: str, reply_norm: str) -> bool:
    """The follow-up describes the user's own setup or reports a reading of it, not the answer.

    "It's a conda environment" after a task request (not a value request) classifies the user's thing; "It says
    3.9.7" after "How do I check which python version I have?" reports a value the reply never predicted.
    """
    if _CLASSIFIES_IT.match(norm) and not is_value_request(prior_norm):
        return True
    reading = _READING.match(norm)
    return (
        reading is not None
        and bool(numbers(reading.group("value")))
        and not numbers(reply_norm)
        and _ABOUT_OWN_SYSTEM.search(prior_norm) is not None
    )


_LEAD_FILLERS = frozenset("huh hmm hm um uh oh well so but and actually nope no lol wait".split())


def subject_in_exchange(subject: str, prior_norm: str, reply_norm: str) -> bool:
    """The subject of a statement ("Bass guitars" in "Bass guitars have 4") is the answer or something the
    exchange named: a pronoun, words all in the reply, or words all in the request (named without "the"/"my", or
    in a request for a value). "Germany has about 84 million" after a question about France is about something else.
    """
    tail = re.split(r"[.;!?,:\u2014\u2013]|\s-\s", subject)[-1].strip()
    words = [w.removesuffix("'s") for w in words_of(tail)]
    while words and words[0] in _LEAD_FILLERS:
        words = words[1:]
    if not words or PRONOUN_SUBJECT.match(" ".join(words)) or not subject_words(words):
        return True
    if other_input(tail, prior_norm + " " + reply_norm):
        return False  # "len('') is 0" after a question about len('hello')
    stems = subject_words(words)
    in_request = stems <= {stem(w) for w in words_of(prior_norm)}
    if in_request and users_own(words, prior_norm):
        return False
    return stems <= {stem(w) for w in words_of(reply_norm)} or in_request


def other_input(subject: str, exchange_text: str) -> bool:
    """The subject is code or a signed figure the exchange did not write: another input than the one asked about
    ("len('')" after "len('hello')", "-10 % 3" after "10 % 3")."""
    written = raw_tokens(exchange_text)
    return any(
        (re.search(r"[()\[\]{}'\"]", t) or re.match(r"-\d", t)) and t not in written for t in raw_tokens(subject)
    )


def users_own(subject: list[str], prior_norm: str) -> bool:
    """A thing the task named, with a determiner, is the user's own: "the images" after "Resize my images"."""
    return subject[0] in DETERMINERS and not is_value_request(prior_norm)


def is_new_value(value: str, ex: Exchange) -> bool:
    """`value` names something the exchange has not: a number not in it, a content word not in it, or a piece of
    code not written in it ("-a" after "ls -h", "2024-03-14" after "03/14/2024")."""
    found = numbers(value)
    if found and not found <= ex.numbers:
        return True
    words = content(words_of(value)) - set(NUMBER_WORDS)
    if words and not words <= ex.words:
        return True
    code = {t for t in raw_tokens(value) if (any(value_shape(t)) or not t.isalnum()) and not NUMBER_RE.fullmatch(t)}
    return bool(code) and not code <= ex.raw


def is_judgement(value: str) -> bool:
    """The words judge or react, they name no value: "just wrong", "fine", "cool"."""
    return bool(words_of(value)) and not numbers(value) and not content(words_of(value)) - NOT_A_VALUE


def same_number_kind(value: str, ex: Exchange, reply_only: bool = True) -> bool:
    """A year for a year, a quantity for a quantity (of the reply's numbers, or of all the exchange's)."""
    return bool(number_kinds(value, ex.about_time) & (ex.reply_number_kinds if reply_only else ex.number_kinds))


def is_name(value: str, original: str, ex: Exchange, at_start: bool = False) -> bool:
    """The value is a name the user capitalised; at the start of the message only where the reply's answer is a
    name too ("Saturn, as of 2023" after "Jupiter has the most moons")."""
    words = set(words_of(value))
    if names(original) & words:
        return True
    return at_start and bool(ex.reply_names) and bool(names(original, sentence_starts=True) & words)


def kind_matches(value: str, original: str, ex: Exchange, at_start: bool = False) -> bool:
    """The value is of the reply's kind: code for code, a number for a number; a name, code or (after a one-term
    reply) a term for anything else. "brown rice" is no answer to "About 18 minutes", nor "cold there" to
    "Antarctica."."""
    if CODE_RE.search(value) and ex.reply_is_code:
        return True  # code for code, numbers inside or not ("head -n 5" for "tail -n 5 file")
    if numbers(value):
        return ex.reply_numeric and same_number_kind(value, ex)
    if ex.reply_numeric:
        return False
    if is_name(value, original, ex, at_start) or CODE_RE.search(value):
        return True
    written = [t for t in re.findall(r"[A-Za-z][\w+#-]*", original) if t.lower() in value.split()]
    if len(written) == 1 and case_shape(written[0]) in ex.reply_case_shapes:
        return True  # "COUNTA" for "=COUNT(A:A)", "getFullYear" for "getYear()"
    return ex.reply_is_term
