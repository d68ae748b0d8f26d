"""The correction-transfer suite ("does it learn?", issue 13): families of requests where a small model's
default answer differs from a convention the user states once, in a correction.

Per family: a teaching request (answered the default way), the user's correction — written the way people
write them: "no, …" or "nope —" or "wrong format", the convention, and the request again — then fresh probe
requests of the same kind. A probe is checked by the family's convention check (`eval/conventions.py`). The
driver (`eval/transfer.py`) asks the probes before learning (fresh sessions) and after (in the session that
was taught), plus probes of other families as controls.

Every probe names the kind of thing it asks for ("date", "dollars", "Python function", "SQL query", …), as a
user asking for more of the same would; the lesson the daemon learns must be found from that. `good` and
`bad` are example replies — one following the convention, one in the model's likely default form — used by
the tests (every check must accept the first and reject the second) and by the scripted model of the driver
tests. Nothing here is known to the agent: the suite only measures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SUITE = "transfer"


@dataclass(frozen=True)
class Probe:
    """One request and what the family's check needs to grade the reply (`expected`); `good` / `bad` are
    example replies (None: the family's)."""

    id: str
    prompt: str
    expected: Any = None
    good: str | None = None
    bad: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the examples left out)."""
        return {"id": self.id, "prompt": self.prompt, "expected": self.expected}


@dataclass(frozen=True)
class Family:
    """A kind of request and the convention the user wants for it: `teach` is answered first, `correction`
    states the convention, `probes` are asked afterwards. `check` names a function in `eval/conventions.py`."""

    id: str
    convention: str
    check: str
    teach: Probe
    correction: str
    probes: tuple[Probe, ...]
    good: str = ""
    bad: str = ""
    tags: tuple[str, ...] = field(default=())

    def example(self, probe: Probe, *, good: bool) -> str:
        """The example reply for `probe` (its own, else the family's)."""
        own = probe.good if good else probe.bad
        return own if own is not None else (self.good if good else self.bad)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"id": self.id, "convention": self.convention, "check": self.check, "teach": self.teach.to_dict(),
                "correction": self.correction, "probes": [p.to_dict() for p in self.probes]}


def _p(family: str, slug: str, prompt: str, expected: Any = None, good: str | None = None,
       bad: str | None = None) -> Probe:
    return Probe(f"{family}/{slug}", prompt, expected, good, bad)


_PY_GOOD = "```python\ndef f(x: int, y: int = 0) -> int:\n    return x + y\n```"
_PY_BAD = "```python\ndef f(x, y=0):\n    return x + y\n```"

FAMILIES: tuple[Family, ...] = (
    Family(
        id="dates",
        convention="dates as DD/MM/YYYY",
        check="dmy_dates",
        teach=_p("dates", "teach-christmas", "When is Christmas Day in 2025? Just give me the date.",
                 ["25/12/2025"], "25/12/2025", "Christmas Day in 2025 is on December 25, 2025."),
        correction="No, I write dates as DD/MM/YYYY. What's the date of Christmas Day 2025?",
        probes=(
            _p("dates", "new-years-eve", "What's the date of New Year's Eve 2025?", ["31/12/2025"],
               "New Year's Eve 2025 is on 31/12/2025.", "New Year's Eve 2025 falls on December 31, 2025."),
            _p("dates", "halloween", "What date is Halloween in 2026?", ["31/10/2026"],
               "Halloween 2026 is on 31/10/2026.", "Halloween in 2026 is on Saturday, October 31st."),
            _p("dates", "passport", "My passport expires on the 14th of August 2027. Write that date for a form.",
               ["14/08/2027"], "Expiry date: 14/08/2027", "Expiry date: 08/14/2027"),
            _p("dates", "one-week-later", "What is the date exactly one week after 20 March 2025?", ["27/03/2025"],
               "One week after that is 27/03/2025.", "One week after March 20, 2025 is March 27, 2025."),
        ),
    ),
    Family(
        id="money",
        convention="amounts as 351.00 USD (code after the number)",
        check="currency_code",
        teach=_p("money", "teach-percent", "What is 15% of 2340 dollars?",
                 {"amounts": ["351.00"], "code": "USD"}, "15% of 2340 dollars is 351.00 USD.",
                 "15% of $2,340 is $351."),
        correction=("No, wrong format. I want money written with the currency code after the number, "
                    "like 12.50 USD. What is 15% of 2340 dollars?"),
        probes=(
            _p("money", "tip", "How much is 20% of 80 dollars?", {"amounts": ["16.00"], "code": "USD"},
               "20% of 80 dollars is 16.00 USD.", "20% of $80 is $16."),
            _p("money", "books", "I bought 3 books at 12 dollars each. How many dollars did I spend?",
               {"amounts": ["36.00"], "code": "USD"}, "You spent 36.00 USD.", "You spent $36.00."),
            _p("money", "split-bill", "What is 90 dollars divided by 3?",
               {"amounts": ["30.00"], "code": "USD"}, "That is 30.00 USD each.", "That is $30 each."),
            _p("money", "ten-percent", "What is 10% of 450 dollars?", {"amounts": ["45.00"], "code": "USD"},
               "10% of 450 dollars is 45.00 USD.", "10% of 450 dollars is USD 45."),
        ),
    ),
    Family(
        id="python_hints",
        convention="Python functions fully type-hinted",
        check="python_type_hints",
        teach=_p("python_hints", "teach-average", "Write a Python function that returns the average of a list of "
                 "numbers."),
        correction=("no, you forgot the type hints. I need type hints on every parameter and on the return value. "
                    "Write the Python function for the average of a list of numbers again."),
        probes=(
            _p("python_hints", "palindrome", "Write a Python function that checks whether a string is a "
               "palindrome."),
            _p("python_hints", "vowels", "Write a Python function that counts the vowels in a word."),
            _p("python_hints", "merge-dicts", "Write a Python function that merges two dictionaries."),
            _p("python_hints", "largest", "Write a Python function that returns the largest of three numbers."),
        ),
        good=_PY_GOOD,
        bad=_PY_BAD,
    ),
    Family(
        id="sql_case",
        convention="SQL keywords in lowercase",
        check="sql_lowercase",
        teach=_p("sql_case", "teach-paris", "Write an SQL query that selects all customers from the customers "
                 "table who live in Paris."),
        correction=("Nope, our style guide wants SQL keywords in lowercase: select, from, where. Write the SQL "
                    "query for the customers who live in Paris again."),
        probes=(
            _p("sql_case", "count-orders", "Write an SQL query that counts the rows in the orders table."),
            _p("sql_case", "salaries", "Write an SQL query to get the names of employees earning more than 50000."),
            _p("sql_case", "delete-logs", "Write an SQL query that deletes the rows of the logs table from before "
               "2020."),
            _p("sql_case", "sort-products", "Write an SQL query that returns all products sorted by price, "
               "highest first."),
        ),
        good="```sql\nselect name from customers where city = 'Paris' order by name;\n```",
        bad="```sql\nSELECT name FROM customers WHERE city = 'Paris' ORDER BY name;\n```",
    ),
    Family(
        id="kelvin",
        convention="temperatures in kelvin only",
        check="kelvin",
        teach=_p("kelvin", "teach-boiling", "At what temperature does water boil at sea level?", [372.5, 373.7],
                 "Water boils at 373.15 K at sea level.", "Water boils at 100°C (212°F) at sea level."),
        correction=("that's not the unit I use. Give me temperatures in kelvin, not Celsius or Fahrenheit. At what "
                    "temperature does water boil at sea level?"),
        probes=(
            _p("kelvin", "freezing", "At what temperature does water freeze?", [272.5, 273.7],
               "Water freezes at 273.15 K.", "Water freezes at 0 °C (32 °F)."),
            _p("kelvin", "body", "What is the normal temperature of the human body?", [309.0, 311.0],
               "About 310 K.", "About 37 degrees Celsius (98.6 degrees Fahrenheit)."),
            _p("kelvin", "room", "What is a comfortable room temperature?", [290.0, 299.0],
               "Around 294 kelvin.", "Around 20-22°C."),
            _p("kelvin", "oven", "What oven temperature should I bake bread at?", [440.0, 530.0],
               "Bake it at about 493 K.", "Bake it at 220°C (425°F)."),
        ),
    ),
    Family(
        id="time_24h",
        convention="times on the 24-hour clock (14:30)",
        check="time_24h",
        teach=_p("time_24h", "teach-train", "My train leaves at half past two in the afternoon. What time should I "
                 "put in my calendar?", ["14:30"], "Put 14:30 in your calendar.", "Put 2:30 PM in your calendar."),
        correction=("No, I use the 24-hour clock, not AM/PM. What time should I put in my calendar for the train at "
                    "half past two in the afternoon?"),
        probes=(
            _p("time_24h", "meeting", "The meeting starts at a quarter to five in the afternoon. What time is "
               "that?", ["16:45"], "That is 16:45.", "That is 4:45 PM."),
            _p("time_24h", "three-hours", "What time is it three hours after eleven in the morning?", ["14:00"],
               "It is 14:00.", "It is 2:00 p.m."),
            _p("time_24h", "store", "The store closes at half past nine in the evening. What time is that?",
               ["21:30"], "21:30", "9:30 pm"),
            _p("time_24h", "half-past-seven", "What time is half past seven in the evening?",
               ["19:30"], "It is 19:30.", "It is 7:30 PM."),
        ),
    ),
    Family(
        id="file_names",
        convention="file names in lowercase kebab-case",
        check="kebab_file_names",
        teach=_p("file_names", "teach-meeting-notes", "Suggest a file name for my notes from the weekly team "
                 "meeting. It's a markdown file.", "md", "weekly-team-meeting-notes.md",
                 "WeeklyTeamMeetingNotes.md"),
        correction=("Not like that — I use kebab-case for file names: all lowercase, words joined with hyphens. "
                    "Suggest a file name for the weekly team meeting notes, markdown."),
        probes=(
            _p("file_names", "resize-script", "Suggest a file name for a Python script that resizes photos.",
               "py", "resize-photos.py", "resize_photos.py"),
            _p("file_names", "orders-export", "Suggest a file name for a CSV export of customer orders.",
               "csv", "customer-orders-export.csv", "customer_orders_export.csv"),
            _p("file_names", "tax-return", "What file name should I give my 2025 tax return PDF?",
               "pdf", "tax-return-2025.pdf", "Tax_Return_2025.pdf"),
            _p("file_names", "backup-script", "Suggest a file name for a shell script that backs up the "
               "database.", "sh", "backup-database.sh", "backupDatabase.sh"),
        ),
    ),
    Family(
        id="commits",
        convention="commit messages prefixed fix: / feat: / docs:",
        check="conventional_commit",
        teach=_p("commits", "teach-typo", "Write a git commit message for fixing a typo in the README."),
        correction=("That's not how we write them — commit messages start with a type prefix like fix: or feat:. "
                    "Write the git commit message for the README typo fix again."),
        probes=(
            _p("commits", "dark-mode", "Write a git commit message for adding a dark mode setting."),
            _p("commits", "unused-import", "Write a git commit message for removing an unused import."),
            _p("commits", "install-docs", "Write a git commit message for updating the installation docs."),
            _p("commits", "faster-loader", "Write a git commit message for making the image loader faster."),
        ),
        good="fix: correct a typo in the README",
        bad="Fix typo in README",
    ),
    Family(
        id="inline_lists",
        convention="lists on one line, separated by semicolons",
        check="semicolon_list",
        teach=_p("inline_lists", "teach-fruits", "List five fruits that are high in vitamin C.", 5,
                 "orange; kiwi; strawberry; guava; papaya",
                 "1. Orange\n2. Kiwi\n3. Strawberry\n4. Guava\n5. Papaya"),
        correction=("No, not as bullet points. I want lists on a single line, items separated by semicolons. List "
                    "five fruits high in vitamin C."),
        probes=(
            _p("inline_lists", "languages", "List five programming languages.", 5,
               "Python; Java; C; Go; Rust", "- Python\n- Java\n- C\n- Go\n- Rust"),
            _p("inline_lists", "colors", "List the three primary colors.", 3,
               "red; yellow; blue", "1. Red\n2. Yellow\n3. Blue"),
            _p("inline_lists", "countries", "List six countries in South America.", 6,
               "Brazil; Argentina; Chile; Peru; Colombia; Ecuador",
               "Brazil, Argentina, Chile, Peru, Colombia, Ecuador"),
            _p("inline_lists", "planets", "List the four planets closest to the sun.", 4,
               "Mercury; Venus; Earth; Mars", "* Mercury\n* Venus\n* Earth\n* Mars"),
        ),
    ),
    Family(
        id="email_sign_off",
        convention="emails signed 'Cheers, Sam'",
        check="email_sign_off",
        teach=_p("email_sign_off", "teach-landlord", "Write a short email to my landlord asking when the heating "
                 "will be fixed.", ["Cheers, Sam"]),
        correction=("Wrong sign-off — I sign my emails 'Cheers, Sam', not 'Best regards, [Your Name]'. Write the "
                    "short email to my landlord about the heating again."),
        probes=(
            _p("email_sign_off", "thank-colleague", "Write a short email thanking a colleague for her help with "
               "the report.", ["Cheers, Sam"]),
            _p("email_sign_off", "dentist", "Write a short email to my dentist asking to move my appointment to "
               "next week.", ["Cheers, Sam"]),
            _p("email_sign_off", "team-lunch", "Write a short email inviting the team to lunch on Friday.",
               ["Cheers, Sam"]),
            _p("email_sign_off", "invoice", "Write a short email to a client saying the invoice is attached.",
               ["Cheers, Sam"]),
        ),
        good="Subject: Quick question\n\nHi,\n\nCould you let me know?\n\nCheers,\nSam",
        bad="Subject: Quick question\n\nHi,\n\nCould you let me know?\n\nBest regards,\n[Your Name]",
    ),
)


def families(ids: list[str] | tuple[str, ...] | None = None) -> list[Family]:
    """The families, in suite order; only `ids` (kept in suite order) when given. ValueError for unknown ids."""
    if not ids:
        return list(FAMILIES)
    known = {f.id for f in FAMILIES}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ValueError(f"unknown transfer famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)} "
                         f"(known: {', '.join(f.id for f in FAMILIES)})")
    wanted = set(ids)
    return [f for f in FAMILIES if f.id in wanted]


def family_ids() -> list[str]:
    """Every family id, in suite order."""
    return [f.id for f in FAMILIES]


__all__ = ["FAMILIES", "SUITE", "Family", "Probe", "families", "family_ids"]
