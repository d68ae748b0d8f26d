"""sql, joins: write a SQLite query against the database that `setup.sql` (in the workspace) builds; graded by
the rows it returns (`SqlRows`, run in the sandbox). Grouping and ordering are in `templates/sql_grouping.py`.

Every expected row set is computed here in Python from the drawn data, not by running the reference, so the
admission test proves the reference right. The data always holds the rows that tell a right query from each
plausible wrong one (a customer who only ordered in other years, a department with nobody in it, the person at
the top with no manager), so every bad reply fails on every seed, not only on lucky ones.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ghost_agent.selfplay.checks import SqlRows
from ghost_agent.selfplay.task import Task, draft
from ghost_agent.selfplay.templates.sql_data import (
    CITIES,
    DEPARTMENTS,
    date,
    people,
    rows_of,
    setup_sql,
    sql_reply,
)


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
        names = people(rng, n)
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
                orders.append((cid, date(rng, y), round(rng.uniform(5, 300), 2)))
        if difficulty == 3:
            orders += [(None, date(rng, year), round(rng.uniform(5, 300), 2)),
                       (None, date(rng, rng.choice(other)), round(rng.uniform(5, 300), 2))]
        rng.shuffle(orders)
        listed = [(i, name, rng.choice(CITIES)) for i, name in enumerate(names, start=1)]
        setup = setup_sql([
            (s["P"], "id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT", listed),
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
        return draft(self, difficulty, prompt=prompt, check=SqlRows(rows_of(want)),
                     reference=sql_reply(lead, query.format(**s)),
                     bad=[sql_reply("Here you go:", b.format(**s)) for b in bad], files={"setup.sql": setup})


@dataclass(frozen=True)
class DepartmentHeadcount:
    """A count per group (departments, teams or stores) that must keep the empty groups (LEFT JOIN, COUNT(e.id)
    not COUNT(*)); d2 counts only active staff (the condition goes in the ON clause), d3 adds the payroll
    (COALESCE) and an ordering."""

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
        names = people(rng, n)
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
        want: list[tuple[Any, ...]]
        if difficulty < 3:
            want = [(depts[did - 1], heads[did]) for did in heads]
            ask = f"every {noun}'s name with its number of {who}. A {noun} with nobody should be listed with 0"
            query = f"SELECT d.name, COUNT(e.id) AS headcount\nFROM {table} d\nLEFT JOIN {members} e ON {on}\n"
            query += "GROUP BY d.id, d.name;"
            bad = [query.replace("LEFT JOIN", "JOIN"), query.replace("COUNT(e.id)", "COUNT(*)")]
            if difficulty == 2:
                bad.append(query.replace(*to_where))
            check = SqlRows(rows_of(want))
        else:
            want = sorted(((depts[did - 1], heads[did], pay[did]) for did in heads), key=lambda r: (-r[1], r[0]))
            ask = (f"every {noun}'s name, its number of {who} and their total salary (a {noun} with nobody "
                   f"active gets 0 and 0), largest headcount first and ties by {noun} name")
            query = ("SELECT d.name, COUNT(e.id) AS headcount, COALESCE(SUM(e.salary), 0) AS payroll\n"
                     f"FROM {table} d\nLEFT JOIN {members} e ON {on}\nGROUP BY d.id, d.name\n"
                     "ORDER BY headcount DESC, d.name;")
            bad = [query.replace("COALESCE(SUM(e.salary), 0)", "SUM(e.salary)"), query.replace(*to_where)]
            if want != sorted(want, key=lambda r: r[0]):
                bad.append(query.replace("ORDER BY headcount DESC, d.name", "ORDER BY d.name"))
            check = SqlRows(rows_of(want), ordered=True)
        prompt = (f"setup.sql in the workspace builds a small SQLite database: {table}(id, name) and "
                  f"{members}(id, name, {fk}, salary, {flag}). Can you write a query that returns {ask}?")
        lead = f"Start from {table} and LEFT JOIN {members}, counting e.id so an empty {noun} gets 0:"
        return draft(self, difficulty, prompt=prompt, check=check, reference=sql_reply(lead, query),
                     bad=[sql_reply("This should do it:", b) for b in bad], files={"setup.sql": setup})


@dataclass(frozen=True)
class EmployeeManager:
    """A self-join on a manager column: each employee with their manager (d1; joining the wrong way round gives
    manager/report pairs), every employee with the manager or NULL for the top (d2: LEFT JOIN), and those who
    earn more than their manager (d3; one earns exactly as much, so >= is wrong)."""

    cluster: str = "sql"
    name: str = "employee_manager"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        table = rng.choice(("employees", "staff", "people"))
        boss = rng.choice(("manager_id", "reports_to", "boss_id"))
        names = people(rng, (6, 8, 10)[difficulty - 1])
        leads = rng.randint(2, 3)
        manager: list[int | None] = [None] + [1] * leads  # ids are 1-based: employee i+1 reports to manager[i]
        manager += [rng.randint(1, 1 + leads) for _ in range(len(names) - 1 - leads)]
        salary = [rng.randrange(150_000, 200_000, 1000)]
        salary += [rng.randrange(90_000, 140_000, 1000) for _ in range(leads)]
        salary += [rng.randrange(40_000, 100_000, 1000) for _ in range(len(names) - 1 - leads)]
        over, level = rng.sample(range(1 + leads, len(names)), 2)  # one earns more than the manager, one the same
        salary[over] = salary[(manager[over] or 1) - 1] + rng.randrange(1000, 20_000, 1000)
        salary[level] = salary[(manager[level] or 1) - 1]
        pairs = [(names[i], names[m - 1], salary[i], salary[m - 1]) for i, m in enumerate(manager) if m]
        pick = "SELECT e.name, m.name AS manager\n"
        want: list[tuple[Any, ...]]
        if difficulty == 1:
            want = [(e, m) for e, m, _, _ in pairs]
            query = pick + f"FROM {table} e\nJOIN {table} m ON m.id = e.{boss};"
            bad = [query.replace(f"m.id = e.{boss}", f"e.id = m.{boss}"), query.replace("JOIN", "LEFT JOIN")]
            ask = "each employee's name next to their manager's name (only the employees who have a manager)"
        elif difficulty == 2:
            want = [(e, m) for e, m, _, _ in pairs] + [(names[0], None)]
            query = pick + f"FROM {table} e\nLEFT JOIN {table} m ON m.id = e.{boss};"
            bad = [query.replace("LEFT JOIN", "JOIN"), query.replace(f"m.id = e.{boss}", f"e.id = m.{boss}")]
            ask = ("every employee's name next to their manager's name, with NULL as the manager of someone who "
                   "has none")
        else:
            want = [(e, es, m) for e, m, es, ms in pairs if es > ms]
            query = (f"SELECT e.name, e.salary, m.name AS manager\nFROM {table} e\nJOIN {table} m ON m.id = "
                     f"e.{boss}\nWHERE e.salary > m.salary;")
            bad = [query.replace("e.salary > m.salary", "e.salary >= m.salary"),
                   query.replace(f"m.id = e.{boss}", f"e.id = m.{boss}")]
            ask = "the employees who earn more than their own manager: their name, their salary and the manager's name"
        prompt = (f"There's a SQLite database in the workspace (setup.sql) with one table, {table}(id, name, {boss}, "
                  f"salary), where {boss} is the id of the person's manager ({names[0]}, at the top, has NULL). "
                  "Write a query for "
                  f"{ask}.")
        setup = setup_sql([(table, f"id INTEGER PRIMARY KEY, name TEXT NOT NULL, {boss} INTEGER, salary INTEGER",
                            [(i, n, manager[i - 1], salary[i - 1]) for i, n in enumerate(names, start=1)])])
        lead = f"Join {table} to itself: e is the employee, m the row that e.{boss} points at."
        return draft(self, difficulty, prompt=prompt, check=SqlRows(rows_of(want)), reference=sql_reply(lead, query),
                     bad=[sql_reply("This works:", b) for b in bad], files={"setup.sql": setup})


TEMPLATES = (CustomersWithoutOrders(), DepartmentHeadcount(), EmployeeManager())
