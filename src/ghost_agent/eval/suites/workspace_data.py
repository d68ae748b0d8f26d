"""The `workspace_data` suite (a dev set): compute a number from a small CSV or JSON file in the workspace.

Each task carries its data file in `EvalTask.files`; the http runner writes it into the task's session workspace
before sending the prompt (the agent's tools see it in their working directory), so the model has to open the
file rather than read the data from the prompt. The prompts name the file and ask to end with
`Answer: <number>` (the `answer_line` verifier). `REFERENCES` recomputes every answer from the same file text;
the tests run those programs in the sandbox. Clusters: `csv` and `json`.
"""

from __future__ import annotations

import json
from typing import Any

from ghost_agent.eval.task import EvalTask

SUITE = "workspace_data"
CLUSTERS = ("csv", "json")
_ANSWER = "End your reply with a line of the form `Answer: <number>` (the number only)."

SALES_CSV = """date,region,product,units,unit_price
2024-03-01,north,widget,12,4.50
2024-03-01,south,gadget,7,12.00
2024-03-02,west,widget,20,4.50
2024-03-02,north,gizmo,3,25.00
2024-03-03,east,gadget,15,12.00
2024-03-03,west,gizmo,5,25.00
2024-03-04,north,widget,22,4.25
2024-03-04,south,widget,9,4.50
2024-03-05,west,gadget,11,11.50
2024-03-05,east,doohickey,30,1.20
2024-03-06,north,gadget,25,11.50
2024-03-06,west,widget,14,4.25
2024-03-07,south,gizmo,2,26.00
2024-03-07,north,doohickey,40,1.20
2024-03-08,east,widget,18,4.50
2024-03-08,west,doohickey,10,1.25
"""

INVENTORY = {
    "updated": "2024-03-08",
    "warehouses": [
        {"name": "Leeds", "bins": [
            {"sku": "A-100", "qty": 40, "unit_cost": 2.5},
            {"sku": "B-204", "qty": 12, "unit_cost": 14.0},
            {"sku": "C-310", "qty": 5, "unit_cost": 99.9},
        ]},
        {"name": "Bristol", "bins": [
            {"sku": "B-204", "qty": 30, "unit_cost": 14.0},
            {"sku": "D-007", "qty": 8, "unit_cost": 7.25},
        ]},
        {"name": "Glasgow", "bins": [
            {"sku": "A-100", "qty": 15, "unit_cost": 2.5},
            {"sku": "B-204", "qty": 9, "unit_cost": 13.5},
            {"sku": "D-007", "qty": 20, "unit_cost": 7.25},
        ]},
    ],
}
INVENTORY_JSON = json.dumps(INVENTORY, indent=2) + "\n"

_CSV_FILES = {"sales.csv": SALES_CSV}
_JSON_FILES = {"inventory.json": INVENTORY_JSON}


def _prompt(file: str, ask: str) -> str:
    return (f"The file `{file}` is in your current working directory (your workspace). {ask} "
            f"Read the file to find out; do not guess. {_ANSWER}")


# slug, cluster, files, question, expected
_TASKS: tuple[tuple[str, str, dict[str, str], str, float], ...] = (
    ("csv-total-revenue", "csv", _CSV_FILES,
     "Each row is one sale. What is the total revenue of all sales, where a row's revenue is units * unit_price?",
     1445),
    ("csv-mean-units-west", "csv", _CSV_FILES,
     "What is the mean number of units per sale over the rows whose region is west?", 12.0),
    ("csv-top-region-revenue", "csv", _CSV_FILES,
     "Group the sales by region and total each region's revenue (units * unit_price). What is the highest "
     "regional total?", 558),
    ("csv-distinct-products", "csv", _CSV_FILES,
     "How many distinct products appear in the file?", 4),
    ("csv-north-big-sales", "csv", _CSV_FILES,
     "How many rows have region north and at least 20 units?", 3),
    ("json-sku-total", "json", _JSON_FILES,
     "It lists warehouses and the bins in each. How many units of SKU B-204 are there across all warehouses?",
     51),
    ("json-leeds-value", "json", _JSON_FILES,
     "It lists warehouses and the bins in each. What is the total stock value of the Leeds warehouse, summing "
     "qty * unit_cost over its bins?", 767.5),
)

_CSV_HEAD = f"import csv, io\nrows = list(csv.DictReader(io.StringIO({SALES_CSV!r})))\n"
_JSON_HEAD = f"import json\ndata = json.loads({INVENTORY_JSON!r})\n"

REFERENCES: dict[str, tuple[str, str]] = {
    f"{SUITE}/csv/csv-total-revenue": (
        "python", _CSV_HEAD + "print(round(sum(int(r['units']) * float(r['unit_price']) for r in rows), 6))"),
    f"{SUITE}/csv/csv-mean-units-west": (
        "python", _CSV_HEAD + "import statistics\n"
        "print(statistics.mean(int(r['units']) for r in rows if r['region'] == 'west'))"),
    f"{SUITE}/csv/csv-top-region-revenue": (
        "python", _CSV_HEAD + "import collections\nby = collections.Counter()\n"
        "for r in rows:\n    by[r['region']] += int(r['units']) * float(r['unit_price'])\n"
        "print(round(max(by.values()), 6))"),
    f"{SUITE}/csv/csv-distinct-products": ("python", _CSV_HEAD + "print(len({r['product'] for r in rows}))"),
    f"{SUITE}/csv/csv-north-big-sales": (
        "python", _CSV_HEAD + "print(sum(r['region'] == 'north' and int(r['units']) >= 20 for r in rows))"),
    f"{SUITE}/json/json-sku-total": (
        "python", _JSON_HEAD + "print(sum(b['qty'] for w in data['warehouses'] for b in w['bins'] "
        "if b['sku'] == 'B-204'))"),
    f"{SUITE}/json/json-leeds-value": (
        "python", _JSON_HEAD + "print(round(sum(b['qty'] * b['unit_cost'] for w in data['warehouses'] "
        "if w['name'] == 'Leeds' for b in w['bins']), 6))"),
}


def tasks() -> list[EvalTask]:
    """Every task, ids "workspace_data/<cluster>/<slug>", each with its data file in `files`."""
    out: list[EvalTask] = []
    for slug, cluster, files, ask, expected in _TASKS:
        (file,) = files
        kwargs: dict[str, Any] = {"rel_tolerance": 1e-6}
        out.append(EvalTask(id=f"{SUITE}/{cluster}/{slug}", suite=SUITE, cluster=cluster, prompt=_prompt(file, ask),
                            verifier="answer_line", expected=expected, kwargs=kwargs, files=dict(files)))
    return out


__all__ = ["CLUSTERS", "INVENTORY_JSON", "REFERENCES", "SALES_CSV", "SUITE", "tasks"]
