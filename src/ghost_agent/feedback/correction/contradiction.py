"""Contradiction with the prior reply: a short statement that asserts a different value than the reply gave.

Most corrections people write carry no correction wording at all — they just state what is true: "5040",
"the Volga is longer", "It's Ottawa", "Earth comes before Mars", "set doesn't keep the order". What tells them
from a clarification ("It's brown rice.", "I'm on a Chromebook", "It says 3.9.7") or a follow-on remark
("Ottawa is in Ontario", "Jupiter is a gas giant") is not the words but how the statement relates to the
exchange (`user_correction_exchange.Exchange`): it asserts a value of the same kind as the reply's answer, about
what the request asked, and that value differs from the reply's. `contradiction` reads the follow-up against the
prior request and the reply, clause by clause, and recognises these shapes (strong ones are a correction on
their own, weak ones need company — a second clause, or another cue):

strong (1.0)
* `value` (`values.py`) — the request asked for one value (`is_value_request`) and the follow-up
  opens with a new one of the reply's kind: "1024", "ohms", "Leonardo da Vinci", "29 in a leap year", "about
  37.8 °C", "Saturn, as of 2023", "George Washington was", "PUT is" (the option the reply did not pick) — a number
  where the reply gave a number (a year for a year), a name, code or term where it gave one, the reply's number
  in another unit ("300,000 km/s" for "300,000 m/s"); after a task whose reply was a bare piece of code, code of
  its form ("df -h" for "Use `ls -h`."); not the request again with a new input ("10 factorial"), the answer for
  another case (".ts for TypeScript"), the reply's figure rounded or worked out ("Roughly 300,000", "60 times
  60"), nor a statement led by a number ("443 is HTTPS");
* `restated` — the same with the answer as the subject: "it's 86400", "It's Ottawa", "that'd be $12", "It ended in
  1945", "I think it's 27", and after a task whose reply was a bare piece of code, code of its form: "it's
  len(list)" (not a classification, "it's a conda environment", nor a description, "it's cold there");
* `asked` — the same asked back in doubt: "Isn't it Canberra?", "0.75 surely?" (a bare "Berlin?" counts half: it
  may be the next request);
* `list` — the reply's list given again with an item changed: "it's 2, 3, 5" after "1, 2, 3";
* `number` — "X is/has N" about something the exchange named, where the exchange is about quantities of N's
  kind and N is new: "a teaspoon is 5", "signed max is 127", "Lua starts at 1";
* `answer` — "X is Y" about the subject of a request for a value, Y of the reply's kind: "1984 is Orwell",
  "table salt is NaCl"; after a task, "X is/uses Y" with Y of the form of the reply's code: "ISO is 2024-03-14",
  "Python uses #";
* `class` — after a yes/no question, a statement about its subject with a new noun: "Is a whale a fish?" →
  "whales are mammals"; after a translation or definition, "X means Y": "Hund means dog";
* `attribution` — a new name, figure or piece of code, or the option the reply did not pick, doing what the
  request asked about: "Jane Austen wrote it", "Canberra is the capital", "=== is strict", "301 is permanent",
  "mercury is the liquid one" (not in the past where the request asked the present: "Alexandria was the capital");
* `comparison` — "X is bigger" / "X came first" / "X beat Y", on the property the exchange compared on, with a
  winner the reply did not name ("the Volga is longer" after "The Danube is the longest river"); not "X is second
  largest", "X is the largest land mammal" (a narrower class), "faster in a dive" or "older than Paris";
  by a factor, "Alaska is more than twice the size of Texas" (the option the reply did not pick is the bigger);
* `order` — "X comes before Y" where the reply listed Y first;
* `falls_short` — "X doesn't <what was asked>" about an element of the reply: "set doesn't keep the order";
* `polarity`, `denial`, `sameness`, `parallel`, `unnegated` (`relations.py`) — the opposite of the
  reply's yes or no ("It is stable" after "No, … is not stable"), the reply's answer denied its role ("KG isn't
  the SI symbol"), a tie where the reply picked a winner ("they weigh the same"), a different action for the same
  subject ("It squares x" after "It multiplies x by 2"), an action the reply denied ("-i makes it ask");

weak (0.5)
* `claim` — any other "X is Y" / "X shows Y" about something the reply or the request named, with a new Y that
  is not a description ("in Ontario", "often blocked") nor a comparison on another property ("Venus is the
  hottest", "Python is easier"): "librería is a bookstore", "KCl is potassium chloride", "Ag is silver".
  Alone it is as likely a remark about the answer ("Jupiter is a gas giant") as a correction of it;
* `transfer` (`relations.py`) — the reply's answer said of something else: "404 is not found".

Clause weights add up to at most 1.0. It never fires on a plain question, on a reply that asked the user for
information (the follow-up answers it) or gave no answer ("I can't check …"), on the user's own context ("I'm
on …", "my recipe says …"; such a clause is skipped, and if it opens the message the whole message is), on emoji
reactions, or on a statement that adds rather than disputes ("X also …", "Y is even earlier", "… too", "so …",
"… then"); the caller (`correction_score.score_cues`) also skips praise, thanks and requests. Pure string work
on a short message: some tens of microseconds.
"""

from __future__ import annotations

import re

from ghost_agent.feedback.correction.cues import SCAN_HEAD_CHARS, SCAN_TAIL_CHARS, CueHit, normalize
from ghost_agent.feedback.correction.exchange import (
    ADJECTIVE_SUFFIXES,
    CODE_RE,
    DESCRIPTIVE,
    DETERMINERS,
    FUNCTION,
    NUMBER_RE,
    PRONOUN_SUBJECT,
    STRONG,
    WEAK,
    Exchange,
    content,
    describes_own_setup,
    dimension,
    exchange,
    is_comparative,
    is_judgement,
    is_new_value,
    is_value_request,
    kind_matches,
    numbers,
    other_input,
    raw_tokens,
    reply_requests_info,
    same_number_kind,
    stem,
    subject_in_exchange,
    subject_words,
    words_of,
)
from ghost_agent.feedback.correction.relations import (
    denial,
    list_differs,
    parallel,
    polarity,
    sameness,
    transfer,
    unnegated,
)
from ghost_agent.feedback.correction.values import (
    EARLIER,
    MAX_BARE_VALUE_WORDS,
    OTHER_CASE,
    QUALIFIERS,
    RANKS,
    VERBS,
    bare_value,
    code_shaped,
    converted,
    restated,
)

__all__ = [
    "STRONG",
    "converts_answer",
    "WEAK",
    "contradiction",
    "describes_own_setup",
    "is_value_request",
    "reply_requests_info",
    "subject_in_exchange",
]

MAX_WORDS = 18  # longer follow-ups say more than a value; the lexical cues handle them
MAX_SUBJECT_WORDS = 3

_COPULAS = frozenset({"is", "are", "was", "were", "'s", "'re", "equals", "has", "have", "had", "="})
_MEANING_VERBS = frozenset({"means", "mean", "stands"})
_IDENTITY = frozenset({"is", "are", "was", "were", "'s", "'re", "equals", "="})
_NEGATED_VERB = re.compile(
    r"^(?P<subject>[\w'.+#()\[\]-]+(?: [\w'.+#()\[\]-]+){0,2}) (?:doesn'?t|does not|don'?t|do not|isn'?t|is not"
    r"|aren'?t|are not|can'?t|cannot|won'?t|will not|has no|have no) (?P<rest>.+)$"
)
_ORDER = re.compile(
    r"(?P<x>\w[\w'-]*) (?:comes|come|came|goes|go|is|are|was|were) (?P<rel>before|after) (?:the )?(?P<y>\w[\w'-]*)"
)
# Statements that add to the answer or reason from it rather than dispute it.
_ADDITIVE = re.compile(
    r"\b(?:also|too|as well|either|anyway|i guess|i assume|i suppose|i read|i heard)\b"
    r"|^(?:so|and|but|or|then)\b|\b(?:then|right|i think so)[.!]*$"
)
# The user's own situation: any first person other than the verbs of judging a claim ("I think", "I count").
_FIRST_PERSON = re.compile(r"(?<!-)\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|we|we're|we've|we'll|us|our|ours)\b")
_JUDGING_FIRST_PERSON = re.compile(
    r"\bi (?:think|thought|believe|believed|count|counted|get|got|make it|calculated|computed|checked|tested"
    r"|tried|ran|see)\b|\bi'?m (?:pretty |quite |fairly |very )?sure\b"
)
_DECLINED = re.compile(
    r"\bi (?:can'?t|cannot|am unable to|'?m unable to|am not able to|'?m not able to|don'?t know"
    r"|don'?t have (?:access|real-time))\b"
)
_ACRONYM = re.compile(r"\b[A-Z]{2,}\b")
_EMOJI = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff]|[:;]-?[)(dp]\\B")
# "Botanically it is a fruit", "technically, that's …": a sentence adverb before the subject.
_SENTENCE_ADVERB = re.compile(r"^[a-z]+ly,? (?=(?:it|that|this|they|the)\b)")
# "I think it's 27", "pretty sure it's 8", "I'm fairly sure it was 1914": a hedge before the counter-statement.
_HEDGE = re.compile(
    r"^(?:(?:i think|i believe|i thought|i guess|i'?m (?:pretty |fairly |quite |very )?sure|(?:pretty|fairly|quite)"
    r" sure|surely|probably|maybe|perhaps|hmm+|hm|um+|well)\b,?\s*)+"
)
# "second largest", "2nd biggest": a rank below the top is no claim to it.
_INDEFINITE = frozenset("someone somebody everyone everybody nobody people many most few others another".split())
_CONNECTIVES = frozenset("because since than though although overall anyway now today nowadays actually still".split())


def _split_subject(clause: str) -> tuple[list[str], str, str] | None:
    """(subject words, verb, rest) for "X <verb> rest" with a short non-pronoun subject X."""
    words = clause.split()
    for i, word in enumerate(words[: MAX_SUBJECT_WORDS + 1]):
        bare = word.strip(",:")
        verb = "'s" if bare.endswith("'s") and i < MAX_SUBJECT_WORDS else bare
        if verb not in VERBS:
            continue
        subject = words[:i] + ([bare[:-2]] if verb == "'s" else [])
        if not subject or PRONOUN_SUBJECT.match(" ".join(subject)):
            return None
        return subject, verb, " ".join(words[i + 1 :])
    return None


def _looks_adjectival(rest_words: list[str]) -> bool:
    """A one-word predicate with an adjective's ending ("delicious", "feminine", "stable", "crowded")."""
    return len(rest_words) == 1 and rest_words[0].endswith(ADJECTIVE_SUFFIXES)


def _claim(clause: str, ex: Exchange, original: str) -> tuple[str, float]:
    """A statement "X is Y" / "X has N" / "X means Y" about something the exchange named, with a new Y."""
    parts = _split_subject(clause)
    if parts is None:
        return "", 0.0
    subject, verb, rest = parts
    subject_stems = subject_words(words_of(" ".join(subject)))
    rest_words = words_of(rest)
    if not subject_stems or not rest.strip():
        return "", 0.0
    if other_input(" ".join(subject), ex.request + " " + ex.reply):
        return "", 0.0  # "len('') is 0", "-10 % 3 is 2": another input than the one asked about
    in_reply = subject_stems <= ex.reply_tokens
    in_request = subject_stems <= ex.request_tokens or any(subject_stems & o for o in ex.options)  # "set lookups"
    if in_request and not ex.value_request and subject[0] in DETERMINERS:
        return "", 0.0  # "The images are 4000x3000 JPEGs": the user's own thing, named by their task
    if in_request and not ex.value_request and verb in _COPULAS | {"uses", "use"} and code_shaped(rest, ex):
        return "answer", STRONG  # "Give me today's date in ISO format" → "03/14/2024" → "ISO is 2024-03-14"
    if not rest_words or not (in_reply or (in_request and ex.value_request)):
        return "", 0.0
    if rest_words[0] in {"not", "no", "never"} or any(is_comparative(w) for w in rest_words[:3]):
        return "", 0.0  # a negated or comparative predicate is read by the other shapes, or is a remark
    rest_split = rest.split()
    figure = len(rest_split) > 1 and NUMBER_RE.match(rest_split[1].strip("~$")) is not None  # "starts at 1"
    if rest_words[0] in {"also", "even"} or rest_words[0] in DESCRIPTIVE and not figure:
        if in_reply and _place_clash(rest, ex):
            return "claim", WEAK  # "the Sahara is in Africa" after "… desert in Asia?"
        return "", 0.0
    # A verb other than "is" is part of what is claimed: "COUNT(col) skips NULLs" after "It counts … NULLs".
    claimed = rest if verb in _COPULAS or stem(verb) in ex.reply_tokens else verb + " " + rest
    if not is_new_value(claimed, ex):
        return "", 0.0
    if numbers(rest):
        typed = ex.numbers and same_number_kind(rest, ex, reply_only=False)
        return ("number", STRONG) if typed else ("claim", WEAK)
    if in_request and ex.yes_no_request and verb in _COPULAS and not _looks_adjectival(rest_words):
        return "class", STRONG  # "Is a whale a fish?" → "whales are mammals"
    if in_reply and ex.meaning_request and verb in _MEANING_VERBS:
        return "class", STRONG  # "Translate 'cat' to German" → "Hund" → "Hund means dog"
    if in_request and ex.value_request and verb in _IDENTITY and not ex.options and kind_matches(rest, original, ex):
        return "answer", STRONG  # "Name the author of 1984" → "1984 is Orwell"; "table salt is NaCl"
    return "claim", WEAK


def _place_clash(rest: str, ex: Exchange) -> bool:
    """The predicate puts the answer "in"/"on"/"from" somewhere else than the request asked: "in Africa" / "in Asia"."""
    m = re.match(r"(in|on|from|at) (?:the )?([\w'-]+)", rest)
    if m is None:
        return False
    asked = re.search(r"\b" + m.group(1) + r" (?:the )?([\w'-]+)", ex.request)
    return asked is not None and asked.group(1) != m.group(2) and stem(m.group(2)) not in ex.request_tokens


def _request_pasts(ex: Exchange) -> set[str]:
    return {stem(w + "ed") for w in ex.request_tokens if w.isalpha()}


def _attribution(clause: str, original: str, ex: Exchange) -> bool:
    """A new name or piece of code doing what the request asked about: "Jane Austen wrote it", "Canberra is the
    capital", "--soft keeps them" (after "… but keep changes?"), "=== is strict" (after "… strict equality?")."""
    words = clause.split()
    for i in range(1, min(len(words), MAX_SUBJECT_WORDS + 1)):
        subject, verb, rest = words[:i], words[i], words[i + 1 :]
        code = i == 1 and ex.reply_is_code and bool(CODE_RE.search(subject[0])) and not raw_tokens(subject[0]) <= ex.raw
        # "301 is permanent" after "302." for "… redirect that's permanent?": a new figure in the asked-for role
        code = code or i == 1 and ex.reply_numeric and bool(NUMBER_RE.fullmatch(subject[0])) and (
            not numbers(subject[0]) & ex.numbers and same_number_kind(subject[0], ex)
        )
        if not code:
            subject_stems = content(subject)
            unpicked = bool(ex.chosen) and any(subject_stems <= o and o is not ex.chosen for o in ex.options)
            if not ex.value_request or not subject_stems or subject_stems & ex.words and not unpicked:
                continue  # a new name, or the option the reply did not pick ("mercury is the liquid one")
            if PRONOUN_SUBJECT.match(" ".join(subject)) or subject[0] in _INDEFINITE | FUNCTION | QUALIFIERS:
                continue
            if subject[-1] in RANKS:
                continue
        if verb in {"has", "have"} and rest[:1] == ["been"]:
            verb, rest = "is", rest[1:]  # "Brasília has been the capital since 1960"
        copula = verb in {"is", "was", "are", "were", "'s"}
        if not copula and (verb in FUNCTION or stem(verb) not in ex.request_tokens | _request_pasts(ex)):
            continue  # the action the request asked about: "wrote", "painted", "keeps"
        cut = next((j for j, w in enumerate(rest) if j and w in QUALIFIERS), len(rest))
        qualifier = rest[cut] if cut < len(rest) else ""
        if qualifier in EARLIER or qualifier in OTHER_CASE and content(rest[cut + 1 :]) - ex.words:
            return False  # "Alexandria was the capital in antiquity": another time
        if verb in {"was", "were"} and re.match(r"[\W_]*what(?:'s| is| are)\b", ex.request):
            return False  # the past, where the request asked about the present
        rest = rest[:cut]
        if not rest or numbers(" ".join(rest)) - ex.request_numbers and NUMBER_RE.search(" ".join(rest)):
            return False  # "Nibbles are 4 bits": a quantity, read by `_claim` ("orwell wrote 1984" is no quantity)
        role = content(rest)
        if code and copula:  # "=== is strict", "301 is permanent": the very words of the request
            return bool(role) and set(words_of(" ".join(rest))) - FUNCTION <= set(words_of(ex.request))
        if copula:  # "Canberra is the capital": the role the request asked about
            return rest[0] == "the" and bool(role) and role <= ex.words | {"one"}
        done_to = subject_words(words_of(" ".join(rest)))  # "orwell wrote 1984": the request's own title
        return rest[0] in {"it", "that", "this", "them"} or bool(done_to) and done_to <= ex.words | ex.request_tokens
    return False


def _comparison(clause: str, ex: Exchange) -> bool:
    """A comparison ("X is bigger", "X came first") on the property the exchange compared on, with a winner the
    reply did not name — and no rank below the top ("second largest") or narrower class ("largest land mammal")."""
    words = words_of(clause)
    for i, word in enumerate(words):
        dim = dimension(word, comparative_only=True)
        if dim is None:
            continue
        if word not in {"first", "last", "before", "after"} and not (word.endswith("er") or word.endswith("est")):
            continue
        if dim not in ex.dimensions or (i and words[i - 1] in RANKS):
            return False
        after = words[i + 1 :]
        if after and after[0] in OTHER_CASE | {"to", "than"} and content(after[1:]) - ex.words:
            return False  # "faster in a dive", "faster to write", "older than Paris": another comparison
        following = words[i + 1 : i + 2]
        if following and following[0] not in FUNCTION | _CONNECTIVES and not following[0].endswith("ly"):
            if following[0] not in {"by", "far"} and stem(following[0]) not in ex.words:
                return False  # "the largest land mammal": a narrower class than the one asked about
        subject = [w for w in words[:i] if w not in _COMPARISON_FILLER]
        subject_stems = subject_words([w.removesuffix("'s") for w in subject])  # "95 came first"
        if not subject_stems or len(subject) > MAX_SUBJECT_WORDS + 1 or PRONOUN_SUBJECT.match(" ".join(words[:i])):
            return False
        if ex.chosen:  # "water is denser" after "Ice is denser than water.": the option the reply did not pick
            return any(subject_stems & o and o is not ex.chosen for o in ex.options) and not subject_stems & ex.chosen
        return not subject_stems & (ex.reply_words | ex.reply_tokens)
    return False


# "X is more than twice the size of Y", "X is half as long as Y": a comparison by a factor.
_MULTIPLE = re.compile(
    r"^(?P<x>[\w'.-]+(?: [\w'.-]+){0,2}?) (?:is|are|was|were|'s|has|have) (?:(?:more than|over|almost|nearly|about"
    r"|roughly|around|at least|less than|under|only|just|like) )?(?P<factor>twice|double|triple|thrice|half|a third"
    r"|a quarter|(?:\d[\d,]*(?:\.\d+)?|three|four|five|six|ten|a hundred) times)"
    r" (?:the (?P<noun>[a-z]+) of|as (?P<adj>[a-z]+) as) (?:the )?(?P<y>[\w'.-]+(?: [\w'.-]+){0,2})$"
)
_FACTORS = ("twice", "double", "triple", "thrice", "half", "third", "quarter", "times")
# Nouns of the dimensions a factor compares on ("twice the size of …").
_DIMENSION_NOUNS = {
    "size": "big", "area": "big", "volume": "big", "length": "long", "height": "tall", "weight": "heavy",
    "mass": "heavy", "age": "old", "speed": "fast", "depth": "deep", "width": "wide", "population": "populous",
    "distance": "far",
}  # fmt: skip


def _multiple(clause: str, ex: Exchange) -> bool | None:
    """A comparison by a factor ("Alaska is more than twice the size of Texas") on the property the exchange
    compared on, whose winner is the option the reply did not pick, or one the reply did not name; False for one
    that agrees with the reply or compares on another property, None for no comparison by a factor."""
    m = _MULTIPLE.match(clause) if any(f in clause for f in _FACTORS) else None
    if m is None:
        return None
    dim = _DIMENSION_NOUNS.get(m.group("noun") or "") or dimension(m.group("adj") or "", comparative_only=False)
    if dim is None or dim not in ex.dimensions:
        return False
    smaller = m.group("factor") in {"half", "a third", "a quarter"}
    winner = subject_words(words_of(m.group("y") if smaller else m.group("x")))
    if not winner or PRONOUN_SUBJECT.match(m.group("x")):
        return False
    if ex.chosen:
        return any(winner <= o and o is not ex.chosen for o in ex.options)
    return not winner & (ex.reply_words | ex.reply_tokens)


_COMPARISON_FILLER = frozenset("is are was were 's comes came out much far way lot bit slightly definitely".split())


_BEATS = re.compile(
    r"^(?P<x>[\w'.-]+(?: [\w'.-]+){0,2}) (?:beat|beats|defeated|defeats|outranks|overtook|overtakes|surpassed"
    r"|surpasses|outnumbers|outsold|outsells|trumps|tops|topped) (?:the )?(?P<y>[\w'.-]+(?: [\w'.-]+){0,2})"
)


def _beats(clause: str, ex: Exchange) -> bool:
    """A new winner over the reply's answer: "France beat Croatia in the final" after "Croatia won …"."""
    m = _BEATS.match(clause)
    if m is None:
        return False
    x, y = subject_words(words_of(m.group("x"))), content(words_of(m.group("y")))
    return bool(x) and not x & ex.reply_tokens and bool(y) and bool(y & ex.reply_answer)


def _order(clause: str, ex: Exchange) -> bool:
    """An ordering, "X comes before Y", where the reply put Y first."""
    m = _ORDER.search(clause)
    if m is None:
        return False
    x = re.search(r"\b" + re.escape(m.group("x")) + r"\b", ex.reply)
    y = re.search(r"\b" + re.escape(m.group("y")) + r"\b", ex.reply)
    if x is None or y is None:
        return False
    return (x.start() > y.start()) == (m.group("rel") == "before")


def _falls_short(clause: str, ex: Exchange) -> bool:
    """An element of the reply doesn't do what was asked: "set doesn't keep the order"."""
    m = _NEGATED_VERB.match(clause)
    if m is None or PRONOUN_SUBJECT.match(m.group("subject")):
        return False
    subject_stems = content(words_of(m.group("subject")))
    rest_words = content(words_of(m.group("rest")))
    if not subject_stems or not subject_stems & (ex.reply_words | ex.request_words):
        return False
    if not subject_stems & ex.reply_words and not rest_words & ex.reply_words:
        return False
    return bool(rest_words & ex.request_words)


def _clauses(norm: str) -> list[str]:
    parts = re.split(r"[.;!]+(?:\s+|$)|(?<=\?)\s+|\s+[\u2014\u2013-]+\s+|,\s+|:\s+|\s+\(|\s+so\s+(?=\w)", norm)
    clauses = []
    for part in parts:
        part = part.strip(" .,;:!\"'`*") or part.strip(" .,;:!\"'`")  # "**" (Python's power) stays
        while part.endswith(")") and part.count(")") > part.count("("):
            part = part[:-1].rstrip(" .,;:!\"'`*")  # "(or 1024 MiB)" but not "O(1)"
        if part:
            clauses.append(part)
    return clauses


def _shape(
    clause: str, whole: bool, first: bool, original: str, ex: Exchange, after_claim: bool = False
) -> tuple[str, float]:
    """The strongest contradiction shape `clause` has: (name, weight), or ("", 0.0).

    `first`: the clause opens the message; `after_claim`: it follows a clause that made a claim ("tail is the end
    of the file. head -n 5"), so a bare value there is the answer the user gives instead.
    """
    clause = _SENTENCE_ADVERB.sub("", _HEDGE.sub("", clause) or clause)
    if (first or after_claim) and (weight := bare_value(clause, whole, ex, original, True, after_claim)):
        return "value", weight
    if weight := restated(clause, ex, original):
        return "restated", weight
    for name, test in (
        ("order", _order),
        ("comparison", _comparison),
        ("comparison", _beats),
        ("falls_short", _falls_short),
        ("polarity", polarity),
        ("denial", denial),
        ("unnegated", unnegated),
        ("sameness", sameness),
        ("parallel", parallel),
    ):
        if test(clause, ex):
            return name, STRONG
    if (factor := _multiple(clause, ex)) is not None:
        return ("comparison", STRONG) if factor else ("", 0.0)  # "… 100,000 times the weight of a mouse": agrees
    if _attribution(clause, original, ex):
        return "attribution", STRONG
    name, weight = _claim(clause, ex, original)
    if not weight and transfer(clause, ex):
        return "transfer", WEAK
    return name, weight


# "Isn't it Canberra?", "wasn't it da Vinci?", "0.75 surely?", "Hmm, Berlin?": a counter-answer, asked.
_ASKED_BACK = re.compile(
    r"^(?:(?P<tag>isn'?t|wasn'?t|aren'?t|weren'?t|shouldn'?t) (?:it|that|the answer|they)(?: be| just)? (?P<a>.+)"
    r"|(?P<b>[^,]+?),? (?P<sure>surely|no|isn'?t it|wasn'?t it)"
    r"|(?P<doubt>(?:hmm+|hm|um+|uh+|wait|really|huh)[,.!]*) (?P<c>[^,]+))$"
)


def _hedged_question(body: str, original: str, ex: Exchange) -> CueHit | None:
    """A question that offers another answer: "Isn't it Canberra?" / "0.75 surely?" count in full, "Hmm,
    Berlin?" half (with the doubt it opens with, in full); a bare "Berlin?" may be the next request."""
    m = _ASKED_BACK.match(body)
    value = m.group("a") or m.group("b") or m.group("c") if m else body
    if not value or len(value.split()) > MAX_BARE_VALUE_WORDS + 1:
        return None
    if not bare_value(value, True, ex, original, True):
        return None
    full = m is not None and bool(m.group("tag") or m.group("sure") or m.group("doubt"))
    return CueHit("contradiction", STRONG if full else WEAK, f"asked: {value[:40]}")


def _adds_degree(norm: str) -> bool:
    """"The iPod was even earlier": "even" before a comparative adds to the answer ("the only even one" does not)."""
    return any(is_comparative(m.group(1)) for m in re.finditer(r"(?<!n't )(?<!not )\beven (\w+)", norm))


def _capped(text: str) -> str:
    """Head and tail of a long reply, as `normalize` keeps them, with the letter case kept (names, code)."""
    if len(text) <= SCAN_HEAD_CHARS + SCAN_TAIL_CHARS:
        return text
    return text[:SCAN_HEAD_CHARS] + " \u2026 " + text[-SCAN_TAIL_CHARS:]


def _personal(clause: str, acronyms: set[str]) -> bool:
    """The clause speaks of the user ("my …", "I'm …", "we …"), other than judging a claim ("I think", "I count")."""
    return any(m.group(0) not in acronyms for m in _FIRST_PERSON.finditer(_JUDGING_FIRST_PERSON.sub(" ", clause)))


def converts_answer(current: str, prior_request: str, prior_reply: str) -> bool:
    """The follow-up gives the reply's figure in another unit ("that's about 1,083 feet" after "About 330 m."): it
    restates the answer, it does not dispute it."""
    norm = normalize(current)
    if not prior_reply or not any(c.isdigit() for c in norm) or len(norm.split()) > MAX_WORDS:
        return False
    reply_norm = normalize(prior_reply)
    return converted(norm, exchange(normalize(prior_request), reply_norm, _capped(prior_reply)))


def contradiction(current: str, prior_request: str, prior_reply: str) -> CueHit | None:
    """The follow-up `current` states a value that contradicts `prior_reply` (see the module doc), or None.

    The hit's weight is the clauses' summed shape weights, at most 1.0; its text names the shapes and the first
    clause that had one.
    """
    norm = normalize(current)
    if not norm or not prior_reply or len(norm.split()) > MAX_WORDS:
        return None
    if _EMOJI.search(current) or _ADDITIVE.search(norm) or _adds_degree(norm):
        return None
    reply_norm = normalize(prior_reply)
    if reply_requests_info(reply_norm) or _DECLINED.search(reply_norm[:200]):
        return None  # the follow-up answers the reply's question, or the reply gave no answer to dispute
    ex = exchange(normalize(prior_request), reply_norm, _capped(prior_reply))
    if norm.rstrip().endswith("?"):
        return _hedged_question(norm.rstrip(" ?"), current, ex)
    if listed := list_differs(norm, ex):
        return CueHit("contradiction", STRONG, f"list: {listed[:40]}")
    clauses = _clauses(norm)
    acronyms = {a.lower() for a in _ACRONYM.findall(current)}  # "US is 07/04/2024" is no first person
    # "mice, obviously": a reaction adds no clause to the value
    substantive = len(clauses) if len(clauses) != 2 else sum(not is_judgement(c) for c in clauses)
    total, first_clause = 0.0, ""
    shapes: list[str] = []
    for index, clause in enumerate(clauses):
        if _personal(clause, acronyms):
            if index == 0:
                return None  # "my calculator says 5040", "I'm on Windows": the user's own situation
            continue  # "the Milky Way, Andromeda is our neighbour": the other clauses still count
        if clause.endswith("?"):
            continue
        name, weight = _shape(clause, substantive == 1, index == 0, current, ex, after_claim=bool(shapes))
        if weight:
            total += weight
            shapes.append(name)
            first_clause = first_clause or clause
        if total >= STRONG:
            break
    if not total:
        return None
    return CueHit("contradiction", min(total, STRONG), f"{'+'.join(shapes)}: {first_clause[:40]}")
