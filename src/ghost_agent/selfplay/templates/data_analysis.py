"""data_analysis: questions about tabular data, given inline or as a file in the workspace."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ghost_agent.selfplay.checks import NumberAnswer
from ghost_agent.selfplay.task import Task, draft

REGIONS = ("North", "South", "East", "West", "Central")
PRODUCTS = ("widget", "gadget", "gizmo", "doohickey", "sprocket", "flange", "bracket")
NAMES = ("Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Liam")


def _money(rng: random.Random, difficulty: int) -> float:
    return round(rng.uniform(10, 500), 2) if difficulty >= 2 else float(rng.randint(10, 500))


def _fmt(value: float) -> str:
    return f"{value:.2f}" if value != int(value) else str(int(value))


@dataclass(frozen=True)
class InlineCsvTotal:
    """A CSV pasted into the message; the total of one column for rows matching a filter (the shape the
    issue saw fail: the data sits in the prompt, not in a file)."""

    cluster: str = "data_analysis"
    name: str = "inline_csv_total"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        n = (6, 14, 28)[difficulty - 1]
        region = rng.choice(REGIONS)
        rows = []
        for _ in range(n):
            rows.append((rng.choice(REGIONS), rng.choice(PRODUCTS), rng.randint(1, 9), _money(rng, difficulty)))
        if not any(r[0] == region for r in rows):
            rows[rng.randrange(n)] = (region, rng.choice(PRODUCTS), rng.randint(1, 9), _money(rng, difficulty))
        product = None
        if difficulty == 3:  # two conditions
            product = rng.choice([r[1] for r in rows if r[0] == region])
        csv = "region,product,units,revenue\n" + "\n".join(f"{r[0]},{r[1]},{r[2]},{_fmt(r[3])}" for r in rows)
        picked = [r for r in rows if r[0] == region and (product is None or r[1] == product)]
        total = round(sum(r[3] for r in picked), 2)
        wrong_all = round(sum(r[3] for r in rows), 2)
        wrong_units = sum(r[2] for r in picked)
        what = f"the {region} region" + (f" for {product}s" if product else "")
        prompt = (f"here is a CSV of last month's sales:\n\n{csv}\n\nWhat is the total revenue for {what}? "
                  "Reply with just the number.")
        bad = [_fmt(wrong_all)] if wrong_all != total else []
        if wrong_units != total:
            bad.append(f"Answer: {wrong_units}")
        bad.append(_fmt(round(total + picked[0][3], 2)))  # one row counted twice
        return draft(self, difficulty, prompt=prompt, check=NumberAnswer(total, rel_tol=1e-9, abs_tol=0.005),
                     reference=_fmt(total), bad=bad)


@dataclass(frozen=True)
class CsvFileAverage:
    """A CSV file in the workspace; the average of one column per customer group, rounded."""

    cluster: str = "data_analysis"
    name: str = "csv_file_average"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        n = (10, 40, 120)[difficulty - 1]
        customers = rng.sample(NAMES, 4)
        who = rng.choice(customers)
        rows = [(i + 1, rng.choice(customers), _money(rng, difficulty)) for i in range(n)]
        for i in (0, 1):  # at least two orders, so the sum is not the average
            rows[i] = (i + 1, who, rows[i][2])
        text = "order_id,customer,amount\n" + "\n".join(f"{r[0]},{r[1]},{_fmt(r[2])}" for r in rows) + "\n"
        mine = [r[2] for r in rows if r[1] == who]
        average = round(sum(mine) / len(mine), 2)
        overall = round(sum(r[2] for r in rows) / n, 2)
        prompt = (f"orders.csv in the workspace has one row per order. What is {who}'s average order amount? "
                  "Round to 2 decimal places.")
        reference = (
            "```python\nimport csv\nrows = list(csv.DictReader(open('orders.csv')))\n"
            f"mine = [float(r['amount']) for r in rows if r['customer'] == {who!r}]\n"
            "print(round(sum(mine) / len(mine), 2))\n```\n\n"
            f"Answer: {average:.2f}"
        )
        bad = [f"Answer: {overall:.2f}"] if overall != average else []
        bad.append(f"Answer: {round(sum(mine), 2):.2f}")  # the sum, not the average
        return draft(self, difficulty, prompt=prompt, check=NumberAnswer(average, rel_tol=0, abs_tol=0.006),
                     reference=reference, bad=bad, files={"orders.csv": text})


TEMPLATES = (InlineCsvTotal(), CsvFileAverage())
