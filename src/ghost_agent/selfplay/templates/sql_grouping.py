"""sql, grouping and ordering: aggregates per group, HAVING, DISTINCT, ORDER BY with LIMIT. Graded as in
`templates/sql.py` (rows computed here in Python, the query run by `SqlRows` in the sandbox). The rows each bad
reply would return are computed too, and the data is drawn again until every one differs from the answer and no
tie makes an ordered answer ambiguous."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ghost_agent.selfplay.checks import SqlRows
from ghost_agent.selfplay.task import Task, draft
from ghost_agent.selfplay.templates.drawing import until
from ghost_agent.selfplay.templates.sql_data import (
    CITIES,
    PRODUCTS,
    SUBJECTS,
    date,
    people,
    rows_of,
    same_rows,
    setup_sql,
    sql_reply,
)


@dataclass(frozen=True)
class TopProducts:
    """ORDER BY an aggregate with LIMIT (checked in order): the top N products by units (d1, one table), by
    revenue through a join (d2), and within one category and month (d3)."""

    cluster: str = "sql"
    name: str = "top_products"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return until(lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        top = rng.choice(((3, 4), (3, 4, 5), (3,))[difficulty - 1])
        lines = rng.choice(("order_items", "order_lines", "sales_lines") if difficulty > 1 else ("sales", "sales_log"))
        catalog = rng.sample(PRODUCTS, (6, 8, len(PRODUCTS))[difficulty - 1])
        prices = [round(rng.uniform(3, 90), 2) for _ in catalog]
        year, month = rng.randint(2022, 2024), rng.randint(2, 11)
        sales: list[tuple[int, int, str]] = []  # (product index, quantity, date)
        for p in range(len(catalog)):
            for _ in range(rng.randint(2, 5)):
                sales.append((p, rng.randint(1, 12), date(rng, year, rng.choice((month - 1, month, month + 1)))))
        rng.shuffle(sales)
        category = rng.choice(sorted({c for _, c in catalog}))
        in_month, next_month = f"{year}-{month:02d}", f"{year}-{month + 1:02d}"

        def ranked(by_revenue: bool, shown_revenue: bool, category_only: bool = False, in_range: bool = False,
                   reverse: bool = True) -> list[tuple[str, Any]] | None:
            """The top rows of a grouped query; None when a tie at the top makes the answer ambiguous."""
            sums: dict[int, tuple[int, float]] = {}
            for p, q, d in sales:
                if (category_only and catalog[p][1] != category) or (in_range and not d.startswith(in_month)):
                    continue
                units, money = sums.get(p, (0, 0.0))
                sums[p] = (units + q, money + q * prices[p])
            rows = [(p, u, round(m, 2)) for p, (u, m) in sums.items()]
            rows.sort(key=lambda r: r[2] if by_revenue else r[1], reverse=reverse)
            keys = [r[2] if by_revenue else r[1] for r in rows[:top + 1]]
            if len(rows) <= top or len(set(keys)) < len(keys):
                return None
            return [(catalog[p][0], m if shown_revenue else u) for p, u, m in rows[:top]]

        tables: list[tuple[str, str, list[tuple[Any, ...]]]]
        if difficulty == 1:
            want = ranked(False, False)
            query = (f"SELECT product, SUM(quantity) AS units\nFROM {lines}\nGROUP BY product\n"
                     f"ORDER BY units DESC\nLIMIT {top};")
            # a row's quantity never equals its product's total (two sales or more each): the ungrouped query fails
            bads = [(query.replace("units DESC", "units"), ranked(False, False, reverse=False)),
                    (f"SELECT product, quantity\nFROM {lines}\nORDER BY quantity DESC\nLIMIT {top};", [])]
            ask = f"the {top} products that sold the most units, with their total units, best seller first"
            schema = f"{lines}(id, product, quantity, sale_date)"
            tables = [(lines, "id INTEGER PRIMARY KEY, product TEXT, quantity INTEGER, sale_date TEXT",
                       [(i, catalog[p][0], q, d) for i, (p, q, d) in enumerate(sales, start=1)])]
        else:
            narrow = difficulty == 3
            want = ranked(True, True, narrow, narrow)
            where = "" if not narrow else (f"WHERE p.category = '{category}'\n  AND oi.order_date >= "
                                           f"'{in_month}-01' AND oi.order_date < '{next_month}-01'\n")
            query = ("SELECT p.name, SUM(oi.quantity * p.price) AS revenue\n"
                     f"FROM {lines} oi\n"
                     f"JOIN products p ON p.id = oi.product_id\n{where}GROUP BY p.id, p.name\n"
                     f"ORDER BY revenue DESC\nLIMIT {top};")
            bads = [(query.replace("revenue DESC", "SUM(oi.quantity) DESC"), ranked(False, True, narrow, narrow)),
                    (query.replace("revenue DESC", "revenue"), ranked(True, True, narrow, narrow, reverse=False))]
            if narrow:  # the month forgotten
                bads.append((query.replace(where, f"WHERE p.category = '{category}'\n"), ranked(True, True, True)))
            ask = (f"the {top} products with the highest revenue (quantity times price) in {year}, with that revenue, "
                   "highest first")
            if narrow:
                ask = (f"the {top} {category} products with the highest revenue (quantity times price) in "
                       f"{in_month}, with that revenue, highest first")
            schema = f"products(id, name, category, price) and {lines}(id, product_id, quantity, order_date)"
            tables = [
                ("products", "id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL",
                 [(i, name, cat, prices[i - 1]) for i, (name, cat) in enumerate(catalog, start=1)]),
                (lines, "id INTEGER PRIMARY KEY, product_id INTEGER, quantity INTEGER, order_date TEXT",
                 [(i, p + 1, q, d) for i, (p, q, d) in enumerate(sales, start=1)]),
            ]
        if want is None or any(got is None or got == want for _, got in bads):
            return None
        prompt = (f"Using the SQLite database from setup.sql in the workspace ({schema}), write a query for "
                  f"{ask}.")
        lead = "Group, sort by the total descending and keep the top rows:"
        return draft(self, difficulty, prompt=prompt, check=SqlRows(rows_of(want), ordered=True),
                     reference=sql_reply(lead, query), bad=[sql_reply("Try this:", b) for b, _ in bads],
                     files={"setup.sql": setup_sql(tables)})


@dataclass(frozen=True)
class StudentsAverage:
    """GROUP BY with HAVING on an average: students above a threshold (d1; WHERE instead of HAVING and >= instead
    of > are the mistakes), with a least number of results (d2), over one department's courses through a join (d3).
    A student whose average is exactly the threshold is always there."""

    cluster: str = "sql"
    name: str = "students_average"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return until(lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        results = rng.choice(("scores", "exam_results", "grades"))
        bar = rng.choice((60, 65, 70, 75, 80))
        minimum = 1 if difficulty == 1 else rng.choice((2, 3))
        names = people(rng, (6, 8, 10)[difficulty - 1])
        courses = SUBJECTS
        dept = rng.choice(("Science", "Humanities"))
        mine = [i for i, (_, d) in enumerate(courses) if d == dept]
        rows: list[tuple[int, int, int]] = []  # (student id, course index, score)
        for sid in range(1, len(names) + 1):
            for course in rng.sample(range(len(courses)), rng.randint(2, 5)):
                rows.append((sid, course, rng.randint(max(0, bar - 30), min(100, bar + 25))))
        # student 1 averages exactly the bar over the courses that count
        counted = mine if difficulty == 3 else list(range(len(courses)))
        rows = [r for r in rows if r[0] != 1]
        picked = rng.sample(counted, 3)
        first, second = rng.randint(bar - 10, bar + 10), rng.randint(bar - 10, bar + 10)
        rows += [(1, picked[0], first), (1, picked[1], second), (1, picked[2], 3 * bar - first - second)]
        rng.shuffle(rows)

        def result(keep: Callable[[tuple[int, int, int]], bool], least: int,
                   passes: Callable[[float], bool]) -> list[tuple[Any, ...]]:
            groups: dict[int, list[int]] = {}
            for r in rows:
                if keep(r):
                    groups.setdefault(r[0], []).append(r[2])
            return [(names[sid - 1], sum(v) / len(v)) for sid, v in groups.items()
                    if len(v) >= least and passes(sum(v) / len(v))]

        def relevant(r: tuple[int, int, int]) -> bool:
            return difficulty < 3 or r[1] in mine

        want = result(relevant, minimum, lambda a: a > bar)
        having = f"HAVING AVG(r.score) > {bar}"
        if minimum > 1:
            having = f"HAVING COUNT(*) >= {minimum} AND AVG(r.score) > {bar}"
        join = "" if difficulty < 3 else "JOIN courses c ON c.id = r.course_id\n"
        where = "" if difficulty < 3 else f"WHERE c.department = '{dept}'\n"
        query = (f"SELECT s.name, AVG(r.score) AS average\nFROM students s\n"
                 f"JOIN {results} r ON r.student_id = s.id\n{join}{where}GROUP BY s.id, s.name\n{having};")
        bads = [(query.replace(f"AVG(r.score) > {bar}", f"AVG(r.score) >= {bar}"),
                 result(relevant, minimum, lambda a: a >= bar))]
        if difficulty == 1:
            bads.append((query.replace(f"GROUP BY s.id, s.name\n{having}",
                                       f"WHERE r.score > {bar}\nGROUP BY s.id, s.name"),
                         result(lambda r: r[2] > bar, 1, lambda a: True)))
        if difficulty == 2:
            bads.append((query.replace(f"COUNT(*) >= {minimum} AND ", ""), result(relevant, 1, lambda a: a > bar)))
        if difficulty == 3:
            bads.append((query.replace(join + where, ""), result(lambda r: True, minimum, lambda a: a > bar)))
        if not want or any(same_rows(got, want) for _, got in bads):
            return None
        course_col = "course_id" if difficulty == 3 else "subject"
        tables: list[tuple[str, str, list[tuple[Any, ...]]]] = [
            ("students", "id INTEGER PRIMARY KEY, name TEXT NOT NULL", list(enumerate(names, start=1))),
            (results, f"id INTEGER PRIMARY KEY, student_id INTEGER, {course_col} "
             f"{'INTEGER' if difficulty == 3 else 'TEXT'}, score INTEGER",
             [(i, sid, c + 1 if difficulty == 3 else courses[c][0], v) for i, (sid, c, v) in enumerate(rows, start=1)]),
        ]
        schema = f"students(id, name) and {results}(id, student_id, {course_col}, score)"
        if difficulty == 3:
            tables.append(("courses", "id INTEGER PRIMARY KEY, title TEXT, department TEXT",
                           [(i, t, d) for i, (t, d) in enumerate(courses, start=1)]))
            schema = (f"students(id, name), courses(id, title, department) and {results}(id, student_id, "
                      "course_id, score)")
        ask = (f"each student's name and average score (unrounded), for the students whose average is above "
               f"{bar}")
        if difficulty == 2:
            ask += f" and who have at least {minimum} results"
        if difficulty == 3:
            ask = (f"each student's name and average score (unrounded) over {dept} courses only, for the students "
                   f"with at least {minimum} {dept} results and an average above {bar} in them")
        prompt = (f"setup.sql (in the workspace) creates a SQLite database with {schema}. Write a query that "
                  f"returns {ask}.")
        lead = "Group per student and filter the groups with HAVING (WHERE would filter single scores):"
        return draft(self, difficulty, prompt=prompt, check=SqlRows(rows_of(want)), reference=sql_reply(lead, query),
                     bad=[sql_reply("Something like:", b) for b, _ in bads], files={"setup.sql": setup_sql(tables)})


@dataclass(frozen=True)
class DistinctBuyers:
    """DISTINCT and COUNT(DISTINCT) across a join: how many customers ordered in a year (d1), the cities (each
    once) where someone bought a product (d2), the cities with at least two such customers and their number (d3:
    COUNT(*) counts orders, not customers)."""

    cluster: str = "sql"
    name: str = "distinct_buyers"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return until(lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        names = people(rng, (8, 10, 14)[difficulty - 1])
        cities = rng.sample(CITIES, (3, 4, 5)[difficulty - 1])
        where = [rng.choice(cities) for _ in names]
        catalog = [p for p, _ in rng.sample(PRODUCTS, 5)]
        product = catalog[0]
        year = rng.randint(2021, 2024)
        orders: list[tuple[int, str, str]] = []  # (customer id, product, date)
        for cid in range(1, len(names) + 1):
            for _ in range(rng.choice((0, 1, 1, 2, 3))):
                orders.append((cid, rng.choice(catalog[:3]), date(rng, rng.choice((year - 1, year, year)))))
        rng.shuffle(orders)

        def buyers(keep: Callable[[tuple[int, str, str]], bool]) -> list[int]:
            return [o[0] for o in orders if keep(o)]

        def in_year(o: tuple[int, str, str]) -> bool:
            return o[2].startswith(f"{year}-")

        def per_city(ids: list[int], distinct: bool) -> list[tuple[Any, ...]]:
            counts: dict[str, int] = {}
            for cid in set(ids) if distinct else ids:
                counts[where[cid - 1]] = counts.get(where[cid - 1], 0) + 1
            return [(c, k) for c, k in counts.items() if k >= 2]

        bads: list[tuple[str, list[tuple[Any, ...]]]]
        base = "SELECT {what}\nFROM orders o\nJOIN customers c ON c.id = o.customer_id\n{where}{rest};"
        if difficulty == 1:
            ids = buyers(in_year)
            want: list[tuple[Any, ...]] = [(len(set(ids)),)]
            query = f"SELECT COUNT(DISTINCT customer_id)\nFROM orders\nWHERE order_date LIKE '{year}-%';"
            bads = [(query.replace("COUNT(DISTINCT customer_id)", "COUNT(customer_id)"), [(len(ids),)]),
                    (query.replace(f"\nWHERE order_date LIKE '{year}-%'", ""), [(len(set(buyers(lambda o: True))),)])]
            ask = f"how many different customers placed at least one order in {year} (one number)"
        elif difficulty == 2:
            ids = buyers(lambda o: o[1] == product)
            want = [(c,) for c in sorted({where[i - 1] for i in ids})]
            query = base.format(what="DISTINCT c.city", where=f"WHERE o.product = '{product}'", rest="")
            bads = [(query.replace("DISTINCT ", ""), [(where[i - 1],) for i in ids]),
                    ("SELECT DISTINCT city FROM customers;", [(c,) for c in sorted(set(where))])]
            ask = f"the cities (each one once) where at least one customer has bought a {product}"
        else:
            ids = buyers(in_year)
            want = per_city(ids, True)
            query = base.format(what="c.city, COUNT(DISTINCT c.id) AS buyers",
                                where=f"WHERE o.order_date LIKE '{year}-%'\n",
                                rest="GROUP BY c.city\nHAVING COUNT(DISTINCT c.id) >= 2")
            bads = [(query.replace("COUNT(DISTINCT c.id)", "COUNT(*)"), per_city(ids, False)),
                    (query.replace(f"WHERE o.order_date LIKE '{year}-%'\n", ""),
                     per_city(buyers(lambda o: True), True))]
            ask = (f"every city with at least 2 different customers who ordered in {year}, with the number of those "
                   "customers")
        if not want or want == [(0,)] or any(same_rows(got, want) for _, got in bads):
            return None
        tables: list[tuple[str, str, list[tuple[Any, ...]]]] = [
            ("customers", "id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT",
             [(i, n, where[i - 1]) for i, n in enumerate(names, start=1)]),
            ("orders", "id INTEGER PRIMARY KEY, customer_id INTEGER, product TEXT, order_date TEXT",
             [(100 + i, *o) for i, o in enumerate(orders, start=1)]),
        ]
        prompt = ("My SQLite database (setup.sql in the workspace) has customers(id, name, city) and orders(id, "
                  f"customer_id, product, order_date). I need a query for {ask}.")
        lead = "A customer can have several orders, so count (or list) distinct values:"
        return draft(self, difficulty, prompt=prompt, check=SqlRows(rows_of(want)), reference=sql_reply(lead, query),
                     bad=[sql_reply("Here's the query:", b) for b, _ in bads], files={"setup.sql": setup_sql(tables)})


TEMPLATES = (TopProducts(), StudentsAverage(), DistinctBuyers())
