"""Contradiction with the prior reply: a short statement that asserts a different value than the reply gave.

Most corrections people write carry no correction wording at all — they just state what is true: "5040",
"the Volga is longer", "It's Ottawa", "Earth comes before Mars", "set doesn't keep the order". What tells them
from a clarification ("It's brown rice.", "I'm on a Chromebook", "It says 3.9.7") or a follow-on remark
("Ottawa is in Ontario", "Jupiter is a gas giant") is not the words but how the statement relates to the
exchange: it asserts a value of the same kind as the reply's answer, about what the request asked, and that
value differs from the reply's. `contradiction` reads the follow-up against the prior request and the reply,
clause by clause, and recognises these shapes (strong ones are a correction on their own, weak ones need
company — a second clause, or another cue):

strong (1.0)
* `value` — the request asked for one value (`is_value_request`) and the follow-up opens with a new one of
  the reply's kind: "1024", "Leonardo da Vinci", "29 in a leap year", "December 2008" — a number where the reply
  gave a number (a year for a year), a name, code or term where it gave one; not the request again with a new
  input ("10 factorial" after "What's 7 factorial?", "15 kg" after "Convert 10 kg …");
* `restated` — the same with the answer as the subject: "it's 86400", "It's Ottawa", "that'd be $12" (not a
  classification, "it's a conda environment", nor a description, "it's cold there");
* `number` — "X is/has N" about something the exchange named, where the exchange is about quantities of N's
  kind and N is new: "a teaspoon is 5", "signed max is 127", "ethanol is around 78";
* `answer` — "X is Y" about the subject of a request for a value, Y of the reply's kind: "1984 is Orwell",
  "table salt is NaCl";
* `class` — after a yes/no question, a statement about its subject with a new noun: "Is a whale a fish?" →
  "whales are mammals"; after a translation or definition, "X means Y": "Hund means dog";
* `attribution` — a new name doing what the request asked about: "Jane Austen wrote it", "Canberra is the
  capital";
* `comparison` — "X is bigger" / "X came first", on the property the exchange compared on, with a winner the
  reply did not name ("the Volga is longer" after "The Danube is the longest river");
* `order` — "X comes before Y" where the reply listed Y first;
* `falls_short` — "X doesn't <what was asked>" about an element of the reply: "set doesn't keep the order";

weak (0.5)
* `claim` — any other "X is Y" / "X shows Y" about something the reply or the request named, with a new Y that
  is not a description ("in Ontario", "often blocked"): "librería is a bookstore", "KCl is potassium chloride".
  Alone it is as likely a remark about the answer ("Jupiter is a gas giant") as a correction of it;
* `value` that is one bare word ("Chile" after "What's the capital of Peru?" → "Lima."): as likely the next
  request as a counter-answer.

Clause weights add up to at most 1.0. It never fires on a question, on a reply that asked the user for
information (the follow-up answers it), on the user's own context ("I'm on …", "my recipe says …"), on emoji
reactions, or on a statement that adds rather than disputes ("X also …", "Y is even earlier", "… too",
"so …", "… then"); the caller (`correction_score.score_cues`) also skips praise, thanks and requests. Pure string
work on a short message: a few microseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ghost_agent.distill.correction_cues import CueHit, normalize

STRONG = 1.0
WEAK = 0.5
MAX_WORDS = 18  # longer follow-ups say more than a value; the lexical cues handle them
MAX_SUBJECT_WORDS = 3
MAX_BARE_VALUE_WORDS = 4

_WORD_RE = re.compile(r"[a-z0-9][a-z0-9_+#]*(?:'[a-z]+)?")
_NUMBER_RE = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        " seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100}

# Words that carry no "what" (articles, pronouns, auxiliaries, prepositions, quantifiers): a subject or value made
# only of these names nothing.
_FUNCTION = frozenset(
    """a an the it its it's this that that's thats these those they they're them their there there's here he he's
    she she's him her his one ones it'd that'd what's
    is are was were be been being am 's 're do does did has have had can could will would should may might must
    of in on at to for with by from as into about than then and or but so just only also too even very really
    not no yes some any all each every more most less least much many own same other another such
    what which who whom whose when where why how""".split()
)
# Words that judge or react rather than name a value ("wrong", "cool", "hmm"): a "value" made of them is none.
_NOT_A_VALUE = frozenset(
    """wrong right correct incorrect true false fine ok okay good bad great perfect broken backwards off wild weird
    odd interesting cool nice neat lovely sweet amazing awesome brilliant fascinating helpful useful better worse
    close closer exactly indeed noted understood gotcha bingo enough useless nonsense sure pretty quite oh ah ahh
    ooh hmm hm um uh er erm huh ha lol haha wow yikes oops damn well wait sorry please thanks thank nope nah yes
    yeah yep yup no not never again also just still actually basically technically""".split()
)
# A predicate that describes rather than identifies: "is in Ontario", "is often blocked", "is short for list".
_DESCRIPTIVE = frozenset(
    """in on at from for by near into inside outside within under over part short often usually always sometimes
    rarely never very so too pretty really quite also still only kind sort like similar famous known called
    located based named""".split()
)
_ADJECTIVE_SUFFIXES = tuple("ous ful ive able ible al ic ish less ed ing ine ant ent ary y".split())
_PRONOUN_SUBJECT = re.compile(r"^(?:it|that|this|those|these|they|he|she|which)(?:'s|'d|'re| is| was| are| were)?\b")
# "it's / that's / that'd be / the answer is / should be": the answer itself as the subject.
_RESTATED = re.compile(
    r"^(?:(?:it|that|this|the answer|the result|the right answer|the correct answer)"
    r"(?:'s|s| is| was|'d be| would be| should be| will be)|should be|it'?d be|that'?d be|it should be)"
    r"\s+(?:about |around |roughly |approximately |actually |really |just |only |like |~)?(?P<value>.+)$"
)
_VERBS = frozenset(
    """is are was were 's 're means mean equals has have had starts start begins begin ends end returns return
    gives give shows show prints print outputs output takes take skips skip counts count keeps keep uses use
    goes go comes come came only needs need stands""".split()
)
_COPULAS = frozenset({"is", "are", "was", "were", "'s", "'re", "equals", "has", "have", "had"})
_MEANING_VERBS = frozenset({"means", "mean", "stands"})
_NEGATED_VERB = re.compile(
    r"^(?P<subject>[\w'.+#()\[\]-]+(?: [\w'.+#()\[\]-]+){0,2}) (?:doesn'?t|does not|don'?t|do not|isn'?t|is not"
    r"|aren'?t|are not|can'?t|cannot|won'?t|will not|has no|have no) (?P<rest>.+)$"
)
_ORDER = re.compile(
    r"(?P<x>\w[\w'-]*) (?:comes|come|came|goes|go|is|are|was|were) (?P<rel>before|after) (?:the )?(?P<y>\w[\w'-]*)"
)

# Statements that add to the answer or reason from it rather than dispute it.
_ADDITIVE = re.compile(
    r"\b(?:also|too|even|as well|either|anyway|i guess|i assume|i suppose|i read|i heard)\b"
    r"|^(?:so|and|but|or|then)\b|\b(?:then|right|i think so)[.!]*$"
)
# The user's own situation: any first person other than the verbs of judging a claim ("I think", "I count").
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|we|we're|we've|we'll|us|our|ours)\b")
_JUDGING_FIRST_PERSON = re.compile(
    r"\bi (?:think|thought|believe|believed|count|counted|get|got|make it|calculated|computed|checked|tested"
    r"|tried|ran|see)\b|\bi'?m (?:pretty |quite |fairly |very )?sure\b"
)
_EMOJI = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff]|[:;]-?[)(dp]\\B")
_OFFER = re.compile(
    r"\b(?:would you like|do you want|want me to|shall i|should i|anything else|is there anything|need anything"
    r"|does that (?:help|answer|make sense)|let me know|any (?:other|more) questions)\b"
)

# A request for one value ("What's …", "Who …", "How many …", "Convert …", "Is a whale a fish?"), as opposed to a
# task ("Write …", "How do I …") or an open-ended ask with many right answers ("a good name", "recommend …").
_VALUE_REQUEST = re.compile(
    r"^[\W_]*(?:(?:hey|hi|quick question|question)[\W_]+)?(?:what(?:'s|s| is| are| was| were| does| do| did)?\b"
    r"|which|who|whom|whose|when|where|how (?:many|much|long|old|far|big|tall|fast|heavy|often|high|deep)\b"
    r"|(?:is|are|was|were|does|did|has|have)\b(?! (?:you|there any)\b)|compute|calculate|convert|translate|solve"
    r"|evaluate|simplify|round|spell|define|name the|give me the|tell me the|list the)\b"
)
_OPEN_ENDED = re.compile(
    r"\b(?:a (?:good|nice|great|fun|cool|catchy|short|random)|some|any|recommend|suggest|ideas?|best|favou?rite"
    r"|opinion|should i use)\b"
)
# A yes/no question ("Is a whale a fish?", "Is 0 an even number?"): its subject is what a claim would be about.
_YES_NO_REQUEST = re.compile(r"^[\W_]*(?:is|are|was|were|does|do|did|has|have|can)\b(?! (?:you|i|we)\b)")
# A request for what something means ("Translate …", "What does RSVP stand for?", "Define …").
_MEANING_REQUEST = re.compile(r"^[\W_]*(?:translate|define|what does .{1,40} (?:mean|stand for)|what is the meaning)\b")

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
_BARE_ORDER_WORDS = frozenset({"first", "last", "before", "after"})
_COMPARISON_FILLER = frozenset("is are was were 's comes came out much far way lot bit slightly definitely".split())


@lru_cache(maxsize=8192)
def _dimension(word: str, comparative_only: bool) -> str | None:
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


@lru_cache(maxsize=8192)
def _stem(word: str) -> str:
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


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def _content(words: list[str]) -> set[str]:
    return {_stem(w) for w in words if w not in _FUNCTION and not (w[0].isdigit() and _NUMBER_RE.fullmatch(w))}


def _subject_words(words: list[str]) -> set[str]:
    """Content stems of a subject, numbers included ("1984 is Orwell" is about the reply's 1984)."""
    return {_stem(w) for w in words if w not in _FUNCTION}


def _numbers(text: str) -> set[float]:
    values: set[float] = set()
    for raw in _NUMBER_RE.findall(text):
        try:
            values.add(float(raw.replace(",", "")))
        except ValueError:
            continue
    for word in _WORD_RE.findall(text):
        if word in _NUMBER_WORDS:
            values.add(float(_NUMBER_WORDS[word]))
    return values


def _number_kind(value: float) -> str:
    return "year" if value.is_integer() and 1000 <= value <= 2100 else "quantity"


def _same_number_kind(numbers: set[float], reference: set[float]) -> bool:
    """A year for a year, a quantity for a quantity: "27" is no answer to "in 1975"."""
    return bool({_number_kind(n) for n in numbers} & {_number_kind(n) for n in reference})


_CAPITALISED_RE = re.compile(r"\b([A-Z][\w'-]+)")
_CAPITALISED_INSIDE_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w'-]+)")


def _names(original: str, sentence_starts: bool = False) -> set[str]:
    """Lowercased words the user capitalised ("It's Ottawa"); at the start of a sentence only if asked to."""
    pattern = _CAPITALISED_RE if sentence_starts else _CAPITALISED_INSIDE_RE
    return {name.lower() for name in pattern.findall(original.strip())}


_CODE_RE = re.compile(r"[<>()\[\]{}_=/\\#*`]|\w\.\w|^-|\s-\w|[a-z][A-Z]")


@dataclass(frozen=True)
class _Context:
    """What the follow-up is read against: the prior request and the reply, tokenised once."""

    reply: str
    request_words: set[str]  # content stems of the request
    reply_words: set[str]  # content stems of the reply
    request_tokens: set[str]  # stems of every word of the request, numbers included
    reply_tokens: set[str]  # stems of every word of the reply, numbers included
    numbers: set[float]  # every number in the request or the reply
    request_numbers: set[float]
    reply_numbers: set[float]  # the numbers of the reply the request did not give
    reply_numeric: bool  # the reply's answer is (or contains) a number the request did not give
    reply_is_term: bool  # the reply is a short lowercase term ("master", "biblioteca")
    value_request: bool  # the request asked for one right value
    yes_no_request: bool
    meaning_request: bool
    dimensions: set[str]  # the properties the request or the reply compare on

    @property
    def words(self) -> set[str]:
        return self.request_words | self.reply_words


def _context(prior_norm: str, reply_norm: str, reply_original: str) -> _Context:
    prior_words, reply_words = _words(prior_norm), _words(reply_norm)
    dimensions = {d for w in prior_words + reply_words if (d := _dimension(w, comparative_only=False))}
    request_numbers = _numbers(prior_norm)
    reply_numbers = _numbers(reply_norm) - request_numbers  # "Aldous Huxley wrote 1984.": 1984 was asked about
    return _Context(
        reply=reply_norm,
        request_words=_content(prior_words),
        reply_words=_content(reply_words),
        request_tokens={_stem(w) for w in prior_words},
        reply_tokens={_stem(w) for w in reply_words},
        numbers=request_numbers | reply_numbers,
        request_numbers=request_numbers,
        reply_numbers=reply_numbers,
        reply_numeric=bool(reply_numbers),
        reply_is_term=len(reply_words) <= 3 and not reply_numbers and reply_original == reply_original.lower(),
        value_request=is_value_request(prior_norm),
        yes_no_request=_YES_NO_REQUEST.match(prior_norm) is not None,
        meaning_request=_MEANING_REQUEST.match(prior_norm) is not None,
        dimensions=dimensions,
    )


def is_value_request(prior_norm: str) -> bool:
    """The request asked for one right value ("What's 7 factorial?", "Who wrote …", "Convert …")."""
    return _VALUE_REQUEST.match(prior_norm) is not None and _OPEN_ENDED.search(prior_norm) is None


# "it's a conda environment", "this is an old Mac": after a task ("How do I install …"), "it" is the user's thing.
_CLASSIFIES_IT = re.compile(r"^[\W_]*(?:it'?s|it is|this is|this's|its) (?:a|an)\b")
# A request about the user's own system ("… which python version I have", "my IP"): the follow-up may report it.
_ABOUT_OWN_SYSTEM = re.compile(r"\b(?:i have|i've got|i'?m (?:on|using|running)|my|mine|our)\b")
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
        and bool(_numbers(reading.group("value")))
        and not _numbers(reply_norm)
        and _ABOUT_OWN_SYSTEM.search(prior_norm) is not None
    )


_LEAD_FILLERS = frozenset("huh hmm hm um uh oh well so but and actually nope no lol wait".split())


def subject_in_exchange(subject: str, prior_norm: str, reply_norm: str) -> bool:
    """The subject of a statement ("Bass guitars" in "Bass guitars have 4") is the answer or something the
    exchange named: a pronoun, words all in the reply, or words all in the request (named without "the"/"my", or
    in a request for a value). "Germany has about 84 million" after a question about France is about something else.
    """
    tail = re.split(r"[.;!?,:\u2014\u2013]|\s-\s", subject)[-1].strip()
    words = [w.removesuffix("'s") for w in _words(tail)]
    while words and words[0] in _LEAD_FILLERS:
        words = words[1:]
    if not words or _PRONOUN_SUBJECT.match(" ".join(words)) or not _subject_words(words):
        return True
    stems = _subject_words(words)
    in_request = stems <= {_stem(w) for w in _words(prior_norm)}
    if in_request and _users_own(words, prior_norm):
        return False
    return stems <= {_stem(w) for w in _words(reply_norm)} or in_request


_DETERMINERS = frozenset({"the", "this", "these", "those", "my", "our", "your"})


def _users_own(subject_words: list[str], prior_norm: str) -> bool:
    """A thing the task named, with a determiner, is the user's own: "the images" after "Resize my images"."""
    return subject_words[0] in _DETERMINERS and not is_value_request(prior_norm)


def reply_requests_info(reply_norm: str) -> bool:
    """The reply ended by asking the user for information ("What's your budget?"), not just offering more."""
    tail = reply_norm[-240:].rstrip()
    last_sentence = re.split(r"(?<=[.!?])\s+", tail)[-1] if tail else ""
    return last_sentence.endswith("?") and _OFFER.search(last_sentence) is None


def _is_new_value(value: str, ctx: _Context) -> bool:
    """`value` names something the exchange has not: a number not in it, or a content word not in it."""
    numbers = _numbers(value)
    if numbers and not numbers <= ctx.numbers:
        return True
    words = _content(_words(value)) - set(_NUMBER_WORDS)
    return bool(words) and not words <= ctx.words


def _is_judgement(value: str) -> bool:
    """The words judge or react, they name no value: "just wrong", "fine", "cool"."""
    return not _numbers(value) and not _content(_words(value)) - _NOT_A_VALUE


def _kind_matches(value: str, original: str, ctx: _Context) -> bool:
    """The value is of the reply's kind: code for code, a number for a number; a name, code or (after a one-term
    reply) a term for anything else. "brown rice" is no answer to "About 18 minutes", nor "cold there" to
    "Antarctica."."""
    if _CODE_RE.search(value) and _CODE_RE.search(ctx.reply):
        return True  # code for code, numbers inside or not ("head -n 5" for "tail -n 5 file")
    if _numbers(value):
        return ctx.reply_numeric and _same_number_kind(_numbers(value), ctx.reply_numbers)
    if ctx.reply_numeric:
        return False
    words = _words(value)
    if _names(original) & set(words) or _CODE_RE.search(value):
        return True
    return ctx.reply_is_term


def _value(clause: str, whole: bool, ctx: _Context, original: str, after_claim: bool = False) -> float:
    """A bare value or a value-led statement: "1024", "Leonardo da Vinci", "29 in a leap year"; after a task
    request, only a piece of code completing a claim ("tail is the end of the file. head -n 5")."""
    if not ctx.value_request and not (after_claim and _CODE_RE.search(clause) and _is_new_value(clause, ctx)):
        return 0.0
    words = clause.split()
    lead = words[0].strip("~$°%()")
    if _NUMBER_RE.match(lead) or lead in _NUMBER_WORDS:
        value = words[0] if lead in _NUMBER_WORDS else clause
        numbers = _numbers(value)
        if not ctx.reply_numeric or numbers <= ctx.numbers or not _same_number_kind(numbers, ctx.reply_numbers):
            return 0.0
        return 0.0 if _is_variation(clause, ctx) else STRONG
    if len(words) > MAX_BARE_VALUE_WORDS or any(
        w in _VERBS or w in _FUNCTION or w in _NOT_A_VALUE for w in _words(clause)
    ):
        return 0.0
    if not _is_new_value(clause, ctx):
        return 0.0
    if not _CODE_RE.search(clause) and bool(_numbers(clause)) != ctx.reply_numeric:
        return 0.0  # a number for a number, a term for a term; code may carry numbers ("head -n 5")
    if whole and len(words) == 1 and not ctx.reply_is_term and not _CODE_RE.search(clause):
        # "Chile" after "capital of Peru?" → "Lima.": as likely the next request as a counter-answer.
        return WEAK
    if _kind_matches(clause, original, ctx):
        return STRONG
    return WEAK if whole else 0.0


def _is_variation(clause: str, ctx: _Context) -> bool:
    """The request again with a new input (its words or numbers around a new number), not a new answer: "10
    factorial" after "What's 7 factorial?", "15 kg" after "Convert 10 kg to pounds", "20% of 80" after "15% of 80"."""
    if not ctx.request_numbers:
        return False
    if _numbers(clause) & ctx.request_numbers:
        return True
    words = _content(_words(clause)) - set(_NUMBER_WORDS)
    return bool(words) and words <= ctx.request_words and not words <= ctx.reply_words


def _restated(clause: str, ctx: _Context, original: str) -> float:
    """The answer as the subject, a new value as the predicate: "it's 86400", "It's Ottawa", "that'd be $12"."""
    m = _RESTATED.match(clause)
    if m is None or not ctx.value_request:
        return 0.0
    value = m.group("value")
    if len(value.split()) > 5 or re.match(r"(?:a|an|some|my|our|your|not|n't|no)\b", value) or _is_judgement(value):
        return 0.0  # "it's a conda environment" classifies; "it's just wrong" judges
    if _words(value) and _words(value)[0] in _DESCRIPTIVE:
        return 0.0
    return STRONG if _is_new_value(value, ctx) and _kind_matches(value, original, ctx) else 0.0


def _split_subject(clause: str) -> tuple[list[str], str, str] | None:
    """(subject words, verb, rest) for "X <verb> rest" with a short non-pronoun subject X."""
    words = clause.split()
    for i, word in enumerate(words[: MAX_SUBJECT_WORDS + 1]):
        bare = word.strip(",:")
        verb = "'s" if bare.endswith("'s") and i < MAX_SUBJECT_WORDS else bare
        if verb not in _VERBS:
            continue
        subject = words[:i] + ([bare[:-2]] if verb == "'s" else [])
        if not subject or _PRONOUN_SUBJECT.match(" ".join(subject)):
            return None
        return subject, verb, " ".join(words[i + 1 :])
    return None


def _looks_adjectival(rest_words: list[str]) -> bool:
    """A one-word predicate with an adjective's ending ("delicious", "feminine", "stable", "crowded")."""
    return len(rest_words) == 1 and rest_words[0].endswith(_ADJECTIVE_SUFFIXES)


def _claim(clause: str, ctx: _Context, original: str) -> tuple[str, float]:
    """A statement "X is Y" / "X has N" / "X means Y" about something the exchange named, with a new Y."""
    parts = _split_subject(clause)
    if parts is None:
        return "", 0.0
    subject, verb, rest = parts
    subject_words = _subject_words(_words(" ".join(subject)))
    rest_words = _words(rest)
    if not subject_words or not rest_words:
        return "", 0.0
    in_reply = subject_words <= ctx.reply_tokens
    in_request = subject_words <= ctx.request_tokens
    if in_request and not ctx.value_request and subject[0] in _DETERMINERS:
        return "", 0.0  # "The images are 4000x3000": the user's own thing, named by their task
    if not (in_reply or (in_request and ctx.value_request)):
        return "", 0.0
    if rest_words[0] in {"not", "no", "never"} or _dimension(rest_words[0], comparative_only=True):
        return "", 0.0  # a negated or comparative predicate is read by the other shapes
    if rest_words[0] in _DESCRIPTIVE or rest_words[0] in {"also", "even"} or not _is_new_value(rest, ctx):
        return "", 0.0
    if _numbers(rest):
        typed = ctx.numbers and _same_number_kind(_numbers(rest), ctx.numbers)
        return ("number", STRONG) if typed else ("claim", WEAK)
    if in_request and ctx.yes_no_request and verb in _COPULAS and not _looks_adjectival(rest_words):
        return "class", STRONG  # "Is a whale a fish?" → "whales are mammals"
    if in_reply and ctx.meaning_request and verb in _MEANING_VERBS:
        return "class", STRONG  # "Translate 'cat' to German" → "Hund" → "Hund means dog"
    if in_request and ctx.value_request and verb in _COPULAS and _kind_matches(rest, original, ctx):
        return "answer", STRONG  # "Name the author of 1984" → "1984 is Orwell"; "table salt is NaCl"
    return "claim", WEAK


def _attribution(clause: str, original: str, ctx: _Context) -> bool:
    """A new name doing what the request asked about: "Jane Austen wrote it", "Canberra is the capital"."""
    if not ctx.value_request:
        return False
    words = clause.split()
    names = _names(original, sentence_starts=True)  # the subject opens the clause
    for i in range(1, min(len(words), MAX_SUBJECT_WORDS + 1)):
        subject, verb, rest = words[:i], words[i], words[i + 1 :]
        subject_words = _content(subject)
        if not subject_words or subject_words & ctx.words or _PRONOUN_SUBJECT.match(" ".join(subject)):
            continue
        if not all(w in names for w in subject):
            continue  # a name is capitalised where the user wrote it
        copula = verb in {"is", "was", "are", "were", "'s"}
        if not copula and _stem(verb) not in ctx.words:
            continue
        if not rest or _numbers(" ".join(rest)):
            return False  # "Nibbles are 4 bits": a quantity, read by `_claim`
        if copula:  # "Canberra is the capital": the role the request asked about
            return rest[0] == "the" and bool(_content(rest)) and _content(rest) <= ctx.words
        return rest[0] in {"it", "that", "this", "them"} or bool(_content(rest)) and _content(rest) <= ctx.words
    return False


def _comparison(clause: str, ctx: _Context) -> bool:
    """A comparison ("X is bigger", "X came first") on the property the exchange compared on, with a winner the
    reply did not name."""
    words = _words(clause)
    for i, word in enumerate(words):
        dimension = _dimension(word, comparative_only=True)
        if dimension is None:
            continue
        if word not in _BARE_ORDER_WORDS and not (word.endswith("er") or word.endswith("est")):
            continue
        if dimension not in ctx.dimensions:
            return False
        subject = [w for w in words[:i] if w not in _COMPARISON_FILLER]
        subject_words = _content([w.removesuffix("'s") for w in subject])
        if not subject_words or len(subject) > MAX_SUBJECT_WORDS + 1 or _PRONOUN_SUBJECT.match(" ".join(words[:i])):
            return False
        return not subject_words & ctx.reply_words
    return False


def _order(clause: str, ctx: _Context) -> bool:
    """An ordering, "X comes before Y", where the reply put Y first."""
    m = _ORDER.search(clause)
    if m is None:
        return False
    x = re.search(r"\b" + re.escape(m.group("x")) + r"\b", ctx.reply)
    y = re.search(r"\b" + re.escape(m.group("y")) + r"\b", ctx.reply)
    if x is None or y is None:
        return False
    return (x.start() > y.start()) == (m.group("rel") == "before")


def _falls_short(clause: str, ctx: _Context) -> bool:
    """An element of the reply doesn't do what was asked: "set doesn't keep the order"."""
    m = _NEGATED_VERB.match(clause)
    if m is None or _PRONOUN_SUBJECT.match(m.group("subject")):
        return False
    subject_words = _content(_words(m.group("subject")))
    rest_words = _content(_words(m.group("rest")))
    if not subject_words or not subject_words & (ctx.reply_words | ctx.request_words):
        return False
    if not subject_words & ctx.reply_words and not rest_words & ctx.reply_words:
        return False
    return bool(rest_words & ctx.request_words)


def _clauses(norm: str) -> list[str]:
    parts = re.split(r"[.;!]+(?:\s+|$)|(?<=\?)\s+|\s+[\u2014\u2013-]+\s+|,\s+|:\s+|\s+\(", norm)
    return [p.strip(" .,;:!\"'`*)") for p in parts if p.strip(" .,;:!\"'`*)")]


def _shape(
    clause: str, whole: bool, first: bool, original: str, ctx: _Context, after_claim: bool = False
) -> tuple[str, float]:
    """The strongest contradiction shape `clause` has: (name, weight), or ("", 0.0).

    `first`: the clause opens the message; `after_claim`: it follows a clause that made a claim ("tail is the end
    of the file. head -n 5"), so a bare value there is the answer the user gives instead.
    """
    if (first or after_claim) and (weight := _value(clause, whole, ctx, original, after_claim)):
        return "value", weight
    if weight := _restated(clause, ctx, original):
        return "restated", weight
    for name, test in (("order", _order), ("comparison", _comparison), ("falls_short", _falls_short)):
        if test(clause, ctx):
            return name, STRONG
    if _attribution(clause, original, ctx):
        return "attribution", STRONG
    return _claim(clause, ctx, original)


def contradiction(current: str, prior_request: str, prior_reply: str) -> CueHit | None:
    """The follow-up `current` states a value that contradicts `prior_reply` (see the module doc), or None.

    The hit's weight is the clauses' summed shape weights, at most 1.0; its text names the shapes and the first
    clause that had one.
    """
    norm = normalize(current)
    if not norm or not prior_reply or norm.rstrip().endswith("?") or len(norm.split()) > MAX_WORDS:
        return None
    if _EMOJI.search(current) or _ADDITIVE.search(norm):
        return None
    if _FIRST_PERSON.search(_JUDGING_FIRST_PERSON.sub(" ", norm)):
        return None
    reply_norm = normalize(prior_reply)
    if reply_requests_info(reply_norm):
        return None
    ctx = _context(normalize(prior_request), reply_norm, prior_reply)
    clauses = _clauses(norm)
    total, first_clause = 0.0, ""
    shapes: list[str] = []
    for index, clause in enumerate(clauses):
        if clause.endswith("?"):
            continue
        name, weight = _shape(clause, len(clauses) == 1, index == 0, current, ctx, after_claim=bool(shapes))
        if weight:
            total += weight
            shapes.append(name)
            first_clause = first_clause or clause
        if total >= STRONG:
            break
    if not total:
        return None
    return CueHit("contradiction", min(total, STRONG), f"{'+'.join(shapes)}: {first_clause[:40]}")
