"""Request-shape features: what the user's message looks like, computed in microseconds from its text.

The router predicts "needs the full agent" from these, and the PRM's request group is the first eight of
them (one implementation, so the two models agree on what a request looks like). Feature order is a frozen
contract: checkpoints record the names and refuse to load against a different layout, so new features are
APPENDED to the name tuples, never inserted.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

SCAN_CHARS = 20_000  # regexes look at this much of a request; the length features count all of it

REQUEST_FEATURE_NAMES: tuple[str, ...] = (
    "req_length_log",
    "req_has_code_fence",
    "req_has_url",
    "req_imperative_count",
    "req_jargon_count",
    "req_question_word_ratio",
    "req_has_question_mark",
    "req_line_count_log",
)

ROUTER_FEATURE_NAMES: tuple[str, ...] = REQUEST_FEATURE_NAMES + (
    "req_has_filepath",
    "req_number_count_log",
    "conv_messages_log",
)

_IMPERATIVES = (
    "write|create|make|build|implement|generate|run|execute|compute|calculate|count|fix|debug|refactor|"
    "list|find|search|locate|read|open|show|print|parse|convert|extract|sort|filter|install|delete|remove|"
    "rename|move|copy|download|fetch|load|save|plot|analyze|analyse|summarize|test|check|verify|solve|"
    "update|add|replace|merge|split|format|validate|query|scrape|benchmark|measure|compare"
)
# An imperative verb at the start of the text, a line, a sentence or a clause after "please".
IMPERATIVE_RE = re.compile(rf"(?:^|[\n.!?;:]\s*|\bplease\s+)(?:{_IMPERATIVES})\b", re.IGNORECASE)
JARGON_RE = re.compile(
    r"\b(?:python|bash|shell|sql|sqlite|regex|regexp|json|csv|yaml|xml|html|api|http|https|url|function|"
    r"script|class|method|module|package|library|docker|database|table|query|algorithm|file|files|"
    r"directory|folder|path|error|exception|traceback|stack|compile|compiler|async|thread|process|"
    r"numpy|pandas|dataframe|array|list|dict|string|integer|float|variable|loop|recursion|git|linux|"
    r"unix|command|stdout|stderr|stdin|cli|server|endpoint|request|response|socket|port|cron|grep|awk|"
    r"sed|complexity|benchmark|unit|test|tests|bug)\b",
    re.IGNORECASE,
)
QUESTION_WORD_RE = re.compile(r"\b(?:what|why|how|when|where|who|whom|whose|which)\b", re.IGNORECASE)
WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
URL_RE = re.compile(r"\b(?:https?|ftp)://|\bwww\.[a-z0-9-]+\.", re.IGNORECASE)
FILEPATH_RE = re.compile(
    r"(?:^|[\s'\"`(=])(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]*)*|"  # /abs/path, ./rel, ~/x
    r"\b[\w-]+\.(?:py|sh|txt|csv|json|jsonl|md|yaml|yml|toml|ini|cfg|log|sql|db|sqlite|xlsx|html|js|ts|c|"
    r"h|cpp|rs|go|java|rb|ipynb|parquet|tsv|xml|pdf|png|jpg)\b",
    re.IGNORECASE,
)
NUMBER_RE = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w.])")


def text_of(value: Any) -> str:
    """A request's text from whatever we were handed (None and non-strings become strings, never raise)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return str(value)
    except Exception:  # a hostile __str__ must not break feature extraction
        return ""


@lru_cache(maxsize=2048)
def _request_features(text: str) -> tuple[float, ...]:
    scan = text[:SCAN_CHARS]
    words = WORD_RE.findall(scan)
    n_words = len(words)
    question_words = len(QUESTION_WORD_RE.findall(scan))
    return (
        math.log1p(len(text)),
        1.0 if "```" in scan else 0.0,
        1.0 if URL_RE.search(scan) else 0.0,
        float(len(IMPERATIVE_RE.findall(scan))),
        float(len(JARGON_RE.findall(scan))),
        question_words / n_words if n_words else 0.0,
        1.0 if "?" in scan else 0.0,
        math.log1p(text.count("\n") + (1 if text else 0)),
        1.0 if FILEPATH_RE.search(scan) else 0.0,
        math.log1p(len(NUMBER_RE.findall(scan))),
    )


def request_features(text: Any) -> tuple[float, ...]:
    """The PRM's request group (`REQUEST_FEATURE_NAMES`) for one request text. Cached per text."""
    return _request_features(text_of(text))[: len(REQUEST_FEATURE_NAMES)]


def router_features(text: Any, n_messages: Any = 1) -> tuple[float, ...]:
    """`ROUTER_FEATURE_NAMES` for a request text and the number of messages in the conversation."""
    try:
        messages = float(n_messages)
    except (TypeError, ValueError, OverflowError):
        messages = 1.0
    if messages != messages or messages == math.inf:  # before the max(): max(0.0, nan) is 0.0, not NaN
        messages = 1.0
    messages = max(0.0, messages)
    return _request_features(text_of(text)) + (math.log1p(messages),)

