"""sql: write a SQLite query against the database that `setup.sql` (in the workspace) builds; graded by the rows
it returns (`SqlRows`, run in the sandbox). Every expected row set is computed here in Python from the drawn
data, not by running the reference, so the admission test proves the reference right.

Each template builds its data with a few rows of each kind that tells a right query from a plausible wrong one
(a customer who only ordered in other years, a department with no staff, a city with one customer and two
orders), so every bad reply fails on every seed, not only on lucky ones.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ghost_agent.selfplay.checks import SqlRows
from ghost_agent.selfplay.task import Task, draft

FIRST = ("Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Liam", "Mia",
         "Noor", "Oscar", "Priya")
LAST = ("Silva", "Okafor", "Novak", "Tanaka", "Berg", "Haddad", "Moreau", "Kowalski", "Reyes", "Schmidt")
CITIES = ("Lisbon", "Porto", "Lyon", "Leeds", "Graz", "Turin", "Ghent", "Bergen", "Cork")
DEPARTMENTS = ("Sales", "Support", "Engineering", "Finance", "Legal", "Marketing", "Research", "Operations")
PRODUCTS = (("desk lamp", "home"), ("usb cable", "tech"), ("notebook", "office"), ("headphones", "tech"),
            ("kettle", "home"), ("stapler", "office"), ("webcam", "tech"), ("mug", "home"), ("pen set", "office"),
            ("router", "tech"), ("cushion", "home"), ("binder", "office"), ("charger", "tech"), ("vase", "home"))
SUBJECTS = ("algebra", "biology", "chemistry", "history", "literature", "physics")

T = TypeVar("T")


def _people(rng: random.Random, n: int) -> list[str]:
    return rng.sample([f"{f} {s}" for f in FIRST for s in LAST], n)


def _date(rng: random.Random, year: int, month: int | None = None) -> str:
    return f"{year}-{month or rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def setup_sql(tables: Iterable[tuple[str, str, Sequence[tuple[Any, ...]]]]) -> str:
    """A setup script: for each `(name, columns DDL, rows)` a CREATE TABLE and one INSERT of all its rows."""
    parts = []
    for name, ddl, rows in tables:
        parts.append(f"CREATE TABLE {name} ({ddl});")
        if rows:
            values = ",\n  ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
            parts.append(f"INSERT INTO {name} VALUES\n  {values};")
    return "\n".join(parts) + "\n"


def _until(rng: random.Random, build: Callable[[], T | None]) -> T:
    """`build()` until it returns something (it returns None for data that cannot tell the replies apart)."""
    for _ in range(200):
        got = build()
        if got is not None:
            return got
    raise RuntimeError("could not draw telling data in 200 tries")


def _reply(lead: str, query: str) -> str:
    return f"{lead}\n\n```sql\n{query.strip()}\n```"


def _rows(rows: Iterable[tuple[Any, ...]]) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(r) for r in rows)


def _same(a: Iterable[tuple[Any, ...]], b: Iterable[tuple[Any, ...]]) -> bool:
    """Equal as SqlRows compares unordered rows (floats to 6 places)."""
    def key(rows: Iterable[tuple[Any, ...]]) -> list[str]:
        return sorted(repr(tuple(round(v, 6) if isinstance(v, float) else v for v in r)) for r in rows)
    return key(a) == key(b)


@dataclass(frozen=True)
class CustomersWithoutOrders:
    """An anti-join: customers with no order (d1), none in a given year (d2: the year belongs in the ON clause),
    and d3 adds guest orders with a NULL customer_id, which turns `NOT IN (subquery)` into an empty result."""

    cluster: str = "sql"
    name: str = "customers_without_orders"

    SCHEMAS = (
        {"P": "customers", "E": "orders", "fk": "customer_id", "dt": "order_date", "amt": "total",
         "noun": "customers", "ever": "placed an order", "none_in": "placed no order in",
         "guest": "guest checkouts are orders with a NULL customer_id"},
        {"P": "clients", "E": "invoices", "fk": "client_id", "dt": "issued_on", "amt": "amount",
         "noun": "clients", "ever": "been invoiced", "none_in": "were not invoiced in",
         "guest": "invoices to walk-in buyers have a NULL client_id"},
        {"P": "members", "E": "bookings", "fk": "member_id", "dt": "booked_on", "amt": "fee",
         "noun": "members", "ever": "made a booking", "none_in": "made no booking in",
         "guest": "bookings by non-members have a NULL member_id"},
    )

    def make(self, rng: random.Random, difficulty: int) -> Task:
        n = (6, 9, 12)[difficulty - 1]
        names = _people(rng, n)
        s = rng.choice(self.SCHEMAS)
        year = rng.randint(2021, 2024)
        other = [y for y in range(2020, 2026) if y != year]
        # kinds: none = never ordered, old = only other years, both = that year and others, this = that year only
        kinds = ["none", "old", "both", "this"] + [rng.choice(("none", "old", "both", "this")) for _ in range(n - 4)]
        if difficulty == 1:
            kinds = ["none", "none"] + ["this"] * (n - 2)
        rng.shuffle(kinds)
        orders: list[tuple[Any, ...]] = []
        for cid, kind in enumerate(kinds, start=1):
            years = {"none": [], "old": [rng.choice(other)], "both": [year, rng.choice(other)],
                     "this": [year] * rng.randint(1, 2)}[kind]
            for y in years:
                orders.append((cid, _date(rng, y), round(rng.uniform(5, 300), 2)))
        if difficulty == 3:
            orders += [(None, _date(rng, year), round(rng.uniform(5, 300), 2)),
                       (None, _date(rng, rng.choice(other)), round(rng.uniform(5, 300), 2))]
        rng.shuffle(orders)
        people = [(i, name, rng.choice(CITIES)) for i, name in enumerate(names, start=1)]
        setup = setup_sql([
            (s["P"], "id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT", people),
            (s["E"], "id INTEGER PRIMARY KEY, {fk} INTEGER, {dt} TEXT, {amt} REAL".format(**s),
             [(1001 + i, *o) for i, o in enumerate(orders)]),
        ])
        schema = "{P}(id, name, city) and {E}(id, {fk}, {dt}, {amt})".format(**s)
        if difficulty == 3:
            schema += "; " + s["guest"]
        if difficulty == 1:
            want = [(names[i],) for i, k in enumerate(kinds) if k == "none"]
            ask = "the names of {noun} who have never {ever}".format(**s)
            query = "SELECT c.name\nFROM {P} c\nLEFT JOIN {E} o ON o.{fk} = c.id\nWHERE o.id IS NULL;"
            bad = [
                "SELECT c.name\nFROM {P} c\nJOIN {E} o ON o.{fk} = c.id\nWHERE o.id IS NULL;",
                "SELECT name FROM {P}\nWHERE id NOT IN (SELECT id FROM {E});",  # the wrong id column
            ]
        else:
            want = [(names[i],) for i, k in enumerate(kinds) if k in ("none", "old")]
            ask = "the names of {noun} who {none_in} {year} (ones who have never {ever} count too)".format(
                year=year, **s)
            query = ("SELECT c.name\nFROM {P} c\nLEFT JOIN {E} o\n  ON o.{fk} = c.id\n"
                     f"  AND o.{{dt}} >= '{year}-01-01' AND o.{{dt}} < '{year + 1}-01-01'\n"
                     "WHERE o.id IS NULL;")
            bad = [
                "SELECT c.name\nFROM {P} c\nLEFT JOIN {E} o ON o.{fk} = c.id\nWHERE o.id IS NULL;",
                "SELECT DISTINCT c.name\nFROM {P} c\nLEFT JOIN {E} o ON o.{fk} = c.id\n"
                f"WHERE o.id IS NULL OR o.{{dt}} NOT LIKE '{year}-%';",
            ]
            if difficulty == 3:
                bad.append("SELECT name FROM {P}\nWHERE id NOT IN (\n  SELECT {fk} FROM {E} "
                           f"WHERE {{dt}} LIKE '{year}-%'\n);")
        prompt = (f"I have a SQLite database built by setup.sql (it's in the workspace): {schema}. "
                  f"Write a SQL query that lists {ask}.")
        lead = "A LEFT JOIN keeps every row on the left; the ones with no match come back with a NULL id:"
        return draft(self, difficulty, prompt=prompt, check=SqlRows(_rows(want)),
                     reference=_reply(lead, query.format(**s)),
                     bad=[_reply("Here you go:", b.format(**s)) for b in bad], files={"setup.sql": setup})


@dataclass(frozen=True)
class DepartmentHeadcount:
    """A count per group (departments, teams or stores) that must keep the empty groups (LEFT JOIN, COUNT(e.id) not COUNT(*)); d2 counts only
    active staff (the condition goes in the ON clause), d3 adds the payroll (COALESCE) and an ordering."""

    cluster: str = "sql"
    name: str = "department_headcount"

    GROUPS = (("departments", "employees", "department_id", "department", DEPARTMENTS),
              ("teams", "engineers", "team_id", "team", ("Platform", "Mobile", "Payments", "Search", "Infra",
                                                        "Growth", "Data", "Security")),
              ("stores", "staff", "store_id", "store", CITIES))

    def make(self, rng: random.Random, difficulty: int) -> Task:
        table, members, fk, noun, pool = rng.choice(self.GROUPS)
        flag = rng.choice(("active", "is_active"))
        depts = rng.sample(pool, (4, 5, 6)[difficulty - 1])
        n = (8, 12, 16)[difficulty - 1]
        staffed = list(range(2, len(depts) + 1)) if difficulty == 1 else list(range(3, len(depts) + 1))
        employees: list[tuple[int, int, int]] = []  # (group id, salary, active)
        for did in staffed:  # every staffed group has someone active
            employees.append((did, rng.randrange(40_000, 120_000, 500), 1))
        if difficulty >= 2:  # group 2 has only inactive people, group 1 nobody
            employees.append((2, rng.randrange(40_000, 120_000, 500), 0))
        while len(employees) < n:
            did = rng.choice(staffed + ([2] if difficulty >= 2 else []))
            active = 0 if did == 2 else int(rng.random() < 0.75)
            employees.append((did, rng.randrange(40_000, 120_000, 500), active))
        rng.shuffle(employees)
        names = _people(rng, n)
        setup = setup_sql([
            (table, "id INTEGER PRIMARY KEY, name TEXT NOT NULL", list(enumerate(depts, start=1))),
            (members, f"id INTEGER PRIMARY KEY, name TEXT NOT NULL, {fk} INTEGER, salary INTEGER, {flag} INTEGER",
             [(i, names[i - 1], *e) for i, e in enumerate(employees, start=1)]),
        ])
        counted = [e for e in employees if difficulty == 1 or e[2] == 1]
        heads = {did: sum(1 for e in counted if e[0] == did) for did in range(1, len(depts) + 1)}
        pay = {did: sum(e[1] for e in counted if e[0] == did) for did in heads}
        who = members if difficulty == 1 else f"active {members} ({flag} = 1)"
        on = f"e.{fk} = d.id" + ("" if difficulty == 1 else f" AND e.{flag} = 1")
        to_where = (f" AND e.{flag} = 1\n", f"\nWHERE e.{flag} = 1\n")
        if difficulty < 3:
            want = [(depts[did - 1], heads[did]) for did in heads]
            ask = f"every {noun}'s name with its number of {who}. A {noun} with nobody should be listed with 0"
            query = f"SELECT d.name, COUNT(e.id) AS headcount\nFROM {table} d\nLEFT JOIN {members} e ON {on}\n"
            query += "GROUP BY d.id, d.name;"
            bad = [query.replace("LEFT JOIN", "JOIN"), query.replace("COUNT(e.id)", "COUNT(*)")]
            if difficulty == 2:
                bad.append(query.replace(*to_where))
            check = SqlRows(_rows(want))
        else:
            want = sorted(((depts[did - 1], heads[did], pay[did]) for did in heads), key=lambda r: (-r[1], r[0]))
            ask = (f"every {noun}'s name, its number of {who} and their total salary (a {noun} with nobody active gets 0 and "
                   f"0), largest headcount first and ties by {noun} name")
            query = ("SELECT d.name, COUNT(e.id) AS headcount, COALESCE(SUM(e.salary), 0) AS payroll\n"
                     f"FROM {table} d\nLEFT JOIN {members} e ON {on}\nGROUP BY d.id, d.name\n"
                     "ORDER BY headcount DESC, d.name;")
            bad = [query.replace("COALESCE(SUM(e.salary), 0)", "SUM(e.salary)"), query.replace(*to_where)]
            if want != sorted(want, key=lambda r: r[0]):
                bad.append(query.replace("ORDER BY headcount DESC, d.name", "ORDER BY d.name"))
            check = SqlRows(_rows(want), ordered=True)
        prompt = (f"setup.sql in the workspace builds a small SQLite database: {table}(id, name) and "
                  f"{members}(id, name, {fk}, salary, {flag}). Can you write a query that returns {ask}?")
        lead = f"Start from {table} and LEFT JOIN {members}, counting e.id so an empty {noun} gets 0:"
        return draft(self, difficulty, prompt=prompt, check=check, reference=_reply(lead, query),
                     bad=[_reply("This should do it:", b) for b in bad], files={"setup.sql": setup})


@dataclass(frozen=True)
class TopProducts:
    """ORDER BY an aggregate with LIMIT (checked in order): the top N products by units (d1, one table), by
    revenue through a join (d2), and within one category and month (d3)."""

    cluster: str = "sql"
    name: str = "top_products"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        return _until(rng, lambda: self._draw(rng, difficulty))

    def _draw(self, rng: random.Random, difficulty: int) -> Task | None:
        top = rng.choice(((3, 4), (3, 4, 5), (3,))[difficulty - 1])
        lines = rng.choice(("order_items", "order_lines", "sales_lines") if difficulty > 1 else ("sales", "sales_log"))
        catalog = rng.sample(PRODUCTS, (6, 8, len(PRODUCTS))[difficulty - 1])
        prices = [round(rng.uniform(3, 90), 2) for _ in catalog]
        year, month = rng.randint(2022, 2024), rng.randint(2, 11)
        sales: list[tuple[int, int, str]] = []  # (product index, quantity, date)
        for p in range(len(catalog)):
            for _ in range(rng.randint(2, 5)):
                sales.append((p, rng.randint(1, 12), _date(rng, year, rng.choice((month - 1, month, month + 1)))))
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
        return draft(self, difficulty, prompt=prompt, check=SqlRows(_rows(want), ordered=True),
                     reference=_reply(lead, query), bad=[_reply("Try this:", b) for b, _ in bads],
                     files={"setup.sql": setup_sql(tables)})


TEMPLATES = (CustomersWithoutOrders(), DepartmentHeadcount(), TopProducts())
