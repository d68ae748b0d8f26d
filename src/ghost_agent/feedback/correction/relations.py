"""How a follow-up statement relates to what the reply asserted: the opposite, a denial, a tie, another action,
a changed list, or the reply's answer said of something else — and the cues that read the follow-up against the
reply.

Clause shapes, read by `user_correction_contradiction._shape` against the `Exchange`:

* `polarity` (strong) — after a yes/no question, a statement about its subject that says the opposite of the
  reply's yes or no: "Is Python's sort stable?" → "No, … not stable." → "It is stable"; "Is 1 prime?" → "Yes" →
  "1 isn't prime"; "Does range include the end?" → "Yes" → "It doesn't"; after a "yes", another class: "Is a
  tomato a vegetable?" → "botanically it's a fruit". Not a statement narrowed to a case, a version or a time
  ("it isn't in numpy", "it wasn't in Python 2"), nor one about another subject ("sets still aren't");
* `denial` (strong) — the reply's answer denied the role asked about: "KG isn't the SI symbol", "Niagara isn't
  even close" (not "isn't the biggest", "isn't a planet anymore");
* `sameness` (strong) — after "Which is heavier, A or B?", a tie the reply did not allow: "they weigh the same"
  (not an appearance: "looks the same size in the sky");
* `parallel` (strong) — the reply said what its subject does, the follow-up says it does something else: "It
  returns 0" after "It returns None", "it prints 2.67" after "gives 2.68"; after "What does X do?", "It squares x"
  after "It multiplies x by 2", "it does nothing" — not under a condition ("it rebases with --rebase") nor the
  reply's action in other words ("It shows dotfiles" after "It lists all files", `restates_action`);
* `unnegated` (strong) — the asked-about thing does what the reply said it does not: "-i makes it ask" after
  "… without asking";
* `list_differs` (strong, read on the whole message) — the reply's list given again with an item changed;
* `transfer` (weak) — the reply's answer said of a new subject: "404 is not found" after "403 means Not Found",
  "COUNT(*) counts all rows" after "It counts all rows" (about COUNT(col)). Alone it may be a follow-on fact.

Cues for `correction_score.score_cues`, each needing the reply:

* `syntax_mention` (0.5) — a piece of syntax named as wrongly there or missing: "no parentheses" when the reply
  has "()", "still missing the colon" when it has no ":";
* `empty_result` (0.5, 1.0 with "with that") — the reply's code reported to give an empty or false result it did
  not promise: "'Racecar' returns False with that", "… and returns None";
* `also_valid` (1.0) — a second right answer where the reply claimed the only one: "I think cacti is fine too?"
  after "'Cactuses' is the only correct plural", "Jupiter, Uranus and Neptune have rings too" after "Only Saturn";
* `replacement` (0.5) — code the reply did not write, offered in its place: "…, use getFullYear()".

The verb lists here (`_ACTIONS`, `_SAME_ACTION`, `_IRREGULAR_PAST` in `user_correction_values`) are general
English, not answers: the detector knows no facts.
"""

from __future__ import annotations

import re

from ghost_agent.feedback.correction.cues import CueHit
from ghost_agent.feedback.correction.exchange import (
    CODE_RE,
    FUNCTION,
    NEGATION_RE,
    PRONOUN_SUBJECT,
    Exchange,
    content,
    is_comparative,
    numbers,
    raw_tokens,
    stem,
    subject_words,
    words_of,
)

_CONTRACTIONS = (
    (re.compile(r"\bcan'?t\b|\bcannot\b"), "can not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"\b(is|are|was|were|does|do|did|has|have|had|could|should|would)n'?t\b"), r"\1 not"),
    (re.compile(r"\b(it|that|this|he|she|there|what)'s\b"), r"\1 is"),
    (re.compile(r"\b(they|you|we)'re\b"), r"\1 are"),
)
_PLAIN = frozenset("a an the it its this that they them is are was were be do does did not no at all to of".split())
_PAST = frozenset({"was", "were", "did", "had"})
_AUX_FAMILY = {
    "is": "be", "are": "be", "was": "be", "were": "be", "does": "do", "do": "do", "did": "do", "can": "can",
    "has": "have", "have": "have", "will": "will", "should": "should",
}  # fmt: skip
_DEGREE = re.compile(r"(?<=\w) (?:mostly|largely|mainly|basically|actually|really|definitely|certainly)(?= )")
_POLAR = re.compile(
    r"^(?P<subject>[\w'.()\[\]+#-]+(?: [\w'.()\[\]+#-]+){0,2}?) (?P<aux>is|are|was|were|does|do|did|can|has|have"
    r"|will|should)(?P<neg> not)?(?: (?P<rest>.*))?$"
)
# A statement narrowed to a case, a time or a version is no flat "no": "it isn't in numpy", "it wasn't always".
_NARROWED = re.compile(
    r"\b(?:always|anymore|any more|yet|though|sometimes|necessarily|usually|often|when|if|unless|before|until"
    r"|in (?:[a-z]+ )?v?\d|with|without|except|only"
    r"|since|in (?:older|newer|some|every|all|most|the old|earlier|later|recent)|for (?:some|all|every|most|a|an)"
    r"|by default|every time|on (?:some|older|newer|windows|mac|linux))\b"
)
_TIE = re.compile(
    r"\b(?:the same|equal(?:ly)?|neither|no difference|identical|a tie|tied|same (?:\w+ )?(?:weight|size|length"
    r"|age|height|speed|amount|mass|price))\b"
)
# Verbs that say what a thing does or yields: the same verb with another object contradicts the reply.
_ACTIONS = frozenset(
    """returns gives prints outputs produces evaluates raises throws counts includes excludes keeps removes deletes
    saves stores starts ends boils freezes melts sorts converts rounds truncates matches uses takes creates adds
    lists shows downloads uploads fetches merges resets reverts copies moves renames overwrites appends inserts
    replaces splits joins parses reads writes opens closes checks compares finds selects filters skips ignores
    multiplies divides squares doubles halves increments decrements""".split()
)
# Verbs of output: "it prints 2.67" contradicts "gives 2.68".
_OUTPUTS = ("returns", "gives", "prints", "outputs", "produces", "yields", "shows", "evaluates to")
_MODAL = frozenset("can could may might will would should also only just then still usually sometimes".split())


def _expand(clause: str) -> str:
    for pattern, replacement in _CONTRACTIONS:
        clause = pattern.sub(replacement, clause)
    return clause


def _request_aux(ex: Exchange) -> str | None:
    first = re.match(r"[\W_]*([a-z]+)", ex.request)
    return _AUX_FAMILY.get(first.group(1)) if first else None


def polarity(clause: str, ex: Exchange) -> bool:
    """After a yes/no question, a statement about its subject with the opposite of the reply's yes or no."""
    if not ex.yes_no_request or not ex.reply_polarity:
        return False
    m = _POLAR.match(_DEGREE.sub("", _expand(clause)))
    if m is None or _AUX_FAMILY[m.group("aux")] != _request_aux(ex):
        return False
    if (m.group("aux") in _PAST) != bool(re.match(r"[\W_]*(?:was|were|did|had)\b", ex.request)):
        return False  # "it wasn't always" after "Is it …?": another time
    subject = m.group("subject")
    if not PRONOUN_SUBJECT.fullmatch(subject):
        stems = subject_words(words_of(subject))
        if not stems or not stems <= ex.request_tokens:
            return False  # "sets still aren't": another subject than the question's
    rest = m.group("rest") or ""
    rest_words = {stem(w) for w in words_of(rest)} - _PLAIN
    if rest_words and not rest_words & (ex.request_tokens - _PLAIN):
        # "it's a fruit" after "Is a tomato a vegetable?" → "Yes": another class than the one the reply confirmed
        other_class = re.match(r"(?:a|an) \w", rest) is not None and not rest_words & ex.reply_tokens
        return other_class and ex.reply_polarity == 1 and m.group("neg") is None and not _NARROWED.search(rest)
    if _NARROWED.search(rest):
        return False
    negated = m.group("neg") is not None or re.match(r"(?:not|no|never)\b", rest) is not None
    return (-1 if negated else 1) == -ex.reply_polarity


_DENIAL = re.compile(
    r"^(?P<subject>[\w'.()\[\]+#-]+(?: [\w'.()\[\]+#-]+){0,2}?) (?:is|are|was|were|does|do|did|has|have|can) not"
    r"(?: (?P<rest>.*))?$"
)


def denial(clause: str, ex: Exchange) -> bool:
    """The reply's answer denied the role the request asked about: "Sydney isn't the capital", "Bach didn't write
    it", "KG isn't the SI symbol" — not a remark about it ("Pluto isn't a planet anymore", "isn't the biggest")."""
    m = _DENIAL.match(_expand(clause))
    if m is None or PRONOUN_SUBJECT.fullmatch(m.group("subject")):
        return False
    subject = subject_words(words_of(m.group("subject")))
    if not subject or not subject <= ex.reply_answer:
        return False
    rest = [w for w in (m.group("rest") or "").split() if w not in {"even", "remotely", "anywhere", "quite"}]
    if not rest or rest in (["it"], ["that"], ["them"], ["one"]) or rest[-1] in {"close", "right", "correct", "it"}:
        return True  # "Bach didn't", "Niagara isn't even close"
    if _NARROWED.search(" ".join(rest)) or any(is_comparative(w) for w in rest):
        return False
    role = content(words_of(" ".join(rest)))
    return bool(role) and (role <= ex.request_words or rest[0] == "the" and len(rest) <= 4)


def _compares(ex: Exchange) -> bool:
    """The request asks which of two is more something ("Which is heavier, A or B?")."""
    return " or " in ex.request and any(is_comparative(w) for w in words_of(ex.request))


def sameness(clause: str, ex: Exchange) -> bool:
    """A tie where the reply picked a winner: "they weigh the same"."""
    if _NARROWED.search(clause) or re.search(r"\b(?:looks?|seems?|appears?|feels?|sounds?)\b", clause):
        return False  # "Looks the same size in the sky though": an appearance, not the measure
    return _compares(ex) and _TIE.search(clause) is not None and _TIE.search(ex.reply) is None


def _first_clause(text: str) -> str:
    return re.split(r"[.;:!?,(]|\s[\u2014\u2013-]\s", text, maxsplit=1)[0].strip()


def _subject_matches(subject: list[str], reply_subject: list[str], ex: Exchange) -> bool:
    """The follow-up's subject is the reply's: a pronoun for a pronoun or for what the request named, or the same
    words."""
    if not subject:
        return False
    text = " ".join(subject)
    if PRONOUN_SUBJECT.fullmatch(text):
        return True
    stems = subject_words(words_of(text))
    return bool(stems) and (stems <= ex.request_tokens or stems == subject_words(words_of(" ".join(reply_subject))))


def parallel(clause: str, ex: Exchange) -> bool:
    """The same subject doing something else than the reply said: "It returns 0" after "It returns None"; after a
    question about what it does, "It squares x" after "It multiplies x by 2"."""
    words = clause.split()
    for i, word in enumerate(words[:6]):
        if word not in _ACTIONS:
            continue
        subject = words[:i]
        if "and" in subject:  # "reverse() works in place and returns None": the head is the subject
            subject = subject[: min(1, subject.index("and"))]
        elif i > 3:
            break
        if any(w in _MODAL for w in subject):
            return False
        obj = content(words_of(" ".join(words[i + 1 : i + 4])))
        same = _OUTPUTS if word in _OUTPUTS else (word,)
        reply_verb = re.search(r"(?:^|\s)(?:" + "|".join(map(re.escape, same)) + r")\s+(?P<obj>[^.;,]+)", ex.reply)
        if reply_verb is None:
            break
        reply_obj = content(words_of(reply_verb.group("obj")))
        figures, reply_figures = numbers(" ".join(words[i + 1 : i + 3])), numbers(reply_verb.group("obj"))
        if figures and reply_figures:  # "it prints 2.67" after "gives 2.68"
            obj, reply_obj = {str(f) for f in figures}, {str(f) for f in reply_figures}
        if not obj or obj & reply_obj or obj <= ex.request_words or _CONDITION.search(clause):
            return False  # "it returns the default if you pass one": another case
        reply_subject = ex.reply[: reply_verb.start()].split()[-3:]
        return not subject or _subject_matches(subject, reply_subject, ex)
    return ex.behaviour_request and _other_action(clause, ex)


_CONDITION = re.compile(
    r"\b(?:with|without|when|if|unless|using|on|for|by default|except|otherwise|instead of)\b"
)
_NOTHING = re.compile(r"^(?:(?:it|this|that) (?:does|do|did) )?(?:nothing|absolutely nothing)$")
_ACTION_LEAD = re.compile(r"^(?:it|this|that|they)(?: just| only| actually| really)? (?P<verb>[a-z]{3,}s)\b")


def _action_of(text: str) -> str | None:
    """The verb of "it <verb>s …" ("it copies …"), not an auxiliary, a modal or a negation."""
    m = _ACTION_LEAD.match(text)
    if m is None or m.group("verb") in FUNCTION or m.group("verb") in _MODAL or m.group("verb").endswith("ss"):
        return None
    return m.group("verb")


# Verbs that say the same thing of a command or function: "shows" restates "lists", "deletes" restates "removes".
_SAME_ACTION = tuple(
    frozenset(group.split())
    for group in (
        "shows show lists list displays display prints print outputs output",
        "removes remove deletes delete drops drop erases erase clears clear",
        "creates create makes make builds build generates generate",
        "gets get fetches fetch retrieves retrieve downloads download pulls pull",
        "adds add inserts insert appends append",
        "checks check verifies verify tests test validates validate",
        "returns return gives give yields yield produces produce",
        "saves save stores store writes write keeps keep",
        "stops stop ends end exits exit quits quit terminates terminate",
    )
)


def restates_action(clause: str, reply: str) -> bool:
    """"It shows dotfiles" after "It lists all files, …": the reply's action, in other words."""
    verb = _action_of(clause)
    reply_verb = _action_of(_first_clause(reply))
    if verb is None or reply_verb is None or verb == reply_verb:
        return False
    return any(verb in group and reply_verb in group for group in _SAME_ACTION)


def _other_action(clause: str, ex: Exchange) -> bool:
    """After "What does X do?", "it copies directories" where the reply said "It makes cp read-only" — not under
    a condition ("it rebases with --rebase") nor in other words for the reply's object ("It shows dotfiles" after
    "It lists all files, including hidden ones")."""
    if _NOTHING.match(clause) and "nothing" not in ex.reply:
        return True  # "it does nothing, it's a placeholder" after "It exits the function."
    verb = _action_of(clause)
    if verb is None or stem(verb) in ex.reply_tokens or stem(verb) in ex.request_tokens:
        return False
    if _CONDITION.search(clause):
        return False
    if restates_action(clause, ex.reply):
        return False
    reply_first = _first_clause(ex.reply)
    if _action_of(reply_first) is not None:
        return True
    reply_words = reply_first.split()
    for i, word in enumerate(reply_words[1:5], start=1):  # "`git pull` only downloads …": the request's subject
        if word.endswith("s") and word not in FUNCTION and len(word) > 3:
            head = subject_words(words_of(" ".join(reply_words[:i])))
            return bool(head) and head <= ex.request_tokens | {"only", "just"}
    return False


def transfer(clause: str, ex: Exchange) -> bool:
    """The reply's answer said of something new: "404 is not found" after "403 means Not Found"."""
    words = clause.split()
    for i, word in enumerate(words[1:4], start=1):
        if word not in {"is", "are", "was", "were", "means", "mean"} and word not in _ACTIONS:
            continue
        subject = words[:i]
        if PRONOUN_SUBJECT.match(" ".join(subject)) or not subject_words(words_of(" ".join(subject))):
            return False
        named = subject_words(words_of(" ".join(subject))) <= ex.request_tokens and not CODE_RE.search(subject[0])
        if raw_tokens(" ".join(subject)) <= ex.raw or named:
            return False  # the subject is one the exchange named ("COUNT(*)" is not "COUNT(col)")
        said = {w for w in content(words_of(" ".join(words[i + 1 :]))) if len(w) > 2}
        if word in _ACTIONS:
            said.add(stem(word))
        answer = ex.reply_words - ex.request_words
        return bool(said) and said <= ex.reply_words | ex.request_words and bool(said & answer)
    return False


_ITEM_SPLIT = re.compile(r",\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+")
_LIST_LEAD = re.compile(
    r"^(?:(?P<subject>.*?)\s*\b(?:it'?s|its|they'?re|they are|should be|is|are)\s+|[a-z]+\s*:\s*"
    r"|(?:for|in|with) [^,]{1,20} (?=it))"
)


def _items(text: str) -> list[str]:
    return [i.strip(" .!;:'\"`") for i in _ITEM_SPLIT.split(text) if i.strip(" .!;:'\"`")]


def list_differs(norm: str, ex: Exchange) -> str:
    """The reply's list given again with an item changed: "it's 2, 3, 5" after "1, 2, 3", "for light it's red,
    green, blue" after "Red, yellow, blue."; the new list, or "" when there is none."""
    reply_items = _items(ex.reply)
    if not 2 <= len(reply_items) <= 10 or any(len(i.split()) > 3 for i in reply_items):
        return ""
    tail = norm.split(". ")[-1]
    lead = _LIST_LEAD.match(tail)
    subject = lead.group("subject").split(",")[-1].strip() if lead and lead.group("subject") else None
    if subject and not subject_words(words_of(subject)) <= ex.request_tokens:
        return ""  # "Italy's is green, white, red": another subject's list
    listed = tail[lead.end() :] if lead else tail
    items = _items(listed)
    if len(items) < 2 or any(len(i.split()) > 3 for i in items):
        return ""
    new = [i for i in items if i not in reply_items]
    kept = [i for i in items if i in reply_items]
    return listed if new and kept and len(new) <= max(1, len(items) // 2) else ""


# "without asking", "doesn't ask", "never asks": the reply denies an action the follow-up then asserts.
_REPLY_DENIES = re.compile(r"\b(?:without|never|not|no|doesn'?t|does not|don'?t|do not|won'?t|can'?t|cannot) (\w+)")


def unnegated(clause: str, ex: Exchange) -> bool:
    """The follow-up says the asked-about thing does what the reply said it does not: "-i makes it ask before each
    removal" after "It removes files without asking." (about `rm -i`)."""
    if NEGATION_RE.search(clause):
        return False
    denied = {stem(w) for w in _REPLY_DENIES.findall(ex.reply) if w not in FUNCTION}
    denied |= {stem(w.removesuffix("ing")) for w in _REPLY_DENIES.findall(ex.reply) if w.endswith("ing")}
    words = clause.split()
    if not denied or not words:
        return False
    head = subject_words(words_of(words[0]))
    about = PRONOUN_SUBJECT.match(clause) is not None or bool(head) and head <= ex.request_tokens | ex.raw
    said = {stem(w) for w in words_of(" ".join(words[1:]))}
    return about and bool(said & denied) and not _CONDITION.search(clause)


# --- cues that need the reply --------------------------------------------------------------------------------

_SYNTAX = {
    "parentheses": "()",
    "parens": "()",
    "parenthesis": "()",
    "brackets": "[]",
    "square brackets": "[]",
    "braces": "{}",
    "curly braces": "{}",
    "semicolon": ";",
    "semicolons": ";",
    "colon": ":",
    "comma": ",",
    "commas": ",",
    "quotes": "\"'",
    "quote": "\"'",
    "backticks": "`",
    "dollar sign": "$",
    "asterisk": "*",
    "hyphen": "-",
    "underscore": "_",
}
_SYNTAX_NAMES = "|".join(sorted((re.escape(k) for k in _SYNTAX), key=len, reverse=True))
_SYNTAX_ABSENT = re.compile(
    r"\b(?:no|without|drop the|remove the|lose the|too many)\s+(?P<name>" + _SYNTAX_NAMES + r")\b"
)
_SYNTAX_MISSING = re.compile(
    r"\b(?:missing|needs|need|forgot|forgotten|lacks|add|with) (?:a |an |the |its |your )?(?P<name>" + _SYNTAX_NAMES
    + r")\b"
)


def syntax_mention(norm: str, reply: str) -> CueHit | None:
    """A piece of syntax named as wrongly there ("no parentheses" when the reply has "()") or missing ("still
    missing the colon" when it has no ":")."""
    code = CODE_RE.search(reply) is not None or re.search(r"[;:,]", reply) is not None
    absent = _SYNTAX_ABSENT.search(norm)
    if code and absent is not None and any(c in reply for c in _SYNTAX[absent.group("name")]):
        return CueHit("syntax", 0.5, absent.group(0))
    missing = _SYNTAX_MISSING.search(norm)
    if missing is not None and not any(c in reply for c in _SYNTAX[missing.group("name")]):
        return CueHit("syntax", 0.5, missing.group(0))
    return None


_EMPTY_RESULT = re.compile(
    r"\b(?:returns?|gives?|prints?|outputs?|evaluates to|comes out as|yields?)\s+(?P<result>false|none|null|nil"
    r"|undefined|nan|nothing|empty|an empty \w+|-1)\b"
)
_ON_THE_REPLY = re.compile(r"\b(?:with|using|on|from|in|for) (?:that|this|it|yours|your (?:\w+))\b")


def empty_result(norm: str, reply: str) -> CueHit | None:
    """The reply's code reported to give an empty or false result it did not promise."""
    if not CODE_RE.search(reply) or re.match(r"[\W_]*(?:so|and|if|when|what|why|how|does|is)\b", norm):
        return None
    m = _EMPTY_RESULT.search(norm)
    if m is None or re.search(r"\b" + re.escape(m.group("result")) + r"\b", reply):
        return None
    return CueHit("empty_result", 1.0 if _ON_THE_REPLY.search(norm, m.end()) else 0.5, m.group(0))


_ONLY = re.compile(r"\b(?:only|the one and only|must|exclusively)\b")
_ALSO_VALID = re.compile(
    r"\b(?:fine|correct|valid|ok|okay|right|acceptable|allowed|possible|standard|works?)\s+(?:too|as well)\b"
    r"|\b(?:is|are) also (?:fine|correct|valid|acceptable|allowed|possible|standard|right)\b"
)
_ALSO = re.compile(r"\b(?:too|as well|also)[.!]*$|^[\W_]*(?:\w+ ){1,4}(?:also|too)\b")


def also_valid(norm: str, reply: str) -> CueHit | None:
    """A second right answer where the reply claimed the only one: "I think cacti is fine too?" after "'Cactuses'
    is the only correct plural", "Jupiter, Uranus and Neptune have rings too" after "Only Saturn has rings"."""
    only = _ONLY.search(reply)
    if only is None:
        return None
    m = _ALSO_VALID.search(norm)
    if m is not None:
        return CueHit("also_valid", 1.0, m.group(0)) if set(words_of(norm[: m.start()])) - FUNCTION else None
    if _ALSO.search(norm) is None or norm.rstrip().endswith("?"):
        return None
    said = content(words_of(norm))
    claimed = content(words_of(reply[only.end() :]))
    # Others said to do what the reply gave to one only: the predicate shared, the subjects new.
    if said & claimed and len(said - claimed - content(words_of(reply))) >= 1:
        return CueHit("also_valid", 1.0, norm[:40])
    return None


# "use getFullYear()", "use \\d+": a piece of code offered in place of the reply's.
_REPLACEMENT = re.compile(r"(?:^|[,;.!]\s*|\b(?:just|should|instead|better to|then) )(?:use|try) (?P<code>\S+)")


def replacement(norm: str, reply: str) -> CueHit | None:
    """A piece of code the reply did not write, offered in its place (needs company: "getYear is deprecated …,
    use getFullYear()")."""
    m = _REPLACEMENT.search(norm)
    if m is None or not CODE_RE.search(reply):
        return None
    code = m.group("code").strip(".,;!?`'\"")
    if not re.search(r"[()\[\]{}\\.=<>*+]", code.strip(".")) or code in reply:
        return None
    return CueHit("replacement", 0.5, m.group(0).strip(" ,;.!"))

