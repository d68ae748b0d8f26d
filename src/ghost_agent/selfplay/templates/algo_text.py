"""algo on text: the k most frequent words, run-length encoding; classic functions asked for by description,
graded by hidden tests whose edge cases grow with difficulty."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass

from ghost_agent.selfplay.checks import PythonTests
from ghost_agent.selfplay.task import Task, draft
from ghost_agent.selfplay.templates._function_tests import Cases, case_tests, code_reply, function_tests

WORDS = ("apple", "river", "stone", "cloud", "maple", "tiger", "ocean", "pixel", "amber", "delta", "lemon", "orbit",
         "piano", "quartz", "salsa", "tulip", "violet", "willow", "zebra", "cedar")


# top-k frequent words


def _top_k(text: str, k: int, *, fold: bool) -> list[str]:
    words = re.findall(r"[a-z]+", text.lower()) if fold else text.split()
    counts = Counter(words)
    return sorted(counts, key=lambda w: (-counts[w], w))[:k]


_TOPK_OK = {
    False: """
from collections import Counter


def {fn}(text, k):
    counts = Counter(text.split())
    return sorted(counts, key=lambda w: (-counts[w], w))[:k]
""",
    True: """
import re
from collections import Counter


def {fn}(text, k):
    counts = Counter(re.findall(r"[a-z]+", text.lower()))
    return sorted(counts, key=lambda w: (-counts[w], w))[:k]
""",
}


@dataclass(frozen=True)
class TopKWords:
    """The k most frequent words; distinct counts at difficulty 1, ties broken alphabetically from 2, mixed case,
    punctuation and k beyond the vocabulary at 3."""

    cluster: str = "algo"
    name: str = "top_k_words"

    def _text(self, rng: random.Random, counts: dict[str, int], messy: bool) -> str:
        words = [w for w, c in counts.items() for _ in range(c)]
        rng.shuffle(words)
        if messy:
            words = [w.capitalize() if rng.random() < 0.3 else w for w in words]
            words = [w + rng.choice(",.!?") if rng.random() < 0.2 else w for w in words]
        return " ".join(words)

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("top_k_words", "most_common_words", "top_words"))
        messy = difficulty == 3
        cases: Cases = []
        for size in (5, 7, 9):
            vocab = rng.sample(WORDS, size)
            if difficulty == 1:
                counts = dict(zip(vocab, rng.sample(range(1, 12), size), strict=True))
            else:
                counts = {w: rng.randint(1, 5) for w in vocab}
            k = rng.randint(1, 3)
            text = self._text(rng, counts, messy)
            cases.append(((text, k), _top_k(text, k, fold=messy)))
        if difficulty >= 2:  # a tie for first place, the later word in the alphabet seen first
            first, second = sorted(rng.sample(WORDS, 2))
            text = " ".join([second, first] * 3 + [rng.choice([w for w in WORDS if w not in (first, second)])])
            cases.append(((text, 1), [first]))
        if difficulty == 3:
            word = rng.choice(WORDS)
            text = f"{word.capitalize()} and {word}. {word.upper()}!"
            cases += [((text, 1), [word]), ((text, 5), _top_k(text, 5, fold=True))]
        example_text, example_k = cases[0][0]
        prompt = (f"Write `{fn}(text, k)` in Python: it returns the k most frequent words in `text`, most frequent "
                  "first")
        if difficulty == 1:
            prompt += ". Words are lower-case and separated by spaces."
        else:
            prompt += ", ties broken alphabetically."
        if difficulty == 3:
            prompt += (" Count words case-insensitively and ignore punctuation (a word is a run of letters; return "
                       "them in lower case). If k is more than the number of distinct words, return them all.")
        prompt += f"\n\ne.g. `{fn}({example_text!r}, {example_k})` → `{cases[0][1]}`"
        ok = _TOPK_OK[messy].format(fn=fn)
        bad = [code_reply("Count with a Counter and sort by count:",
                          ok.replace("(-counts[w], w)", "(counts[w], w)"))]  # least frequent first
        if difficulty >= 2:
            body = ("re.findall(r\"[a-z]+\", text.lower())" if messy else "text.split()")
            bad.append(code_reply("Counter does this directly:", f"""
import re
from collections import Counter


def {fn}(text, k):
    return [w for w, _ in Counter({body}).most_common(k)]
"""))  # ties in first-seen order
        if messy:
            bad.append(code_reply("Count and sort:", _TOPK_OK[False].format(fn=fn)))  # case and punctuation kept
        return draft(self, difficulty, prompt=prompt, check=function_tests(fn, cases),
                     reference=code_reply("Count the words, then sort by count (descending) and word:", ok), bad=bad)


# run-length encoding


def _runs(s: str) -> list[tuple[str, int]]:
    runs: list[tuple[str, int]] = []
    for ch in s:
        if runs and runs[-1][0] == ch:
            runs[-1] = (ch, runs[-1][1] + 1)
        else:
            runs.append((ch, 1))
    return runs


def _rle(s: str, prefix: bool, omit_one: bool) -> str:
    out = []
    for ch, n in _runs(s):
        count = "" if omit_one and n == 1 else str(n)
        out.append(count + ch if prefix else ch + count)
    return "".join(out)


_RLE_ENCODE = """
from itertools import groupby


def {fn}(s):
    out = []
    for ch, group in groupby(s):
        n = len(list(group))
        count = {count}
        out.append({piece})
    return "".join(out)
"""

_RLE_DECODE = {
    False: """

def {dec}(s):
    out = []
    i = 0
    while i < len(s):
        ch = s[i]
        j = i + 1
        while j < len(s) and s[j].isdigit():
            j += 1
        out.append(ch * int(s[i + 1:j] or {default}))
        i = j
    return "".join(out)
""",
    True: """

def {dec}(s):
    out = []
    digits = ""
    for ch in s:
        if ch.isdigit():
            digits += ch
        else:
            out.append(ch * int(digits or {default}))
            digits = ""
    return "".join(out)
""",
}


@dataclass(frozen=True)
class RunLength:
    """Run-length encoding ("aaab" -> "a3b1", or count-first "3a1b"); from difficulty 2 a run of one is written
    without its count and runs reach 10+, at 3 the decoder too (multi-digit counts)."""

    cluster: str = "algo"
    name: str = "run_length"

    def _string(self, rng: random.Random, difficulty: int) -> str:
        letters = rng.sample("abcdefghijklmnopqrstuvwxyz", 4)
        top = (4, 13, 15)[difficulty - 1]
        runs: list[str] = []
        while len(runs) < rng.randint(4, 8):
            ch = rng.choice([c for c in letters if not runs or c != runs[-1][0]])
            runs.append(ch * rng.randint(1, top))
        return "".join(runs)

    def make(self, rng: random.Random, difficulty: int) -> Task:
        prefix = rng.random() < 0.5
        omit = difficulty >= 2
        fn = rng.choice(("rle_encode", "compress", "encode_runs"))
        dec = {"rle_encode": "rle_decode", "compress": "decompress", "encode_runs": "decode_runs"}[fn]
        a, b = rng.sample("xyzqw", 2)
        strings = [self._string(rng, difficulty) for _ in range(3)] + [f"{a}{a}{b}{a}{a}{a}"]
        if omit:
            strings += ["", a, f"{a * 12}{b}"]
        cases: Cases = [((s,), _rle(s, prefix, omit)) for s in strings]
        tests = case_tests(fn, cases)
        if difficulty == 3:
            tests += case_tests(dec, [((_rle(s, prefix, omit),), s) for s in strings])
        shape = "count first, e.g. 'aaab' -> '3a1b'" if prefix else "letter first, e.g. 'aaab' -> 'a3b1'"
        if omit:
            shape = ("count first, e.g. 'aaab' -> '3ab'" if prefix else "letter first, e.g. 'aaab' -> 'a3b'") + \
                    ", and a run of one is just the letter"
        example = strings[0]
        prompt = (f"can you write a python function `{fn}(s)` that run-length encodes a string ({shape})? "
                  f"`{fn}({example!r})` should return {_rle(example, prefix, omit)!r}.")
        if difficulty == 3:
            prompt += f" I also need `{dec}(s)` that turns the encoded string back; counts can have several digits."
        count = "str(n) if n > 1 else \"\"" if omit else "str(n)"
        piece = "count + ch" if prefix else "ch + count"
        decoder = _RLE_DECODE[prefix].format(dec=dec, default=1) if difficulty == 3 else ""
        ok = _RLE_ENCODE.format(fn=fn, count=count, piece=piece) + decoder
        dropped_last = f"""
def {fn}(s):
    out = []
    n = 1
    for i in range(1, len(s)):
        if s[i] == s[i - 1]:
            n += 1
        else:
            count = {count}
            out.append({piece.replace("ch", "s[i - 1]")})
            n = 1
    return "".join(out)
"""  # the last run is never written
        bad = [code_reply("Count consecutive characters:", dropped_last + decoder)]
        if difficulty == 1:
            bad.append(code_reply("Count each character:", f"""
from collections import Counter


def {fn}(s):
    return "".join({'f"{n}{ch}"' if prefix else 'f"{ch}{n}"'} for ch, n in Counter(s).items())
"""))  # counts letters, not runs
        else:
            bad.append(code_reply("groupby gives the runs:",
                                  _RLE_ENCODE.format(fn=fn, count="str(n)", piece=piece) + decoder))  # writes "1"
        if difficulty == 3:
            pairwise = "s[i + 1] * int(s[i])" if prefix else "s[i] * int(s[i + 1])"
            one_digit = f"""

def {dec}(s):
    return "".join({pairwise} for i in range(0, len(s), 2))
"""  # one digit per count, and every run has one
            bad.append(code_reply("Encode with groupby, decode pairwise:",
                                  _RLE_ENCODE.format(fn=fn, count=count, piece=piece) + one_digit))
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests=tests, entry_point=fn),
                     reference=code_reply("`itertools.groupby` yields each run of equal characters:", ok), bad=bad)


TEMPLATES = (TopKWords(), RunLength())
