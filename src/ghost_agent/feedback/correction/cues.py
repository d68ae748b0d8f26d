"""The lexical cues of the user-correction classifier: what a correction looks like, one regex per cue.

Each `Cue` has a weight — 1.0 for an explicit verdict that is enough on its own ("that's wrong", "not what I
asked", "you forgot …", "missing the -r flag", "still doesn't work", "I said …", "26*"), less for evidence that
needs company ("it should be …", "X not Y", "that's <something else>", a hedge like "I thought it was …", the
name of a defect: "operator precedence bug, …") — and says where it still counts: after a praise opener
(`strong`), inside a plain question (`in_questions`). The patterns run over
`normalize`d text (lowercased, straight apostrophes, squashed whitespace, head and tail of a long message), are
pre-filtered by literal `needles`, and avoid unbounded nested repetition, so a message costs microseconds.
How the cues are combined, and the context rules for "no", "not", "actually" and bare statements, live in
`score.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A pasted log or file can be huge; a correction says what it means at the start ("still broken: <log>") or at the
# end ("<log> … same error"), so only the head and the tail of a long message are scanned.
SCAN_HEAD_CHARS = 600
SCAN_TAIL_CHARS = 300

# Tolerated before a leading cue: punctuation/markup, and up to three filler words ("Hmm, no", "lol no", "Sorry, I
# meant"). Atomic, and no two alternatives match the same word: "hmm, hmm, hmm, …" must not backtrack.
LEAD = r"^(?>[\W_]*(?:(?:please|sorry|h+m+|u+m+|u+h+|er+m*|well|lol|ugh|oh|wait|so|but)\b[\W_]*){0,3})"

# Subjects that point at the assistant's answer ("that is wrong"), not at the user ("I was wrong").
_ANSWER = (
    r"(?:that|this|it|thats|those|these|your (?:\w+)|the (?:answer|result|output|code|number|math|calculation"
    r"|formula|date|value|conversion|command|regex|query|syntax|format|order|total|sum|count|translation|spelling"
    r"|script|function|example|explanation|reply|response|summary|list))"
)
_BE = r"(?:'s|s|'re| is| was| are| were| seems?(?: to be)?| looks?| sounds?)"
_ADV = r"(?: (?:still|just|completely|totally|definitely|clearly|all|way|simply|also|so|very|pretty|plain|obviously))*"

# Words after "not" that do not make it a rejection ("not bad", "not yet", "not sure", "not too shabby").
NOT_BENIGN = (
    r"(?:bad|too|yet|sure|really|necessarily|just|only|a\s+(?:bad|big|problem)|an\s+issue|needed|necessary|at\s+all"
    r"|now|much|so|that|what|everything|all|many|a\s+lot|right\s+now|urgent|important|required|a\s+fan|my|for\s+now"
    r"|\w+\s+(?:vs|versus|or)\b)"
)

# After "that's": praise, closure and agreement ("that's perfect", "that's it", "that's what I needed").
_THATS_BENIGN = (
    r"(?:it|all|everything|fine|ok|okay|great|perfect|good|right|correct|exactly|true|awesome|amazing|nice|cool"
    r"|wild|interesting|helpful|what|so|much|really|very|super|the one|enough|better|brilliant|neat|clever|lovely"
    r"|beautiful|sweet|cute|fair|fun|funny|hilarious|crazy|insane|impressive|useful|handy|spot|why|how|because"
    r"|just|awful|a (?:great|good|nice|neat|clever|big|huge|lot|relief|fair|good one|weird|strange|odd|funny|cool"
    r"|fun|random|handy|useful|surprising|tough|tricky|hard|easy)|definitely|totally|pretty"
    r"|quite|precisely|not|n't|incredible|fantastic|excellent|genius|smart|wonderful|my|the (?:idea|plan|spirit"
    r"|trick|way|point)|settled|that|me|us|where|when|who|weird|odd|strange|sad|unfortunate|annoying|a shame"
    r"|a pity|good to know|news to me|new to me|exciting|cool|[a-z]+er\s+than|more|less)"
)


@dataclass(frozen=True)
class Cue:
    """One lexical cue: its name (reported in the verdict's signals), weight, pattern, and where it counts.

    `strong` cues still count after a praise opener; `in_questions` cues still count when the message is a
    question; `lead` cues are anchored at the start (their match becomes the verdict's `matched_phrase`).
    `needles`: the pattern can only match a text containing one of these substrings, so most cues are skipped
    with a C-speed substring test instead of a regex scan (empty: always run the regex).
    """

    name: str
    weight: float
    pattern: re.Pattern[str]
    needles: tuple[str, ...] = ()
    strong: bool = False
    in_questions: bool = False
    lead: bool = False

    def search(self, norm: str) -> re.Match[str] | None:
        if self.needles and not any(n in norm for n in self.needles):
            return None
        return self.pattern.search(norm)


def _cue(name: str, weight: float, pattern: str, needles: str = "", **flags: bool) -> Cue:
    """A cue; `needles` is a "|"-separated list of substrings (see `Cue.needles`)."""
    return Cue(name, weight, re.compile(pattern), tuple(needles.split("|")) if needles else (), **flags)


# Explicit verdicts: any one is enough.
CUES: tuple[Cue, ...] = (
    _cue(
        "lead_verdict",
        1.0,
        LEAD + r"(?:(?:wrong|incorrect|false|negative)(?![\w'])(?!\s+(?!(?:again|answer|format|one|number|result"
        r"|file|language|units?|order|way|command|version|syntax|date|year|name|value|output|formula)\b)[a-z])"
        r"|(?:not quite|not really|not exactly|not right|not correct|not it)(?![\w'])(?! (?:now|away)\b))",
        strong=True,
        in_questions=True,
        lead=True,
        needles="wrong|incorrect|false|negative|not ",
    ),
    _cue(
        "try_again",
        1.0,
        r"\b(?:try (?:it |that |this )?again|(?<!to )(?<!for )(?<!and )redo(?: it| that| this)?"
        r"|do (?:it|that|this) again|one more try)\b"
        r"|" + LEAD + r"(?:once more|again)\b[,:;.\s]+(?=\w)(?!!)",
        strong=True,
        in_questions=True,
        needles="again|redo|one more try|once more",
    ),
    _cue(
        "verdict",
        1.0,
        r"\b" + _ANSWER + _BE + _ADV + r" (?:wrong|incorrect|off|broken|backwards|invalid|inaccurate|false"
        r"|mistaken|buggy|nonsense|made up|the opposite|the reverse|the other way (?:round|around)|a mistake)\b"
        r"|\b(?:this|that)(?:'s| is)? (?:just |simply |plain )?wrong\b"
        r"|\byou(?:'re| are| were|'ve been| have been)(?: (?:just|completely|totally|so|dead|simply))?"
        r" (?:wrong|mistaken|incorrect|confused)\b",
        strong=True,
        in_questions=True,
        needles="wrong|incorrect|off|broken|backwards|invalid|inaccurate|false|mistake|buggy|nonsense|made up"
        "|opposite|reverse|other way|confused",
    ),
    _cue(
        "negated_answer",
        1.0,
        r"\b(?:that|this|thats)(?:'s|s| is| was)? ?(?:not|n't)\s+(?!" + NOT_BENIGN + r"\b)\w"
        r"|\b(?:it|that|this)(?:'s| is)? ?(?:not|n't) (?:right|correct|true|accurate|valid|it|working|what)\b"
        r"|\bnot (?:right|correct|accurate|true)\b(?! (?:now|away|here|there))",
        strong=True,
        in_questions=True,
        needles="not|n't",
    ),
    _cue(
        "doubt",
        1.0,
        r"\b(?:doesn't|does not|don't|didn't|isn't|not|doesnt) (?:sound|look|seem|feel)s? (?:right|correct|true)\b"
        r"|\bnot (?:so |too )?sure (?:that'?s|that is|this is|it'?s|it is|about that|that|this|if that'?s) ?"
        r"(?:right|correct|true|accurate)?\b"
        r"|\bi (?:don'?t|do not) (?:think|believe) (?:so|that'?s|that is|this is|it'?s|it is|you'?re|that|this"
        r" is)\b"
        r"|\b(?:are|r) (?:you|u) sure\b|\bshouldn'?t (?:it|that|this|the \w+) be\b",
        strong=True,
        in_questions=True,
        needles="sound|look|seem|feel|sure|think|believe|shouldn",
    ),
    _cue(
        "not_what_asked",
        1.0,
        r"\b(?:not|isn'?t|wasn'?t|n't) (?:what|how|the (?:one|thing)) i (?:asked|wanted|meant|said|needed|requested"
        r"|was (?:asking|looking)|am asking|'?m asking)",
        strong=True,
        in_questions=True,
        needles="what i|how i|one i|thing i",
    ),
    _cue(
        "i_said",
        1.0,
        r"\bi (?:said|told you|specified|specifically (?:said|asked)|asked (?:for|about|you|to|how|what|which|why"
        r"|if|whether)\b|didn'?t ask|did not ask|never asked|wanted(?! to (?:ask|know|say|check|thank|see|let|make sure"
        r"|add|mention|share))|was asking|am asking|'?m asking|need(?:ed)? (?:it|this|that|them) (?:in|as|to be))"
        r"|\b(?:like|as) i (?:said|asked|wrote|mentioned)\b|\bi (?:asked|said)\s*[.!]",
        strong=True,
        in_questions=True,
        needles="i said|i told|i specified|i specifically|i asked|i didn|i did not|i never|i wanted|i was asking"
        "|i am asking|i'm asking|im asking|i need|as i |like i ",
    ),
    _cue(
        "i_meant",
        1.0,
        r"\bi (?:meant|mean)\b(?!\s+to\b|,|\s+it\b|\s+well\b)",
        strong=True,
        in_questions=True,
        needles="i mean",
    ),
    _cue(
        "omission",
        1.0,
        r"\byou(?:'ve| have)?(?: (?:just|still|also|completely|totally))? (?:forgot|missed|left out|skipped|ignored"
        r"|omitted|dropped|didn'?t|did not|never|haven'?t|have not|mixed|confused|swapped|misplaced|misspelled"
        r"|miscounted|miscalculated|misread"
        r"|misunderstood|misunderstand|misinterpreted|got (?:it|that|this|them|the \w+)"
        r" (?:wrong|backwards|mixed up|reversed))\b"
        r"|\b(?:is|are|'s) (?:still )?missing\b|\bmixed (?:them|it|those|these) up\b"
        r"|" + LEAD + r"(?:still )?missing (?:the|a|an|its|your)\b",
        strong=True,
        in_questions=True,
        needles="you|missing|mixed",
    ),
    _cue(
        "broken",
        1.0,
        r"\b(?:doesn'?t|does not|didn'?t|did not|won'?t|will not|can'?t|isn'?t|is not|not|still doesn'?t)"
        r" (?:work|working|compile|compiling|run|build|help|fix it|fix that|fix anything)\b"
        r"(?! (?:before|earlier|at first|until|previously)\b)",
        strong=True,
        needles="work|compil|run|build|help|fix",
    ),
    _cue(
        "still_failing",
        1.0,
        r"\bstill (?:getting|get|gets|seeing|see|shows?|showing|broken|wrong|failing|fails?|throws?|throwing"
        r"|crashing|crashes|crash|hangs?|hanging|the same|same|doesn'?t|does not|not|no|empty|infinite|shared|missing"
        r"|returns?|gives?|giving|prints?|printing|happening|an? \w*error|errors?)\b"
        r"|\bsame (?:\w+ )?(?:error|issue|problem|result|output|exception|bug|message|behaviou?r)\b"
        r"|\bsame \w+(?:error|exception)\b",
        strong=True,
        needles="still|same",
    ),
    _cue(
        "error_report",
        1.0,
        r"\b(?:throws?|throwing|raises?|raising|crashe[sd]|crashing|fails?|failed|errors? out|gives?|giving|got|get"
        r"|getting|'ll throw|will throw)(?: me)?(?: an?| the)? (?:[a-z]\w*error|[a-z]\w*exception|error|exception"
        r"|traceback|segfault|segmentation fault|stack trace)\b|\berrors out\b",
        strong=True,
        needles="error|exception|traceback|segfault|segmentation|stack trace",
    ),
    _cue(
        "near_miss",
        1.0,
        LEAD
        + r"(?:close|almost|so close|nearly|not far off)[\s,!.]*(?:but|though|-|\u2014|\u2013)|"
        + LEAD
        + r"(?:close|almost|so close|nearly)[,!.]+\s",
        strong=True,
        in_questions=True,
        lead=True,
        needles="close|almost|nearly|far off",
    ),
    _cue(
        "typo",
        1.0,
        LEAD
        + r"typo\b|\b(?:there'?s|you have|you made|you've got|small) (?:a |an )?typo\b|\btypo in (?:the|your|that)\b",
        strong=True,
        needles="typo",
    ),
    # The chat convention for fixing a word: "26*", "*Canberra".
    _cue(
        "asterisk_fix",
        1.0,
        r"^[\W_]*[\w.'-]+(?:\s[\w.'-]+){0,2}\s?\*+$|^\*+[\w.'-]+(?:\s[\w.'-]+){0,2}[.!]*$",
        strong=True,
        needles="*",
    ),
    _cue(
        "you_did_instead",
        1.0,
        r"\byou (?:\w+ )?(?:used|wrote|gave|put|picked|chose|returned|printed|added|did|made|called|sorted|converted"
        r"|computed|calculated|answered|translated|listed|named|described|explained|included|removed)\b[^.?!]{0,60}"
        r"\binstead\b",
        strong=True,
        in_questions=True,
        needles="instead",
    ),
    _cue(
        "format_complaint",
        1.0,
        r"\bwrong (?:format|language|units?|order|file|answer|number|result|one|way round|version|syntax|command|date"
        r"|year|name|value|output|formula|function|method|column|table|type|encoding|timezone)\b"
        r"|\b(?:way |much |far )?too (?:long|verbose|wordy|much text|many words|short)\b"
        r"|\bway (?:over|more than|too)\b|\b(?:over|exceeds?|more than) (?:the )?(?:\d+|word) (?:words?|limit"
        r"|characters?|lines?)\b",
        strong=True,
        needles="wrong|too |way |over|exceed|more than",
    ),
    # Weaker evidence: needs company (or, for the leading ones, is a verdict unless context says otherwise).
    _cue(
        "contrast",
        1.0,
        r"[\w)\]'\"`%$][,;:\u2014\u2013]?\s*[,;:\u2014\u2013-]\s*(?:and |but )?not (?!" + NOT_BENIGN + r"\b)"
        r"(?:the |a |an )?[\w$'\"`(]",
        needles="not",
    ),
    _cue(
        "contrast_bare",
        0.5,
        r"\b(?!(?:is|are|was|were|do|does|did|have|has|had|can|could|would|should|will|may|might|must|am|be|been"
        r"|i'?m|it'?s|that'?s|if|or|whether|why|and|but|just|yet|still|really|also|i|you|we|they|he|she|it|so"
        r"|certainly|definitely|probably|maybe|perhaps|absolutely|surely|need|dare|please|better|rather|though|then"
        r"|than|how|what|of|course|sure|to|as|at|by|for|with|because|almost|nearly|why|let'?s|whats|what'?s|or)\b)"
        r"[a-z0-9_]+ not (?:the |a |an )?(?!" + NOT_BENIGN + r"\b)[a-z0-9_]+\b",
        needles="not",
    ),
    # "should be 'He and I go to school'": what the answer should have said, quoted.
    _cue(
        "should_be_quoted",
        1.0,
        LEAD + r"(?:(?:it|that|this|the \w+) )?should(?:'ve| have)? (?:be|say|read|have said)[:,]? ['\"`]\w",
        needles="should",
    ),
    _cue(
        "should_be",
        0.5,
        r"\bshould(?:'ve| have)? (?:be|have been|say|read|return|print|output|give|equal|show)\b",
        needles="should",
    ),
    # Hedged disagreement; each hedge is its own cue so two of them add up ("I could be wrong but I thought …").
    _cue(
        "hedge_sure",
        0.5,
        r"(?:\bi(?:'?m| am) (?:pretty |quite |fairly |very )?|\b(?:pretty|quite|fairly|very) )sure (?:it|that|this|they"
        r"|he|she|the \w+)(?:'s| is| was| were| are)\b",
        in_questions=True,
        needles="sure",
    ),
    _cue(
        "hedge_thought",
        0.5,
        r"\bi thought (?:it|that|this|they|(?:an? |the )?[\w-]+)(?:'s| was| is| were| are)\b",
        in_questions=True,
        needles="thought",
    ),
    _cue("hedge_could_be_wrong", 0.5, r"\bi (?:could|might|may) be wrong\b", in_questions=True, needles="be wrong"),
    _cue("hedge_tag", 0.5, r"\bisn'?t (?:it|that)\b[^?]*\?", in_questions=True, needles="isn't|isnt"),
    _cue("hedge_believe", 0.5, r"\bi believe\b", in_questions=True, needles="believe"),
    _cue(
        "identifies_answer",
        0.6,
        r"(?:^|[.,;:!\u2014\u2013-]\s*|\b(?:sure|think|guess|believe) )[\W_]*(?:that'?s|that is|thats|those are"
        r"|these are)\s+(?!" + _THATS_BENIGN + r"\b)\w",
        needles="that|those|these",
    ),
    # "That's momentum." / "That's 404." — the whole opening sentence names what the answer really is.
    _cue(
        "terse_identification",
        0.4,
        LEAD
        + r"(?:that'?s|that is|thats|those are|these are)\s+(?!"
        + _THATS_BENIGN
        + r"\b)[\w$%.'-]+(?:\s[\w$%.'-]+){0,3}(?:[.!]+(?:\s|$)|$)",
        needles="that|those|these",
    ),
    _cue(
        "reply_behaviour",
        0.5,
        LEAD + r"(?:that|this|it|your (?:code|version|command|regex|query|script|function|answer|solution))"
        r"(?:'ll| will| just| only| actually| now)? (?:returns?|gives?|prints?|outputs?|produces?|matches|deletes?"
        r"|removes?|drops?|throws?|raises?|crashes|fails|hangs|loops|breaks|sorts|counts|converts?|rounds?|truncates"
        r"|overwrites|ignores|skips|misses|excludes|lists?|finds?|changes|says|shows|reads|accepts|allows|adds"
        r"|subtracts|multiplies|divides|doubles|squares|increments|decrements|appends|inserts|replaces|reverses"
        r"|swaps|splits|joins)\b",
        needles="that|this|it|your",
    ),
    _cue(
        "reversed",
        0.5,
        r"\b(?:in )?(?:the )?reverse order\b|\bthe other way (?:round|around)\b|\bupside down\b"
        r"|\b(?:other|wrong|opposite) direction\b",
        needles="reverse|other way|upside|direction",
    ),
    # "This doesn't count anything" / "That only creates it": what the answer fails to do.
    _cue(
        "reply_falls_short",
        0.5,
        r"\b(?:that|this|it)(?: just| still)? (?:doesn'?t|does not|didn'?t|did not|won'?t|can'?t|never) (?!(?:matter"
        r"|have|has|need|needs|surprise|bother|hurt|mean|really|look|seem|sound|mind|work|working)\b)[a-z]+",
        needles="n't|not|never|nt",
    ),
    _cue(
        "reply_only",
        0.5,
        r"\b(?:that|this|it) only (?!(?:takes|costs|needs|works on|runs on)\b)[a-z]+s\b",
        needles="only",
    ),
    # What the answer does wrong: "That misses the 3-digit ones", "it loops forever".
    _cue(
        "reply_fails",
        1.0,
        r"\b(?:that|this|it|your \w+)(?: just| still| only| now| also)? (?:misses|breaks|crashes|hangs|loops forever"
        r"|never (?:ends|stops|terminates|returns|finishes)|overwrites|truncates|loses|leaks|fails)\b",
        needles="miss|break|crash|hang|loop|never|overwrit|truncat|lose|leak|fail",
    ),
    # Incredulity: "huh? …", "Are there really four?", "children??".
    _cue(
        "incredulity",
        0.5,
        LEAD + r"(?:huh|what|wait what|wut|eh|really|seriously)\s*(?:\?+|[!.]+(?=\s))"
        r"|\b(?:is|are|was|were|does|do|did) (?:there|it|that|this|they|those|these) really\b|\breally\?",
        in_questions=True,
        needles="?|really|huh|what|wut",
    ),
    _cue(
        "incredulous_echo",
        1.0,
        r"^[\W_]*(?:(?:uh+|um+|hm+|er|erm|wait)[\W_]+)?(?!(?:what|how|why|when|where|which|who|and|or|so|any|anything"
        r"|more|also)\b)[\w.'-]+(?:\s[\w.'-]+){0,3}\s?\?{2,}$",
        needles="??",
    ),
    # "… is about 28 grams", "I count 3": the user states a (different) figure.
    _cue(
        "counter_figure",
        0.5,
        r"\b(?:is|are|was|were|equals|it'?s|has|have)\s+(?:about |around |roughly |approximately |actually |really "
        r"|just |only |like |~)?\$?-?\d[\d,.]*|\bi (?:count|get|got|make it|calculated|computed|see)\s+(?:\$?\d|one"
        r"|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b",
        needles="0|1|2|3|4|5|6|7|8|9|i count|i get|i got|i make|i calculated|i computed|i see",
    ),
    # Pedantry and concession markers: "Technically, …", "… though".
    _cue("technically", 0.5, LEAD + r"technically\b", needles="technically"),
    _cue("though", 0.5, r"(?<!even)(?<!\bas) though(?:[.!]+|$)", needles="though"),
    _cue(
        "not_valid",
        1.0,
        r"\b(?:isn'?t|is not|not|aren'?t|are not|wasn'?t) (?:a |an )?(?:valid|legal|well-formed)\b",
        strong=True,
        needles="valid|legal|well-formed",
    ),
    # "operator precedence bug, …", "off-by-one mistake there": the user names the defect.
    _cue(
        "named_defect",
        0.5,
        LEAD + r"(?:[\w-]+ ){0,3}(?:bug|mistake|error)\b(?! (?:report|tracker|fix|fixes|bounty|handling)\b)[,:;.!\s]",
        needles="bug|mistake|error",
    ),
    _cue("error_named", 0.5, r"\b[a-z]+(?:error|exception)\b", needles="error|exception"),
    _cue(
        "you_should",
        0.5,
        r"(?<!if )\byou(?:'d)? (?:want|need|should|must|have to|gotta)\b(?! (?:to )?(?:try|check out|also)\b)",
        needles="you",
    ),
    # "still bullets": the change that was asked for did not happen.
    _cue("still_short", 0.5, LEAD + r"still(?:\s[\w'-]+){1,3}[.!]*$", needles="still"),
    _cue("not_equal", 0.5, r"\u2260|=/=", needles="\u2260|=/="),
)


@dataclass(frozen=True)
class CueHit:
    """A cue that fired, with the weight it contributed and the text it matched."""

    name: str
    weight: float
    text: str
    lead: bool = False


def normalize(text: str) -> str:
    """Lowercase, straight apostrophes and quotes, squashed whitespace; a long text keeps its head and tail only."""
    if len(text) > SCAN_HEAD_CHARS + SCAN_TAIL_CHARS:
        text = text[:SCAN_HEAD_CHARS] + " \u2026 " + text[-SCAN_TAIL_CHARS:]
    text = text.lower()
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.split())
