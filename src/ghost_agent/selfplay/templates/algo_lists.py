"""algo on lists: merge intervals, binary search with duplicates, spiral order of a matrix, order-preserving
dedupe; classic functions asked for by description, graded by hidden tests whose edge cases grow with
difficulty."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ghost_agent.selfplay.task import Task, draft
from ghost_agent.selfplay.templates._function_tests import Cases, code_reply, function_tests

# merge intervals

_MERGE_STORIES = (
    ("meeting slots as (start, end) minutes since 9:00", "merge_slots"),
    ("booked ranges of hotel nights as (first_night, last_night) day numbers", "merge_bookings"),
    ("ranges of changed line numbers as (start, end) pairs", "merge_ranges"),
    ("intervals as [start, end] pairs", "merge_intervals"),
)


def _merge(intervals: list[list[int]]) -> list[list[int]]:
    merged: list[list[int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


_MERGE_OK = """
def {fn}(intervals):
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged
"""


@dataclass(frozen=True)
class MergeIntervals:
    """Merge overlapping (and touching) intervals; sorted input at difficulty 1, unsorted from 2, the empty,
    single and all-in-one cases at 3."""

    cluster: str = "algo"
    name: str = "merge_intervals"

    def _random_case(self, rng: random.Random, n: int, sort: bool) -> list[list[int]]:
        out = []
        for _ in range(n):
            start = rng.randint(0, 60)
            out.append([start, start + rng.randint(1, 12)])
        return sorted(out) if sort else out

    def make(self, rng: random.Random, difficulty: int) -> Task:
        story, fn = rng.choice(_MERGE_STORIES)
        a = rng.randint(0, 40)
        fixed = [
            [[a, a + 3], [a + 3, a + 7], [a + 10, a + 12]],  # touching counts as overlapping
            [[a, a + 20], [a + 2, a + 5], [a + 8, a + 9], [a + 30, a + 31]],  # nested in the first
        ]
        sort = difficulty == 1
        inputs = fixed + [self._random_case(rng, (5, 8, 10)[difficulty - 1], sort) for _ in range(3)]
        if difficulty >= 2:
            inputs.append([[a + 20, a + 25], [a, a + 3], [a + 10, a + 12], [a + 2, a + 4]])
        if difficulty == 3:
            inputs += [[], [[a, a + 1]], [[a + 5, a + 9], [a, a + 6], [a + 8, a + 15], [a + 1, a + 2]]]
        cases: Cases = [((x,), _merge(x)) for x in inputs]
        example = inputs[2]
        order = "sorted by start" if sort else "in no particular order"
        prompt = (f"I have a list of {story}, {order}. Write a Python function `{fn}(intervals)` that merges the "
                  "overlapping ones and returns the merged list sorted by start. Ranges that touch (one ends where "
                  f"the next starts) count as overlapping. For example `{fn}({example})` should give "
                  f"`{_merge(example)}`.")
        if difficulty == 3:
            prompt += " It should also cope with an empty list."
        ok = _MERGE_OK.format(fn=fn)
        bad = [
            code_reply("Sort, then extend the last range when the next one overlaps:",
                       ok.replace("start <= merged", "start < merged")),  # touching ranges stay apart
            code_reply("Walk the sorted ranges and merge as you go:",
                       ok.replace("max(merged[-1][1], end)", "end")),  # a nested range shortens its parent
        ]
        if difficulty >= 2:
            bad.append(code_reply("Merge neighbours in one pass:", ok.replace("sorted(intervals)", "intervals")))
        return draft(self, difficulty, prompt=prompt, check=function_tests(fn, cases),
                     reference=code_reply("Sort by start, then extend the last merged range while the next one "
                                          "overlaps or touches it:", ok), bad=bad)


# binary search: first occurrence, then "absent", then the (first, last) range

_SEARCH_OK = {
    1: """
def {fn}(nums, target):
    lo, hi = 0, len(nums)
    while lo < hi:
        mid = (lo + hi) // 2
        if nums[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo
""",
    2: """
def {fn}(nums, target):
    lo, hi = 0, len(nums)
    while lo < hi:
        mid = (lo + hi) // 2
        if nums[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(nums) and nums[lo] == target else -1
""",
    3: """
from bisect import bisect_left, bisect_right


def {fn}(nums, target):
    first = bisect_left(nums, target)
    if first == len(nums) or nums[first] != target:
        return (-1, -1)
    return (first, bisect_right(nums, target) - 1)
""",
}

_SEARCH_BAD = {
    1: [
        ("A standard binary search:", """
def {fn}(nums, target):
    lo, hi = 0, len(nums) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if nums[mid] == target:
            return mid
        if nums[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
"""),  # any occurrence, not the first
        ("bisect does the searching:", """
from bisect import bisect_right


def {fn}(nums, target):
    return bisect_right(nums, target) - 1
"""),  # the last occurrence
    ],
    2: [
        ("bisect_left finds the first position:", """
from bisect import bisect_left


def {fn}(nums, target):
    i = bisect_left(nums, target)
    return i if nums[i] == target else -1
"""),  # IndexError when target is above every element
        ("Binary search for the leftmost position:", """
from bisect import bisect_left


def {fn}(nums, target):
    return bisect_left(nums, target)
"""),  # the insertion point, not -1, when absent
    ],
    3: [
        ("bisect gives both ends:", """
from bisect import bisect_left, bisect_right


def {fn}(nums, target):
    first = bisect_left(nums, target)
    if first == len(nums) or nums[first] != target:
        return (-1, -1)
    return (first, bisect_right(nums, target))
"""),  # one past the last occurrence
        ("Search for the first position, then check it:", """
from bisect import bisect_left, bisect_right


def {fn}(nums, target):
    first = bisect_left(nums, target)
    if nums[first] != target:
        return (-1, -1)
    return (first, bisect_right(nums, target) - 1)
"""),  # IndexError when target is above every element
    ],
}


def _first_last(nums: list[int], target: int) -> tuple[int, int]:
    if target not in nums:
        return (-1, -1)
    return (nums.index(target), len(nums) - 1 - nums[::-1].index(target))


@dataclass(frozen=True)
class SortedSearch:
    """Binary search with duplicates: the first index of a present target (1), -1 when it is absent, below or
    above every element or the list is empty (2), the (first, last) range of it (3)."""

    cluster: str = "algo"
    name: str = "sorted_search"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("find_first", "first_index", "search_first")) if difficulty < 3 else rng.choice(
            ("find_range", "search_range", "first_and_last"))
        lists = [sorted(rng.choices(range(0, 40), k=rng.randint(8, 25))) for _ in range(4)]
        t = rng.randint(5, 30)
        lists.append([t - 3] * 2 + [t] * 9 + [t + 4] * 2)  # a plain binary search lands mid-run
        pairs = [(nums, rng.choice(nums)) for nums in lists] + [(lists[-1], t)]
        if difficulty >= 2:
            nums = lists[0]
            absent = [x for x in range(nums[0] + 1, nums[-1]) if x not in nums]
            pairs += [(nums, nums[0] - 1), (nums, nums[-1] + 1), ([], t), ([t], t)]
            if absent:
                pairs.append((nums, rng.choice(absent)))
        cases: Cases = []
        for nums, target in pairs:
            first, last = _first_last(nums, target)
            cases.append(((nums, target), (first, last) if difficulty == 3 else first))
        example = lists[-1]
        if difficulty == 3:
            prompt = (f"I need `{fn}(nums, target)`: `nums` is sorted ascending and can have duplicates; return "
                      "(first_index, last_index) of `target`, or (-1, -1) if it isn't there. Use binary search, "
                      f"the lists are long. Example: `{fn}({example}, {t})` → `{_first_last(example, t)}`.")
        else:
            prompt = (f"Write a Python function `{fn}(nums, target)` that uses binary search on a sorted list (it "
                      "can contain duplicates) and returns the index of the first occurrence of `target`. "
                      f"Example: `{fn}({example}, {t})` returns {example.index(t)}.")
            if difficulty == 2:
                prompt += " Return -1 if target isn't in the list (the list may be empty)."
        ok = _SEARCH_OK[difficulty].format(fn=fn)
        bad = [code_reply(sentence, code.format(fn=fn)) for sentence, code in _SEARCH_BAD[difficulty]]
        if difficulty == 2:
            bad.append(code_reply("A standard binary search:", _SEARCH_BAD[1][0][1].format(fn=fn)))
        return draft(self, difficulty, prompt=prompt, check=function_tests(fn, cases),
                     reference=code_reply("Keep narrowing to the left half whenever the middle is not below the "
                                          "target:" if difficulty < 3 else
                                          "`bisect_left` and `bisect_right` give both ends in O(log n):", ok),
                     bad=bad)


# spiral order

_SPIRAL_OK = """
def {fn}(matrix):
    {grid}
    out = []
    if not grid:
        return out
    top, bottom, left, right = 0, len(grid) - 1, 0, len(grid[0]) - 1
    while top <= bottom and left <= right:
        out += [grid[top][c] for c in range(left, right + 1)]
        out += [grid[r][right] for r in range(top + 1, bottom + 1)]
        if top < bottom and left < right:
            out += [grid[bottom][c] for c in range(right - 1, left - 1, -1)]
            out += [grid[r][left] for r in range(bottom - 1, top, -1)]
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    return out
"""

_SPIRAL_UNGUARDED = """
def {fn}(matrix):
    {grid}
    out = []
    if not grid:
        return out
    top, bottom, left, right = 0, len(grid) - 1, 0, len(grid[0]) - 1
    while top <= bottom and left <= right:
        for c in range(left, right + 1):
            out.append(grid[top][c])
        top += 1
        for r in range(top, bottom + 1):
            out.append(grid[r][right])
        right -= 1
        for c in range(right, left - 1, -1):
            out.append(grid[bottom][c])
        bottom -= 1
        for r in range(bottom, top - 1, -1):
            out.append(grid[r][left])
        left += 1
    return out
"""

# Counter-clockwise from the top-left corner is the clockwise spiral of the transpose.
_GRID = {True: "grid = matrix", False: "grid = [list(col) for col in zip(*matrix)]"}


def _spiral(matrix: list[list[int]], clockwise: bool) -> list[int]:
    grid = matrix if clockwise else [list(col) for col in zip(*matrix, strict=True)]
    out: list[int] = []
    while grid:
        out += grid[0]
        grid = [list(row) for row in zip(*grid[1:], strict=True)][::-1]  # turn the rest a quarter left
    return out


@dataclass(frozen=True)
class SpiralOrder:
    """A matrix's elements in spiral order (clockwise or counter-clockwise from the top-left); square matrices at
    difficulty 1, rectangles at 2, one row, one column, 1x1 and empty at 3."""

    cluster: str = "algo"
    name: str = "spiral_order"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        clockwise = rng.random() < 0.5
        fn = rng.choice(("spiral_order", "spiral", "spiral_walk"))
        shapes = [(3, 3), (4, 4), (rng.randint(2, 5),) * 2]
        if difficulty >= 2:
            shapes += [(3, rng.randint(4, 6)), (rng.randint(4, 6), 3), (2, rng.randint(3, 5)), (4, 5)]
        if difficulty == 3:
            shapes += [(1, rng.randint(2, 5)), (rng.randint(2, 5), 1), (1, 1)]
        matrices = [[[rng.randint(0, 99) for _ in range(cols)] for _ in range(rows)] for rows, cols in shapes]
        if difficulty == 3:
            matrices.append([])
        cases: Cases = [((m,), _spiral(m, clockwise)) for m in matrices]
        way = ("clockwise: along the top row, down the right column, back along the bottom, up the left" if clockwise
               else "counter-clockwise: down the left column, along the bottom row, up the right, back along the top")
        kind = "a square matrix" if difficulty == 1 else "a matrix (not necessarily square)"
        example = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
        prompt = (f"Write `{fn}(matrix)` in Python: given {kind} as a list of rows, return its elements in spiral "
                  f"order starting at the top-left corner and going {way}, then inwards. For "
                  f"{example} that is {_spiral(example, clockwise)}.")
        if difficulty == 3:
            prompt += " An empty matrix gives []."
        ok = _SPIRAL_OK.format(fn=fn, grid=_GRID[clockwise])
        bad = [code_reply("Peel the layers one by one:", _SPIRAL_OK.format(fn=fn, grid=_GRID[not clockwise]))]
        if difficulty >= 2:
            bad.append(code_reply("Walk the four edges and shrink the bounds:",
                                  _SPIRAL_UNGUARDED.format(fn=fn, grid=_GRID[clockwise])))  # repeats a middle row
        return draft(self, difficulty, prompt=prompt, check=function_tests(fn, cases), bad=bad,
                     reference=code_reply("Walk the outer ring, then shrink the bounds and repeat; the guard stops a "
                                          "single middle row or column being walked twice:", ok))


# order-preserving dedupe

_DEDUPE = {
    1: ("dedupe", """
def {fn}(items):
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
"""),
    2: ("dedupe_names", """
def {fn}(names):
    seen = set()
    out = []
    for name in names:
        key = name.strip().casefold()
        if key not in seen:
            seen.add(key)
            out.append(name)
    return out
"""),
    3: ("dedupe_contacts", """
def {fn}(contacts):
    seen = set()
    out = []
    for contact in contacts:
        email = contact.get("email")
        if email is None:
            out.append(contact)
            continue
        key = email.strip().lower()
        if key not in seen:
            seen.add(key)
            out.append(contact)
    return out
"""),
}

_PEOPLE = ("Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Liam")


@dataclass(frozen=True)
class DedupeKeepOrder:
    """Drop duplicates keeping the first of each in order: integers (1), names compared case- and
    space-insensitively keeping the first spelling (2), contact records by normalised email, records without an
    email all kept (3)."""

    cluster: str = "algo"
    name: str = "dedupe_keep_order"

    def _ints(self, rng: random.Random) -> list[int]:
        pool = rng.sample(range(1, 60), rng.randint(4, 7))
        return [rng.choice(pool) for _ in range(rng.randint(8, 15))]

    def _names(self, rng: random.Random) -> list[str]:
        pool = rng.sample(_PEOPLE, 5)
        spell = (str.lower, str.upper, str.title, lambda s: f" {s}", lambda s: s)
        return [rng.choice(spell)(rng.choice(pool)) for _ in range(rng.randint(8, 12))]

    def _contacts(self, rng: random.Random) -> list[dict[str, Any]]:
        people = rng.sample(_PEOPLE, 4)
        out: list[dict[str, Any]] = []
        for _ in range(rng.randint(6, 9)):
            who = rng.choice(people)
            email = f"{who.lower()}@example.com"
            email = rng.choice((email, email.upper(), f" {email}", email.title()))
            out.append({"name": who, "email": email})
        return out

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn, code = _DEDUPE[difficulty]
        cases: Cases
        if difficulty == 1:
            a, b, c = rng.sample(range(1, 60), 3)
            low, mid, high = sorted((a, b, c))
            inputs: list[Any] = [self._ints(rng) for _ in range(3)] + [[high, low, high, mid, low], [], [low]]
            cases = [((x,), list(dict.fromkeys(x))) for x in inputs]
            prompt = (f"quick one: write `{fn}(items)` that removes duplicates from a list of ints but keeps the "
                      f"original order (first occurrence wins). `{fn}({inputs[3]})` → {cases[3][1]}")
            bad = [code_reply("A set drops the duplicates:", f"def {fn}(items):\n    return list(set(items))\n"),
                   code_reply("A dict keeps insertion order:",  # keeps the last occurrence's place
                              f"def {fn}(items):\n    return list(dict.fromkeys(reversed(items)))[::-1]\n")]
        elif difficulty == 2:
            x, y = rng.sample(_PEOPLE, 2)
            inputs = [self._names(rng) for _ in range(3)] + [[x.upper(), y, x.lower(), f" {y.lower()}", x]]
            cases = [((n,), self._first_by(n, lambda s: s.strip().casefold())) for n in inputs]
            prompt = (f"I have a list of names typed by hand, so 'ana', 'Ana' and ' ANA' are the same person. Write "
                      f"`{fn}(names)` that drops the repeats, keeps the order, and keeps the spelling of the first "
                      f"one seen. e.g. `{fn}({inputs[3]})` → {cases[3][1]}")
            bad = [code_reply("dict.fromkeys keeps the order:", f"def {fn}(names):\n    return list(dict.fromkeys("
                                                                "names))\n"),  # case-sensitive
                   code_reply("Normalise, then dedupe in order:",  # returns the normalised spelling
                              f"def {fn}(names):\n    return list(dict.fromkeys(n.strip().title() for n in names))\n")]
        else:
            who = rng.choice(_PEOPLE)
            fixed = [{"name": who, "email": None}, {"name": "?", "email": None}]
            inputs = [self._contacts(rng) for _ in range(3)]
            inputs.append(inputs[0][:3] + fixed + inputs[0][3:])
            cases = [((c,), self._first_by(c, lambda r: r["email"].strip().lower() if r["email"] else None,
                                           keep_none=True)) for c in inputs]
            prompt = (f"Write `{fn}(contacts)`: `contacts` is a list of dicts with 'name' and 'email' keys. Return "
                      "the list without duplicate contacts, where two contacts are duplicates when their emails "
                      "match ignoring case and surrounding spaces. Keep the first of each, in the original order. "
                      "Some contacts have email None: keep all of those.")
            bad = [code_reply("Track the emails seen:", f"""
def {fn}(contacts):
    seen = set()
    out = []
    for contact in contacts:
        key = (contact.get("email") or "").strip().lower()
        if key not in seen:
            seen.add(key)
            out.append(contact)
    return out
"""),  # the contacts without an email collapse into one
                   code_reply("Keep one contact per email:", f"""
def {fn}(contacts):
    by_email = {{}}
    for contact in contacts:
        by_email[(contact["email"] or "").strip().lower() or id(contact)] = contact
    return list(by_email.values())
""")]  # the last of each, not the first
        return draft(self, difficulty, prompt=prompt, check=function_tests(fn, cases), bad=bad,
                     reference=code_reply("Remember what has been seen and keep only the first of each:",
                                          code.format(fn=fn)))

    @staticmethod
    def _first_by(items: list[Any], key: Any, keep_none: bool = False) -> list[Any]:
        seen: set[Any] = set()
        out = []
        for item in items:
            k = key(item)
            if keep_none and k is None:
                out.append(item)
            elif k not in seen:
                seen.add(k)
                out.append(item)
        return out


TEMPLATES = (MergeIntervals(), SortedSearch(), SpiralOrder(), DedupeKeepOrder())
