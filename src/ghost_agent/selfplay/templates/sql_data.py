"""What the sql templates share: name pools, the setup script writer, and the reply and row shapes."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

FIRST = ("Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Liam", "Mia",
         "Noor", "Oscar", "Priya")
LAST = ("Silva", "Okafor", "Novak", "Tanaka", "Berg", "Haddad", "Moreau", "Kowalski", "Reyes", "Schmidt")
CITIES = ("Lisbon", "Porto", "Lyon", "Leeds", "Graz", "Turin", "Ghent", "Bergen", "Cork")
DEPARTMENTS = ("Sales", "Support", "Engineering", "Finance", "Legal", "Marketing", "Research", "Operations")
PRODUCTS = (("desk lamp", "home"), ("usb cable", "tech"), ("notebook", "office"), ("headphones", "tech"),
            ("kettle", "home"), ("stapler", "office"), ("webcam", "tech"), ("mug", "home"), ("pen set", "office"),
            ("router", "tech"), ("cushion", "home"), ("binder", "office"), ("charger", "tech"), ("vase", "home"))
SUBJECTS = (("algebra", "Science"), ("biology", "Science"), ("chemistry", "Science"), ("physics", "Science"),
            ("history", "Humanities"), ("literature", "Humanities"), ("philosophy", "Humanities"),
            ("art", "Humanities"))

def people(rng: random.Random, n: int) -> list[str]:
    """`n` distinct full names."""
    return rng.sample([f"{f} {s}" for f in FIRST for s in LAST], n)


def date(rng: random.Random, year: int, month: int | None = None) -> str:
    """An ISO date in `year` (and `month` when given)."""
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


def sql_reply(lead: str, query: str) -> str:
    """A reply as an assistant writes it: a sentence, then the query in a ```sql block."""
    return f"{lead}\n\n```sql\n{query.strip()}\n```"


def rows_of(rows: Iterable[tuple[Any, ...]]) -> tuple[tuple[Any, ...], ...]:
    """Rows as `SqlRows` holds them."""
    return tuple(tuple(r) for r in rows)


def same_rows(a: Iterable[tuple[Any, ...]], b: Iterable[tuple[Any, ...]]) -> bool:
    """Equal as `SqlRows` compares unordered rows (floats to 6 places)."""
    def key(rows: Iterable[tuple[Any, ...]]) -> list[str]:
        return sorted(repr(tuple(round(v, 6) if isinstance(v, float) else v for v in r)) for r in rows)
    return key(a) == key(b)


__all__ = ["CITIES", "DEPARTMENTS", "PRODUCTS", "SUBJECTS", "date", "people", "rows_of", "same_rows", "setup_sql",
           "sql_reply"]
