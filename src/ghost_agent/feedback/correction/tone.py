"""How a correction is said when it is not said plainly: sarcasm, shouting, a subjectless "forgot …", a polite
"I don't think X does that", a piece of the reply's code said never to work — and thanks in any language, which
is never a correction.

* `sarcasm` — markers that turn praise or thanks around: a mocking vocative inside a statement ("…, genius, not
  the price"), a mocking idiom ("thanks for nothing", "what could go wrong", "tell that to a botanist"), an "oh
  sure, and …" / "oh great, now I …" opener before a complaint, a closing "thanks a lot" / "great job" after a
  message that praises nothing, "since when?", the reply's own claim asked back with "now?" ("X borders Y
  now?"). Some are a correction on their own (1.0), the rest count half and add up. Any of them lifts the praise
  guard: "wow"/"great" before them is not praise.
* `doubted_echo` — the reply's own figure or code asked back ("NaCl2, really?"): half, as surprise sounds the same.
* `shouted` — a word of the request written in capitals in a mixed-case follow-up ("DOWN to 2", "ONE sentence"):
  the user insists on what the request said. Not an acronym (a word the exchange writes in capitals itself).
* `subjectless_omission` — "forgot to make the area code optional", "left out the charger": an omission of
  something the request asked for, said without "you" (not the user's own "forgot to mention …").
* `not_what_it_does` — "not what -p does", "that's not what `git pull` does": the reply misdescribed something
  the exchange named.
* `doubted_element` — "I don't think text-align moves the div": a hedged denial with one of the reply's own
  terms as its subject.
* `faulted_code` — "= NULL is never true", "-r isn't a thing": a piece of the reply's code said never to work.
* `only_thanks` — the whole message is thanks ("danke!", "merci beaucoup", "grazie mille", "arigato"): it never
  alarms, whatever else the exchange holds.

General English (and the word for thanks in common languages): no lexicon of answers.
"""

from __future__ import annotations

import re

from ghost_agent.feedback.correction.cues import LEAD, SCAN_HEAD_CHARS, SCAN_TAIL_CHARS, CueHit
from ghost_agent.feedback.correction.exchange import CODE_RE, FUNCTION, content, raw_tokens, stem, words_of

_PERSONAL = frozenset("i me my mine you your yours we us our ours people".split())

# --- thanks in any language -----------------------------------------------------------------------------------

_THANKS_WORDS = (
    "thanks thank thanx thnx thx ty tysm tyvm cheers ta danke dankesch\u00f6n dankeschon merci gracias grazie"
    " obrigado obrigada arigato arigatou arigat\u014d domo gozaimasu spasibo \u0441\u043f\u0430\u0441\u0438\u0431\u043e"
    " dzi\u0119kuj\u0119 dziekuje dzi\u0119ki dzieki tack takk tak bedankt dank kiitos efharisto"
    " \u03b5\u03c5\u03c7\u03b1\u03c1\u03b9\u03c3\u03c4\u03ce te\u015fekk\u00fcrler tesekkurler sa\u011fol"
    " k\u00f6sz\u00f6n\u00f6m koszonom d\u011bkuji dekuji d\u00edky mahalo shukran \u0634\u0643\u0631\u0627 toda"
    " \u05ea\u05d5\u05d3\u05d4 xiexie xie \u8c22\u8c22 \u8b1d\u8b1d \u3042\u308a\u304c\u3068\u3046"
    " \u3042\u308a\u304c\u3068\u3046\u3054\u3056\u3044\u307e\u3059 \uac10\uc0ac\ud569\ub2c8\ub2e4"
    " \uace0\ub9d9\uc2b5\ub2c8\ub2e4 kamsahamnida gamsahamnida dhanyavaad dhanyavad"
    " \u0927\u0928\u094d\u092f\u0935\u093e\u0926 shukriya asante mul\u021bumesc multumesc hvala"
    " \u0431\u043b\u0430\u0433\u043e\u0434\u0430\u0440\u044f \u0434\u044f\u043a\u0443\u044e salamat"
)
THANKS = frozenset(_THANKS_WORDS.split())
# Words that go with thanks ("merci beaucoup", "muchas gracias", "thank you so much", "tack så mycket").
_WITH_THANKS = frozenset(
    "you u ya so much very a lot lots many again mate man buddy all everyone beaucoup bien muchas mille tante vielen"
    " tantissime muito muita sch\u00f6n schon sehr je wel u shi ni xie bolshoe s\u00e5"
    " \u0431\u043e\u043b\u044c\u0448\u043e\u0435 mycket paljon sana kasih terima c\u1ea3m \u01a1n cam on"
    " dear friend friends folks guys bro sir".split()
)


# Thanks inside a longer message ("merci, c'est parfait", "grazie, funziona"): praise, as "thanks" is. The short
# words that are also other words ("ta", "tak", "toda", "dank", "tack") count only as the whole message.
FOREIGN_THANKS = frozenset(w for w in THANKS if len(w) > 4 and not w.startswith("thank"))
THANKS_RE = re.compile(
    r"(?<!\w)(?:" + "|".join(sorted(map(re.escape, FOREIGN_THANKS), key=len, reverse=True)) + r")(?!\w)"
)
_LETTERS = re.compile(r"[^\W\d_]+")


def foreign_thanks_in(norm: str) -> set[str]:
    """The words for thanks in another language that a normalised message holds ("merci", "grazie")."""
    return set(_LETTERS.findall(norm)) & FOREIGN_THANKS if len(norm) < 400 else set()


def only_thanks(current: str) -> bool:
    """The whole message is thanks, in any language ("danke!", "merci beaucoup", "thank you so much 🙏")."""
    if len(current) > 80:
        return False
    words = _LETTERS.findall(current.lower())
    return 0 < len(words) <= 6 and not THANKS.isdisjoint(words) and all(w in THANKS or w in _WITH_THANKS for w in words)


# --- sarcasm --------------------------------------------------------------------------------------------------

# "…, genius, not the price", "thanks, Einstein": a mocking vocative set off by commas after a statement.
_VOCATIVE = re.compile(
    r",\s*(?:genius|einstein|sherlock|captain obvious|smarty ?pants|mastermind|hotshot|wise guy|smart guy)"
    r"\s*(?:[,.!?]|$)"
)
# Idioms of mock agreement: "thanks for nothing", "what could possibly go wrong", "tell that to a botanist".
_MOCKING_IDIOM = re.compile(
    r"\bthanks? (?:you )?for nothing\b|(?<=[,.;!] )what could (?:possibly )?go wrong\b(?! \w)"
    r"|\btell that to (?:a|an|the|my|any|every) \w+|\b(?:real|very|so) helpful,? not\b"
)
# "oh sure, and watch it …", "oh great, now I have two copies": a mock agreement opening a consequence.
_MOCK_OPENER = re.compile(
    r"^[\W_]*(?:oh|ah|yeah|yea)[\s,.!]+(?:sure|right|great|wonderful|perfect|brilliant|fantastic|lovely|yes|totally"
    r"|cool)[\s,.!]+(?:and|because|cause|cuz|like|now (?:i|we|it|my|the)|i'?ll just|let me just|just)\b"
)
# A closing thanks or praise after a message that praises nothing: "… thanks a lot", "… great job".
_MOCK_CLOSER = re.compile(
    r"(?:^|[.!;,]\s*)(?:thanks a lot|thanks a bunch|thanks for that|great job|good job|well done|nice going"
    r"|nice work|way to go|bravo|brilliant)[.!]*$"
)
_SINCE_WHEN = re.compile(r"(?:^|[.!?]\s*)since when\b[^.!]*\?")
_NOW_ECHO = re.compile(r",? now\s*\?")
# Words that make the rest of a message genuinely positive (the caller's list is wider; these suffice here).
_GENUINE = re.compile(
    r"\b(?:works?|worked|working|fixed|perfect|great|awesome|helpful|love|nice|cool|thanks|thank|exactly|glad"
    r"|makes sense|got it|understand|clear|clearer|excellent|amazing)\b"
)
_REQUEST_AFTER = re.compile(r"\b(?:can|could|would|will) you\b|\bplease\b|\b(?:also|add|make|give|show)\b")


_VOCATIVE_NEEDLES = ("genius", "einstein", "sherlock", "obvious", "smart", "mastermind", "hotshot", "wise guy")
_IDIOM_NEEDLES = ("for nothing", "go wrong", "tell that to", "helpful")
_CLOSERS = ("thanks a lot", "thanks a bunch", "thanks for that", "job", "well done", "nice going", "nice work",
            "way to go", "bravo", "brilliant")
_PRAISED_AS = re.compile(r"\b(?:a|an|what a|you'?re|you are|such|pure|real)\s*$")  # "you're a genius"


def sarcasm(norm: str, reply_norm: str) -> list[CueHit]:
    """The sarcasm markers of a normalised follow-up (see the module doc); empty when there are none."""
    hits: list[CueHit] = []
    voc = _VOCATIVE.search(norm) if "," in norm and any(w in norm for w in _VOCATIVE_NEEDLES) else None
    if voc is not None:
        before = re.split(r"[.!?,]", norm[: voc.start()])[-1]  # the clause the vocative closes
        if len(words_of(before)) >= 2 and not _PRAISED_AS.search(before):
            hits.append(CueHit("sarcasm", 1.0, voc.group(0).strip(" ,.!?")))
    if any(n in norm for n in _IDIOM_NEEDLES) and (m := _MOCKING_IDIOM.search(norm)) is not None:
        hits.append(CueHit("sarcasm", 1.0, m.group(0)))
    closer = _MOCK_CLOSER.search(norm) if norm.rstrip(" .!").endswith(_CLOSERS) else None
    body = norm[: closer.start()] if closer else norm
    opener = _MOCK_OPENER.match(norm) if norm.lstrip(" \"'([*_-").startswith(("oh", "ah", "yea")) else None
    mocking = False
    if opener is not None and "?" not in norm:
        body = body[opener.end() :]  # the opener's "great" is no praise of the rest
        mocking = _GENUINE.search(body) is None and _REQUEST_AFTER.search(body) is None and len(body.split()) >= 2
        if mocking:
            hits.append(CueHit("sarcasm", 0.5, opener.group(0).strip(" ,.!")))
    if closer is not None and len(body.split()) >= 3 and _GENUINE.search(body) is None and (opener is None or mocking):
        hits.append(CueHit("sarcasm", 0.5, closer.group(0).strip(" ,.;!")))
    if "since when" in norm and (m := _SINCE_WHEN.search(norm)) is not None:
        hits.append(CueHit("sarcasm", 0.5, m.group(0).strip(" .!")))
    echo = _NOW_ECHO.search(norm) if "now" in norm and "?" in norm else None
    if echo is not None and reply_norm:
        claim = re.split(r"[.!?]", norm[: echo.start()])[-1]  # the sentence asked back
        said = content(words_of(claim))
        if len(said) >= 2 and said <= content(words_of(reply_norm)):
            hits.append(CueHit("sarcasm", 0.5, claim.strip() + " now?"))
    return hits


# "NaCl2, really?", "1200 g?": the reply's own figure or code asked back (half: surprise sounds the same).
_ECHO = re.compile(r"^[\W_]*(?P<value>[^\s?,!]+)(?:,? (?:really|seriously|surely|actually))?\s*\?")


def doubted_echo(norm: str, request_norm: str, reply_norm: str) -> CueHit | None:
    """The follow-up opens by asking back a figure or piece of code the reply gave (not the request): 0.5."""
    m = _ECHO.match(norm)
    if m is None:
        return None
    value = m.group("value").strip("`'\"")
    if not re.search(r"\d", value) and not CODE_RE.search(value):
        return None  # "Canberra?": a name asked back is as often surprise as doubt
    if value in raw_tokens(request_norm) or value not in raw_tokens(reply_norm):
        return None
    return CueHit("doubted_echo", 0.5, m.group(0))


# --- shouting -------------------------------------------------------------------------------------------------

_CAPS_WORD = re.compile(r"\b[A-Z]{2,12}\b")
# Capitalised abbreviations people write in capitals anyway.
_ACRONYMS = frozenset(
    "ok okay lol omg wtf btw fyi imo tbh pls asap api url sql csv json html css pdf usb gpu cpu ram id utc gmt am pm"
    " us uk eu usa ai ml db ip tv os ui ux cli io".split()
)


_MAX_SHOUTED = 8


def _head_and_tail(text: str) -> str:
    """What the cues scan of a long text (`correction_cues.normalize` keeps the same), with its letter case."""
    if len(text) <= SCAN_HEAD_CHARS + SCAN_TAIL_CHARS:
        return text
    return text[:SCAN_HEAD_CHARS] + " \u2026 " + text[-SCAN_TAIL_CHARS:]


def shouted(current: str, request: str, reply: str) -> CueHit | None:
    """A word of the request in capitals inside a mixed-case follow-up ("great, now I'm cooking for twelve. DOWN to
    2"): the user insists on what the request said. Not an acronym: a word the exchange never writes in capitals."""
    if current == current.upper():
        return None  # typed in capitals throughout: nothing stands out
    request, reply = _head_and_tail(request), _head_and_tail(reply)
    for word in list(dict.fromkeys(_CAPS_WORD.findall(_head_and_tail(current))))[:_MAX_SHOUTED]:
        lower = word.lower()
        if lower in _ACRONYMS or re.search(r"\b" + word + r"\b", request + " " + reply):
            continue
        if re.search(r"\b" + lower + r"\b", request) and not re.search(r"\b" + lower + r"\b", reply, re.I):
            return CueHit("shouted", 1.0, word)  # the request's word, which the reply left out
    return None


# "almonds ARE nuts", "it DOES matter": an auxiliary stressed against what the reply implied (half: it needs the
# statement to be a claim).
_STRESSED_AUX = re.compile(r"\b(?:IS|ARE|WAS|WERE|DOES|DO|DID|HAS|HAVE|CAN|WILL)\b")


def stressed_claim(current: str) -> CueHit | None:
    """An auxiliary in capitals inside a mixed-case statement ("almonds ARE nuts"): 0.5, with a claim."""
    if current == current.upper() or "?" in current:
        return None
    m = _STRESSED_AUX.search(current)
    return CueHit("stressed_claim", 0.5, m.group(0)) if m is not None else None


# "AM not PM", "Celsius, not Fahrenheit": the request's word against the one the reply used instead.
_SWAP = re.compile(r"^[\W_]*(?P<x>[\w.+#°/-]+(?: [\w.+#°/-]+)?),? (?:not|instead of|rather than) (?P<y>[\w.+#°/-]+"
                   r"(?: [\w.+#°/-]+)?)[.!]*$")


def swapped_term(norm: str, request_norm: str, reply_norm: str) -> CueHit | None:
    """The whole message is "X not Y" with X the request's word and Y a word the reply used in its place (1.0)."""
    m = _SWAP.match(norm)
    if m is None:
        return None
    request, reply = raw_tokens(request_norm), raw_tokens(reply_norm)
    x, y = raw_tokens(m.group("x")), raw_tokens(m.group("y"))
    if x and y and x <= request and y <= reply and not y & request and not x <= reply:
        return CueHit("swapped_term", 1.0, m.group(0))
    return None


# --- omissions, misdescriptions, doubts ---------------------------------------------------------------------------

# "forgot to make the area code optional", "left out the charger": the omission, without "you".
_SUBJECTLESS_OMISSION = re.compile(
    LEAD + r"(?:(?:it|this|that) )?(?:forgot|forgets|forgotten|left out|leaves out|missed|misses|skipped|skips"
    r"|omitted|omits|ignored|ignores|dropped|overlooked)\s+(?P<what>(?:to |about |the |a |an |my |that |these "
    r"|those )?\w.*)$"
)
# "where's the COUNT and GROUP BY?": asked for, where the reply has none of it.
_WHERE_IS = re.compile(
    r"^[\W_]*(?:so )?(?:where'?s|where is|where are|wheres) (?P<what>(?:the |my |your |a |an )?\w.*)$"
)
_OWN_OMISSION = re.compile(
    r"^(?:to )?(?:mention|say|tell|ask|add that|note|specify|clarify|explain|include that|write that|thank|it\b"
    r"|i\b|that i\b|about it\b)"
)


def subjectless_omission(norm: str, request_norm: str, reply_norm: str) -> CueHit | None:
    """"forgot to make the area code optional": something the request asked for and the reply does not mention,
    said to be left out (1.0)."""
    m = _SUBJECTLESS_OMISSION.match(norm) or _WHERE_IS.match(norm)
    if m is None or _OWN_OMISSION.match(m.group("what")):
        return None
    what = re.split(r"[?!.;]", m.group("what"))[0]
    wanted = content(words_of(what)) & content(words_of(request_norm)) - _PERSONAL
    if not wanted or wanted <= content(words_of(reply_norm)):
        return None  # "missed the bus lol", "forgot the password again": nothing the reply left out
    return CueHit("omission", 1.0, m.group(0)[:40])


# "not what -p does", "that's not what `git pull` does": the reply misdescribed what the exchange named.
_NOT_WHAT = re.compile(
    LEAD + r"(?:(?:that|this|it)(?:'s| is)? )?not (?:what|how) (?P<subject>[\w.'()`#/-]+(?: [\w.'()`#/-]+){0,2}?)"
    r" (?:does|do|did|means|mean|is for|are for|works|work|returns|return|is used for|stands for)\b"
)


def not_what_it_does(norm: str, request_norm: str, reply_norm: str) -> CueHit | None:
    """"not what -p does": the reply misdescribed something the exchange named, or "it" (1.0)."""
    m = _NOT_WHAT.match(norm)
    if m is None:
        return None
    subject = m.group("subject").strip("`'")
    if subject in {"it", "that", "this", "they", "those", "these"}:
        return CueHit("not_what_it_does", 1.0, m.group(0))
    words = [w for w in words_of(subject) if w not in FUNCTION]
    exchange_words = {stem(w) for w in words_of(request_norm + " " + reply_norm)}
    named = raw_tokens(subject) <= raw_tokens(request_norm + " " + reply_norm)
    if words and (named or {stem(w) for w in words} <= exchange_words) and not _PERSONAL & set(words):
        return CueHit("not_what_it_does", 1.0, m.group(0))
    return None


# "I don't think text-align moves the div itself": a hedged denial whose subject is one of the reply's terms.
_TERM = r"[\w.:()`#/'%$=*+<>\[\]{}-]+"
_DOUBTED = re.compile(
    r"\bi (?:don'?t|do not|dont) (?:think|believe) (?:that )?(?P<subject>" + _TERM + "(?: " + _TERM + r")??)"
    r" (?P<verb>[a-z]+)"
)
_OWN_SETUP = re.compile(r"\b(?:my|our|we|i'?m|i have|i've|mine|here|installed|enabled|available)\b")
_PRONOUNS = frozenset("i it that this they those these we you he she my your our there so".split())


def doubted_element(norm: str, reply_norm: str) -> CueHit | None:
    """"I don't think text-align moves the div": doubt about what one of the reply's own terms does (1.0)."""
    m = _DOUBTED.search(norm)
    if m is None:
        return None
    subject = m.group("subject")
    first = subject.split()[0].strip("`'")
    if first in _PRONOUNS or first in FUNCTION:
        return None  # "I don't think it matters", "I don't think that's needed": read by the other cues, or none
    if _OWN_SETUP.search(norm[m.start() :].split(".")[0]):
        return None  # "I don't think docker is installed on my machine": the user's own setup
    reply_raw = raw_tokens(reply_norm)
    tokens = [t.strip("`'") for t in raw_tokens(subject)]
    if not tokens or not all(t in reply_raw or stem(t) in {stem(w) for w in words_of(reply_norm)} for t in tokens):
        return None
    return CueHit("doubted_element", 1.0, m.group(0))


# "= NULL is never true", "-r isn't a thing", "getYear is deprecated": a piece of the reply's code said not to work.
_FAULT = re.compile(
    r"^(?P<subject>\S+(?: \S+){0,2}?) (?:is never|never|is always false|is not a thing|isn'?t a thing|doesn'?t exist"
    r"|does not exist|is deprecated|was removed|is invalid|isn'?t valid|is not valid|is a syntax error"
    r"|won'?t compile|doesn'?t compile|does nothing|(?:isn'?t|is not) (?:how|the way)|doesn'?t work (?:like|that))\b"
)


_FAULT_NEEDLES = (
    "never", "always", "a thing", "exist", "deprecated", "removed", "valid", "syntax error", "compile", "nothing",
    " how", " the way", "work ",
)  # fmt: skip


def faulted_code(norm: str, reply_norm: str, reply: str) -> CueHit | None:
    """A piece of the reply's code, as the reply wrote it, said never to hold or not to exist (1.0) — stated, not
    asked ("\\d+ is never going to match letters, right?")."""
    if "?" in norm or not any(n in norm for n in _FAULT_NEEDLES):
        return None
    for clause in re.split(r"[.;!?]\s+|,\s+", norm):
        m = _FAULT.match(clause.strip())
        if m is None:
            continue
        subject = m.group("subject").strip("`'\"")
        if subject in reply_norm and (
            CODE_RE.search(subject) or re.search(r"\b" + re.escape(subject.upper()) + r"\b", reply)
        ) and not words_of(subject)[:1] == ["it"]:
            return CueHit("faulted_code", 1.0, m.group(0))
    return None
