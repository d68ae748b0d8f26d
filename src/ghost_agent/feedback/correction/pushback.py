"""Pushback said around a counter-fact: politely, ironically, tersely, or by showing what happened.

The other signals read a follow-up that states a counter-value plainly ("5040", "the Volga is longer") or says the
reply is wrong. People also push back in a frame that hides the counter-value from them: courtesy ("Thanks, though
I believe a mile is 5,280"), irony ("great, if I want charcoal. the box says 12-15 min"), a single word of doubt
("wrong composer", "?? 12 < 45"), or by showing the failure (a pasted error line after a code reply; "added it,
still one column"). Each reader here finds the frame, then reads the value inside it with the contradiction signal
(`user_correction_contradiction.contradiction`) or checks it against the exchange:

* `framed_counter` — a polite ("thanks, though …", "sorry, but isn't …?") or ironic ("great, if I want …", "sure,
  in 1931 maybe", "oh yeah, 3 hours, super quick") opener followed by a sentence that contradicts the reply: 1.0,
  and it lifts the praise guard (its "thanks"/"great" is no praise).
* `pasted_error` — the follow-up opens with an error line (a traceback, "TypeError: …", "error[E0423]: …") after a
  reply that gave code: 1.0.
* `terse_doubt` — "wrong <noun of the exchange>", "?? <statement>", a tag question doubling back on the reply's
  own term ("rmdir removes folders doesn't it??"): 1.0.
* `persisting` — "still <the request's symptom>" after a done-report ("added it, still one column"): 1.0.
* `unmet_need` — "I just need a title" where the request asked for a title and the reply has none: 1.0.
* `pointed_where` — "um, where are the avocados?": a whole message asking where something is that the reply
  lacks, opened by a hesitation: 1.0.
* `trailing_value` — a short statement whose last clause is a bare counter-value ("34 is blue. 31", "April 26,
  1986."): the contradiction signal's reading of that clause.
* `half` cues that need company: the request's quoted term swapped for a sibling ("that's good morning" after
  "say 'good night'"), an impatient closer ("the birds, obviously"), the reply's own value given another identity
  ("Mary Shelley wrote it. Percy was her husband.": after a first sentence).

General English and the exchange's own words only: no lexicon of answers.
"""

from __future__ import annotations

import re

from ghost_agent.feedback.correction.contradiction import contradiction
from ghost_agent.feedback.correction.cues import CueHit
from ghost_agent.feedback.correction.exchange import FUNCTION, NUMBER_RE, content, stem, words_of

_HESITATE = r"(?:u+m+|u+h+|e+r+m*|h+m+|wait|so|well|hold on)"

# --- polite and ironic frames ---------------------------------------------------------------------------------

# "Thanks, though I believe …", "Sorry, but isn't …", "hmm, but I read …": courtesy before a disagreement.
_POLITE = re.compile(
    r"^[\W_]*(?:thanks|thank you|thx|ty|sorry|apologies|with respect|respectfully|hmm+|ok|okay|i see)[,!.]*\s+"
    r"(?:but|though|however|although)\b[\s,]*"
)
# What the polite frame goes on to: a belief or a doubt, not a new request ("…, but can you …").
_BELIEF = re.compile(
    r"\b(?:i (?:believe|think|thought|read|heard|was told|learned|recall|remember)|i'?m (?:pretty |fairly |quite )?"
    r"(?:sure|certain)|pretty sure|(?:isn'?t|wasn'?t|aren'?t|weren'?t|doesn'?t|didn'?t|shouldn'?t) (?:it|that|this"
    r"|they|\w+'?s?)|according to|the (?:box|label|docs?|manual|book|site|map|recipe|package) says)\b"
)
# "great, …", "sure, …", "oh yeah, …", "yeah right, …": assent that the rest turns around.
_ASSENT = re.compile(
    r"^[\W_]*(?:oh |ah )?(?:great|sure|yeah right|yeah|yea|right|perfect|brilliant|lovely|wonderful|fantastic"
    r"|cool|nice|awesome|genius|wow)[,!.]+\s+"
)
# The ironic turn after the assent: a condition nobody wants ("if I want charcoal"), a bygone case ("in 1931
# maybe"), the reply's figure judged with an intensifier ("3 hours, super quick").
_IRONIC_IF = re.compile(r"^if (?:i|you|we|they|someone|anyone) (?:want|wanted|like|liked|need|needed|fancy|enjoy)\b")
_BYGONE = re.compile(r"^(?:back )?(?:in|before|until|for|on) [^.!?,;]{1,30}?,? (?:maybe|perhaps|i guess)\b")
_JUDGED = re.compile(r"\b(?:super|so|really|very|real|totally|soo+) (?:\w+)\b")

_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\s+[\u2014\u2013]\s+|\s+-\s+")


def _contradicts(segment: str, prior_request: str, prior_reply: str) -> bool:
    hit = contradiction(segment, prior_request, prior_reply)
    return hit is not None and hit.weight >= 1.0


def _segments(text: str) -> list[str]:
    return [s.strip(" .!;,") for s in _SENTENCES.split(text) if s.strip(" .!;,")]


def _strip_belief(segment: str) -> str:
    """ "I believe 3,280 is …" → "3,280 is …"; "I read it's Venus …" → "it's Venus …"."""
    return re.sub(
        r"^(?:but |though |and )?(?:i (?:believe|think|thought|read|heard|recall|remember)|i'?m (?:pretty |fairly )?"
        r"sure|pretty sure|the (?:box|label|docs?|manual|book|site|map|recipe|package) says)(?: that)?\s+",
        "",
        segment,
        flags=re.IGNORECASE,
    )


def framed_counter(current: str, norm: str, prior_request: str, prior_reply: str) -> CueHit | None:
    """A polite or ironic opener, then a sentence that contradicts the reply (see the module doc)."""
    if not prior_reply or len(norm) > 400:
        return None
    text = " ".join(current.split()).replace("\u2019", "'")
    if len(text) != len(norm):
        return None  # the positions below are shared between the original and the normalised text
    polite = _POLITE.match(norm)
    if polite is not None:
        rest = norm[polite.end() :]
        if _BELIEF.search(rest) is None:
            return None
        for segment in _segments(text[polite.end() :]):
            body = _strip_belief(segment)
            if body.endswith("?") and _contradicts(body, prior_request, prior_reply):
                return CueHit("polite_counter", 1.0, body[:40])
            if _contradicts(body.rstrip("?"), prior_request, prior_reply) and not body.endswith("?"):
                return CueHit("polite_counter", 1.0, body[:40])
            if body.endswith("?") and _reply_term_denied(body.lower(), normalize_reply(prior_reply)):
                return CueHit("polite_counter", 1.0, body[:40])
        return None
    assent = _ASSENT.match(norm)
    if assent is None:
        return None
    rest = norm[assent.end() :]
    turn = _IRONIC_IF.match(rest) or _BYGONE.match(rest)
    reply_norm = normalize_reply(prior_reply)
    if turn is None:
        echo = _echoed_figure(rest, reply_norm)
        if echo and _JUDGED.search(rest):
            return CueHit("ironic_counter", 1.0, rest[:40])  # "oh yeah, 3 hours, super quick"
        return None
    after = _segments(text[assent.end() + turn.end() :])
    for segment in after:
        body = _POINTER.sub("", _strip_belief(segment))
        if _contradicts(body.rstrip("?"), prior_request, prior_reply) or _contradicts(
            segment, prior_request, prior_reply
        ):
            return CueHit("ironic_counter", 1.0, segment[:40])
    if "?" not in rest and len(words_of(rest)) >= 3 and _IRONIC_IF.match(rest):
        return CueHit("ironic_counter", 0.5, rest[:40])
    return None


# "ever heard of the Burj Khalifa?", "try the box": the right answer pointed at after the irony.
_POINTER = re.compile(r"^(?:have you |you )?(?:ever )?(?:heard of|what about|how about|try|check|look up)\s+", re.I)


def normalize_reply(reply: str) -> str:
    return " ".join(reply.lower().replace("\u2019", "'").split())


def _echoed_figure(rest: str, reply_norm: str) -> bool:
    """The follow-up repeats a figure of the reply ("3 hours")."""
    figures = [m.group(0).rstrip(".,") for m in NUMBER_RE.finditer(rest)]
    return any(re.search(r"(?<![\d.])" + re.escape(f) + r"(?!\d)", reply_norm) for f in figures if f)


_SUPERLATIVE_PAIRS = (
    ("shortest", "longest"),
    ("smallest", "largest"),
    ("lowest", "highest"),
    ("least", "most"),
    ("fewest", "most"),
    ("coldest", "hottest"),
    ("slowest", "fastest"),
    ("youngest", "oldest"),
    ("earliest", "latest"),
    ("worst", "best"),
    ("smallest", "biggest"),
    ("lightest", "heaviest"),
)


def _reply_term_denied(question: str, reply_norm: str) -> bool:
    """ "isn't Jupiter's day the shortest?" after "Jupiter has the longest day": the reply's own subject given the
    opposite superlative, asked."""
    for a, b in _SUPERLATIVE_PAIRS:
        for said, other in ((a, b), (b, a)):
            if re.search(r"\b" + said + r"\b", question) and re.search(r"\b" + other + r"\b", reply_norm):
                subject = content(words_of(question.split(said)[0]))
                if subject & content(words_of(reply_norm)):
                    return True
    return False


# --- shown failures -----------------------------------------------------------------------------------------

# The first line of a pasted error: a traceback, "TypeError: …", "error[E0423]: …", "fatal: …", "file.c:3:5: error".
_ERROR_LINE = re.compile(
    r"^\s*(?:traceback \(most recent call last\)|[a-z_][\w.]*(?:error|exception)(?:\[\w+\])?:\s*\S|error(?:\[\w+\])?:"
    r"\s*\S|fatal(?: error)?:\s*\S|panic:\s*\S|segmentation fault|uncaught \w+|[\w./-]+:\d+(?::\d+)?:\s*(?:error|fatal)"
    r"|exception in thread)",
    re.IGNORECASE,
)
_CODE_IN_REPLY = re.compile(
    r"`|^\s*(?:def|class|function|import|from|fn|let|const|var|public|#include)\b|[;{}]\s*$"
    r"|\w\(.*\)",
    re.MULTILINE,
)


def pasted_error(current: str, reply: str) -> CueHit | None:
    """An error line pasted as the follow-up's opening, after a reply that gave code: the code failed."""
    first = current.lstrip().split("\n", 1)[0][:300]
    if _ERROR_LINE.match(first) is None or _CODE_IN_REPLY.search(reply[:4000]) is None:
        return None
    return CueHit("pasted_error", 1.0, first.strip()[:40])


# "added it, still one column", "did that - still 404": a fix reported done, the symptom still there.
_DONE = r"(?:(?:i )?(?:added|tried|did|changed|ran|used|put|applied|installed|restarted|replaced|updated|set|fixed"
_DONE += r"|removed|copied|pasted)(?: (?:it|that|this|them|those|the \w+))?|done|did that|ok|okay)"
_STILL = re.compile(
    r"^[\W_]*" + _DONE + r"[,.;:!\s\u2014\u2013-]+(?:and |but |yet |it'?s |its )?still (?!,)(?P<what>.+)$"
)


_OWN_STATE = frozenset(
    "wondering need needing want wanting have got curious thinking trying like prefer waiting working figuring"
    " deciding unsure confused deciding learning reading looking hoping planning going love".split()
)


def persisting(norm: str, request_norm: str) -> CueHit | None:
    """ "added it, still one column" after a request about showing one column: the reply's fix did not take."""
    m = _STILL.match(norm)
    if m is None or "?" in norm:
        return None
    said = words_of(m.group("what"))
    if not said or len(said) > 5 or said[0] in _OWN_STATE:
        return None  # "did that, still wondering about the gap": the user's own state, not the symptom
    what = content(said)
    if not what or what.isdisjoint(content(words_of(request_norm))):
        return None
    return CueHit("persisting", 1.0, m.group(0)[:40])


# --- terse doubt --------------------------------------------------------------------------------------------

_WRONG_NOUN = re.compile(
    r"^[\W_]*(?:" + _HESITATE + r"[,.\s]+)?(?:that'?s (?:the )?|the |that is (?:the )?)?wrong"
    r" (?P<noun>[a-z][a-z'-]+)(?: (?P<noun2>[a-z][a-z'-]+))?[.!?]*$"
)
# A mistake of the user's own ("wrong thread, sorry"), not of the answer.
_OWN_SLIP = frozenset("thread chat window tab paste link message person convo conversation channel account".split())
_GENERIC_ROLE = frozenset("guy person one thing answer place team movie film book song word unit city country".split())


def _related(noun: str, exchange_words: set[str]) -> bool:
    s = stem(noun)
    return s in exchange_words or len(s) >= 5 and any(w.startswith(s[:5]) for w in exchange_words if len(w) >= 5)


def terse_doubt(norm: str, request_norm: str, reply_norm: str) -> CueHit | None:
    """ "wrong composer" (a noun of the exchange), "?? 12 < 45", "rmdir removes folders doesn't it??"."""
    m = _WRONG_NOUN.match(norm)
    if m is not None:
        noun = m.group("noun2") or m.group("noun")
        short_reply = len(reply_norm.split()) <= 12  # the reply gave one answer: "wrong X" names its kind
        if noun not in _OWN_SLIP and (
            noun in _GENERIC_ROLE
            or short_reply
            or _related(noun, content(words_of(request_norm)) | content(words_of(reply_norm)))
        ):
            return CueHit("terse_doubt", 1.0, m.group(0)[:40])
        return None
    incredulous = re.match(r"^\s*\?{2,}\s*(?P<rest>[^?]+?)[.!]*$", norm)
    if incredulous is not None:
        rest = incredulous.group("rest")
        first = words_of(rest)[:1]
        if first and first[0] not in {"what", "how", "why", "who", "when", "where", "which", "can", "could", "do"}:
            return CueHit("terse_doubt", 1.0, "?? " + rest[:36])
        return None
    tag = _TAG_DOUBT.search(norm)
    if tag is not None:
        subject = norm[: tag.start()].split()[:2]
        said = {stem(w) for w in words_of(" ".join(subject))}
        reply_own = content(words_of(reply_norm)) - content(words_of(request_norm))
        if said & reply_own and (tag.group("twice") or _NEED_AFTER.search(norm, tag.end())):
            return CueHit("terse_doubt", 1.0, tag.group(0)[:40])
    return None


_TAG_DOUBT = re.compile(
    r"\b(?:doesn'?t|dosent|dosn'?t|doesnt|isn'?t|aren'?t|don'?t|didn'?t|wasn'?t|won'?t) (?:it|that|they|this)"
    r"(?P<twice>\?{2,})?(?:\?|\s|$)"
)
_NEED_AFTER = re.compile(r"\bi (?:want|wanted|need|needed|asked|was asking|meant)\b")


# --- the request's need, unmet --------------------------------------------------------------------------------

_NEED = re.compile(
    r"^[\W_]*(?:" + _HESITATE + r"[,.\s]+)?i (?:just |only |simply |really )?(?:need|needed|want|wanted|asked for"
    r"|was asking for|asked you for)(?: is)? (?:a |an |the |one |some )?(?P<what>[a-z][a-z'-]*)\b"
)
_NEW_WISH = re.compile(r"\b(?:also|too|another|more|now|next|as well|else|additional|extra)\b")


def unmet_need(norm: str, request_norm: str, reply_norm: str) -> CueHit | None:
    """ "I just need a title." after "Give me a title …" answered with tips: the reply never gave what was asked."""
    m = _NEED.match(norm)
    if m is None or _NEW_WISH.search(norm[: m.end() + 20]) or "?" in norm[: m.end() + 20]:
        return None
    what = stem(m.group("what"))
    if what not in content(words_of(request_norm)) or what in content(words_of(reply_norm)):
        return None
    return CueHit("unmet_need", 1.0, m.group(0)[:40])


_POINTED_WHERE = re.compile(
    r"^[\W_]*" + _HESITATE + r"[,.!\s]+(?:so )?(?:where'?s|where is|where are|wheres|where did) (?:the |my |all the )?"
    r"(?P<what>[a-z][a-z'-]*)(?: go| went)?\s*\?+$"
)
# The reply enumerates parts (a recipe, a list, a packing list): a part asked after is one it left out.
_LIST_LINE = re.compile(r"\n\s*(?:[-*\u2022]|\d+[.)])\s")


def _enumerates(reply: str) -> bool:
    return reply.count(",", 0, 2000) >= 2 or _LIST_LINE.search(reply, 0, 2000) is not None


def pointed_where(norm: str, reply: str, reply_norm: str) -> CueHit | None:
    """ "um, where are the avocados?": the whole message asks after something the reply does not have."""
    m = _POINTED_WHERE.match(norm)
    if m is None or m.group("what").endswith("est") or not _enumerates(reply):
        return None
    what = content(words_of(m.group("what")))
    if not what or not what.isdisjoint(content(words_of(reply_norm))):
        return None
    return CueHit("pointed_where", 1.0, m.group(0)[:40])


# --- a counter-value in the last clause, and the half cues ------------------------------------------------------

_LAST_CLAUSE = re.compile(r"(?:[.;!]|,)\s+(?P<value>[^\s.,;!?]+(?: [^\s.,;!?]+){0,1})[.!]*$")


def trailing_value(current: str, norm: str, prior_request: str, prior_reply: str) -> CueHit | None:
    """ "34 is blue. 31", "April 26, 1986.": a short statement ending in a bare value that contradicts the reply."""
    if "?" in norm or len(norm.split()) > 12 or not prior_reply:
        return None
    text = " ".join(current.split())
    m = _LAST_CLAUSE.search(text)
    if m is None or re.fullmatch(r"\d[\d,.:/-]*", m.group("value")) is None:
        return None
    before = norm[: m.start()]
    # What comes before names the reply's own figure ("34 is blue") or is the date the value completes ("April 26").
    if not (_echoed_figure(before, normalize_reply(prior_reply)) or _MONTH_DAY.search(before)):
        return None
    hit = contradiction(m.group("value"), prior_request, prior_reply)
    if hit is None or hit.weight < 1.0:
        return None
    return CueHit("trailing_value", 1.0, m.group("value")[:40])


_MONTH_DAY = re.compile(
    r"^\W*(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?$"
)
_QUOTED = re.compile(r"['\"]([^'\"]{2,40})['\"]")
_GLOSS = re.compile(
    r"^[\W_]*(?:that'?s|that is|it'?s|it is|this is|that means|it means|means) ['\"]?(?P<g>[a-z][a-z' -]{1,40}?)"
    r"['\"]?[.!]*$"
)
_IMPATIENT = re.compile(r"^[\W_]*(?P<v>[^,.!?]{1,30}),\s*(?:obviously|duh|of course|clearly|naturally)[.!]*$")
_REASSIGNED = re.compile(r"^(?P<s>[\w$.-]+) (?:is|was|are|were|'s) (?P<p>[a-z][\w' -]*)$")


def half_cues(current: str, norm: str, request_norm: str, reply_norm: str) -> list[CueHit]:
    """Cues that need company (0.5 each): a sibling of the request's quoted term, an impatient closer, the reply's
    own value given another identity."""
    hits: list[CueHit] = []
    gloss = _GLOSS.match(norm)
    if gloss is not None:
        said = set(gloss.group("g").split())
        for quoted in _QUOTED.findall(request_norm):
            asked = set(quoted.split())
            if said != asked and said & asked and not said <= set(words_of(reply_norm)):
                hits.append(CueHit("sibling_term", 0.5, gloss.group("g")[:40]))
                break
    impatient = _IMPATIENT.match(norm)
    if impatient is not None and len(impatient.group("v").split()) <= 4:
        hits.append(CueHit("impatient", 0.5, impatient.group(0)[:40]))
    # Only after a first sentence: "Mary Shelley wrote it. Percy was her husband." ("Ottawa is in Ontario" alone
    # describes the reply's answer).
    for sentence in re.split(r"(?<=[.!])\s+", " ".join(current.split()))[1:]:
        m = _REASSIGNED.match(sentence.strip(" .!"))
        if m is None:
            continue
        subject = m.group("s")
        if subject[:1].isupper() or subject[:1].isdigit():
            low = subject.lower()
            in_reply = re.search(r"(?<![\w.])" + re.escape(low) + r"(?![\d])", reply_norm.replace("[", " "))
            predicate = content(words_of(m.group("p")))
            if (
                in_reply
                and low not in FUNCTION
                and low not in request_norm
                and predicate
                and predicate.isdisjoint(content(words_of(reply_norm)))
            ):
                hits.append(CueHit("reassigned", 0.5, sentence[:40]))
                break
    return hits


# "Coffee has about twice as much per cup." after "Black tea has more caffeine per cup than brewed coffee.": the
# reply's "than" side said to have more, on the reply's own property.
_REPLY_MORE = re.compile(
    r"^(?P<a>[^.,;]+?) (?:has|have|had|is|are|was|were|contains?|gets?|uses?|needs?|weighs?) (?:\w+ )?(?:more|\w{3,}er)"
    r"\b[^.;]*? than (?P<b>[^.,;]+)"
)
_MORE = re.compile(
    r"^(?P<s>[^,.;]{2,40}?) (?:has|have|is|are|contains?|gets?|uses?|needs?|weighs?) (?:about |roughly |around |nearly "
    r"|almost |like )?(?:more|twice as (?:much|many)|\w+ times as (?:much|many)|(?:double|triple) (?:that|the amount))"
    r"\b(?P<rest>[^,;]*)[.!]*$"
)


def reversed_comparison(norm: str, reply_norm: str) -> CueHit | None:
    """The side the reply put below ("than B") said to have more of the reply's own property: 1.0."""
    said = _MORE.match(norm)
    if said is None:
        return None
    reply = _REPLY_MORE.match(reply_norm)
    if reply is None:
        return None
    subject = content(words_of(said.group("s")))
    if not subject or subject.isdisjoint(content(words_of(reply.group("b")))):
        return None
    if not subject.isdisjoint(content(words_of(reply.group("a")))):
        return None
    if not content(words_of(said.group("rest"))) <= content(words_of(reply_norm)):
        return None  # "coffee has more antioxidants": another property
    return CueHit("reversed_comparison", 1.0, said.group(0)[:40])
