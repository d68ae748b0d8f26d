"""What kind of request a turn answers, as far as checking the answer goes: code to write, a number to compute,
files in the workspace to read, or anything else.

The answer-first turn (`agent/checking/answer_first.py`) picks its checks from this: a code request gets its code run
against tests, a quantitative one gets its numbers computed by a program, a request about workspace files goes
to the tool loop (the draft cannot see the files). When unsure it says "general", which only means no extra work —
the draft stands as the bare model wrote it.

Code and quantitative are decided by a small learned model (`text/kind_model.py`): two logistic heads over the
features of `features` — word uni/bigrams with numbers normalised, character cues (fence tags, backticks, `$`,
`%`) and the hand-written regex signals below, which are evidence the data weighs, not the decision. The model was
trained on a labelled corpus (`text/data/request_kinds.jsonl` plus self-play and eval prompts) by
`scripts/train_request_kind.py`; docs/agent-turn.md has its cross-validated figures. Without a usable checkpoint
the regexes decide alone (`classify_rules`, the rules this module had before the model). Files stay a rule: a
named file that exists in the workspace is a fact, not a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ghost_agent.text import dates, kind_model
from ghost_agent.text.fences import find_fences, strip_fences
from ghost_agent.text.inline_data import find_inline_data
from ghost_agent.text.sparse_model import bucket

# Bump when `features` changes what it emits: a checkpoint trained on other features is not used (kind_model).
FEATURES_VERSION = 2

_CODE_VERB = r"(?:write|implement|complete|create|define|code|fix|correct|refactor|rewrite|give\s+me|make|build|add)"
_CODE_NOUN = r"(?:function|method|class|program|script|snippet|decorator|generator|lambda|routine|code)"
_WANTS_CODE = re.compile(rf"\b{_CODE_VERB}\b[^.?!\n]{{0,80}}?\b{_CODE_NOUN}s?\b", re.I)
# The artefacts the code-noun list above lacks (a query, a pattern, a command...): a signal for the model only.
_ARTEFACT = (r"(?:quer(?:y|ies)|regex(?:es|p)?|regular\s+expressions?|pattern|command|one[- ]liner|pipeline|formula|"
             r"filter|config(?:uration)?|dockerfile|workflow|unit\s+files?|rule|expression|component|endpoint|"
             r"migration|schema|alias|cron(?:tab)?\s+(?:line|entry|expression)|statement|loop|test)")
_WANTS_ARTEFACT = re.compile(rf"\b(?:{_CODE_VERB}|need|want|what'?s|show\s+me)\b[^.?!\n]{{0,60}}?\b{_ARTEFACT}s?\b",
                             re.I)
# Languages and tools whose name says the answer is written in them (when something is asked of them); names that
# are common words (C, R, Go) are left to the word features.
_TOOLS = (r"(?:python|py|sql|sqlite|postgres(?:ql)?|mysql|t-sql|bash|shell|sh|zsh|powershell|awk|sed|grep|jq|regex|"
          r"javascript|js|typescript|node(?:\.js)?|react|vue|golang|rust|java|kotlin|scala|swift|c\+\+|cpp|"
          r"c#|ruby|perl|php|lua|julia|matlab|haskell|elixir|dart|excel|sheets|vba|yaml|json|toml|dockerfile|"
          r"docker|kubernetes|kubectl|terraform|ansible|nginx|css|html|pandas|numpy|spark|pyspark|dax|graphql|"
          r"mongodb|redis|cron|crontab|makefile|git|curl|ffmpeg)")
_TOOL_NAMED = re.compile(rf"(?<![\w.#+-]){_TOOLS}(?![\w#+-])", re.I)
_STARTS_WITH_TOOL = re.compile(rf"^\W*{_TOOLS}(?![\w#+-])\s*(?::|\b(?:for|to|query|one[- ]?liner|func(?:tion)?|"
                               r"script|snippet|command|code|regex)\b)", re.I)
# Code asked for in a few other languages (verbs and nouns): es, pt, it, fr, de, zh, ja.
_CODE_WORD_INTL = re.compile(r"\b(?:escrib[ea]|escreva|scrivi|écris|schreib(?:e|t)?|funci[oó]n|função|funzione|"
                             r"fonction|funktion|consulta|abfrage|requête|expresi[oó]n\s+regular|expression\s+"
                             r"régulière|regul[aä]r(?:er)?\s+ausdruck)\b|写|函数|書いて|関数", re.I)
# Prose asked for with a code verb: "write a poem / an email / a summary".
_PROSE_ASKED = re.compile(r"\b(?:write|draft|compose|create|make|give\s+me)\b[^.?!\n]{0,30}?\b(?:poem|story|"
                          r"e-?mail|letter|post|summary|speech|description|note|message|essay|review|tweet|slogan|"
                          r"agenda|plan|list|questions|haiku|limerick|song|joke|bio|announcement|paragraph|reply|"
                          r"apology|toast|outline|title|headline|caption|invitation)s?\b", re.I)
_STUB = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\([^)]*\)[^:\n]*:\s*$", re.M)
_CODE_LANG = re.compile(r"\b(?:python|py)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_QUANT_CUE = re.compile(
    r"\b(?:how\s+(?:many|much|long|far|old)|what\s+is|what's|calculate|compute|total|sum|product|average|mean|"
    r"percent(?:age)?|remain(?:s|ing)?|left|altogether|in\s+all|per|each|profit|cost|costs|price|change|"
    r"difference|ratio|area|perimeter|volume|speed|rate|convert|times|twice|half|double|triple)\b|%|[-+*/^×÷=]",
    re.I,
)
_NUMBER_ONLY = re.compile(r"\b(?:just|only)\s+(?:give\s+)?(?:me\s+)?(?:the\s+)?(?:final\s+)?(?:number|count|total|"
                          r"result|answer)\b|\bnumber\s+only\b|\bplain\s+number\b|\bfinal\s+answer\b|"
                          r"\b(?:tell|give)\s+me\s+the\s+(?:result|answer|total|number|count)\b", re.I)
_FILE_TOKEN = re.compile(r"(?<![\w/.-])([\w.-]+\.(?:csv|json|jsonl|txt|tsv|md|log|py|xlsx?|parquet|yaml|yml|xml|html?|"
                         r"sqlite|db|ini|toml|cfg))\b", re.I)
_WORKSPACE_WORDS = re.compile(
    r"\b(?:in|from|inside)\s+(?:my|the|your|this|our)\s+(?:workspace|working\s+directory|current\s+directory|"
    r"folder|directory)\b|\bthe\s+file\b|\bthese\s+files\b|\bfiles?\s+in\b",
    re.I,
)
# Tokens for the word features: a number (normalised to "<n>"), a run of letters, or one CJK character (those
# scripts write words without spaces; single characters are the unit that recurs).
_TOKEN = re.compile(r"\d[\d,.]*|[\u3040-\u30ff\u3400-\u9fff]|[^\W\d_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_SENTENCES = re.compile(r"(?<=[.?!:;])\s+|\n+")
FEATURE_CHARS = 20_000  # a huge paste is read at its start and end (where a request states what it wants)


@dataclass(frozen=True)
class RequestKind:
    """The checks a request calls for."""

    code: bool  # asks for code to be written (the answer's code is tested, never replaced by its output)
    quantitative: bool  # asks for a number that can be computed
    files: bool  # refers to files in the session's workspace
    source_files: bool = False  # names a program file (.py, .js, .sh, ...): code asked about it edits that file

    @property
    def label(self) -> str:
        """One word for logs and the trajectory."""
        if self.files:
            return "files"
        if self.code:
            return "code"
        return "quantitative" if self.quantitative else "general"


def classify(request: str, workspace: Path | None = None) -> RequestKind:
    """The kind of `request` (the last user message); `workspace` lets a named file count only if it exists.

    Code when the model's P(code) reaches its threshold; quantitative when not code and P(number) reaches its
    own. Without a usable checkpoint (missing, corrupt, other features), the regex rules (`classify_rules`)."""
    text = request or ""
    model = kind_model.default_model(FEATURES_VERSION)
    if model is None:
        return classify_rules(text, workspace)
    p_code, p_number = model.probabilities(features(text))
    code = p_code >= model.code_threshold
    quantitative = not code and p_number >= model.number_threshold
    return RequestKind(code=code, quantitative=quantitative, files=_mentions_files(text, workspace),
                       source_files=_names_source_file(text))


def classify_rules(request: str, workspace: Path | None = None) -> RequestKind:
    """The regex rules alone: what decided before the model, and what decides when its checkpoint is unusable."""
    text = request or ""
    code = _rules_code(text)
    numbers = _NUMBER.findall(_without_code(text))
    quantitative = not code and len(numbers) >= 2 and bool(_QUANT_CUE.search(_without_code(text)))
    return RequestKind(code=code, quantitative=quantitative, files=_mentions_files(text, workspace),
                       source_files=_names_source_file(text))


def features(request: str) -> list[str]:
    """The model's features of `request`, sorted, each once (binary): what training and prediction both read.

    - `w:` words and `b:` word bigrams (lower-cased, numbers as `<n>`, `^` at each sentence start) of the text
      outside fenced blocks;
    - `c:` character cues: each fence's language tag, inline backticks, `$`, `%`, `=`, a trailing `?`, pasted
      data (`text.inline_data`), the line count and length in buckets;
    - `r:` the regex signals: the old code rule and its parts, an artefact noun (query, regex, command…), a
      language or tool named (first or anywhere), code words of other languages, prose asked for ("write a
      poem"), a stub, "what does it print", a quantity cue, the count of numbers outside code (bucketed),
      fenced code, "just the number", the old rules' verdict, and the calendar signals (`text.dates`): a date or
      weekday asked for, with an offset from a day ("45 days after …") or of a stated date.
    """
    text = request or ""
    if len(text) > 2 * FEATURE_CHARS:
        text = f"{text[:FEATURE_CHARS]}\n{text[-FEATURE_CHARS:]}"
    out: set[str] = set()
    prose = strip_fences(text, "\n", "inline", unclosed=True)
    for sentence in _SENTENCES.split(prose.lower()):
        tokens = ["^"] + ["<n>" if t[0].isdigit() else t for t in _TOKEN.findall(sentence)]
        if len(tokens) == 1:
            continue
        out.update(f"w:{t}" for t in tokens[1:])
        out.update(f"b:{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False))
    fences = find_fences(text, "inline", unclosed=True)
    out.update(f"c:fence:{f.language.lower() or 'none'}" for f in fences)
    for cue, present in (("backtick", "`" in prose), ("dollar", "$" in prose), ("percent", "%" in prose),
                         ("equals", "=" in prose), ("question", text.rstrip().endswith("?")),
                         ("cjk", bool(_CJK.search(text)))):
        if present:
            out.add(f"c:{cue}")
    out.update(f"c:data:{block.kind}" for block in find_inline_data(text))
    lines = text.count("\n") + 1
    out.add(f"c:lines:{bucket(lines, (1, 3, 10))}")
    out.add(f"c:chars:{bucket(len(text), (40, 120, 400, 1500))}")
    out.update(f"r:{name}" for name, hit in _signals(text).items() if hit)
    plain = _without_code(text)
    out.add(f"r:numbers:{bucket(len(_NUMBER.findall(plain)), (0, 1, 2, 5))}")
    return sorted(out)


_OFFSET = re.compile(r"\b\d+(?:\s+|-)(?:days?|weeks?|months?|years?)\b|\b(?:net|in)\s+\d+\b", re.I)
_MONTH_YEAR = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?:\d{1,2}\w*,?\s+)?\d{4}\b", re.I)


def _signals(text: str) -> dict[str, bool]:
    """The regex evidence about `text`, by name (feature `r:<name>` when true)."""
    plain = _without_code(text)
    rules = classify_rules(text)
    asked = dates.asks_for(plain)
    return {
        "wants_code": bool(_WANTS_CODE.search(text)),
        "wants_artefact": bool(_WANTS_ARTEFACT.search(plain)),
        "tool_named": bool(_TOOL_NAMED.search(plain)),
        "starts_with_tool": bool(_STARTS_WITH_TOOL.search(text)),
        "code_word_intl": bool(_CODE_WORD_INTL.search(plain)),
        "prose_asked": bool(_PROSE_ASKED.search(plain)),
        "stub": bool(_STUB.search(text)),
        "python_write": bool(_CODE_LANG.search(text) and re.search(r"\b(?:write|implement|give)\b", text, re.I)),
        "output_only": _asks_output_only(text),
        "quant_cue": bool(_QUANT_CUE.search(plain)),
        "fenced": bool(find_fences(text, "inline", unclosed=True)),
        "number_only": bool(_NUMBER_ONLY.search(plain)),
        "rules_code": rules.code,
        "rules_quantitative": rules.quantitative,
        "date_offset": asked is not None and bool(_OFFSET.search(plain)),
        "weekday_of_date": asked == "weekday" and bool(dates.days_in(plain) or _MONTH_YEAR.search(plain)),
        "date_asked": asked is not None,
    }


def _rules_code(text: str) -> bool:
    code = bool(_WANTS_CODE.search(text)) or (bool(_STUB.search(text)) and not _asks_output_only(text))
    return code or bool(_CODE_LANG.search(text) and re.search(r"\b(?:write|implement|give)\b", text, re.I))


def _asks_output_only(text: str) -> bool:
    """A request that shows code but asks what it prints or returns (answer with a value, not code)."""
    return bool(re.search(r"\bwhat\s+(?:does|will|would)\b[^?\n]{0,60}\b(?:print|output|return)", text, re.I))


def _without_code(text: str) -> str:
    """`text` with everything between backticks (a fence, a one-line fence, an unclosed last fence) blanked."""
    return strip_fences(text, " ", "same_line", unclosed=True)


_SOURCE_FILE = re.compile(r"(?<![\w.-])[\w./-]*\w\.(?:py|pyi|js|jsx|mjs|ts|tsx|go|rs|java|kt|c|cc|cpp|h|hpp|cs|rb|php|"
                          r"swift|scala|sh|bash|zsh|ps1|lua|pl|r)\b", re.I)


def _names_source_file(text: str) -> bool:
    """A program file named outside fenced blocks ("fix the bug in utils.py"): code asked for about it is an
    edit of a file the draft cannot see. Data files (csv, log, sql, html, ...) are input, not the thing edited."""
    return bool(_SOURCE_FILE.search(_without_code(text)))


def _mentions_files(text: str, workspace: Path | None) -> bool:
    names = {m.group(1) for m in _FILE_TOKEN.finditer(text)}
    if workspace is not None and names:
        try:
            if any((workspace / name).is_file() for name in names if "/" not in name and name not in (".", "..")):
                return True
        except OSError:
            return False
    return bool(_WORKSPACE_WORDS.search(text)) and (bool(names) or "workspace" in text.lower())


__all__ = ["FEATURES_VERSION", "RequestKind", "classify", "classify_rules", "features"]
