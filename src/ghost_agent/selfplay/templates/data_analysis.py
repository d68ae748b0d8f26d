"""data_analysis: questions about tabular data, given inline or as a file in the workspace."""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ghost_agent.selfplay.checks import NumberAnswer, TextAnswer
from ghost_agent.selfplay.task import Task, draft
from ghost_agent.selfplay.templates.drawing import until

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




CATEGORIES = ("travel", "meals", "software", "hardware", "training", "office")


@dataclass(frozen=True)
class JsonTopCategory:
    """A JSON file of expenses; which category has the highest total (a group-by max). The usual slips: the
    category with the most entries, the one with the single biggest expense (the data always has a category of
    each kind); d2 nests the expenses under trips, d3 also has refunded expenses that must not count."""

    cluster: str = "data_analysis"
    name: str = "json_top_category"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return until(lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        path = rng.choice(("expenses.json", "spending.json", "team_expenses.json"))
        month = rng.choice(("January", "February", "March", "April", "May", "June", "July", "August", "September",
                            "October", "November", "December"))
        cats = rng.sample(CATEGORIES, (3, 4, 5)[difficulty - 1])
        steady, many, outlier = cats[:3]  # the answer; the most entries; the single biggest expense

        def cents(low: float, high: float) -> float:
            return round(rng.uniform(low, high), 2) if difficulty >= 2 else float(rng.randint(int(low), int(high)))

        k = rng.randint(3, 4 + difficulty)
        picks = [(steady, cents(150, 300)) for _ in range(k)] + [(many, cents(10, 60)) for _ in range(k + 3)]
        picks += [(outlier, cents(500, 700)), (outlier, cents(10, 80))]
        picks += [(rng.choice(cats[3:] or cats), cents(10, 120)) for _ in range(difficulty * 3)]
        items = []
        for cat, amount in picks:
            item: dict[str, Any] = {"category": cat, "amount": amount}
            if difficulty == 3:
                item["refunded"] = cat == cats[-1] and rng.random() < 0.5
            items.append(item)
        if difficulty == 3:  # a refunded purchase big enough to win if it counted
            items.append({"category": cats[-1], "amount": cents(800, 1000), "refunded": True})
        rng.shuffle(items)
        kept = [i for i in items if not i.get("refunded")]

        def top(rows: list[dict[str, Any]], measure: Callable[[list[float]], float]) -> str | None:
            by: dict[str, list[float]] = {}
            for r in rows:
                by.setdefault(r["category"], []).append(r["amount"])
            ranked = sorted(((measure(v), c) for c, v in by.items()), reverse=True)
            return ranked[0][1] if len(ranked) > 1 and ranked[0][0] != ranked[1][0] else None

        answer = top(kept, sum)
        wrong = [top(kept, len), top(kept, max)] + ([top(items, sum)] if difficulty == 3 else [])
        bad = [w for w in dict.fromkeys(wrong) if w != answer]  # a slip that lands on the answer is no slip
        if answer is None or None in wrong or not bad:
            return None
        if difficulty == 1:
            data: Any = items
            shape = "a list of expenses"
            loop = "rows = data"
        else:
            trips: dict[str, list[dict[str, Any]]] = {n: [] for n in rng.sample(NAMES, 3)}
            for item in items:
                trips[rng.choice(sorted(trips))].append(item)
            data = {"trips": [{"traveller": n, "expenses": e} for n, e in trips.items()]}
            shape = "our trips, each with its expenses"
            loop = "rows = [e for trip in data['trips'] for e in trip['expenses']]"
        note = " Refunded expenses don't count." if difficulty == 3 else ""
        prompt = (f"{path} in the workspace has {shape} for {month}. Which category did we spend the most on in total?"
                  f"{note} Just the category name, please.")
        add = "totals[r['category']] += r['amount']\n"
        body = f"    if not r.get('refunded'):\n        {add}" if difficulty == 3 else f"    {add}"
        reference = (
            f"```python\nimport json\nfrom collections import Counter\n\ndata = json.load(open({path!r}))\n"
            f"{loop}\ntotals = Counter()\nfor r in rows:\n{body}print(totals.most_common(1))\n```\n\n"
            f"Answer: {answer}"
        )
        return draft(self, difficulty, prompt=prompt, check=TextAnswer(answer), reference=reference,
                     bad=[str(w) for w in bad],
                     files={path: json.dumps(data, indent=2) + "\n"})


@dataclass(frozen=True)
class PercentChange:
    """Quarterly figures pasted as a table; the percent change from one quarter to the next, for one product
    (d1), for the total (d2) or for one region's total (d3). Slips: dividing by the new value, the absolute
    change, the change the wrong way round."""

    cluster: str = "data_analysis"
    name: str = "percent_change"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return until(lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        q = rng.randint(1, 3)
        old, new = f"Q{q}", f"Q{q + 1}"
        rows = []
        for p in rng.sample(PRODUCTS, 5):
            before = rng.randint(50, 900) * 10
            rows.append((p, rng.choice(REGIONS[:3]), before, round(before * rng.uniform(0.6, 1.6) / 10) * 10))
        product, region = rows[0][0], rows[0][1]
        picked = {1: rows[:1], 2: rows, 3: [r for r in rows if r[1] == region]}[difficulty]
        a, b = sum(r[2] for r in picked), sum(r[3] for r in picked)
        if a == b or (difficulty == 3 and len(picked) < 2):
            return None
        answer = (b - a) / a * 100  # graded to within rounding to one decimal, either way at a tie
        wrong = [(b - a) / b * 100, float(b - a), -answer]
        if difficulty >= 2:
            wrong.append(sum((r[3] - r[2]) / r[2] * 100 for r in picked) / len(picked))  # the mean of the %s
        if any(abs(w - answer) < 0.2 for w in wrong):
            return None
        table = f"| product | region | {old} | {new} |\n|---|---|---|---|\n" + "\n".join(
            f"| {p} | {r} | {x} | {y} |" for p, r, x, y in rows)
        what = {1: f"{product} revenue", 2: "total revenue (all products)", 3: f"the {region} region's total revenue"}
        prompt = (f"Revenue by product, {old} vs {new}:\n\n{table}\n\nBy what percent did {what[difficulty]} change "
                  f"from {old} to {new}? Round to one decimal place.")
        reference = (f"{old}: {a}, {new}: {b}. Change: ({b} - {a}) / {a} x 100 = {answer:.1f}%\n\n"
                     f"Answer: {answer:.1f}%")
        return draft(self, difficulty, prompt=prompt, check=NumberAnswer(answer, rel_tol=0, abs_tol=0.051),
                     reference=reference,
                     bad=[f"Answer: {w:.1f}%" if w != b - a else f"Answer: {b - a}" for w in wrong])


ENDPOINTS = ("/api/items", "/api/cart", "/api/login", "/api/search", "/health")


@dataclass(frozen=True)
class MedianLatency:
    """A request log in the workspace; the median response time, of all requests (d1, odd count), of one
    endpoint (d2, even count: the mean of the two middle values), of one endpoint's successful requests (d3).
    Slips: the mean, the middle line of the unsorted file, the lower middle value, the wrong filter."""

    cluster: str = "data_analysis"
    name: str = "median_latency"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return until(lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        n = (9, 30, 60)[difficulty - 1]
        path = rng.choice(("requests.log", "access.log", "api.log"))
        service = rng.choice(("our API", "the orders service", "the staging API"))
        endpoint = rng.choice(ENDPOINTS[:4])
        lines = []
        for i in range(n):
            ep = rng.choice(ENDPOINTS)
            status = rng.choice((200, 200, 200, 201, 404, 500)) if difficulty == 3 else 200
            ms = int(rng.lognormvariate(4.5, 0.6)) + 1
            lines.append((f"2024-05-{rng.randint(1, 28):02d}T{i // 60 + 8:02d}:{i % 60:02d}:00", ep, status, ms))
        lines.sort()

        def keep(line: tuple[str, str, int, int]) -> bool:
            return (difficulty == 1 or line[1] == endpoint) and (difficulty < 3 or 200 <= line[2] < 300)

        picked = [x[3] for x in lines if keep(x)]
        if len(picked) < 4 or len(picked) % 2 != (1 if difficulty == 1 else 0):
            return None
        s = sorted(picked)
        mid = len(s) // 2
        answer = float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
        wrong = [sum(picked) / len(picked), float(picked[len(picked) // 2])]
        if difficulty >= 2:
            wrong.append(float(s[mid - 1]))
            everything = sorted(x[3] for x in lines)
            m = len(everything) // 2
            wrong.append(float(everything[m]) if len(everything) % 2 else (everything[m - 1] + everything[m]) / 2)
        if difficulty == 3:  # every status counted
            wrong.append(statistics.median(x[3] for x in lines if x[1] == endpoint))
        if any(abs(w - answer) < 0.6 for w in wrong):
            return None
        text = "".join(f"{t} GET {ep} {st} {ms}ms\n" for t, ep, st, ms in lines)
        what = {1: "all requests", 2: f"requests to {endpoint}",
                3: f"successful (2xx) requests to {endpoint}"}[difficulty]
        prompt = (f"{path} in the workspace is the access log of {service} (timestamp, method, path, status, "
                  f"duration). What's the median response time of {what}, in ms?")
        cond = {1: "", 2: f"    if path == {endpoint!r}:\n    ",
                3: f"    if path == {endpoint!r} and status.startswith('2'):\n    "}
        reference = (
            f"```python\nimport statistics\n\ntimes = []\nfor line in open({path!r}):\n"
            "    _, _, path, status, ms = line.split()\n"
            f"{cond[difficulty]}    times.append(int(ms.removesuffix('ms')))\n"
            f"print(statistics.median(times))\n```\n\nAnswer: {_fmt(answer)}"
        )
        return draft(self, difficulty, prompt=prompt, check=NumberAnswer(answer, rel_tol=0, abs_tol=0.01),
                     reference=reference, bad=list(dict.fromkeys(f"Answer: {_fmt(round(w, 2))}" for w in wrong)),
                     files={path: text})


@dataclass(frozen=True)
class DistinctVisitors:
    """An access log pasted into the message; how many distinct IP addresses requested a page (d1), successfully
    (d2), within one hour (d3). Slips: counting lines, not addresses; dropping a filter."""

    cluster: str = "data_analysis"
    name: str = "distinct_visitors"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return until(lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        net = rng.choice(("10.0.0", "192.168.1", "203.0.113", "172.16.4"))
        ips = [f"{net}.{h}" for h in rng.sample(range(2, 250), (4, 6, 8)[difficulty - 1])]
        pages = ("/", "/products", "/cart", "/checkout", "/login")
        page = rng.choice(pages[1:])
        hour = rng.randint(9, 16)
        hits = []
        for _ in range((10, 18, 28)[difficulty - 1]):
            at = (hour + rng.choice((-1, 0, 0, 1)) if difficulty == 3 else hour, rng.randint(0, 59), rng.randint(0, 59))
            status = rng.choice((200, 200, 200, 302, 404, 500)) if difficulty >= 2 else 200
            hits.append((at, rng.choice(ips), rng.choice(pages), status))
        hits.sort()

        def count(distinct: bool, path: bool = True, ok: bool = True, window: bool = True) -> int:
            found = [ip for (h, _, _), ip, p, st in hits
                     if (not path or p == page) and (not ok or difficulty < 2 or st == 200)
                     and (not window or difficulty < 3 or h == hour)]
            return len(set(found)) if distinct else len(found)

        answer = count(True)
        wrong = [count(False), count(True, path=False)]
        if difficulty >= 2:
            wrong.append(count(True, ok=False))
        if difficulty == 3:
            wrong.append(count(True, window=False))
        if answer == 0 or answer in wrong:
            return None
        log = "\n".join(f'{ip} - - [14/Mar/2024:{h:02d}:{m:02d}:{sec:02d} +0000] "GET {p} HTTP/1.1" {st}'
                        for (h, m, sec), ip, p, st in hits)
        what = {1: f"requested {page}", 2: f"got a 200 from {page}",
                3: f"got a 200 from {page} between {hour:02d}:00 and {hour:02d}:59"}[difficulty]
        # just the number: a count followed by the addresses would read as its last number, the address's
        prompt = (f"Here's a slice of our nginx log:\n\n```\n{log}\n```\n\nHow many unique IP addresses {what}? "
                  "Just the number.")
        reference = str(answer)
        return draft(self, difficulty, prompt=prompt, check=NumberAnswer(answer, rel_tol=0, abs_tol=0.01),
                     reference=reference, bad=list(dict.fromkeys(str(w) for w in wrong)))


@dataclass(frozen=True)
class DateRangeTotal:
    """A bank export in the workspace; the total spent between two dates, inclusive (d1), on one category (d2),
    with day-first dates across a month boundary (d3: comparing the date strings is wrong). Rows fall on both
    boundary dates, so an exclusive end is wrong too."""

    cluster: str = "data_analysis"
    name: str = "date_range_total"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return until(lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        year, month = rng.randint(2022, 2025), rng.randint(2, 11)
        shops = {"groceries": ("Lidl", "Tesco", "Aldi"), "transport": ("Uber", "Metro card", "Shell"),
                 "eating out": ("Pizza Hut", "Wagamama", "Pret"), "subscriptions": ("Netflix", "Spotify", "iCloud")}
        category = rng.choice(sorted(shops))
        if difficulty == 3:
            start, end = (year, month, rng.randint(18, 26)), (year, month + 1, rng.randint(3, 12))
        else:
            first = rng.randint(3, 12)
            start, end = (year, month, first), (year, month, first + rng.randint(6, 12))
        rows = []
        for _ in range((12, 30, 50)[difficulty - 1]):
            m = rng.choice((month - 1, month, month + 1)) if difficulty == 3 else month
            cat = rng.choice(sorted(shops)) if difficulty >= 2 else category
            rows.append(((year, m, rng.randint(1, 28)), rng.choice(shops[cat]), cat, _money(rng, difficulty)))
        for day in (start, end):  # someone always spends on the boundary days
            rows.append((day, rng.choice(shops[category]), category, _money(rng, difficulty)))
        rows.sort()

        def fmt(d: tuple[int, int, int]) -> str:
            return f"{d[2]:02d}/{d[1]:02d}/{d[0]}" if difficulty == 3 else f"{d[0]}-{d[1]:02d}-{d[2]:02d}"

        def total(inside: Callable[[tuple[int, int, int]], bool], any_category: bool = False) -> float:
            return round(sum(r[3] for r in rows if inside(r[0]) and (any_category or r[2] == category)), 2)

        answer = total(lambda d: start <= d <= end)
        wrong = [total(lambda d: start <= d < end), total(lambda d: start < d <= end)]
        if difficulty >= 2:
            wrong.append(total(lambda d: start <= d <= end, any_category=True))
        if difficulty == 3:
            wrong.append(total(lambda d: fmt(start) <= fmt(d) <= fmt(end)))
        if any(abs(w - answer) < 0.01 for w in wrong):
            return None
        text = "date,description,category,amount\n" + "".join(
            f"{fmt(d)},{shop},{cat},{_fmt(amount)}\n" for d, shop, cat, amount in rows)
        what = "in total" if difficulty == 1 else f"on {category}"
        prompt = (f"transactions.csv in the workspace is my bank export. How much did I spend {what} from "
                  f"{fmt(start)} to {fmt(end)}, both days included?")
        parse = ("datetime.strptime(r['date'], '%d/%m/%Y').date()" if difficulty == 3
                 else "date.fromisoformat(r['date'])")
        cond = "" if difficulty == 1 else f" and r['category'] == {category!r}"
        reference = (
            "```python\nimport csv\nfrom datetime import date, datetime\n\n"
            f"start, end = date({start[0]}, {start[1]}, {start[2]}), date({end[0]}, {end[1]}, {end[2]})\n"
            "total = 0.0\nfor r in csv.DictReader(open('transactions.csv')):\n"
            f"    if start <= {parse} <= end{cond}:\n        total += float(r['amount'])\n"
            f"print(round(total, 2))\n```\n\nAnswer: {answer:.2f}"
        )
        return draft(self, difficulty, prompt=prompt, check=NumberAnswer(answer, rel_tol=0, abs_tol=0.006),
                     reference=reference, bad=list(dict.fromkeys(f"Answer: {w:.2f}" for w in wrong)),
                     files={"transactions.csv": text})


TEMPLATES = (InlineCsvTotal(), CsvFileAverage(), JsonTopCategory(), PercentChange(), MedianLatency(),
             DistinctVisitors(), DateRangeTotal())
