"""How the user-correction cues are combined, and the context that decides the ambiguous words.

A follow-up message scores the summed weight of the cues it contains (`correction_cues.CUES`) plus the
context-dependent ones below, and is a correction when the score reaches `CORRECTION_SCORE_THRESHOLD` (1.0):

* a leading "no" is a verdict ("No. It's Canberra", "no?", "lol no it doesn't") — but not in "no thanks",
  "no problem", "no worries", "no need", "no one", "no-code", "No time for …" (a determiner), "No, that's all",
  "No, you're right", nor when the assistant's reply ended by asking something ("Should I make it formal?" →
  "nope, keep it friendly");
* a leading "not" is a verdict ("Not ISO.") unless benign ("not bad", "not yet", "not what I hoped …");
* a leading "actually" is a correction when it goes on to state something ("Actually it was 1969") and a new
  request when it asks for more ("Actually, one more thing: …"); a short statement closed by "actually"
  (".py actually") is a correction;
* a short on-topic statement that asks for nothing and praises nothing ("it's 5050", "those are odd") is half a
  correction (`bare_claim`), so it needs one more cue — unless the contradiction signal reads it more finely
  (`user_correction_contradiction`: "5040", "the Volga is longer"), which then takes its place (and that of
  `reply_behaviour`, which reads the same "it returns …");
* cues that need the reply (`user_correction_relations`): a piece of syntax said to be wrongly there or missing
  ("no parentheses"), an empty result reported ("returns False with that"), a second right answer where the reply
  claimed the only one ("cacti is fine too?"), code offered in the reply's place ("use getFullYear()"); and the
  request's own words insisted on ("one word please");
* cues that read how the follow-up relates to the request's form and to how it is said (`user_correction_form`,
  `user_correction_tone`): a form or count the request stated and the reply broke, asked for again ("bullets,
  please", "The whole plot in a single sentence.", "I count five there"); sarcasm ("…, genius, not the price",
  "X borders Y now? Since when?"), which also lifts the praise guard; the request's word shouted ("DOWN to 2"); an
  omission without "you" ("forgot to make the area code optional"); "not what -p does"; "I don't think
  text-align moves the div"; the reply's code said never to work ("= NULL is never true"); "AM not PM";
* pushback in a frame (`user_correction_pushback`): a polite or ironic opener before a counter-fact ("Thanks,
  though I believe a mile is 5,280", "great, if I want charcoal. the box says 12-15 min"), which lifts the praise
  guard; a pasted error line after a code reply; "wrong composer", "?? 12 < 45"; "added it, still one column"; "I
  just need a title"; "um, where are the avocados?"; a counter-value closing a statement ("34 is blue. 31");
* thanks in any language ("danke!", "merci beaucoup") is never a correction, and inside a message counts as praise
  — unless the exchange is about the word itself ("Translate 'thank you' to German");
* a concession or a defect's name that only closes a plain remark ("… lower up in the mountains though", "Nasty
  bug, that one"), a closing acknowledgement ("Not Sydney, noted"), a "…, not Y" where Y is the request's word
  and the statement is about something else ("Caesar was a dictator, not emperor"), and behaviour reported for
  another input ("and for None it raises TypeError") do not count;
* a message describing the user's own setup ("It's a conda environment" after a how-to request, "It says
  3.9.7" after "How do I check which python version I have?") keeps only the explicit verdicts;
* a praise opener ("Great, now …"), an aside ("…, by the way") or an acceptance ("…, but fine") keeps only the
  explicit verdicts; a plain question ("What could go wrong if …?") drops the cues that only mean something in
  a statement.

Measured on `tests/feedback/correction/data/user_corrections.jsonl` by `bench/bench_correction_detector.py`; the
figures per split and batch, and the first-run figures of the rounds that built the detector, are in
`tests/feedback/correction/data/README.md`.
"""

from __future__ import annotations

import re

from ghost_agent.feedback.correction.contradiction import contradiction, converts_answer
from ghost_agent.feedback.correction.cues import CUES, LEAD, NOT_BENIGN, CueHit, normalize
from ghost_agent.feedback.correction.exchange import content, describes_own_setup, subject_in_exchange, words_of
from ghost_agent.feedback.correction.form import form_wish
from ghost_agent.feedback.correction.pushback import (
    framed_counter,
    half_cues,
    pasted_error,
    persisting,
    pointed_where,
    reversed_comparison,
    terse_doubt,
    trailing_value,
    unmet_need,
)
from ghost_agent.feedback.correction.relations import (
    also_valid,
    empty_result,
    replacement,
    restates_action,
    syntax_mention,
)
from ghost_agent.feedback.correction.tone import (
    THANKS_RE,
    doubted_echo,
    doubted_element,
    faulted_code,
    foreign_thanks_in,
    not_what_it_does,
    only_thanks,
    sarcasm,
    shouted,
    stressed_claim,
    subjectless_omission,
    swapped_term,
)

CORRECTION_SCORE_THRESHOLD = 1.0

# A "no" followed by these is courtesy, closure or agreement, not a verdict on the answer.
_NO_BENIGN_NEXT = re.compile(
    r"^(?:[\s,!.]*)(?:one|problem|problemo|probs?|worries|worry|need|rush|hurry|thanks|thank|thx|ty|way|doubt|idea"
    r"|kidding|biggie|pressure|matter|more|longer|module|offen[cs]e|sweat|harm|clue|stress|big\s+deal)\b"
    r"|^[\W_]*(?:that'?s\s+(?:all|everything|it\b(?!\s+(?:wrong|not|incorrect))|fine|ok|okay|good|great|perfect"
    r"|enough|right|correct|true)|i'?m\s+(?:good|fine|set|all\s+set|ok|okay|done)|all\s+(?:good|set|done)"
    r"|we'?re\s+(?:good|fine|set|done)|just\s+(?:that|this)\b|(?:i\s+think\s+|i\s+guess\s+)?you'?re\s+(?:right|correct)"
    r"|(?:i\s+think\s+|i\s+guess\s+)?you\s+are\s+(?:right|correct)|(?:that|it)\s+makes\s+sense|makes\s+sense"
    r"|it'?s\s+(?:fine|ok|okay|good|perfect|all\s+good)|nothing\s+else|not\s+(?:now|right\s+now|at\s+the\s+moment)"
    r"|i\s+agree)"
)
# "No no, Domino is great": the first clause after the "no" praises.
_NO_PRAISE = re.compile(
    r"^[^.;!?]*\b(?:is|are|'s|was|looks?|sounds?|seems?)\s+(?:great|perfect|fine|good|ok|okay|awesome|lovely"
    r"|excellent|brilliant|spot\s+on)\b"
)

# A reply that ends by asking something: a following "no" / "nope" / "not yet" answers it.
_OFFER = re.compile(
    r"\b(?:would you like|do you want|want me to|shall i|should i|anything else|is there anything"
    r"|let me know if you(?:'d| would)? (?:like|want)|does that (?:help|answer)|need anything)\b"
)

# Opening praise or acknowledgement: only explicit verdicts still count after it ("Great, now …").
_PRAISE_LEAD = re.compile(
    LEAD + r"(?:thanks|thank you|thx|ty|perfect|great|awesome|nice|cool|good|love it|excellent|brilliant|amazing"
    r"|yes|yep|yeah|yup|exactly|ok|okay|got it|makes sense|that worked|that did it|works|worked|wow|sweet|lovely"
    r"|fantastic|beautiful|neat|cute|not bad)\b(?![\s,.!-]*but\b)"
)
# A closing acknowledgement or reaction ("Not Sydney, noted", "it never asks, scary"): the message takes the answer
# in; only explicit verdicts still count.
_REACTION_TAIL = re.compile(
    r"[,;\u2014\u2013-]\s*(?:noted|got it|gotcha|understood|good to know|makes sense|i see|interesting|scary|wild"
    r"|crazy|nice|cool|neat|wow|yikes|fun|funny|weird|handy|useful|til|fascinating|ok|okay|fair enough)[.!]*$"
)
# Accepting the answer despite a reservation ("Not very creative, but fine"): only explicit verdicts still count.
_ACCEPTANCE = re.compile(
    r"\bbut (?:fine|ok|okay|good|it'?ll do|that works|whatever|sure|it works|thanks)\b|\b(?:it'?ll do|good enough"
    r"|fair enough)\b"
)
# A bare claim is a short statement; these openers make it a request or a follow-on instead ("Now delete …").
_REQUEST_OPENER = re.compile(
    LEAD + r"(?:can|could|would|will|please|now|also|and|add|make|write|give|show|tell|explain|list|create|do|let'?s"
    r"|let me|try|how about|what about|maybe|perhaps|ok|okay|then|next|same)\b"
)
# … and these make it the user's own context or a reaction, not a claim about the answer.
_OWN_CONTEXT = re.compile(
    r"\b(?:my|mine|our|we|we'?ll|we'?re|we'?ve|i'?ll|i'?ve|i'?d|i'?m (?:on|using|going|running|working|trying|building"
    r"|doing)|i have|i don'?t have|i use|i work|i need to|i want to|i like|i love)\b"
)
_POSITIVE = re.compile(
    r"(?:^[\W_]*|\b(?:it|that|this|now|finally|everything|all|which)(?: now| finally| perfectly| fine)? )works\b"
    r"|\b(?:thanks|thank|thx|perfect|great|awesome|nice|cool|love|worked|fixed|helpful|makes sense|got it"
    r"|didn'?t know|never (?:have |would have )?guessed|interesting|wow|good(?! (?:night|morning|evening|afternoon"
    r"|day|bye|luck)\b)|fine|exactly|amazing|excellent"
    r"|brilliant|neat|glad|happy|learned|til|agreed|agree|fair|lol|haha)\b"
)
# A conclusion drawn from the answer accepts it ("so it's 22 then", "Spielberg was 27 then").
_INFERENCE = re.compile(r"^[\W_]*so\b|\bthen[.!]*$")
_ADDED = re.compile(r"\b(?:too|as well)[.!]*$")
_ANSWER_ANAPHORA = re.compile(LEAD + r"(?:that|this|it|those|these|they)(?:'s|s| is| are| was| were)?\b")
BARE_CLAIM_WEIGHT = 0.5
BARE_CLAIM_MAX_WORDS = 20


_QUESTION_WORDS = frozenset(
    "what how why when where which who whom whose is are can could would will should shall do does did any anything"
    " may might".split()
)


def _bare_claim(norm: str, on_topic: bool, foreign_thanks: bool = False) -> CueHit | None:
    """A short statement about the answer's topic that asks for nothing and praises nothing ("it's 5050",
    "Haikus have 3 lines."): half a correction, so it needs one more cue ("3600 not 360", "… though")."""
    if "?" in norm or len(norm.split()) > BARE_CLAIM_MAX_WORDS:
        return None
    opener = re.match(r"[\W_]*([a-z']+) [a-z0-9]", norm)  # "how do I …" but not "WHAT. that deletes …"
    if opener is not None and opener.group(1) in _QUESTION_WORDS:  # a question typed without "?"
        return None
    if _REQUEST_OPENER.match(norm) or _OWN_CONTEXT.search(norm) or _INFERENCE.search(norm):
        return None
    if _positive(norm, foreign_thanks):  # praise, or thanks in any language
        return None
    if _ADDED.search(norm):
        return None  # "… a double bass has four too": adds to the answer
    if not on_topic and _ANSWER_ANAPHORA.match(norm) is None:
        return None
    return CueHit("bare_claim", BARE_CLAIM_WEIGHT, norm[:40])


# Added context, not a verdict ("It's a vegan bakery, by the way"): only explicit verdicts still count.
_ASIDE = re.compile(
    r"\b(?:by the way|btw|fyi|for context|for reference|in case it matters|if that changes|if it matters"
    r"|just so you know)\b"
)
# After "actually": the user asks for something new rather than stating what is true.
_ACTUALLY_NEW = re.compile(
    r"\b(?:one more|another|also|can you|could you|would you|will you|can i|could i|while you'?re at it|i'?m curious"
    r"|quick question|too)\b|\?\s*$"
)
_ACTUALLY_PRAISE = re.compile(
    r"^[\W_]*(?:that'?s|this is|it'?s)\s+(?:perfect|great|fine|good|exactly|just right)|^[\W_]*(?:thanks|thank you"
    r"|perfect|great|never mind|nvm|forget it|no worries)\b"
)


def is_question(norm: str) -> bool:
    """A plain question: ends with "?" and opens with a question word or auxiliary ("What could go wrong …?")."""
    if not norm.endswith("?"):
        return False
    m = re.match(r"[\W_]*([a-z']+)", norm)
    return m is not None and m.group(1) in _QUESTION_WORDS


def reply_asks(reply_norm: str) -> bool:
    """The assistant's reply ended by asking the user something (so a bare "no" can be an answer)."""
    tail = reply_norm[-240:].rstrip()
    if not tail:
        return False
    last_sentence = re.split(r"(?<=[.!?])\s+", tail)[-1]
    return last_sentence.endswith("?") or _OFFER.search(tail) is not None


_NO_LEAD = re.compile(LEAD + r"(?P<no>(?:no+|nope|nah|nay)(?:[\s,!.]+(?:no+|nope|nah))*)(?![\w'-])")
_NOT_LEAD = re.compile(LEAD + r"(?P<not>not)\s+(?!" + NOT_BENIGN + r"\b)(?=\w)")
_ACTUALLY_LEAD = re.compile(LEAD + r"(?P<actually>actually)\b[\s,:;.!\u2014\u2013-]*")
# ".py actually": a short statement closed by "actually" (not "I'm good actually").
_ACTUALLY_TRAIL = re.compile(
    r"^[\W_]*(?!(?:i'?m|it'?s|that'?s|this is|we'?re|all) (?:good|fine|ok|okay|great|perfect|set)\b)"
    r"(?!(?:no|nope|nah)\b)[\w.'-]+(?:\s[\w.'-]+){0,4},?\s(?P<actually>actually)[.!]*$"
)
# A "no" that opens a clause ("no it's mice", "no 90"); any other word makes it a determiner ("No time for …").
_NO_CLAUSE_WORDS = frozenset(
    "it it's its that that's thats this these those i i'm im you you're youre your we they he she there there's not"
    " actually wait sorry dude man mate bro lol wrong incorrect nope no just still what why again please"
    " definitely absolutely".split()
)


def _leading_no(norm: str, asked: bool) -> CueHit | None:
    m = _NO_LEAD.match(norm)
    if m is None:
        return None
    rest = norm[m.end() :]
    determiner = re.match(r" ([a-z][a-z']*)", rest)
    if m.group("no").rstrip("o") == "n" and determiner and determiner.group(1) not in _NO_CLAUSE_WORDS:
        return None  # "No time for lessons though", "No iCloud here": "no" qualifies a noun
    if _NO_BENIGN_NEXT.match(rest) or _NO_PRAISE.match(rest.lstrip(" ,.!")):
        return None
    if asked:  # "Should I add tests?" → "No, just the function": an answer, not a verdict
        return None
    return CueHit("no", 1.0, m.group("no"), lead=True)


def _leading_not(norm: str, asked: bool, question: bool) -> CueHit | None:
    m = _NOT_LEAD.match(norm)
    if m is None or asked or question or norm.rstrip().endswith("?"):
        return None
    if re.search(r"\bthough[.!]*$", norm):
        return None  # "Not named by him though": a concession about the answer, not a rejection of it
    return CueHit("not", 1.0, "not", lead=True)


def _leading_actually(norm: str) -> CueHit | None:
    m = _ACTUALLY_LEAD.match(norm)
    if m is None:
        trail = _ACTUALLY_TRAIL.match(norm)
        if trail is None or _OWN_CONTEXT.search(norm):
            return None  # "I'm on a Mac actually": the user's own setup, added
        return CueHit("actually", 1.0, "actually")
    rest = norm[m.end() :]
    if not rest or _ACTUALLY_NEW.search(rest) or _ACTUALLY_PRAISE.match(rest):
        return None
    return CueHit("actually", 1.0, "actually", lead=True)


# Thanks in another language opening the message ("danke, jetzt …"), as "thanks" opens `_PRAISE_LEAD`.
_FOREIGN_THANKS_LEAD = re.compile(LEAD + r"(?:" + THANKS_RE.pattern + r")(?![\s,.!-]*but\b)")
_GUARDS = (_PRAISE_LEAD, _ASIDE, _ACCEPTANCE, _REACTION_TAIL)
# "And for None …", "but with an empty list …": a statement about another input than the one the reply handled.
_OTHER_CASE = re.compile(LEAD + r"(?:and|also|but|what about|how about) (?:for|with|if|when|on) ")
_BEHAVIOUR_CUES = frozenset({"error_report", "error_named", "reply_behaviour", "reply_fails", "empty_result"})


def _said(norm: str) -> set[str]:
    """Content stems of a normalised text, insisting words dropped."""
    return content(words_of(norm)) - {"please", "pls", "only", "just"}


_CONSTRAINT_MARK = re.compile(r"\b(?:please|pls|only|just)\b|!\s*$")


def _restated_constraint(norm: str, prior_request: str) -> CueHit | None:
    """A few words of the request said again, insisting ("one word please", "number only!"): the reply missed them.
    A new wish ("shorter please", "now in Rust") uses words the request did not."""
    if len(norm.split()) > 6 or _CONSTRAINT_MARK.search(norm) is None or "?" in norm:
        return None
    said = _said(norm)
    if not said or not said <= _said(normalize(prior_request)):
        return None
    return CueHit("restated_constraint", 0.5, norm[:40])


# A capitalised word inside a sentence is a name ("the World's Fair", "Good Will Hunting"), not praise.
_INNER_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'-]*")


def _praises(current: str, foreign_thanks: bool = False) -> bool:
    """Praise or thanks in the message — not inside a name, and not laughter after a statement ("three lol")."""
    text = normalize(_INNER_NAME.sub(" ", current.strip()))
    if _LAUGH_TAIL.search(text) and len(text.split()) > 1:
        text = _LAUGH_TAIL.sub("", text)
    return _positive(text, foreign_thanks)


def _positive(norm: str, foreign_thanks: bool = False) -> bool:
    """Praise or thanks, in English or (`foreign_thanks`: the message holds it) in another language ("merci, c'est
    parfait")."""
    return _POSITIVE.search(norm) is not None or foreign_thanks


_LAUGH_TAIL = re.compile(r"\s+(?:lol|lmao|haha|hah|rofl)[.!]*$")


def _denies_reply(norm: str, at: int, prior_request: str, reply_norm: str) -> bool:
    """What follows "not" names something of the reply, or the statement is about the reply's own element
    ("readlines gives a list, not a string"), not about something else ("Caesar was a dictator, not emperor")."""
    denied = _said(" ".join(norm[at:].split()[:3]))
    reply_words = _said(reply_norm)
    if not denied or not reply_norm or denied & reply_words:
        return True
    head = _said(" ".join(norm.split()[:2]))
    return not denied <= _said(normalize(prior_request)) or bool(head & reply_words)


_CONVERSION_CUES = frozenset({"bare_claim", "identifies_answer", "terse_identification", "counter_figure"})
_TIMES = re.compile(r"[\d,.]*\s*(?:times|x)\b")  # "about 100,000 times the weight of …": a factor, no figure


def _figure_is_new(match_text: str, reply_norm: str) -> bool:
    """The figure a `counter_figure` match states is not one the reply already gave ("I count 3" vs "3")."""
    figure = re.search(r"\d[\d,.]*", match_text)
    if figure is None:
        return True  # "I count five"
    digits = figure.group(0).rstrip(".,")
    return re.search(r"(?<![\d.])" + re.escape(digits) + r"(?![\d])", reply_norm) is None


def score_cues(
    current: str, prior_reply: str = "", on_topic: bool = False, prior_request: str = ""
) -> tuple[float, tuple[CueHit, ...]]:
    """Score `current` (the user's follow-up) as a correction of `prior_reply`; return (score, hits).

    `on_topic`: the follow-up shares a content word with the prior request or reply (the caller measures it);
    it lets a short bare statement count as half a correction. `prior_request`: the user message the reply
    answered; with the reply it lets a plain counter-statement ("5040", "the Volga is longer") count
    (`user_correction_contradiction`).
    """
    norm = normalize(current)
    if not norm or only_thanks(current):
        return 0.0, ()  # "danke!", "merci beaucoup": thanks in any language is never a correction
    reply_norm = normalize(prior_reply) if prior_reply else ""
    asked = reply_asks(reply_norm)
    question = is_question(norm)
    # "danke" is thanks, unless the exchange is about the word ("Translate 'thank you' to German" → "it's danke").
    thanked = foreign_thanks_in(norm)
    foreign_thanks = bool(thanked) and "thank" not in prior_request.lower()
    foreign_thanks = foreign_thanks and not any(w in reply_norm for w in thanked)
    # Sarcasm turns praise around ("wow, …, genius, not the price"): the praise guard does not hold after it.
    hits: list[CueHit] = sarcasm(norm, reply_norm)
    if (framed := framed_counter(current, norm, prior_request, prior_reply)) is not None:
        hits.append(framed)  # "Thanks, though I believe …", "great, if I want charcoal. …": courtesy or irony
    sarcastic = bool(hits)
    # After praise ("Great, now …") or an aside ("…, by the way") only the explicit verdicts count; so too when
    # the message describes the user's own setup ("It's a conda environment actually", "It says 3.9.7").
    guarded = not sarcastic and (
        any(p.search(norm) is not None for p in _GUARDS)
        or foreign_thanks and _FOREIGN_THANKS_LEAD.match(norm) is not None
        or describes_own_setup(norm, normalize(prior_request), reply_norm)
    )
    if not asked and (shout := shouted(current, prior_request, prior_reply)) is not None:
        hits.append(shout)  # "DOWN to 2": insisting on the request's word counts even after "great, now …"
    reads_behaviour, counter = False, None
    if not guarded:
        for lead_hit in (_leading_no(norm, asked), _leading_not(norm, asked, question), _leading_actually(norm)):
            if lead_hit is not None:
                hits.append(lead_hit)
        praised = not sarcastic and _praises(current, foreign_thanks)
        if prior_reply and not question and not _REQUEST_OPENER.match(norm) and not praised:
            counter = contradiction(current, prior_request, prior_reply)
        # The contradiction is a finer reading of the same short statement: it replaces the bare claim.
        claim = counter if counter is not None else None if asked else _bare_claim(norm, on_topic, foreign_thanks)
        # The contradiction reads the same statement as `reply_behaviour` ("It returns 0"), or the statement is the
        # reply's own action in other words ("It shows dotfiles" after "It lists all files").
        reads_behaviour = counter is not None or restates_action(norm, reply_norm)
        if claim is not None:
            hits.append(claim)
        if counter is None and prior_reply and not asked and not praised and not _REQUEST_OPENER.match(norm):
            if (trailing := trailing_value(current, norm, prior_request, prior_reply)) is not None:
                hits.append(trailing)  # "34 is blue. 31": the counter-value closes the message
        if prior_reply and not asked:
            hits.extend(_reply_cues(norm, current, prior_reply, reply_norm, prior_request, question))
        if claim is not None and (stress := stressed_claim(current)) is not None:
            hits.append(stress)  # "almonds ARE nuts": a claim, stressed against the reply
    for cue in CUES:
        if guarded and not cue.strong:
            continue
        if question and not cue.in_questions:
            continue
        m = cue.search(norm)
        if m is None:
            continue
        if cue.name == "reply_behaviour" and reads_behaviour:
            continue
        contrast = cue.name in {"contrast", "contrast_bare"}
        if contrast and not _denies_reply(norm, m.end() - 1, prior_request, reply_norm):
            continue  # "Caesar was a dictator, not emperor": the "not" is about the request's word
        if cue.name == "counter_figure" and not (
            _figure_is_new(m.group(0), reply_norm)
            and not _TIMES.match(norm, m.end())
            and subject_in_exchange(norm[: m.start()], normalize(prior_request), reply_norm)
        ):
            continue  # a figure the reply gave, or one about something else ("Bass guitars have 4")
        hits.append(CueHit(cue.name, cue.weight, m.group(0).strip(" ,.;:!?"), lead=cue.lead))
    hits = _drop_remarks(hits, norm)
    if counter is None and any(h.name in _CONVERSION_CUES for h in hits) and converts_answer(
        current, prior_request, prior_reply
    ):
        hits = [h for h in hits if h.name not in _CONVERSION_CUES]  # "that's about 1,083 feet": the answer, converted
    return sum(h.weight for h in hits), tuple(hits)


def _reply_cues(
    norm: str, current: str, reply: str, reply_norm: str, prior_request: str, question: bool
) -> list[CueHit]:
    """The cues that read the follow-up against the reply (`user_correction_relations`, `user_correction_tone`,
    `user_correction_form`) or the request."""
    request_norm = normalize(prior_request)
    found = [syntax_mention(norm, reply_norm), empty_result(norm, reply_norm), replacement(norm, reply_norm)]
    if question:
        found = []
    found += [also_valid(norm, reply_norm), _restated_constraint(norm, prior_request)]
    found += [
        form_wish(norm, request_norm, reply),
        subjectless_omission(norm, request_norm, reply_norm),
        not_what_it_does(norm, request_norm, reply_norm),
        doubted_element(norm, reply_norm),
        faulted_code(norm, reply_norm, reply),
        doubted_echo(norm, request_norm, reply_norm),
        swapped_term(norm, request_norm, reply_norm),
        pasted_error(current, reply),
        terse_doubt(norm, request_norm, reply_norm),
        persisting(norm, request_norm),
        unmet_need(norm, request_norm, reply_norm),
        pointed_where(norm, reply, reply_norm),
        reversed_comparison(norm, reply_norm),
    ]
    found += half_cues(current, norm, request_norm, reply_norm)
    return [hit for hit in found if hit is not None]


def _drop_remarks(hits: list[CueHit], norm: str) -> list[CueHit]:
    """Cues that, with only a bare claim for company, make a remark rather than a verdict."""
    names = {h.name for h in hits}
    if "though" in names and names <= {"though", "bare_claim"}:
        # "It's lower up in the mountains though": a concession closing a plain remark is a caveat, not a verdict;
        # "0 is Sunday though" still counts, through the contradiction signal.
        hits = [h for h in hits if h.name != "though"]
    defect = next((h for h in hits if h.name == "named_defect"), None)
    if defect is not None and names <= {"named_defect", "bare_claim"}:
        said = norm.split(defect.text, 1)[-1]
        if len(said.split()) < 3:  # "Nasty bug, that one": no account of what the answer does wrong
            hits = [h for h in hits if h is not defect]
    if _OTHER_CASE.match(norm):  # "and for None it raises TypeError": another input than the reply's
        hits = [h for h in hits if h.name not in _BEHAVIOUR_CUES]
    return hits
