"""The `wordproblems` suite (a dev set): grade-school arithmetic word problems drawn from seeded templates.

Twelve templates (purchases with change, speed and time, discount then tax, unit conversion, sharing with a
remainder, ages, work rates, averages, ratios, area, clock time, savings), four problems each, drawn with one
`random.Random(SEED)`: the same 48 problems on every load. Each answer is computed exactly (fractions) from the
drawn numbers and is an integer or a decimal with at most two places; a template redraws until it is. Every
prompt is the story plus one instruction to end with `Answer: <number>`, graded by the `answer_line` verifier
(`verifiers.has_answer_line` reports format compliance on its own). Clusters are the template names.

`REFERENCES` recomputes every answer from the drawn numbers with a second, independent formulation (decimal
arithmetic, brute-force search, datetime), one program per task; the tests run them in the sandbox.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ghost_agent.eval.task import EvalTask

SUITE = "wordproblems"
SEED = 20250611
PER_TEMPLATE = 4
INSTRUCTION = (
    "Solve it step by step, then end your reply with a line of the form `Answer: <number>` "
    "(the number only, no units)."
)

_NAMES = ("Ava", "Ben", "Chloe", "Diego", "Emma", "Farah", "Gus", "Hana", "Ivan", "Jia", "Kofi", "Lena")

Params = dict[str, Any]


class _Redraw(Exception):
    """The drawn numbers make a bad problem (an inexact answer, an impossible story): draw again."""


@dataclass(frozen=True)
class Problem:
    """One drawn problem: its template, the numbers (and names) drawn, the story and the exact answer."""

    template: str
    index: int
    params: Params
    story: str
    answer: Fraction

    @property
    def expected(self) -> int | float:
        """The answer as a JSON number: an int when whole, else a float (at most two decimal places)."""
        if self.answer.denominator == 1:
            return int(self.answer)
        return float(self.answer)


def _money(rng: random.Random, lo: float, hi: float, step_cents: int = 5) -> str:
    cents = rng.randrange(int(lo * 100) // step_cents, int(hi * 100) // step_cents + 1) * step_cents
    return f"{cents // 100}.{cents % 100:02d}"


def _two_names(rng: random.Random) -> tuple[str, str]:
    first, second = rng.sample(_NAMES, 2)
    return first, second


def _purchase_change(rng: random.Random) -> tuple[Params, str, Fraction]:
    name = rng.choice(_NAMES)
    item1, item2 = rng.choice((("notebooks", "pens"), ("apples", "muffins"), ("stamps", "envelopes"),
                               ("comics", "bookmarks")))
    p: Params = {"name": name, "q1": rng.randint(2, 6), "p1": _money(rng, 0.5, 6), "q2": rng.randint(2, 5),
                 "p2": _money(rng, 0.25, 4)}
    total = p["q1"] * Fraction(p["p1"]) + p["q2"] * Fraction(p["p2"])
    p["bill"] = next(b for b in (10, 20, 50, 100) if b > total)
    story = (f"{name} buys {p['q1']} {item1} at ${p['p1']} each and {p['q2']} {item2} at ${p['p2']} each, and "
             f"pays with a ${p['bill']} bill. How much change, in dollars, should {name} get back?")
    return p, story, p["bill"] - total


def _speed_time(rng: random.Random) -> tuple[Params, str, Fraction]:
    vehicle = rng.choice(("train", "bus", "delivery van", "ferry"))
    p: Params = {"v1": rng.randrange(40, 95, 5), "h1": rng.randint(1, 3), "v2": rng.randrange(20, 84, 4),
                 "m": rng.choice((15, 30, 45))}
    hours = "1 hour" if p["h1"] == 1 else f"{p['h1']} hours"
    story = (f"A {vehicle} travels at {p['v1']} km/h for {hours}, then at {p['v2']} km/h for {p['m']} "
             "minutes. How many kilometres does it travel in total?")
    return p, story, p["v1"] * p["h1"] + Fraction(p["v2"] * p["m"], 60)


def _discount_tax(rng: random.Random) -> tuple[Params, str, Fraction]:
    item = rng.choice(("jacket", "lamp", "backpack", "pair of boots"))
    p: Params = {"price": rng.randrange(20, 205, 5), "d": rng.choice((10, 15, 20, 25, 30, 40, 50)),
                 "t": rng.choice((5, 8, 10))}
    story = (f"A {item} is priced at ${p['price']}. It is on sale for {p['d']}% off, and then {p['t']}% sales tax "
             "is added to the sale price. What is the final price in dollars?")
    return p, story, p["price"] * Fraction(100 - p["d"], 100) * Fraction(100 + p["t"], 100)


def _unit_conversion(rng: random.Random) -> tuple[Params, str, Fraction]:
    thing = rng.choice(("bookshelf", "rug", "desk", "surfboard"))
    p: Params = {"ft": rng.randint(2, 9), "inch": rng.randint(1, 11)}
    story = (f"A {thing} is {p['ft']} feet {p['inch']} inches long. Using 1 foot = 12 inches and 1 inch = 2.54 cm, "
             "how long is it in centimetres?")
    return p, story, (12 * p["ft"] + p["inch"]) * Fraction(254, 100)


def _sharing_remainder(rng: random.Random) -> tuple[Params, str, Fraction]:
    p: Params = {"n": rng.randint(23, 150), "k": rng.randint(4, 15), "ask": rng.choice(("vans", "last"))}
    if p["n"] % p["k"] == 0:
        raise _Redraw
    story = f"{p['n']} students go on a trip in vans that each seat {p['k']} students. "
    if p["ask"] == "vans":
        return p, story + "How many vans are needed so that every student has a seat?", Fraction(-(-p["n"] // p["k"]))
    story += "Every van is filled completely before the next one is used. How many students ride in the last van?"
    return p, story, Fraction(p["n"] % p["k"])


def _ages(rng: random.Random) -> tuple[Params, str, Fraction]:
    older, younger = _two_names(rng)
    p: Params = {"x": rng.randint(8, 30)}
    p["y"] = rng.randint(1, p["x"] - 2)
    story = (f"{older} is {p['x']} years older than {younger}. In {p['y']} years, {older} will be exactly twice as "
             f"old as {younger}. How old is {older} now?")
    # older now = younger now + x, and older + y = 2 (younger + y)  =>  younger = x - y
    return p, story, Fraction(2 * p["x"] - p["y"])


def _work_rates(rng: random.Random) -> tuple[Params, str, Fraction]:
    first, second = _two_names(rng)
    job = rng.choice(("paint a fence", "weed a garden", "clean the garage", "stack the firewood"))
    a, b = sorted(rng.sample(range(2, 21), 2))
    p: Params = {"a": a, "b": b}
    story = (f"{first} can {job} alone in {a} hours, and {second} can do the same job alone in {b} hours. "
             "Working together at those rates, how many hours will the job take them?")
    return p, story, Fraction(a * b, a + b)


def _averages(rng: random.Random) -> tuple[Params, str, Fraction]:
    name = rng.choice(_NAMES)
    p: Params = {"scores": [rng.randint(60, 100) for _ in range(4)], "avg": rng.randint(70, 95)}
    needed = 5 * p["avg"] - sum(p["scores"])
    if not 40 <= needed <= 100:
        raise _Redraw
    s1, s2, s3, s4 = p["scores"]
    story = (f"{name} scored {s1}, {s2}, {s3} and {s4} on four tests. What score does {name} need on the fifth "
             f"test to average exactly {p['avg']} over all five tests?")
    return p, story, Fraction(needed)


def _ratios(rng: random.Random) -> tuple[Params, str, Fraction]:
    r, b = sorted(rng.sample(range(2, 10), 2))
    if math.gcd(r, b) != 1:
        raise _Redraw
    p: Params = {"r": r, "b": b, "total": (r + b) * rng.randint(3, 12)}
    story = (f"A jar holds red and blue marbles in the ratio {r}:{b} (red to blue). There are {p['total']} marbles "
             "in all. How many more blue marbles than red marbles are there?")
    return p, story, Fraction(p["total"] * (b - r), r + b)


def _area_perimeter(rng: random.Random) -> tuple[Params, str, Fraction]:
    p: Params = {"l": rng.randint(6, 30), "path": rng.choice(("0.5", "1", "1.5", "2"))}
    p["w"] = rng.randint(4, p["l"])
    path = Fraction(p["path"])
    story = (f"A rectangular garden is {p['l']} m long and {p['w']} m wide. A path {p['path']} m wide runs all the "
             "way around the outside of the garden. What is the area of the path in square metres?")
    return p, story, 2 * path * (p["l"] + p["w"]) + 4 * path * path


def _time_arithmetic(rng: random.Random) -> tuple[Params, str, Fraction]:
    name = rng.choice(_NAMES)
    start = rng.randrange(6 * 60, 10 * 60 + 1, 5)
    end = start + rng.randrange(6 * 60, 10 * 60 + 1, 5)
    p: Params = {"start": f"{start // 60}:{start % 60:02d}", "end": f"{end // 60}:{end % 60:02d}",
                 "b": rng.choice((20, 30, 45, 60))}
    story = (f"{name} starts work at {p['start']} and leaves at {p['end']} (24-hour clock), taking a {p['b']}-minute "
             f"lunch break. How many hours did {name} actually work?")
    return p, story, Fraction(end - start - p["b"], 60)


def _savings_weeks(rng: random.Random) -> tuple[Params, str, Fraction]:
    name = rng.choice(_NAMES)
    item = rng.choice(("bike", "guitar", "tablet", "telescope"))
    p: Params = {"s": rng.randrange(0, 65, 5), "w": rng.randint(5, 25), "c": rng.randrange(80, 410, 10)}
    if (p["c"] - p["s"]) % p["w"] == 0:
        raise _Redraw
    story = (f"{name} has ${p['s']} saved and adds ${p['w']} every week. A {item} costs ${p['c']}. After how many "
             f"weeks will {name} first have enough money to buy the {item}?")
    return p, story, Fraction(math.ceil(Fraction(p["c"] - p["s"], p["w"])))


TEMPLATES: dict[str, Callable[[random.Random], tuple[Params, str, Fraction]]] = {
    "purchase_change": _purchase_change,
    "speed_time": _speed_time,
    "discount_tax": _discount_tax,
    "unit_conversion": _unit_conversion,
    "sharing_remainder": _sharing_remainder,
    "ages": _ages,
    "work_rates": _work_rates,
    "averages": _averages,
    "ratios": _ratios,
    "area_perimeter": _area_perimeter,
    "time_arithmetic": _time_arithmetic,
    "savings_weeks": _savings_weeks,
}
CLUSTERS = tuple(TEMPLATES)


def is_exact(value: Fraction) -> bool:
    """Whether `value` is positive and written exactly with at most two decimal places."""
    return value > 0 and (value * 100).denominator == 1


def _draw(name: str, rng: random.Random) -> tuple[Params, str, Fraction]:
    for _ in range(1000):
        try:
            params, story, answer = TEMPLATES[name](rng)
        except _Redraw:
            continue
        if is_exact(answer):
            return params, story, answer
    raise RuntimeError(f"template {name} drew no exact problem in 1000 tries")  # a template bug


@functools.cache
def problems() -> tuple[Problem, ...]:
    """Every problem, template by template (PER_TEMPLATE each), from one Random(SEED): the same on every call."""
    rng = random.Random(SEED)
    out: list[Problem] = []
    for name in TEMPLATES:
        for index in range(1, PER_TEMPLATE + 1):
            params, story, answer = _draw(name, rng)
            out.append(Problem(name, index, params, story, answer))
    return tuple(out)


def tasks() -> list[EvalTask]:
    """Every problem as a task with id "wordproblems/<template>/<n>", graded by `answer_line`."""
    return [
        EvalTask(id=f"{SUITE}/{p.template}/{p.index}", suite=SUITE, cluster=p.template,
                 prompt=f"{p.story}\n\n{INSTRUCTION}", verifier="answer_line", expected=p.expected)
        for p in problems()
    ]


# --- reference programs: the same answers, computed another way ----------------------------------------------

_REFERENCE_HEADER = """\
import datetime, math
from decimal import Decimal as D
from fractions import Fraction as F
def out(x):
    x = D(x.numerator) / D(x.denominator) if isinstance(x, F) else D(x)
    print(int(x) if x == x.to_integral_value() else x.normalize())
"""

_FORMULAS = {
    "purchase_change": "D(p['bill']) - p['q1'] * D(p['p1']) - p['q2'] * D(p['p2'])",
    "speed_time": "p['v1'] * p['h1'] + D(p['v2']) * p['m'] / 60",
    "discount_tax": "D(p['price']) * (1 - D(p['d']) / 100) * (1 + D(p['t']) / 100)",
    "unit_conversion": "(p['ft'] * 12 + p['inch']) * D('2.54')",
    "sharing_remainder": "math.ceil(D(p['n']) / p['k']) if p['ask'] == 'vans' "
                         "else p['n'] - p['k'] * (p['n'] // p['k'])",
    "ages": "next(a for a in range(1, 500) if a + p['y'] == 2 * (a - p['x'] + p['y']))",
    "work_rates": "1 / (F(1, p['a']) + F(1, p['b']))",
    "averages": "next(s for s in range(0, 101) if sum(p['scores']) + s == 5 * p['avg'])",
    "ratios": "p['total'] // (p['r'] + p['b']) * p['b'] - p['total'] // (p['r'] + p['b']) * p['r']",
    "area_perimeter": "(p['l'] + 2 * D(p['path'])) * (p['w'] + 2 * D(p['path'])) - p['l'] * p['w']",
    "time_arithmetic": "(D((datetime.datetime.strptime(p['end'], '%H:%M') - datetime.datetime.strptime("
                       "p['start'], '%H:%M')).seconds // 60) - p['b']) / 60",
    "savings_weeks": "next(n for n in range(1, 1000) if p['s'] + n * p['w'] >= p['c'])",
}

REFERENCES: dict[str, tuple[str, str]] = {
    f"{SUITE}/{p.template}/{p.index}": (
        "python", f"{_REFERENCE_HEADER}p = {p.params!r}\nout({_FORMULAS[p.template]})\n"
    )
    for p in problems()
}


__all__ = ["CLUSTERS", "INSTRUCTION", "PER_TEMPLATE", "Problem", "REFERENCES", "SEED", "SUITE", "TEMPLATES",
           "is_exact", "problems", "tasks"]
