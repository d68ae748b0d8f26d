"""What the correction model reads of an exchange: the follow-up's words, a few dozen cue families, and how the
follow-up relates to the request and the reply.

`features(prior_user, prior_reply, follow_up)` returns the binary features, sorted, each once; training
(`scripts/train_correction.py`) and prediction (`detector.py`) call the same function. Families:

- `w:` words and `b:` word bigrams of the follow-up (lower-cased, numbers as `<n>`, `^`/`$` at its ends);
- `k:` cue families (`CUES`): an explicit verdict, a leading "no" (in English or another language), a question
  that opens with a negative auxiliary ("aren't there 50?"), an interjection ("wait,"), a "no" of courtesy or
  agreement, agreement,
  praise or thanks (in several languages), a verdict in another language, a hedge, irony, an omission, "I said",
  the user fixing their own request, a new request, a question, own context, "still", "should be", a pasted
  error, shouting;
- `x:` the exchange: numbers of the follow-up that the reply or request did not state (a counter-value) or that
  the reply did (an echo), word overlap with the request and with the reply (bucketed), capitalised names new to
  the exchange, whether the reply ended by asking something, whether the follow-up asks, quotes the reply back,
  or is in another script or language, and its length;
- `p:` every pair of the `k:`/`x:` features present, so the linear model can weigh combinations ("no" with
  agreement, a new value after a question the reply asked).

The cues are evidence with learned weights, not decisions: which of them matter, and how much, is what the
training data says. Character n-grams were tried as a further family and left out: in leave-one-batch-out
cross-validation they lowered recall at the same precision (0.782 against 0.815 at P ≥ 0.92) and cost about as
much as everything else together. Bump `FEATURES_VERSION` whenever this module changes what it emits.
"""

from __future__ import annotations

import re

from ghost_agent.text.numbers import numbers_in
from ghost_agent.text.sparse_model import bucket
from ghost_agent.text.words import jaccard

FEATURES_VERSION = 2

HEAD_CHARS = 400  # a long follow-up (pasted code or a log) is read as its head and its tail
TAIL_CHARS = 200
REPLY_CHARS = 2000
ASK_TAIL_CHARS = 300  # a question the reply ends with is looked for in its last this-many characters
QUOTE_WORDS = 4  # a run of this many of the reply's words inside the follow-up is a quotation

_Q = "['’]?"  # an optional apostrophe, straight or curly

CUES: dict[str, str] = {
    "verdict": (
        r"\b(?:wrong|incorrect|not (?:right|correct|true|quite|it)|mistaken|inaccurate|off by|not what i"
        rf"|that{_Q}s not (?:how|what)|misunderst\w*|misread|try again|redo|nope|nah|false|bogus"
        rf"|(?:doesn|didn|won){_Q}t (?:work|compile|run|match|help)|does not work|not working|broken|fails?|failed"
        rf"|you{_Q}re confusing|confus\w+|typo|error)\b"
    ),
    "lead_no": r"^[\W_]*(?:no+|nope|nah|not)\b",
    "lead_no_foreign": r"^[\W_]*(?:non|nein|nee|nie|n[aã]o|нет|ne)\b|^[\W_]*(?:いいえ|不是|不对|아니)",
    "negative_question": (
        r"^[\W_]*(?:(?:wait|hold on|hang on|hmm+|um+|but|so|and)\b[\s,.!—–-]*)?"
        rf"(?:aren{_Q}t|isn{_Q}t|shouldn{_Q}t|doesn{_Q}t|don{_Q}t|wasn{_Q}t|weren{_Q}t|won{_Q}t|can{_Q}t|didn{_Q}t"
        rf"|wouldn{_Q}t|hasn{_Q}t|haven{_Q}t)\b[^.!]*\?"
    ),
    "interjection": r"^[\W_]*(?:wait|hold on|hang on|hmm+|huh|erm|um+|uh+)\b",
    "no_courtesy": (
        r"^[\W_]*no+\b[\s,.!-]*(?:thanks|thank|thx|problem|worries|need|rush|complaints|issues|no\b"
        rf"|that{_Q}s (?:all|it|fine|right|correct|perfect|exactly|great|good)|you{_Q}re right|you are right"
        rf"|(?:that )?makes sense|all good|it{_Q}s (?:fine|perfect|great|good)|i{_Q}m good|perfect|exactly)"
    ),
    "agree": (
        rf"\b(?:exactly right|you{_Q}re right|you are right|that{_Q}s (?:right|correct|it)|spot on|makes sense"
        r"|that did it|(?:that|it) worked|works(?: now| great| perfectly)?|worked|nailed it|perfect|all good"
        r"|looks good|good call|fair enough|got it|noted|i see|agreed|confirmed)\b"
    ),
    "praise_lead": (
        r"^[\W_]*(?:thanks|thank you|thx|ty|great|awesome|nice|perfect|cool|excellent|brilliant|amazing|sweet"
        r"|lovely|wonderful|fantastic|good|ok|okay|yes|yep|yeah|yup|sure|exactly|wow|oh|ah|haha|lol|right)\b"
    ),
    "thanks": (
        r"\b(?:thanks|thank you|thx|ty|cheers|appreciated?|danke|merci|gracias|grazie|obrigad[oa]|dank je|bedankt"
        r"|dzi[eę]kuj[eę]|спасибо|arigato)\b|谢谢|多谢|ありがとう|감사|고마워|👍|👌|🙏"
    ),
    "verdict_foreign": (
        rf"\b(?:est[aá] mal|no es (?:así|asi|correcto|eso|verdad)|incorrect[oa]|equivocad[oa]|c{_Q}est faux"
        rf"|c{_Q}est pas|ce n{_Q}est pas|pas (?:ça|correct|juste)|faux|falsch|stimmt nicht|nicht richtig"
        r"|das ist nicht|sbagliat[oa]|non [eè] (?:giusto|corretto|cos[iì])|errad[oa]|n[aã]o [eé] (?:isso|assim"
        r"|correto)|fout|klopt niet|niet goed|[źz]le|nie jest|b[lł][ąa]d|неправильно|неверно|не так|ошиб\w*)"
        r"|不对|错|不是|違う|間違|ちが|아니|틀"
    ),
    "hedge": (
        rf"\b(?:i think|i believe|pretty sure|i thought|i(?:{_Q}d| had)? always (?:learned|thought|heard)"
        rf"|i was taught|i learned|shouldn{_Q}t it|isn{_Q}t it|wasn{_Q}t it|aren{_Q}t they|don{_Q}t you mean"
        r"|surely|i might be wrong|correct me if|not sure (?:that|this|it|about)|are you sure|i doubt"
        r"|last i checked|as far as i know|afaik|i could be wrong|with respect)\b"
    ),
    "irony": (
        r"\b(?:since when|silly me|guess (?:my|i|the)|ever heard|would be surprised|news to me|yeah right"
        rf"|sure,? (?:if|in|and)|oh (?:great|brilliant|wonderful|perfect|sure)|great,? if|funny,|so i{_Q}m"
        r"|apparently|must have|tell that to|interesting,? (?:because|since)|right,? because|wow,? (?:and|so)"
        r"|genius|how (?:convenient|nice)|lol|lmao)\b"
    ),
    "omission": (
        rf"\b(?:you (?:forgot|missed|skipped|ignored|left out|dropped|omitted|didn{_Q}t (?:include|add|handle|use"
        rf"|do|answer|read))|where(?: is| are|{_Q}s) (?:the|my)|forgot (?:to|the|about)|(?:is|are) missing"
        r"|missing|left out|without the)\b"
    ),
    "i_said": (
        r"\b(?:i (?:said|asked|wanted|specified|told you|wrote|requested|needed)|as i said|like i said"
        r"|i was asking|the question was|read (?:my|the) (?:question|message))\b"
    ),
    "self_fix": (
        r"\b(?:oops|whoops|my bad|my mistake|typo on my|my typo|i mis(?:typed|spoke|wrote)|sorry,? i meant"
        rf"|i meant to (?:say|write|type|ask)|should(?:{_Q}ve| have) (?:said|written|mentioned|asked)"
        r"|let me rephrase|forgot to mention|i should clarify)\b"
    ),
    "new_request": (
        r"^[\W_]*(?:now|next|also|and (?:now|also|what|how|can)|what about|how about|can you (?:also|now)"
        r"|could you (?:also|now)|one more|another)\b|\b(?:now (?:write|do|make|convert|add|show|give|translate"
        rf"|try|get|count)|while you{_Q}re at it|one more thing|as well)\b"
    ),
    "question_lead": r"^[\W_]*(?:why|how|what|which|when|where|who|can|could|would|is|are|does|do|should|will)\b",
    "own_context": (
        rf"\b(?:i{_Q}m (?:using|on|in|running|the one)|we{_Q}re|my (?:setup|machine|laptop|server|version)"
        r"|fyi|for reference|btw|by the way|just so you know|for context)\b"
    ),
    "still": r"\b(?:still|again|same (?:error|problem|issue|result)|keeps?)\b",
    "should_be": (
        r"\b(?:should (?:be|have|return|give|print|say)|supposed to|needs? to be|has to be|must be|meant to be"
        r"|instead|rather than)\b"
    ),
    "pasted_error": (
        r"Traceback|\b\w*(?:Error|Exception)\b|error:|\bERROR\b|line \d+|command not found|undefined|segfault"
        r"|\bNaN\b|null pointer"
    ),
    "shout": r"\b[A-Z]{3,}\b",
    "exclaim": r"[!?]{2,}",
    "contrast": r"\b(?:though|tho|but|however|except|actually)\b",
    "negation": rf"\b(?:not|isn{_Q}t|aren{_Q}t|wasn{_Q}t|doesn{_Q}t|don{_Q}t|didn{_Q}t|won{_Q}t|can{_Q}t|never)\b",
    "it_is": rf"^[\W_]*(?:it{_Q}s|it is|that{_Q}s|that is|they{_Q}re|its)\b",
    "i_mean": r"\b(?:i mean|i meant|meaning)\b",
    "please": r"\b(?:please|pls|plz)\b",
    "form_word": (
        r"\b(?:format|bullets?|list|table|json|csv|uppercase|lowercase|caps|one (?:word|line|sentence)"
        r"|short(?:er)?|sentences?|words?|lines?|steps?|metric|celsius|fahrenheit|spanish|french|german|english)\b"
    ),
}
_CASE_SENSITIVE = {"pasted_error", "shout"}
_COMPILED = {name: re.compile(p, 0 if name in _CASE_SENSITIVE else re.IGNORECASE) for name, p in CUES.items()}

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?|[^\w\s]", re.UNICODE)
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_NAME = re.compile(r"(?<=[\s(\"'])[A-Z][a-z]{2,}")
_NON_LATIN = re.compile(r"[^\x00-\u024f\u2000-\u206f\U0001f000-\U0001ffff]")
# Common English words: a follow-up of two or more Latin-script words with none of these is in another language.
_ENGLISH = frozenset(
    "the and that this was for you with are not but its it's what why how can should would could have has had "
    "there their they one all about from into than then just only also still really actually please thanks "
    "thank wrong right yes yeah nope sure think know need want like use using get got does did don't isn't "
    "wasn't aren't doesn't didn't can't won't i'm you're that's it's there's what's well okay oh wow".split()
)
_ASKS_BACK = re.compile(
    r"\?\s*$|\b(?:would you like|do you want|want me to|shall i|should i|anything else|let me know if)\b",
    re.IGNORECASE,
)


def reply_asks(reply: str) -> bool:
    """Whether the reply ended by asking the user something ("… Would you like the metric version?")."""
    return _ASKS_BACK.search(reply[-ASK_TAIL_CHARS:]) is not None


def says_thanks(text: str) -> bool:
    """Whether `text` thanks (in any of the languages the `thanks` cue knows)."""
    return _COMPILED["thanks"].search(text[:HEAD_CHARS]) is not None


def features(prior_user: str, prior_reply: str, follow_up: str) -> list[str]:
    """The model's features of one exchange (the previous request, the reply, the user's next message)."""
    text = _head_and_tail(follow_up or "")
    reply = (prior_reply or "")[:REPLY_CHARS]
    request = (prior_user or "")[:REPLY_CHARS]
    out: set[str] = set()
    tokens = ["^", *_tokens(text), "$"]
    out.update(f"w:{t}" for t in tokens[1:-1])
    out.update(f"b:{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False))
    evidence = {f"k:{name}" for name, pattern in _COMPILED.items() if pattern.search(text)}
    evidence |= _exchange(request, reply, text, len(tokens) - 2)
    if reply_asks(prior_reply or ""):  # the end of the whole reply, not of the part read for overlap
        evidence.add("x:reply_asks")
    out |= evidence
    ordered = sorted(evidence)
    out.update(f"p:{a}&{b}" for i, a in enumerate(ordered) for b in ordered[i + 1:])
    return sorted(out)


def _exchange(request: str, reply: str, text: str, n_tokens: int) -> set[str]:
    """The `x:` features: how the follow-up relates to the request and the reply."""
    out = {f"x:len:{bucket(n_tokens, (1, 3, 6, 12, 25))}"}
    said, stated, asked = set(numbers_in(text)), set(numbers_in(reply)), set(numbers_in(request))
    if said:
        out.add("x:number")
        if said - stated - asked:
            out.add("x:number_new" if stated else "x:number_new_no_reply_number")
        if said & stated:
            out.add("x:number_echo")
    words, reply_words, request_words = _words(text), _words(reply), _words(request)
    if words:
        out.add(f"x:overlap_reply:{bucket(jaccard(words, reply_words), (0.0, 0.1, 0.25, 0.5))}")
        out.add(f"x:overlap_request:{bucket(jaccard(words, request_words), (0.0, 0.1, 0.25, 0.5))}")
        out.add(f"x:new_words:{bucket(len(words - reply_words - request_words) / len(words), (0.0, 0.3, 0.6, 0.9))}")
    if set(_NAME.findall(" " + text)) - set(_NAME.findall(" " + reply)) - set(_NAME.findall(" " + request)):
        out.add("x:new_name")
    if text.rstrip().endswith("?"):
        out.add("x:asks")
    if _NON_LATIN.search(text):
        out.add("x:other_script")
    latin_words = [w.lower() for w in _WORD.findall(text) if not _NON_LATIN.search(w)]
    if len(latin_words) >= 2 and not any(w in _ENGLISH for w in latin_words):
        out.add("x:not_english")
    reply_tokens = [t for t in _tokens(reply) if t[0].isalnum()]
    if len(reply_tokens) >= QUOTE_WORDS:
        said_text = " " + " ".join(t for t in _tokens(text) if t[0].isalnum()) + " "
        spans = (" " + " ".join(reply_tokens[i:i + QUOTE_WORDS]) + " " for i in range(len(reply_tokens) - 3))
        if any(span in said_text for span in spans):
            out.add("x:quotes_reply")
    return out


def _head_and_tail(text: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    return f"{text[:HEAD_CHARS]}\n{text[-TAIL_CHARS:]}"


def _tokens(text: str) -> list[str]:
    return ["<n>" if t[0].isdigit() else t for t in _TOKEN.findall(text.lower())]


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


__all__ = ["CUES", "FEATURES_VERSION", "features", "reply_asks", "says_thanks"]
