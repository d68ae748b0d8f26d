"""python_general, classes: a dataclass that validates its fields, a small stateful class with methods; graded by
hidden tests that build instances and call the methods."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ghost_agent.selfplay.checks import PythonTests
from ghost_agent.selfplay.task import Task, draft
from ghost_agent.selfplay.templates._function_tests import code_reply


@dataclass(frozen=True)
class _Rule:
    """One validated field: its annotation, the rule in words, the condition that rejects a value (and a
    plausible wrong version of it), values that must pass and values that must fail."""

    field: str
    annotation: str
    words: str
    rejects: str
    wrong_rejects: str
    good: tuple[Any, ...]
    bad: tuple[Any, ...]


@dataclass(frozen=True)
class _Entity:
    cls: str
    rules: tuple[_Rule, _Rule, _Rule]
    default: Any  # the third field's default from difficulty 2
    derived: tuple[str, str, str]  # (property, its formula on self, in words)
    value: Callable[[dict[str, Any]], Any]  # the property's value for field values


def _entities(rng: random.Random) -> tuple[_Entity, ...]:
    """The entities a task can ask for, with bounds drawn from `rng`."""
    low = rng.choice((1, 2, 5, 10))
    young, old = rng.choice((13, 16, 18)), rng.choice((99, 120))
    short, long = rng.choice((3, 4)), rng.choice((12, 16, 20))
    most = rng.choice((14, 21, 30, 90))
    return (
        _Entity("OrderLine", (
            _Rule("quantity", "int", f"must be at least {low}", f"self.quantity < {low}",
                  f"self.quantity < {low - 1}", (low, low + 6), (low - 1, -2)),
            _Rule("sku", "str", "must not be blank", "not self.sku.strip()", "not self.sku", ("AB-1", "x"),
                  ("", "   ")),
            _Rule("unit_price", "float", "can't be negative", "self.unit_price < 0", "self.unit_price <= 0",
                  (0.0, 9.99), (-0.01, -5.0)),
        ), 0.0, ("total", "self.quantity * self.unit_price", "quantity times unit_price"),
            lambda f: f["quantity"] * f["unit_price"]),
        _Entity("Member", (
            _Rule("age", "int", f"must be between {young} and {old} inclusive", f"not {young} <= self.age <= {old}",
                  f"not {young} < self.age <= {old}", (young, old, 40), (young - 1, old + 1)),
            _Rule("email", "str", "must contain exactly one '@' with text on both sides",
                  "self.email.count('@') != 1 or self.email.startswith('@') or self.email.endswith('@')",
                  "'@' not in self.email", ("a@b.io",), ("ab.io", "a@@b.io", "@b.io", "a@")),
            _Rule("username", "str", f"must be {short} to {long} characters",
                  f"not {short} <= len(self.username) <= {long}", f"not {short} <= len(self.username) < {long}",
                  ("b" * short, "x" * long), ("b" * (short - 1), "x" * (long + 1))),
        ), "guest", ("domain", "self.email.split('@')[1]", "the part of the email after the '@'"),
            lambda f: f["email"].split("@")[1]),
        _Entity("Booking", (
            _Rule("nights", "int", f"must be between 1 and {most}", f"not 1 <= self.nights <= {most}",
                  f"not 1 <= self.nights < {most}", (1, most), (0, most + 1)),
            _Rule("guest", "str", "must not be blank", "not self.guest.strip()", "not self.guest", ("Ana",),
                  ("", "  ")),
            _Rule("rate", "float", "must be positive", "self.rate <= 0", "self.rate < 0", (0.5, 120.0),
                  (0.0, -1.0)),
        ), 100.0, ("cost", "self.nights * self.rate", "nights times rate"), lambda f: f["nights"] * f["rate"]),
    )


_VALIDATION_TESTS = """
import dataclasses as _dc

_base = {base!r}
for _field, _value in {good!r}:
    {cls}(**{{**_base, _field: _value}})
for _field, _value in {bad!r}:
    try:
        {cls}(**{{**_base, _field: _value}})
    except ValueError:
        pass
    else:
        raise AssertionError(f"{cls} accepted {{_field}}={{_value!r}}")
{extra}"""


def _validation_code(entity: _Entity, difficulty: int, *, wrong: int | None = None, raise_with: str = "ValueError",
                     frozen: bool | None = None) -> str:
    rules = entity.rules[:difficulty]
    frozen = difficulty == 3 if frozen is None else frozen
    lines = ["from dataclasses import dataclass", "", "", "@dataclass(frozen=True)" if frozen else "@dataclass",
             f"class {entity.cls}:"]
    for i, rule in enumerate(entity.rules):
        default = f" = {entity.default!r}" if i == 2 and difficulty >= 2 else ""
        lines.append(f"    {rule.field}: {rule.annotation}{default}")
    lines += ["", "    def __post_init__(self):"]
    for i, rule in enumerate(rules):
        condition = rule.wrong_rejects if i == wrong else rule.rejects
        if raise_with == "assert":
            lines.append(f"        assert not ({condition}), {rule.field + ' ' + rule.words!r}")
        else:
            lines += [f"        if {condition}:", f"            raise ValueError({rule.field + ' ' + rule.words!r})"]
    if difficulty == 3:
        name, formula, _ = entity.derived
        lines += ["", "    @property", f"    def {name}(self):", f"        return {formula}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ValidatedDataclass:
    """A dataclass whose `__post_init__` raises ValueError on bad values: one rule (1), two rules and a default
    (2), three rules, frozen and a derived property (3); boundaries are tested on both sides."""

    cluster: str = "python_general"
    name: str = "validated_dataclass"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        entity = rng.choice(_entities(rng))
        rules = entity.rules[:difficulty]
        base = {rule.field: rng.choice(rule.good) for rule in entity.rules}
        good = [(rule.field, v) for rule in rules for v in rule.good]
        bad = [(rule.field, v) for rule in rules for v in rule.bad]
        extra = ""
        if difficulty >= 2:
            third = entity.rules[2].field
            extra += (f"assert {entity.cls}(**{{k: v for k, v in _base.items() if k != {third!r}}}).{third} == "
                      f"{entity.default!r}\n")
        if difficulty == 3:
            name = entity.derived[0]
            extra += (f"assert {entity.cls}(**_base).{name} == {entity.value(base)!r}\n"
                      f"_obj = {entity.cls}(**_base)\ntry:\n    _obj.{entity.rules[0].field} = _obj."
                      f"{entity.rules[0].field}\nexcept _dc.FrozenInstanceError:\n    pass\nelse:\n"
                      f"    raise AssertionError('{entity.cls} should be frozen')\n")
        tests = _VALIDATION_TESTS.format(base=base, good=good, bad=bad, cls=entity.cls, extra=extra)
        fields = ", ".join(f"`{r.field}` ({r.annotation})" for r in entity.rules)
        checks = "; ".join(f"`{r.field}` {r.words}" for r in rules)
        prompt = (f"Write a dataclass `{entity.cls}` with fields {fields}, in that order. It should raise "
                  f"ValueError when created with bad values: {checks}.")
        if difficulty >= 2:
            prompt += f" `{entity.rules[2].field}` defaults to {entity.default!r}."
        if difficulty == 3:
            name, _, words = entity.derived
            prompt += f" Make it immutable, and give it a `{name}` property: {words}."
        wrongs = [code_reply("A dataclass with the checks in `__post_init__`:",
                             _validation_code(entity, difficulty, wrong=0))]  # the boundary on the wrong side
        wrongs.append(code_reply("Validate in `__post_init__`:",
                                 _validation_code(entity, difficulty, raise_with="assert")))  # AssertionError
        if difficulty == 3:
            wrongs.append(code_reply("A dataclass with the checks in `__post_init__`:",
                                     _validation_code(entity, difficulty, frozen=False)))  # not immutable
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests=tests), bad=wrongs,
                     reference=code_reply("Validate in `__post_init__`, which the dataclass calls after `__init__`:",
                                          _validation_code(entity, difficulty)))


# a small stateful class

_INVENTORY_OK = """
class {cls}:
    def __init__(self):
        self._stock = {{}}

    def add(self, name, qty=1):
        self._stock[name] = self._stock.get(name, 0) + qty

    def remove(self, name, qty=1):
        have = self._stock.get(name, 0)
        {guard}
        left = have - qty
        if left:
            self._stock[name] = left
        else:
            self._stock.pop(name, None)

    def count(self, name):
        return self._stock.get(name, 0)

    def items(self):
        return dict(sorted(self._stock.items()))
{low}"""

_GUARD = """if qty > have:
            raise ValueError(f"only {have} {name} in stock")"""

_LOW = """
    def low_stock(self, threshold):
        low = [(n, name) for name, n in self._stock.items() if n < threshold]
        return [name for n, name in sorted(low)]
"""

_ITEMS = ("apple", "rice", "soap", "pasta", "tea", "beans", "flour", "salt", "eggs", "milk", "oats", "honey")


@dataclass(frozen=True)
class StockClass:
    """A small inventory class: add / remove / count (unknown names count 0) and items() (1); removing more than
    is held raises ValueError and changes nothing, an item at 0 leaves items() (2); low_stock(threshold) sorted
    by count then name (3). Tested by a replayed sequence of calls."""

    cluster: str = "python_general"
    name: str = "stock_class"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        cls = rng.choice(("Inventory", "Pantry", "Stock"))
        names = rng.sample(_ITEMS, 6)
        stock: Counter[str] = Counter()
        lines = [f"inv = {cls}()"]

        def expect(expr: str, value: Any) -> None:
            lines.append(f"assert {expr} == {value!r}, f\"{expr} gave {{{expr}!r}}, expected {value!r}\"")

        for step in range(rng.randint(10, 16)):
            name = rng.choice(names)
            if stock[name] and rng.random() < 0.4:
                qty = rng.randint(1, stock[name])
                lines.append(f"inv.remove({name!r}, {qty})")
                stock[name] -= qty
            else:
                qty = rng.randint(1, 9)
                lines.append(f"inv.add({name!r}, {qty})" if qty > 1 or rng.random() < 0.5 else f"inv.add({name!r})")
                stock[name] += qty
            if step % 3 == 2:
                expect(f"inv.count({name!r})", stock[name])
        held = [n for n in names if stock[n]]
        if not held:
            lines.append(f"inv.add({names[0]!r}, 3)")
            stock[names[0]] += 3
            held = [names[0]]
        twice = rng.choice(names)
        lines += [f"inv.add({twice!r}, 2)", f"inv.add({twice!r}, 2)"]  # adding again accumulates
        stock[twice] += 4
        unknown = rng.choice([n for n in _ITEMS if n not in names])
        expect(f"inv.count({unknown!r})", 0)
        emptied = rng.choice(held)
        lines.append(f"inv.remove({emptied!r}, {stock[emptied]})")
        stock[emptied] = 0
        if difficulty >= 2:
            some = rng.choice([n for n in names if n != emptied])
            lines.append(f"inv.add({some!r}, 2)")
            stock[some] += 2
            lines += [f"try:\n    inv.remove({some!r}, {stock[some] + 1})\nexcept ValueError:\n    pass\nelse:\n"
                      f"    raise AssertionError('removing more than is held must raise ValueError')"]
            expect(f"inv.count({some!r})", stock[some])
        if difficulty == 3:  # fewest first is not alphabetical here
            first, second = sorted(rng.sample([n for n in _ITEMS if n not in names and n != unknown], 2))
            lines += [f"inv.add({second!r}, 1)", f"inv.add({first!r}, 2)"]
            stock[second] += 1
            stock[first] += 2
        # at difficulty 1 an item removed down to 0 stays listed
        expect("inv.items()", {n: c for n, c in sorted(stock.items()) if c or difficulty == 1})
        if difficulty == 3:
            for threshold in (3, 6, 100):
                low = sorted((c, n) for n, c in stock.items() if c and c < threshold)
                expect(f"inv.low_stock({threshold})", [n for _, n in low])
        a, b = rng.sample(names, 2)
        n = rng.randint(3, 9)
        prompt = (f"Can you write a small `{cls}` class for my shop script? `add(name, qty=1)` adds stock, "
                  f"`remove(name, qty=1)` takes it away, `count(name)` says how many are left (0 for anything "
                  f"never added), and `items()` returns a dict of name -> count, sorted by name. E.g. after "
                  f"`add({a!r}, {n})`, `add({b!r})`, `remove({a!r}, 2)`, `count({a!r})` is {n - 2} and `items()` is "
                  f"{ {b: 1, a: n - 2} if b < a else {a: n - 2, b: 1} }.")
        if difficulty == 1:
            prompt += " An item removed down to 0 stays in items() with 0. You can assume remove never takes more " \
                      "than is there."
        else:
            prompt += (" Removing more than is there should raise ValueError and change nothing; an item that "
                       "reaches 0 disappears from items().")
        if difficulty == 3:
            prompt += (" Also `low_stock(threshold)`: the names with fewer than `threshold` in stock (but more "
                       "than 0), fewest first, ties by name.")
        ok = self._code(cls, difficulty)
        bad = [code_reply("A dict does the bookkeeping:", ok.replace(
            "self._stock[name] = self._stock.get(name, 0) + qty", "self._stock[name] = qty"))]  # add overwrites
        bad.append(code_reply("A dict does the bookkeeping:", ok.replace(
            "return self._stock.get(name, 0)", "return self._stock[name]")))  # KeyError for unknown names
        if difficulty >= 2:
            bad.append(code_reply("A dict does the bookkeeping:", ok.replace(_GUARD, "pass")))  # goes negative
        if difficulty == 3:
            bad.append(code_reply("A dict does the bookkeeping:", ok.replace(
                "return [name for n, name in sorted(low)]", "return sorted(name for n, name in low)")))  # by name
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests="\n".join(lines) + "\n"), bad=bad,
                     reference=code_reply("A dict of name -> count does the bookkeeping:", ok))

    @staticmethod
    def _code(cls: str, difficulty: int) -> str:
        code = _INVENTORY_OK.format(cls=cls, guard=_GUARD if difficulty >= 2 else "pass",
                                    low=_LOW if difficulty == 3 else "")
        if difficulty == 1:  # an item at 0 stays listed
            code = code.replace("        if left:\n            self._stock[name] = left\n        else:\n"
                                "            self._stock.pop(name, None)\n", "        self._stock[name] = left\n")
            code = code.replace("        pass\n", "")
        return code


TEMPLATES = (ValidatedDataclass(), StockClass())
