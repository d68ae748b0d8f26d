"""Bare values and restated answers: the follow-up that just gives the answer ("1024", "ohms", "Saturn, as of
2023", "It's Ottawa", "that'd be $12", "It ended in 1945") — read against the `Exchange` by
`user_correction_contradiction._shape` (shapes `value` and `restated`, listed there).

A value is new (not in the exchange, or the option of "A or B?" the reply did not pick, or a bare term of the
request that the reply's one-word answer is not), of the reply's kind (`kind_matches`), and not the request again
with a new input ("10 factorial"), the reply's figure rounded ("Roughly 300,000") or worked out ("60 times 60"),
the answer for another case or time (".ts for TypeScript", "9 in winter", "Kyoto was before"), a remark
("Lukewarm in between", "Spooky stuff" after a name), a participle, adverb or rank ("Named after …", "Barely",
"Canada second"), nor, after a yes/no question, anything but yes or no.
"""

from __future__ import annotations

import re

from ghost_agent.feedback.correction.exchange import (
    CODE_RE,
    DESCRIPTIVE,
    FUNCTION,
    NOT_A_VALUE,
    NUMBER_RE,
    NUMBER_WORDS,
    STRONG,
    Exchange,
    content,
    is_comparative,
    is_judgement,
    is_new_value,
    kind_matches,
    names,
    numbers,
    raw_tokens,
    same_number_kind,
    stem,
    value_shape,
    words_of,
)

MAX_BARE_VALUE_WORDS = 4
_TRAILING_REACTIONS = frozenset("lol lmao rofl haha hah smh jeez duh ugh obviously".split())

# "it's / that's / that'd be / the answer is / should be": the answer itself as the subject.
_RESTATED = re.compile(
    r"^(?:(?:it|that|this|the answer|the result|the right answer|the correct answer)"
    r"(?:'s|s| is| was|'d be| would be| should be| will be)|should be|it'?d be|that'?d be|it should be)"
    r"\s+(?:about |around |roughly |approximately |actually |really |just |only |like |~)?(?P<value>.+)$"
)
VERBS = frozenset(
    """is are was were 's 're means mean equals has have had starts start begins begin ends end returns return
    gives give shows show prints print outputs output takes take skips skip counts count keeps keep uses use
    goes go comes come came only needs need stands =""".split()
)
# The verbs a value can close with: "George Washington was", "Jane Austen did", "avocado is".
_ELLIPTIC = frozenset("is are was were did does do has had".split())
_ELLIPTIC_ENDINGS = tuple(tuple(e.split()) for e in ("has been", "have been", "had been", "is it", "was it", "did it"))
_ELLIPTIC_ENDINGS += tuple((e,) for e in _ELLIPTIC)
# Words that open a value ("about 37.8", "the Indian Ocean") and words that close it, opening a qualifier ("29 in a
# leap year", "Saturn as of 2023", "O(n log n) on average", "11 including the goalkeeper").
_VALUE_OPENERS = frozenset(
    "the about around roughly approximately approx exactly precisely nearly almost circa ~".split()
)
QUALIFIERS = frozenset(
    """in on at by for from as including excluding with without per since until till after before if when or
    according depending give plus minus because previously formerly originally earlier""".split()
)
OTHER_CASE = frozenset({"for", "with", "without", "on", "in", "at", "during"})
_NOT_VALUE_ENDINGS = (
    "ed", "ally", "ously", "ively", "fully", "lessly", "ingly", "edly", "ently", "antly", "ately", "ably", "rely",
    "tly", "ghly", "rly", "dly",
)  # fmt: skip
EARLIER = frozenset({"before", "until", "till", "previously", "formerly", "originally", "earlier"})
_NONE = frozenset({"none", "zero", "nothing", "nobody", "nowhere", "never"})
RANKS = frozenset("second third fourth fifth 2nd 3rd 4th 5th next runner-up".split())
def _value_words(clause: str, ex: Exchange, original: str) -> tuple[list[str], bool] | None:
    """The value a clause opens with, and whether it closes with a verb ("George Washington was"), or None when the
    clause is a statement rather than a value ("443 is HTTPS", "jupiter's way bigger"). Openers ("about", "the")
    and a trailing qualifier ("in a leap year", "as of 2023") are dropped."""
    words = clause.split()
    while len(words) > 1 and words[0] in _VALUE_OPENERS:
        words = words[1:]
    if len(words) > 2 and words[0] in {"more", "closer"} and words[1] in {"like", "to"}:
        words = words[2:]
    for i, word in enumerate(words):
        if i and word in QUALIFIERS:
            new_case = bool(content(words[i + 1 :]) - ex.words)
            number = NUMBER_RE.match(words[0].strip("~$")) is not None or words[0] in NUMBER_WORDS
            placed = word in {"in", "at"} and not number and bool(names(original) & set(words[i + 1 :]))
            case = word in OTHER_CASE and not (number and word == "with")  # "32 with wisdom teeth" counts them in
            if word in EARLIER or case and new_case and not placed:
                return None  # ".ts for TypeScript", "9 in winter", "Kyoto was before": another case or time
            if new_case and not number and not placed and word != "or":
                return None  # "Lukewarm in between", "Shared by three countries": a remark, not a value
            words = words[:i]  # "29 in a leap year", "11 including the goalkeeper", "7 by the usual count"
            break
    last = words[-1].strip(",") if words else ""
    if last in DESCRIPTIVE or last in RANKS or len(last) > 4 and last.endswith(_NOT_VALUE_ENDINGS):
        return None  # "named", "famously", "Canada second": a participle, an adverb or a rank
    while len(words) > 1 and words[-1] in _TRAILING_REACTIONS:
        words = words[:-1]  # "three lol"
    elliptic = False
    for ending in _ELLIPTIC_ENDINGS:
        if len(words) > len(ending) and tuple(words[-len(ending) :]) == ending:
            words, elliptic = words[: -len(ending)], True
            break
    for word in words:
        bare = word.strip(",")
        if bare in VERBS or bare in _ELLIPTIC or bare in {"like", "not"} or "n't" in bare or is_comparative(bare):
            return None
    return words, elliptic


def _code_value(clause: str, ex: Exchange, original: str) -> bool:
    """The clause opens with code of the reply's form: "len(df) or df.shape[0]" after "df.count"."""
    if code_shaped(clause, ex):
        return True
    parsed = _value_words(clause, ex, original)
    return parsed is not None and bool(parsed[0]) and code_shaped(" ".join(parsed[0]), ex)


def _unit_changed(value: str, ex: Exchange) -> bool:
    """The reply's number with another unit: "300,000 km/s" for "300,000 m/s"; not a unit the exchange used."""
    m = re.match(r"\$?(-?\d[\d,]*(?:\.\d+)?)\s*([^\s\d][^\s]*)", value)
    if m is None or m.group(2).strip(".,") in ex.raw:
        return False
    reply_unit = re.search(r"(?<![\w.])" + re.escape(m.group(1)) + r"\s*([^\s\d][^\s]*)", ex.reply)
    return reply_unit is not None and reply_unit.group(1).strip(".,") != m.group(2).strip(".,")


def bare_value(
    clause: str, whole: bool, ex: Exchange, original: str, at_start: bool, after_claim: bool = False
) -> float:
    """A bare value or a value-led statement: "1024", "Leonardo da Vinci", "29 in a leap year"; after a task
    request, only a piece of code completing a claim ("tail is the end of the file. head -n 5")."""
    if not ex.value_request:
        if after_claim and CODE_RE.search(clause) and is_new_value(clause, ex):
            pass  # "tail is the end of the file. head -n 5"
        elif at_start and ex.reply_value_tokens and _code_value(clause, ex, original):
            return STRONG  # "font-weight: bold" after "font-style: bold;": the bare code answer, another form
        else:
            return 0.0
    if ex.yes_no_request and not ex.reply_numeric:
        return 0.0  # the answer to "Is …?" is yes or no: "Myth busted" is a remark
    if ex.behaviour_request and not ex.reply_numeric and not CODE_RE.search(clause):
        return 0.0  # the answer to "What does X do?" is an action: "Scary command" is a remark
    parsed = _value_words(clause, ex, original)
    if parsed is None or not parsed[0]:
        return 0.0
    words, elliptic = parsed
    value = " ".join(words)
    lead = words[0].strip("~$°%()")
    if lead in _NONE and len(words) == 1 and ex.reply_numeric and 0 not in ex.numbers:
        return STRONG  # "none, sharks have cartilage" after "About 300."
    if NUMBER_RE.match(lead) and not re.search(r"[\^*()=\[\]{}<>+]", lead) or lead in NUMBER_WORDS:  # "3x^2" is code
        if lead == "one" and len(words) > 1:
            return 0.0  # "one byte's worth": a determiner
        found = numbers(words[0] if lead in NUMBER_WORDS else value)
        if not ex.reply_numeric or not same_number_kind(value, ex) or converted(value, ex):
            return 0.0  # another kind of number, or the reply's own figure in another unit
        if found <= ex.numbers:
            if len(words) == 1 and not found & ex.reply_numbers:
                return STRONG  # "2" after "2.5" for `echo $((5 / 2))`: an input of the request, as the answer
            return STRONG if _unit_changed(value, ex) else 0.0
        if any(_rounds(n, r) or not n.is_integer() and _rounds(r, n) for n in found for r in ex.reply_numbers):
            return 0.0  # "Roughly 300,000" after "299,792 km/s", "373.15 to be exact" after "373 K": the same figure
        if _arithmetic(clause) in ex.reply_numbers:
            return 0.0  # "60 times 60" after "3600.": the reply's figure, worked out
        return 0.0 if _is_variation(clause, ex) else STRONG
    if len(words) > MAX_BARE_VALUE_WORDS or any(w.strip(",'\"") in FUNCTION | NOT_A_VALUE for w in words):
        return 0.0
    if is_judgement(value):
        return 0.0
    if not is_new_value(value, ex):
        if (whole or elliptic or at_start) and _other_option(value, ex) or _unsaid_term(value, ex):
            return STRONG  # "PUT is" after "POST is idempotent."; "function" after "def"
        return 0.0
    person = _ASKS_WHO.match(ex.request) is not None and bool(ex.reply_names) and not numbers(value)
    if not CODE_RE.search(value) and bool(numbers(value)) != ex.reply_numeric and not person:
        return 0.0  # a number for a number, a term for a term; code may carry numbers ("head -n 5")
    if len(words) > 1 and not _could_be_name(value, original, ex):
        return 0.0  # "Spooky stuff" after "The Atlantic.": not a name, where the user capitalises names
    if whole or elliptic or person or kind_matches(value, original, ex, at_start=at_start):
        return STRONG  # "ohms", "edgar allan poe", "avocado is": a new value where the reply gave its answer
    return STRONG if ex.reply_answer_short else 0.0  # "manzana. pera is pear" after "Pera."


# "Who painted …?" asks for a name: a year in the reply ("… around 1503") is a detail, not its answer's kind.
_ASKS_WHO = re.compile(r"[\W_]*(?:who|whom|whose)\b")


# Units by dimension, with the factor to the dimension's base unit (°C, °F and K are converted apart).
_UNIT_TABLE = (
    ("length", "m metre metres meter meters:1|km kilometre kilometres kilometer kilometers:1000|cm:0.01|mm:0.001"
               "|ft feet foot:0.3048|in inch inches:0.0254|mi mile miles:1609.344|yd yard yards:0.9144"),
    ("mass", "kg kilo kilos kilogram kilograms:1|g gram grams:0.001|lb lbs pound pounds:0.45359237"
             "|oz ounce ounces:0.0283495|t tonne tonnes:1000|st stone:6.35029"),
    ("volume", "l litre litres liter liters:1|ml:0.001|gal gallon gallons:3.78541|cup cups:0.236588"
               "|pint pints:0.473176|tsp teaspoon teaspoons:0.00492892|tbsp tablespoon tablespoons:0.0147868"),
    ("speed", "m/s:1|km/h kph kmh:0.277778|mph:0.44704|knot knots kn:0.514444"),
    ("time", "s sec secs second seconds:1|min mins minute minutes:60|h hr hrs hour hours:3600|day days:86400"),
)  # fmt: skip
_UNIT_FACTORS = {
    spelling: (dimension, float(factor))
    for dimension, table in _UNIT_TABLE
    for spellings, factor in (group.rsplit(":", 1) for group in table.split("|"))
    for spelling in spellings.split()
}
_DEGREES = {
    "\u00b0c": "c", "c": "c", "celsius": "c", "\u00b0f": "f", "f": "f", "fahrenheit": "f", "k": "k", "kelvin": "k",
}  # fmt: skip
_MEASURE = re.compile(r"(-?\d[\d,]*(?:\.\d+)?)\s?(\u00b0?[a-z][a-z/]*)")


def _measures(text: str) -> list[tuple[float, str]]:
    return [(float(n.replace(",", "")), u) for n, u in _MEASURE.findall(text) if u in _UNIT_FACTORS or u in _DEGREES]


def _in_base(value: float, unit: str) -> tuple[str, float]:
    if unit in _DEGREES:
        scale = _DEGREES[unit]
        celsius = value if scale == "c" else (value - 32) * 5 / 9 if scale == "f" else value - 273.15
        return "temperature", celsius
    dimension, factor = _UNIT_FACTORS[unit]
    return dimension, value * factor


def converted(value: str, ex: Exchange) -> bool:
    """The value is one of the reply's figures in another unit of the same kind: "about 1,083 feet" after "About
    330 m." — a conversion of the answer, not another answer."""
    said = _measures(value)
    if not said:
        return False
    for n, unit in said[:1]:
        dimension, base = _in_base(n, unit)
        for r, reply_unit in _measures(ex.reply):
            if r not in ex.reply_numbers:
                continue  # "100 km/h is 360 m/s": the request's figure, repeated, is no answer to convert
            other_dimension, other = _in_base(r, reply_unit)
            tolerance = 1.0 if dimension == "temperature" else 0.02 * abs(other)  # a degree; 2 %
            if reply_unit != unit and other_dimension == dimension and abs(base - other) <= tolerance:
                return True
    return False


def _rounds(n: float, r: float) -> bool:
    """`n` is `r` rounded to `n`'s precision ("300,000" for 299,792; "2.5" for 2.54), and differs from it."""
    if n == r or n == 0 or abs(n - r) > 0.05 * abs(r) or _significant(n) >= _significant(r):
        return False  # "10" is no rounding of 8
    text = f"{n:f}".rstrip("0").rstrip(".")
    if "." in text:
        return round(r, len(text.split(".")[1])) == n
    places = len(text) - len(text.rstrip("0"))
    return round(r, -places) == n


_ARITHMETIC = re.compile(
    r"^(?P<a>-?\d[\d,]*(?:\.\d+)?)\s*(?P<op>times|x|×|\*|plus|\+|minus|-|divided by|/|over)\s*"
    r"(?P<b>-?\d[\d,]*(?:\.\d+)?)\b"
)


def _arithmetic(clause: str) -> float | None:
    """The value of a leading "60 times 60" / "24*60", or None."""
    m = _ARITHMETIC.match(clause)
    if m is None:
        return None
    a, b, op = float(m.group("a").replace(",", "")), float(m.group("b").replace(",", "")), m.group("op")
    if op in {"times", "x", "×", "*"}:
        return a * b
    if op in {"plus", "+"}:
        return a + b
    if op in {"minus", "-"}:
        return a - b
    return a / b if b else None


def _significant(x: float) -> int:
    return len(f"{abs(x):f}".replace(".", "").strip("0")) or 1


def _could_be_name(value: str, original: str, ex: Exchange) -> bool:
    """A several-word value where the reply answered with a name: all its longer words capitalised where the user
    wrote it ("Leonardo da Vinci"), unless the user writes in lowercase throughout ("edgar allan poe")."""
    if not ex.reply_names_only or original == original.lower():
        return True
    written = {w.lower(): w for w in re.findall(r"[A-Za-z0-9]+", original)}
    return all(written.get(w, w)[:1].isupper() or len(w) <= 3 or any(c.isdigit() for c in w) for w in words_of(value))


def _unsaid_term(value: str, ex: Exchange) -> bool:
    """A one-word term from the request that the reply, itself a bare term or piece of code, is not: "function"
    after "def" for "What's the keyword to define a function in JavaScript?", "color" after "font-color"."""
    tokens = value.split()
    return (
        len(tokens) == 1
        and bool(ex.reply_value_tokens)
        and len(ex.reply_value_tokens) <= 2
        and (ex.reply_is_term or ex.reply_is_code)
        and tokens[0] not in ex.reply_value_tokens
        and tokens[0] not in FUNCTION | NOT_A_VALUE
    )


def _other_option(value: str, ex: Exchange) -> bool:
    """The value is the option of "A or B?" the reply did not pick."""
    stems = content(words_of(value))
    return bool(stems) and any(stems <= option and not option & ex.reply_answer for option in ex.options)


def _is_variation(clause: str, ex: Exchange) -> bool:
    """The request again with a new input (its words or numbers around a new number), not a new answer: "10
    factorial" after "What's 7 factorial?", "15 kg" after "Convert 10 kg to pounds", "20% of 80" after "15% of 80"."""
    if not ex.request_numbers:
        return False
    if numbers(clause) & ex.request_numbers:
        return True
    words = content(words_of(clause)) - set(NUMBER_WORDS)
    return bool(words) and words <= ex.request_words and not words <= ex.reply_words


def code_shaped(value: str, ex: Exchange) -> bool:
    """One token of the form of the reply's code or figure, not written in the exchange: "2024-03-14" after
    "03/14/2024", "len(list)" after "`list.length`", "#" after "//"."""
    tokens = raw_tokens(value)
    words, reply_words = value.split(), ex.reply.strip("`. ").split()
    if 2 <= len(words) <= 3 and 2 <= len(reply_words) <= 4 and words[0] == reply_words[0].strip("`"):
        # "pip uninstall" after "pip remove package_name": the same program, another subcommand
        return words[1] not in reply_words and re.fullmatch(r"[a-z][\w-]*", words[1]) is not None
    if not is_new_value(value, ex):
        return False
    if len(tokens) != 1:  # "df -h" after "Use `ls -h`.": a command line for a command line
        return _COMMAND.fullmatch(value) is not None and _COMMAND.search(ex.reply) is not None and value not in ex.reply
    shape = value_shape(next(iter(tokens)))
    return any(shape) and any(value_shape(t) == shape for t in ex.reply_code_tokens)


_COMMAND = re.compile(r"(?:^|(?<=[\s`]))[a-z][\w.+-]*(?: [\w./~*-]+){0,2} --?[a-z][\w-]*(?: [\w./~*-]+)?(?=$|[`\s.,;])")


_ASKED_VERB = re.compile(
    r"^(?:it|he|she|they|that|this) (?P<verb>[a-z]{3,}(?:ed|s)|[a-z]{2,}) (?:in|on|at|by|around|about|from|with)?\s*"
    r"(?P<value>[^,]{1,40})$"
)


def _means_else(value: str, ex: Exchange) -> bool:
    """After a translation or definition, the reply said to mean something else than what was asked."""
    said = content(words_of(value))
    return 0 < len(said) <= 3 and not said & ex.reply_words and not said <= ex.request_words and not is_judgement(value)


def _past(ex: Exchange) -> set[str]:
    """The request's verbs in the past tense ("end" → "ended", "sink" → "sank"), as `stem` leaves them."""
    return {stem(w + "ed") for w in ex.request_tokens if w.isalpha()} | {
        past for present, past in _IRREGULAR_PAST.items() if present in ex.request_tokens
    }


# The irregular pasts of common verbs (English morphology, not a lexicon of answers).
_IRREGULAR_PAST = dict(
    pair.split("/")
    for pair in """sink/sank fall/fell win/won begin/began write/wrote come/came take/took run/ran break/broke rise/rose
    freeze/froze grow/grew become/became build/built sell/sold find/found lead/led leave/left make/made meet/met
    pay/paid say/said see/saw send/sent spend/spent stand/stood teach/taught tell/told think/thought go/went
    give/gave get/got hold/held keep/kept know/knew lose/lost draw/drew drive/drove fly/flew throw/threw sing/sang
    swim/swam strike/struck speak/spoke choose/chose buy/bought bring/brought catch/caught fight/fought eat/ate
    invent/invented sing/sang ring/rang shoot/shot bear/bore""".split()
)


# After "it's": a classification ("a conda environment"), the user's own, a negation or a clause ("what I thought").
_NOT_RESTATED = re.compile(r"(?:a|an|some|my|our|your|not|n't|no|what|how|why|where|when|who|which)\b")


def restated(clause: str, ex: Exchange, original: str) -> float:
    """The answer as the subject, a new value as the predicate: "it's 86400", "It's Ottawa", "that'd be $12"; or
    with the verb the request asked about: "It ended in 1945" after "When did the Second World War end?"."""
    m = _RESTATED.match(clause)
    if m is None:
        asked = _ASKED_VERB.match(clause)
        if asked is None or not ex.value_request or stem(asked.group("verb")) not in ex.request_tokens | _past(ex):
            return 0.0
        value = asked.group("value")
        if is_new_value(value, ex) and kind_matches(value, original, ex) and not _NOT_RESTATED.match(value):
            return STRONG
        return 0.0
    value = m.group("value")
    if ex.meaning_request and clause.startswith("that") and _means_else(value, ex):
        return STRONG  # "that's good night" after "Translate 'good morning' …" → "Buona notte."
    if _unsaid_term(value, ex):
        return STRONG  # "it's just color" after "font-color"
    if not ex.value_request:
        return STRONG if ex.reply_value_tokens and code_shaped(value, ex) else 0.0  # "it's len(list)"
    if len(value.split()) > 5 or _NOT_RESTATED.match(value) or is_judgement(value) or converted(value, ex):
        return 0.0  # "it's a conda environment" classifies; "it's just wrong" judges; "that's 1,083 feet" converts
    if words_of(value) and words_of(value)[0] in DESCRIPTIVE:
        return 0.0
    if not is_new_value(value, ex):
        return 0.0
    if kind_matches(value, original, ex):
        return STRONG
    # "it's the pound sterling" after "The euro.": a short term for the reply's one- or two-word answer
    short = len(value.removeprefix("the ").split()) <= 3 and not numbers(value) and not CODE_RE.search(value)
    return STRONG if short and ex.reply_answer_short and not is_judgement(value) else 0.0
