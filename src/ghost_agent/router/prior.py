"""The untrained router's prior: a fixed rule table that routes before any learned model exists (DESIGN §4).

Conversation and facts take the fast path; computation, code, files and anything to run or check take the
agent; everything else takes the agent too, because a wrong `agent` costs latency and a wrong `fast` costs a
wrong answer. Only the last user message is read (the text `RouterRequest` holds), as the learned router does.

The rules, in order (first match wins):

1. **agent signals** → `agent`, reason `prior_agent` — any one of:
   - `code`: a code fence or inline `code`, code-shaped text (`def f(`, `import x`, `>>>`, `foo(x)`, `a == b`,
     `x => y`, an `…Error` / `…Exception` name), or a programming / data / shell term (python, function,
     regex, SQL, JSON, CSV, bash, file, folder, git, bug, compile, …);
   - `path_or_url`: a file name with a known extension (`data.csv`), an absolute or `./` path, a URL;
   - `math`: arithmetic between numbers (`17 * 23`, `3/4`), a percentage of a number, a math word with a
     quantity (`square root of 144`, `average of 3, 8 and 10`, `is 7919 prime`), "how many/how much" with a
     quantity (digits or number words: word problems, unit conversions), two or more numbers that are not
     years, letter counting (`how many r's …`);
   - `dates`: date arithmetic or the clock (`2024-03-01`, `days between`, `day of the week`, `today's date`);
   - `task_verb`: an imperative to do something a tool does — run, execute, test, check, verify, debug, fix
     (not the grammar), compute, calculate, solve, count, convert, sort, plot, parse, reverse, decode, install,
     download, implement, refactor, … — at the start of a sentence or after "please / can you / how do I …",
     plus "run / test / check" followed by an object anywhere;
   - `random`: anything random (a password, a number, a shuffle): the model cannot roll dice;
2. **fast signals** (only without any agent signal) → `fast`, reason `prior_fast`:
   - `chit_chat`: a short message (≤ 16 words) opening with a greeting, thanks, goodbye or small talk ("how
     are you", "who are you"), or saying how the user feels;
   - `creative`: a joke, story, poem, haiku, riddle, fun fact, …;
   - `opinion`: what do you think, which is better, should I, recommend, tips, advice;
   - `rewrite`: rewrite, rephrase, paraphrase, proofread, summarize, translate, fix the grammar, make this
     more formal (prose only: code in it is an agent signal and wins);
   - `question`: a short question or definition request (≤ 30 words): who/what/when/where/why/which/how, a
     yes/no question, define/explain/describe/tell me about;
3. otherwise → `agent`, reason `prior_uncertain` (e.g. "plan my week", "yes, do it").

The prior has no probability: decisions carry `p = None` (as before, without a model), so nobody mistakes
a rule for a calibrated estimate; the reason says it was the prior. Deterministic, pure, cached per text.
Cost: single words are looked up in one set of the message's words and numbers are counted over the whole
scan (`features.SCAN_CHARS`); phrase rules read only its first 2,000 and last 1,000 characters, where a long
message keeps its instruction. Measured on the shared 2-vCPU box: 40-60 µs for a chat-sized message on first
sight, ~10 ms for 20,000 characters (the learned router's features take ~14 ms there), a dict lookup after.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ghost_agent.router.features import NUMBER_RE, SCAN_CHARS, URL_RE, WORD_RE, text_of

PriorRoute = Literal["fast", "agent"]

REASON_PRIOR_FAST = "prior_fast"
REASON_PRIOR_AGENT = "prior_agent"
REASON_PRIOR_UNCERTAIN = "prior_uncertain"

CHIT_CHAT_MAX_WORDS = 16
QUESTION_MAX_WORDS = 30
CREATIVE_MAX_WORDS = 60
WINDOW_HEAD = 2000
WINDOW_TAIL = 1000

_I = re.IGNORECASE

# --- agent signals ----------------------------------------------------------------------------------------

_INLINE_CODE_RE = re.compile(r"`[^`\n]+`")
_CODE_SHAPE_RE = re.compile(
    # a line that starts like code
    r"^\s*(?:def\s+\w+\s*\(|class\s+\w+\s*[:({]|import\s+[\w.]+(?:\s+as\s+\w+)?\s*$|from\s+[\w.]+\s+import\b|"
    r"#include\s*<|function\s*\w*\s*\(|(?:const|let|var)\s+\w+\s*=|fn\s+\w+\s*\(|func\s+\w+\s*\(|"
    r"(?:public|private|protected)\s+(?:static\s+)?\w+|package\s+[\w.]+;?\s*$|(?i:select)\s.+\s(?i:from)\s+\w+)"
    r"|>>>|=>|->|==|!=|<=|>=|&&|\|\||::|\+\+|\+=|-=|\$\("  # operators prose does not use
    r"|\b[A-Za-z_][\w.]*\([^()\n]{0,80}\)"  # a call: foo(x), len(None), print(3 * 'ab')
    r"|\b\w*(?:Error|Exception)\b|\b(?i:traceback|stack trace|syntax error|segfault)\b"
    r"|;\s*$|^\s*[{}]\s*$",  # a statement's end, a lone brace
    re.MULTILINE,
)
# Words that mean code, data, files or a shell, looked up in the message's set of lowercased words (a set
# lookup per word instead of a 150-way regex alternation at every position: ~20x faster on long texts).
# Ambiguous words are left out here and matched as phrases below ("function" but not "function of",
# "shell script" but not "shell", "in rust" but not "rust").
_CODE_WORDS = frozenset(
    """
    python javascript typescript java golang kotlin php perl haskell scala nodejs django numpy pandas pytest
    unittest code codes coding coder programming script scripts algorithm algorithms functions variable
    variables parameter parameters integer integers boolean array arrays dict tuple tuples lambda
    recursion recursive bug bugs buggy debug debugging compile compiler runtime regex regexes regexp sql sqlite
    postgres mysql database databases json jsonl csv tsv yaml yml toml xml html css parquet xlsx xls ipynb txt
    spreadsheet dataset dataframe bash zsh cli stdout stderr stdin git github docker kubernetes linux unix npm
    pip conda venv virtualenv api apis endpoint endpoints http https localhost server sandbox file files
    filename folder folders directory directories filepath workspace repo repository grep awk curl wget cron ssh
    chmod sudo mkdir traceback segfault js py
    """.split()
)
_CODE_PHRASES_RE = re.compile(
    r"\bfunction\b(?!\s+of\b)|\bc\+\+|\bc#|\bnode\.js\b|\bin rust\b|\brust (?:code|program|function|crate|compiler)\b|"
    r"\breact (?:component|app|hook)s?\b|\bprogram that\b|\blist comprehensions?\b|\bobject-oriented\b|"
    r"\b(?:for|while) loops?\b|\bloop over\b|\b(?:time|space) complexity\b|\bbig[- ]o\b|\bbinary search\b|"
    r"\blinked lists?\b|\bhash ?(?:map|table)s?\b|\bdata structures?\b|\bregular expressions?\b|"
    r"\bexcel (?:sheet|file|formula)s?\b|\bin excel\b|\bdata set\b|\bshell (?:script|command)s?\b|\bthe shell\b|"
    r"\b(?:in|from|on) (?:the|a|my) terminal\b|\bterminal (?:command|window)\b|\bcommand[ -]line\b|"
    r"\bfile path\b|\bunit tests?\b|\btest cases?\b|\bthe tests\b|\bstack trace\b|\bsyntax error\b",
    _I,
)
_PATH_RE = re.compile(
    r"(?:^|[\s'\"`(=])(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]*)*"  # /abs/path, ./rel, ~/x
    r"|\b[\w-]{2,}\.(?:py|sh|txt|csv|json|jsonl|md|yaml|yml|toml|ini|cfg|log|sql|db|sqlite|xlsx|xls|html|"
    r"js|ts|c|h|cpp|rs|go|java|rb|ipynb|parquet|tsv|xml|pdf|png|jpg|jpeg|zip|tar|gz)\b",
    _I,
)
_NUMBER_WORDS = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million
    billion dozen half twice double triple
    """.split()
)
_ARITHMETIC_RE = re.compile(
    r"\d\s*(?:\*\*|[-+*/×÷^=x])\s*\(?\s*[-+]?\d"  # 2+2, 17 * 23, 3/4, 3 x 4, 7 = 22
    r"|\d\s*%"  # 15%
)
_MATH_WORDS = frozenset(
    """
    plus minus times multiply multiplied multiplication divide divided dividing division squared cubed sqrt
    factorial prime primes modulo mod remainder sum product average mean median total interest ratio fraction
    decimal exponent logarithm log derivative integral equation divisible digits percent percentage discount gcd
    lcm
    """.split()
)
_MATH_PHRASES_RE = re.compile(r"\b(?:square root|cube root|power of|per cent|greatest common|least common)\b", _I)
_HOW_MANY_RE = re.compile(r"\bhow (?:many|much|far|long|fast|old)\b", _I)
_LETTER_COUNT_RE = re.compile(
    r"\bhow many\s+(?:\w'?s\b|letters?|characters?|vowels?|consonants?|words?|syllables?)"
    r"|\bhow many times does (?:the )?(?:letter|word|character)\b"
    r"|\bin the word\b|\bspell\b.*\bbackwards?\b",
    _I,
)
_DATES_RE = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
    r"|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b"
    r"|\bdays? (?:between|until|till|since|from)\b|\bday of the week\b|\bweeks? (?:between|until|since)\b"
    r"|\b(?:today|todays|today's|current|now)\s*(?:date|time|day)\b|\bwhat time is it\b|\btime zones?\b"
    r"|\bwhat (?:day|date) is (?:it|today)\b|\bwhat is the date\b|\bwhat's the date\b",
    _I,
)
_TASK_VERBS = (
    "run|execute|test|check|verify|validate|debug|fix(?!\\s+(?:the\\s+|my\\s+|this\\s+|any\\s+)?"
    "(?:grammar|spelling|typos?|punctuation|wording|tone|sentence|paragraph))|compute|calculate|"
    "solve|count|tally|convert|sort(?!\\s+of\\b)|plot|graph|chart|parse|reverse|encode|decode|encrypt|decrypt|hash|"
    "install|uninstall|compile|deploy|download|upload|fetch|scrape|crawl|benchmark|implement|refactor|"
    "optimi[sz]e|automate|simulate|lint|grep|unzip|zip|query|scan|look up|google|search the web"
)
_TASK_VERB_RE = re.compile(
    r"(?:^|[\n.!?;:]\s*|\b(?:please|pls|can you|could you|would you|will you|help me|i need you to|"
    r"i want you to|how (?:do|can|would|should) i|how to|now|then|also|just|quickly)\s+)"
    rf"(?:{_TASK_VERBS})\b"
    r"|\b(?:test|check)\s+(?:it|this|that|these|those|the|my|your|a|an|all|if|whether|for)\b"
    r"|\brun\s+(?:it|this|that|these|those|the (?:code|tests?|script|program)|my (?:code|tests?|script|program)|all)\b",
    _I,
)
_RANDOM_RE = re.compile(
    r"\brandom (?:number|numbers|password|passwords|string|integer|integers|sample|seed|choice|pick|order)\b"
    r"|\brandomly (?:pick|choose|select|generate|assign)\b|\bshuffle\b|\broll (?:a|the|two) dice?\b"
    r"|\bflip a coin\b|\bcoin flip\b|\blottery numbers\b",
    _I,
)

# --- fast signals -----------------------------------------------------------------------------------------

_CHIT_CHAT_RE = re.compile(
    r"^\W*(?:hi+|hello|hey+|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|night|day)|"
    r"thanks|thank you|thank u|thx|ty|cheers|much appreciated|bye|goodbye|good bye|see you|see ya|"
    r"nice to meet you|how are you|how are things|how's it going|hows it going|how is it going|"
    r"what's up|whats up|sup|who are you|what are you|what can you do|what is your name|what's your name|"
    r"lol|haha+|wow|awesome|great job|well done|you're (?:great|awesome|funny|smart|the best)|"
    r"i (?:love|like) you)\b"
    r"|^\W*(?:i'm|i am|im|i feel|feeling)\s+(?:(?:so|really|very|a bit|a little|kind of|kinda|pretty|quite|"
    r"feeling|rather)\s+)*(?:sad|happy|down|tired|bored|lonely|stressed|anxious|excited|great|good|bad|"
    r"sick|nervous|worried|overwhelmed|fine|ok|okay|upset|angry|grateful)\b",
    _I,
)
_CREATIVE_RE = re.compile(
    r"\b(?:tell|give|share)\s+(?:me|us)\s+(?:a|an|another|one more|some|your|a few)?\s*"
    r"(?:(?:short|long|funny|good|little|silly|scary|sad|bedtime|interesting|random|cool|fun)\s+)*"
    r"(?:joke|jokes|story|stories|riddle|riddles|fun fact|fun facts|fact|facts|poem|quote|quotes|pun|puns)\b"
    r"|^\W*(?:write|compose|make up|create|come up with)\s+(?:me\s+)?(?:a|an|another|some|one)?\s*"
    r"(?:(?:short|long|funny|little|silly|sad|happy|love|rhyming|cheerful|heartfelt)\s+)*"
    r"(?:poem|poems|haiku|haikus|limerick|story|song|lyrics|sonnet|joke|riddle|toast|slogan|tagline|"
    r"birthday message|greeting|card message|names?|(?:cover |thank-you |thank you |love )?letter|email|essay|"
    r"paragraph|bio|speech|caption|tweet|post|toast|eulogy|note|invitation|apology)\b",
    _I,
)
_OPINION_RE = re.compile(
    r"\b(?:what do you think|what's your (?:opinion|take|view|favou?rite)|what is your (?:opinion|take|view|"
    r"favou?rite)|your (?:opinion|thoughts|favou?rite)|do you (?:like|prefer|think|believe|enjoy|have a favou?rite)|"
    r"which (?:is|one is|would you|do you|should i)\b.*\b(?:better|best|prefer|recommend|choose|pick|read)|"
    r"is it better|should i|would you (?:rather|recommend)|(?:can|could) you (?:recommend|suggest)|"
    r"recommend (?:a|an|some|me)|suggest (?:a|an|some)|any (?:tips|advice|suggestions|recommendations|ideas)|"
    r"(?:give me|some|a few)\s+(?:(?:\d+|a few|some|more|good|quick|three|four|five|ten)\s+)?"
    r"(?:tips|advice|ideas|suggestions|recommendations)|pros and cons)\b"
    r"|^\W*(?:recommend|suggest)\b",
    _I,
)
_REWRITE_RE = re.compile(
    r"\b(?:rewrite|re-write|rephrase|paraphrase|reword|proofread|proof-read|polish|shorten|simplify|"
    r"summari[sz]e|summary of|translate|tl;?dr|"
    r"(?:fix|correct|check)\s+(?:the\s+|my\s+|this\s+)?(?:grammar|spelling|typos?|punctuation|wording)|"
    r"make (?:this|it|the|my)(?:\s+\w+)?\s+(?:sound\s+)?(?:more\s+|less\s+)?(?:formal|informal|friendl(?:y|ier)|"
    r"polite|politer|concise|shorter|longer|clearer|professional|casual|persuasive|funnier|simpler|warmer|"
    r"kinder|nicer))\b",
    _I,
)
# A question or a request for a definition; an auxiliary opening ("is", "can", "do") only with a "?": "do it"
# is an instruction, "do you know …?" a question.
_QUESTION_START_RE = re.compile(
    r"^\W*(?:who|whom|whose|what|what's|whats|when|where|why|which|how|define|explain|describe|"
    r"tell me about|tell me why|tell me how|meaning of)\b",
    _I,
)
_AUXILIARY_START_RE = re.compile(
    r"^\W*(?:is|are|was|were|do|does|did|can|could|would|will|should|has|have|had)\b", _I
)


@dataclass(frozen=True)
class PriorVerdict:
    """The prior's call: the route, the reason recorded (`prior_fast` / `prior_agent` / `prior_uncertain`) and
    the rule that decided it (`code`, `math`, …, `chit_chat`, …, `none`), for tests and `explain`."""

    route: PriorRoute
    reason: str
    rule: str


def prior_verdict(text: object) -> PriorVerdict:
    """The prior's route for a request text (see the module docstring). Pure, deterministic, never raises
    on data (a non-string is read as its `str`)."""
    return _verdict(text_of(text))


@lru_cache(maxsize=2048)
def _verdict(text: str) -> PriorVerdict:
    scan = text[:SCAN_CHARS]
    # Word lookups and number counts see the whole scan; the phrase rules see its head and tail, where a long
    # message keeps its instruction ("Summarize the following: …", "… what does this print?").
    window = scan if len(scan) <= WINDOW_HEAD + WINDOW_TAIL else f"{scan[:WINDOW_HEAD]}\n{scan[-WINDOW_TAIL:]}"
    words = WORD_RE.findall(scan.lower())
    agent_rule = _agent_signal(scan, window, frozenset(words))
    if agent_rule is not None:
        return PriorVerdict("agent", REASON_PRIOR_AGENT, agent_rule)
    fast_rule = _fast_signal(window, len(words))
    if fast_rule is not None:
        return PriorVerdict("fast", REASON_PRIOR_FAST, fast_rule)
    return PriorVerdict("agent", REASON_PRIOR_UNCERTAIN, "none")


def _agent_signal(scan: str, window: str, words: frozenset[str]) -> str | None:
    if (
        "```" in scan
        or not _CODE_WORDS.isdisjoint(words)
        or _INLINE_CODE_RE.search(window)
        or _CODE_SHAPE_RE.search(window)
        or _CODE_PHRASES_RE.search(window)
    ):
        return "code"
    if _PATH_RE.search(window) or URL_RE.search(scan):
        return "path_or_url"
    if _DATES_RE.search(window):
        return "dates"
    if _is_math(scan, window, words):
        return "math"
    if _TASK_VERB_RE.search(window):
        return "task_verb"
    if _RANDOM_RE.search(window):
        return "random"
    return None


def _is_math(scan: str, window: str, words: frozenset[str]) -> bool:
    if _ARITHMETIC_RE.search(window) or _LETTER_COUNT_RE.search(window):
        return True
    numbers = NUMBER_RE.findall(scan)
    quantity = bool(numbers) or not _NUMBER_WORDS.isdisjoint(words)
    if quantity and (
        not _MATH_WORDS.isdisjoint(words) or _MATH_PHRASES_RE.search(window) or _HOW_MANY_RE.search(window)
    ):
        return True
    # Two quantities invite arithmetic ("60 miles per hour for 2.5 hours"); years alone ("in 1990") do not.
    return sum(1 for n in numbers if not _is_year(n)) >= 2


def _is_year(number: str) -> bool:
    return len(number) == 4 and number.isdigit() and 1000 <= int(number) <= 2199


def _fast_signal(window: str, n_words: int) -> str | None:
    if n_words <= CHIT_CHAT_MAX_WORDS and _CHIT_CHAT_RE.search(window):
        return "chit_chat"
    if n_words <= CREATIVE_MAX_WORDS and _CREATIVE_RE.search(window):
        return "creative"
    if n_words <= CREATIVE_MAX_WORDS and _OPINION_RE.search(window):
        return "opinion"
    if _REWRITE_RE.search(window):
        return "rewrite"
    if n_words <= QUESTION_MAX_WORDS and (
        _QUESTION_START_RE.search(window)
        or ("?" in window and _AUXILIARY_START_RE.search(window))
        or window.rstrip().endswith("?")
    ):
        return "question"
    return None


__all__ = [
    "REASON_PRIOR_AGENT",
    "REASON_PRIOR_FAST",
    "REASON_PRIOR_UNCERTAIN",
    "PriorRoute",
    "PriorVerdict",
    "prior_verdict",
]
