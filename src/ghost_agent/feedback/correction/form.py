"""Form and count constraints: the request stated how the answer should look, the reply does not look like that,
and the follow-up points at it.

A request often fixes the answer's form — "as bullet points", "in a table", "as JSON", "in ISO 8601", "in km",
"in 24h format", "in snake_case" — or a count — "in one sentence", "a 3 letter word", "3 bullet points", "under 50
words". When the reply breaks it, people rarely say so in correction words; they ask for the form again ("bullets,
please", "ISO format pls, YYYY-MM-DD", "The whole plot in a single sentence.") or state the count the reply
really has ("I count five there", "lion has 4 letters"). Asking for a form is a correction only where the request
had already asked for it and the reply does not have it: the same words after a reply that has the form, or where
the request never named it, are a new wish ("Now as a table", "in km please" after "How far …?").

`form_wish` reads the follow-up against the request and the raw reply (line breaks kept: bullets, tables and
sentences are counted on them). The form words are general English and notation (units, date and case formats),
not answers. Pure string work, skipped by a literal pre-filter for follow-ups that name no form.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ghost_agent.feedback.correction.cues import CueHit
from ghost_agent.feedback.correction.exchange import NUMBER_WORDS

MAX_WISH_WORDS = 14  # a longer follow-up says more than a wish for a form; the other cues read it

# --- what the reply looks like --------------------------------------------------------------------------------

_BULLET_LINE = re.compile(r"^[ \t]*[-*\u2022\u00b7\u2013][ \t]+\S", re.M)
_NUMBERED_LINE = re.compile(r"^[ \t]*\(?\d{1,2}[.)][ \t]+\S", re.M)
_TABLE_LINE = re.compile(r"^[^\n|]*\|[^\n|]*\|.*$|^[^\t\n]+\t[^\t\n]+$", re.M)
_FENCE = re.compile(r"^[ \t]*```.*$", re.M)  # not text.fences.is_fence_line: spaces/tabs only, "\n"-ended lines only
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St|vs|etc|e\.g|i\.e|approx|No|Fig|Jr|Sr)\.\s", re.I)


def _lines(reply: str) -> list[str]:
    return [line for line in _FENCE.sub("", reply).splitlines() if line.strip()]


def _list_items(reply: str) -> int:
    return max(len(_BULLET_LINE.findall(reply)), len(_NUMBERED_LINE.findall(reply)))


def _items(reply: str) -> int | None:
    """How many things the reply lists: its bullet or numbered lines, or the parts of a short one-line list
    ("France, Germany and Spain"); None when it is prose that cannot be counted."""
    listed = _list_items(reply)
    if listed >= 2:
        return listed
    lines = _lines(reply)
    if len(lines) >= 3 and all(len(line.split()) <= 8 for line in lines):
        return len(lines)  # one item a line, unmarked
    if len(lines) != 1 or len(reply.split()) > 25:
        return None
    parts = [p for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", lines[0].strip(" .![]")) if p.strip()]
    return len(parts) if len(parts) >= 2 else None


def _sentences(reply: str) -> int | None:
    if _list_items(reply) >= 2:
        return None  # a list is no run of sentences
    text = _ABBREVIATION.sub("  ", " ".join(_lines(reply)))
    return len([s for s in _SENTENCE_END.split(text.strip()) if s.strip()])


def _letters(reply: str) -> int | None:
    """The letters of the reply's one word ("Lion", "The word is 'lion'.")."""
    words = re.findall(r"[^\W\d_]+", reply)
    if len(words) == 1:
        return len(words[0])
    quoted = re.search(r"['\"\u2018\u201c]([^\W\d_]+)['\"\u2019\u201d]", reply)
    return len(quoted.group(1)) if quoted else None


def _paragraphs(reply: str) -> int:
    return len([p for p in re.split(r"\n[ \t]*\n", reply.strip()) if p.strip()])


# What a count is taken of, and how the reply's own count is measured (None: it cannot be told).
_COUNTERS: dict[str, Callable[[str], int | None]] = {
    "letter": _letters,
    "character": lambda reply: len(reply.strip()),
    "word": lambda reply: len(reply.split()),
    "line": lambda reply: len(_lines(reply)),
    "sentence": _sentences,
    "paragraph": _paragraphs,
    "item": _items,
    "decimal": lambda reply: max((len(d) for d in re.findall(r"\d\.(\d+)", reply)), default=0),
}
_UNIT_FAMILY = {
    "letter": "letter", "character": "character", "char": "character", "word": "word", "line": "line",
    "sentence": "sentence", "paragraph": "paragraph", "decimal": "decimal", "decimal place": "decimal", "dp": "decimal",
    **{w: "item" for w in (
        "item bullet point idea step reason tip example name option question suggestion fact synonym alternative"
        " benefit way thing".split()
    )},
}  # fmt: skip
_UNIT_STEMS = tuple({unit[:4] for unit in _UNIT_FAMILY})  # a request naming none of them states no count
_NUMBER = r"\d{1,4}|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r"|a single|single|a|an"
_MAXIMUM = r"under|fewer than|less than|at most|no more than|not more than|max(?:imum)?|up to|within"
_UNITS = r"bullet[ -]points?|decimal places?|" + "|".join(sorted(_UNIT_FAMILY, key=len, reverse=True))
_COUNT = re.compile(
    r"(?<![\w.$])(?:(?P<max>" + _MAXIMUM + r")\s+)?(?P<n>" + _NUMBER + r")[ -](?:[a-z]+[ -])??(?P<unit>" + _UNITS
    + r")(?:s|es)?\b"
)
# A figure stated in the follow-up ("I count five there", "that's 4 letters"), not an ordinal ("the 4th one").
_FIGURE = re.compile(
    r"(?<![\w.$])(?P<n>\d{1,4}|" + "|".join(w for w in NUMBER_WORDS if w != "one") + r")(?!\w|\.\d)"
)  # not "one": "the first one" counts nothing


def _number(text: str) -> int | None:
    text = text.removeprefix("a ").removeprefix("an ")
    if text in {"a", "an", "single"}:
        return 1
    if text.isdigit():
        return int(text)
    return NUMBER_WORDS.get(text)


def _count_constraint(norm: str) -> tuple[str, int, bool] | None:
    """(unit family, count, is a maximum) of the first count the text states: "in one sentence", "3 bullet points",
    "a 3 letter word", "under 50 words"; "a word" and "an idea" state none."""
    at = 0
    while (m := _COUNT.search(norm, at)) is not None:
        at = m.start() + 1  # overlapping: "a one-word antonym" is read at "one", not at "a"
        unit = m.group("unit").replace("-", " ")
        family = _UNIT_FAMILY.get(unit.split()[0] if unit.startswith(("bullet", "decimal")) else unit)
        n = _number(m.group("n"))
        if family is None or n is None or m.group("n") in {"a", "an"} and not m.group("max"):
            continue
        return family, n, m.group("max") is not None
    return None


# --- forms ----------------------------------------------------------------------------------------------------


def _has(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    compiled = re.compile(pattern, flags)
    return lambda reply: compiled.search(reply) is not None


def _upper(reply: str) -> bool:
    letters = [c for c in reply if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


# (name, how the request or follow-up names it, whether the raw reply has it)
_FORMS: tuple[tuple[str, re.Pattern[str], Callable[[str], bool]], ...] = tuple(
    (name, re.compile(named), has)
    for name, named, has in (
        ("bullets", r"\bbullet(?:s|ed|[ -]points?|[ -]list)?\b", lambda r: len(_BULLET_LINE.findall(r)) >= 2),
        ("numbered", r"\bnumbered\b", lambda r: len(_NUMBERED_LINE.findall(r)) >= 2),
        ("list", r"(?:^|\b(?:a|as|in|into) (?:\w+ )?)list\b(?! of)|\blist (?:form|format)\b",
         lambda r: _list_items(r) >= 2),
        ("table", r"(?:^|\b(?:a|as|in|into|the) )tables?\b(?! for)|\btabular\b|\btabulate\b",
         lambda r: len(_TABLE_LINE.findall(r)) >= 2),
        ("json", r"\bjson\b", _has(r"^\s*(?:```\w*\s*)?[\[{]")),
        ("csv", r"\bcsv\b", lambda r: sum("," in line for line in _lines(r)) >= 2),
        ("yaml", r"\bya?ml\b", _has(r"^[ \t-]*[\w-]+:(?:\s|$)", re.M)),
        ("markup", r"\b(?:xml|html)\b", _has(r"<[A-Za-z][^>]*>")),
        ("iso_date", r"\biso(?:[ -]?8601)?\b|\byyyy-mm-dd\b", _has(r"\b\d{4}-\d{2}-\d{2}\b")),
        ("slash_date", r"\b(?:dd/mm|mm/dd)/yy(?:yy)?\b", _has(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b")),
        ("24h", r"\b24[ -]?h(?:ou)?r?\b|\b24[ -]hour\b|\bmilitary time\b",
         _has(r"\b(?:[01]?\d|2[0-3])[:h][0-5]\d\b(?!\s*[ap]\.?m\b)", re.I)),
        ("12h", r"\b12[ -]?h(?:ou)?r?\b|\bam/pm\b", _has(r"\d\s*[ap]\.?m\b", re.I)),
        ("percent", r"\b(?:as a|in) percent(?:age)?\b|\bpercentage\b", _has(r"%|\bper ?cent\b", re.I)),
        ("fraction", r"\b(?:as a|in) fraction\b|\bfractions?\b", _has(r"\d\s*/\s*\d|[\u00bc-\u00be\u2150-\u215e]")),
        ("decimal", r"\b(?:as a|in) decimal\b(?! places?)", _has(r"\d\.\d")),
        ("snake_case", r"\bsnake[_ ]?case\b", _has(r"[a-z0-9]_[a-z0-9]")),
        ("camel_case", r"\bcamel[_ ]?case\b", _has(r"[a-z0-9][A-Z]")),
        ("upper_case", r"\b(?:upper ?case|all caps|capital letters)\b", _upper),
        ("lower_case", r"\blower ?case\b", lambda r: not any(c.isupper() for c in r)),
        ("code_block", r"\bcode block\b", _has(r"```|^(?: {4}|\t)\S", re.M)),
    )
)  # fmt: skip

# Units: each group's spellings; one-letter symbols count only right after a figure ("20 c", "5m").
_UNIT_GROUPS = tuple(
    group.split()
    for group in (
        "km kms kilometre kilometres kilometer kilometers",
        "mi mile miles",
        "metre metres meter meters m",
        "cm centimetre centimetres centimeter centimeters",
        "mm millimetre millimetres millimeter millimeters",
        "ft feet foot",
        "inch inches",
        "yard yards yd",
        "kg kgs kilo kilos kilogram kilograms",
        "gram grams g",
        "lb lbs pound pounds",
        "oz ounce ounces",
        "litre litres liter liters l",
        "ml millilitre millilitres milliliter milliliters",
        "gallon gallons gal",
        "cup cups",
        "tsp teaspoon teaspoons",
        "tbsp tablespoon tablespoons",
        "celsius centigrade \u00b0c c",
        "fahrenheit \u00b0f f",
        "kelvin k",
        "mph",
        "km/h kph kmh",
        "m/s",
        "hpa",
        "kpa",
        "psi",
        "usd dollars dollar $",
        "eur euro euros \u20ac",
        "gbp sterling \u00a3",
        "jpy yen \u00a5",
        "hours hour hrs hr h",
        "minutes minute mins min",
        "seconds second secs sec s",
        "kb kilobytes",
        "mb megabytes",
        "gb gigabytes",
        "mib",
        "gib",
        "calories kcal",
        "acres acre",
        "hectares hectare ha",
        "knots knot",
        "metric",
        "imperial",
    )
)
_UNIT_OF = {spelling: group for group in _UNIT_GROUPS for spelling in group}
_UNIT_SPELLINGS = frozenset(s for s in _UNIT_OF if len(s) > 1)
_UNIT_WORDS = "|".join(sorted((re.escape(s) for s in _UNIT_OF if len(s) > 1), key=len, reverse=True))
# "in km", "to m/s", "as euros", "in metric": a unit the answer should be given in.
_UNIT_ASKED = re.compile(r"\b(?:in|into|to|as|using) (?:the )?(?P<unit>" + _UNIT_WORDS + r")(?![\w/])")
# "384,400 km": the figure given in the unit asked for.
_UNIT_FIGURE = re.compile(r"\d\s?(?P<unit>" + _UNIT_WORDS + r")(?![\w/])")
# "km please", "km!", "km": the unit wished for in a follow-up without a preposition.
_UNIT_WISHED = re.compile(
    r"(?:^|[,.;:!]\s*)(?:the )?(?P<unit>" + _UNIT_WORDS + r")(?:,? (?:please|pls|plz|thanks|only))?(?:[,.;!?]|$)"
)


def _reply_has_unit(group: list[str], reply_norm: str) -> bool:
    for spelling in group:
        if spelling == "metric":
            return any(_reply_has_unit(list(g), reply_norm) for g in _UNIT_GROUPS if g[0] in _METRIC)
        if spelling == "imperial":
            return any(_reply_has_unit(list(g), reply_norm) for g in _UNIT_GROUPS if g[0] in _IMPERIAL)
        if len(spelling) == 1 and spelling.isalpha():
            found = re.search(r"\d\s?\u00b0?" + spelling + r"\b", reply_norm)
        else:
            found = re.search(r"(?<![\w/])" + re.escape(spelling) + r"(?![\w/])", reply_norm)
        if found:
            return True
    return False


_METRIC = frozenset("km metre cm mm kg gram litre ml celsius km/h".split())
_IMPERIAL = frozenset("mi ft inch yard lb oz gallon cup fahrenheit mph".split())

# --- the follow-up --------------------------------------------------------------------------------------------

# Another request, not the same one again: "Now as a table", "Also in JSON", "and the same for Tuesday".
_NEW_REQUEST = re.compile(
    r"^[\W_]*(?:ok(?:ay)?[\s,]+)?(?:now|also|and|then|next|another|plus|same|great|nice|cool|perfect|thanks|thank)\b"
    r"|\b(?:too|as well|also|for (?:the )?(?:next|other|second|rest))\b"
)
# A question about the form, not a wish for it: "can it handle nested JSON?" (but "could you use a table?" asks).
_ASKS = re.compile(
    r"^[\W_]*(?:what|why|how|which|where|who|when|is|are|does|do|did|was|were|should|(?:can|could|would|will|may)"
    r"\b(?! (?:you|u|i (?:get|have|see))\b))\b"
)
_OWN = re.compile(r"\b(?:i'?ll|i will|i can|i could|myself|i'?m going to)\b")
# Negated or turned down: "no table needed", "not as bullets", "without JSON", "instead of a list".
_REFUSED = re.compile(r"(?:\b(?:not|no|without|never|instead of|rather than)|n't)(?:\s+[\w-]+){0,2}\s*$")
# The words a form, unit or count is named by: a follow-up with none of them is skipped at once.
_PUNCTUATION = ".,;:!?'\"()[]`*"
_FORM_WORDS = frozenset(
    """bullet bullets bulleted bullet-points numbered list table tables tabular tabulate json csv yaml yml xml html iso
    iso-8601 iso8601 yyyy-mm-dd dd/mm/yyyy mm/dd/yyyy dd/mm/yy mm/dd/yy 24h 24-hour 24hr 12h 12-hour am/pm military
    percent percentage fraction fractions decimal snake_case snakecase snake camelcase camel_case camel uppercase
    upper lowercase lower caps capital code""".split()
)
_COUNT_WORDS = frozenset(NUMBER_WORDS) | {"single"}
# After the form's name, a word that makes it a thing of its own ("a JSON parser", "table tennis") rather than the
# form of the answer ("as JSON", "in a table of …", "bullet points, please").
_NAMES_A_FORM = re.compile(
    r"(?:$|[^\w\s]|\s+(?:format|formatted|form|style|notation|please|pls|plz|only|and|or|with|without|of|for|so"
    r"|that|which|instead|not|like|this|it|again|showing|comparing|listing|[\d(\"'`]))"
)


def _named(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first place `text` names a form as the form of the answer, not turned down ("no bullets")."""
    for m in pattern.finditer(text):
        if _REFUSED.search(text[max(0, m.start() - 30) : m.start()]) is None and _NAMES_A_FORM.match(text, m.end()):
            return m
    return None


def _unit_wished(norm: str, figures: bool = False) -> re.Match[str] | None:
    for pattern in (_UNIT_ASKED, _UNIT_WISHED, _UNIT_FIGURE) if figures else (_UNIT_ASKED, _UNIT_WISHED):
        if (m := _named(pattern, norm)) is not None:
            return m
    return None


def form_wish(norm: str, request_norm: str, reply: str) -> CueHit | None:
    """The follow-up asks again for a form or count the request stated and the reply does not have, or states the
    count the reply really has against the one asked for: a correction (1.0). `norm` and `request_norm` are
    normalised; `reply` is the raw reply (its line breaks are its form)."""
    words = norm.split()
    if not reply or not request_norm or len(words) > MAX_WISH_WORDS:
        return None
    said = {w.strip(_PUNCTUATION) for w in words}
    forms, units = said & _FORM_WORDS, said & _UNIT_SPELLINGS
    figures = not said.isdisjoint(_COUNT_WORDS) or any(c.isdigit() for c in norm)
    if not (forms or units or figures):
        return None
    hit = _form_hit(norm, request_norm, reply) if forms else None
    if hit is None and units:
        hit = _unit_hit(norm, request_norm, reply)
    if hit is None and figures:
        hit = _count_wish(norm, request_norm, reply) or _range_missed(norm, request_norm)
    if hit is None or _ASKS.match(norm) or _OWN.search(norm) or _NEW_REQUEST.search(norm):
        return None  # a question about the form, the user's own plan, or another request
    return hit


def _form_hit(norm: str, request_norm: str, reply: str) -> CueHit | None:
    for name, pattern, has in _FORMS:
        m = _named(pattern, norm)
        if m is not None and _named(pattern, request_norm) is not None and not has(reply):
            return CueHit("form_wish", 1.0, f"{name}: {m.group(0)}")
    return None


def _unit_hit(norm: str, request_norm: str, reply: str) -> CueHit | None:
    wished = _unit_wished(norm, figures=True)
    asked = _unit_wished(request_norm) if wished is not None else None
    if wished is None or asked is None:
        return None
    group = _UNIT_OF[wished.group("unit")]
    if group is not _UNIT_OF[asked.group("unit")] or _reply_has_unit(group, " ".join(reply.lower().split())):
        return None
    return CueHit("form_wish", 1.0, f"unit: {wished.group(0).strip(' ,.;:!')}")


# "prints 1 to 10", "from 5 through 50": a range the request asked for; "that stops at 9": where the reply's ends.
_RANGE_ASKED = re.compile(r"(?<![\w.])(-?\d+) ?(?:to|through|thru|until|till|-|\u2013|\.\.) ?(-?\d+)(?![\w.])")
_RANGE_SAID = re.compile(
    r"^[\W_]*(?:that|it|this|the (?:loop|list|range|output|code|script))(?: only| just| actually)? (?:stops|ends"
    r"|goes|counts|runs|starts|begins|gets|reaches|prints|outputs)(?: up| only)? (?:at|to|till|until|from) (?P<n>-?\d+"
    r"|" + "|".join(NUMBER_WORDS) + r")\b"
)


def _range_missed(norm: str, request_norm: str) -> CueHit | None:
    """The request asked for a range ("1 to 10") and the follow-up says where the reply's starts or stops instead
    ("that stops at 9", "that goes to 10" after "1 to 5")."""
    said = _RANGE_SAID.match(norm)
    asked = _RANGE_ASKED.search(request_norm) if said is not None else None
    if said is None or asked is None:
        return None
    value = _number(said.group("n")) if not said.group("n").lstrip("-").isdigit() else int(said.group("n"))
    return None if value in {int(asked.group(1)), int(asked.group(2))} else CueHit("form_wish", 1.0, said.group(0))


def _count_wish(norm: str, request_norm: str, reply: str) -> CueHit | None:
    """The request asked for N of something and the reply has M: the follow-up asks for N again ("in a single
    sentence", "3 letters!") or states M ("I count five there", "lion has 4 letters")."""
    if not any(unit in request_norm for unit in _UNIT_STEMS):
        return None
    asked = _count_constraint(request_norm)
    if asked is None:
        return None
    unit, n, maximum = asked
    m = _COUNTERS[unit](reply)
    if m is None or (m <= n if maximum else m == n):
        return None  # the reply kept to it, or its count cannot be told
    said = _count_constraint(norm)
    if said is not None and said[0] == unit and said[1] == n:
        return CueHit("form_wish", 1.0, f"{unit}: {n} again")
    unnumbered = _NUMBERED_LINE.sub(" ", reply.lower())  # "4. Knead to Know": a list's numbering is no figure
    reply_figures = {_number(f.group("n")) for f in _FIGURE.finditer(unnumbered)}
    for figure in _FIGURE.finditer(norm):
        value = _number(figure.group("n"))
        if value == m and value != n and value not in reply_figures:
            return CueHit("form_wish", 1.0, f"{unit}: {m} counted")
    return None
