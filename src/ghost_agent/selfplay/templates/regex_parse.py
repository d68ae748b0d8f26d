"""regex_parse: "I need a regex that matches …" (`RegexMatches`: strings it must and must not match, texts it
must find exactly the right pieces in, none of them all shown) and "parse this text into …" in Python
(`PythonTests`: hidden asserts on the function)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ghost_agent.selfplay.checks import PythonTests, RegexMatches
from ghost_agent.selfplay.task import Task, draft


def _regex_reply(intro: str, pattern: str, after: str = "") -> str:
    """A regex reply as a good assistant writes it: a sentence, the pattern alone in a fence, maybe a note."""
    return f"{intro}\n\n```\n{pattern}\n```" + (f"\n\n{after}" if after else "")


def _python_reply(intro: str, code: str) -> str:
    return f"{intro}\n\n```python\n{code.strip()}\n```"


# Dates: (order of the parts, separator) and the user's name for the format
_DATE_FORMATS = ((("Y", "M", "D"), "-", "YYYY-MM-DD"), (("D", "M", "Y"), "/", "DD/MM/YYYY"),
                 (("M", "D", "Y"), "/", "MM/DD/YYYY"), (("D", "M", "Y"), ".", "DD.MM.YYYY"))
_LOOSE = {"Y": r"\d{4}", "M": r"\d{2}", "D": r"\d{2}"}
_STRICT = {"Y": r"\d{4}", "M": r"(0[1-9]|1[0-2])", "D": r"(0[1-9]|[12]\d|3[01])"}


def _sep(sep: str) -> str:
    """A date separator inside a pattern ("." escaped)."""
    return "\\." if sep == "." else sep


@dataclass(frozen=True)
class DateRegex:
    """Dates in one of four formats: the shape (d1), real month and day ranges (d2), every valid date found in a
    log text with invalid ones and look-alikes around (d3)."""

    cluster: str = "regex_parse"
    name: str = "date_regex"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        order, sep, label = rng.choice(_DATE_FORMATS)

        def fmt(y: int, m: int, d: int, sep: str = sep, pad: bool = True) -> str:
            parts = {"Y": f"{y}", "M": f"{m:02d}" if pad else f"{m}", "D": f"{d:02d}" if pad else f"{d}"}
            return sep.join(parts[k] for k in order)

        def valid() -> str:
            return fmt(rng.randint(1990, 2030), rng.randint(1, 12), rng.randint(1, 28))

        example = valid()
        parts = _STRICT if difficulty >= 2 else _LOOSE
        reference_pattern = _sep(sep).join(parts[k] for k in order)
        matches = [valid() for _ in range(5)] + [fmt(2024, 12, 31), fmt(2000, 1, 1)]
        non_matches = [fmt(2024, 3, 7, pad=False), fmt(2024, 3, 7, "_"), f"{example} ", f"{example}0", "today",
                       fmt(2024, 3, 7).replace("2024", "24")]
        if sep == ".":
            non_matches.append(fmt(2024, 3, 7, "/"))
        if difficulty >= 2:
            non_matches += [fmt(2024, 13, 1), fmt(2024, 0, 10), fmt(2024, 2, 32), fmt(2024, 4, 0), fmt(2024, 19, 40)]
        finds: list[tuple[str, tuple[str, ...]]] = []
        mode = "fullmatch"
        if difficulty == 3:
            a, b, c = valid(), valid(), fmt(rng.randint(1990, 2030), 10, 31)
            text = (f"Invoice {rng.randint(100, 999)} issued {a}, due ({b}); the form said {fmt(2024, 13, 2)} and "
                    f"{fmt(2023, 11, 0)} by mistake. Paid {c}.")
            finds = [(text, (a, b, c)), ("no dates in here, only 12 and 2024", ())]
            matches, non_matches = matches[:3], [fmt(2024, 13, 1), fmt(2024, 2, 32), "2024"]
            mode = "search"
        rules = {1: f"the {label} shape (always two digits for day and month, four for the year)",
                 2: f"{label}, with a real month (01-12) and day (01-31), two digits each",
                 3: f"as {label} with a real month (01-12) and day (01-31)"}[difficulty]
        if difficulty == 3:
            prompt = (f"I need a Python regex that finds every date in a text, written {rules}, e.g. {example}. "
                      f"Something like {fmt(2024, 13, 2)} isn't a date and shouldn't be picked up.")
        else:
            prompt = (f"I need a regex to validate a date field in {rules}, e.g. {example}. It should reject "
                      f"{fmt(2024, 3, 7, pad=False)} and anything with extra characters. Python `re`, please.")
        reference = _regex_reply("This one should do it:", f"^{reference_pattern}$" if mode == "fullmatch"
                                 else reference_pattern)
        loose_digits = _sep(sep).join(r"\d{1,2}" if k != "Y" else r"\d{4}" for k in order)
        bad = [_regex_reply("Try this:", loose_digits if mode == "search" else f"^{loose_digits}$")]
        if difficulty >= 2:
            shape_only = _sep(sep).join(_LOOSE[k] for k in order)
            bad.append(_regex_reply("Here you go:", f"^{shape_only}$" if mode == "fullmatch" else shape_only))
        if sep == "." and difficulty < 3:
            bad.append(_regex_reply("Here you go:", "^" + ".".join(parts[k] for k in order) + "$"))
        check = RegexMatches(matches=tuple(matches), non_matches=tuple(non_matches), finds=tuple(finds), mode=mode)
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad)


@dataclass(frozen=True)
class SemverRegex:
    """Semantic versions (with a "v" prefix on some seeds): MAJOR.MINOR.PATCH (d1), no leading zeros (d2), an
    optional pre-release and build part (d3)."""

    cluster: str = "regex_parse"
    name: str = "semver_regex"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        prefix = rng.choice(("", "", "v"))
        where = {"": rng.choice(("the version field of our manifests", "package versions in a lockfile")),
                 "v": "our git tags"}[prefix]

        def ver(*nums: int) -> str:
            return prefix + ".".join(map(str, nums))

        matches = [ver(rng.randint(0, 3), rng.randint(0, 20), rng.randint(0, 40)) for _ in range(4)]
        matches += [ver(0, 0, 0), ver(10, 20, 30), ver(1, 0, rng.randint(100, 999))]
        non_matches = [ver(1, 2), ver(1, 2, 3, 4), prefix + "1.2.x", prefix + "1..3", prefix + "1a2b3",
                       ver(1, 2, 3) + " ", ("" if prefix else "v") + "1.2.3", prefix + "1.2.-3"]
        num = r"\d+" if difficulty == 1 else r"(0|[1-9]\d*)"
        core = rf"{num}\.{num}\.{num}"
        if difficulty >= 2:
            matches.append(ver(1, 10, 0))
            non_matches += [prefix + "01.2.3", prefix + "1.02.3", prefix + "1.2.03"]
        tail = ""
        if difficulty == 3:
            ident = r"[0-9A-Za-z-]+"
            tail = rf"(-{ident}(\.{ident})*)?(\+{ident}(\.{ident})*)?"
            matches += [ver(1, 0, 0) + "-alpha", ver(2, 1, 0) + "-rc.1", ver(1, 4, 2) + "-beta.2+build.5",
                        ver(0, 9, 1) + "+20240307", ver(3, 0, 0) + "-x-y.7"]
            non_matches += [ver(1, 2, 3) + "-", ver(1, 2, 3) + "+", ver(1, 2, 3) + "-beta..1", ver(1, 2, 3) + "-b@d"]
        pattern = f"^{prefix}{core}{tail}$"
        example = matches[0] if difficulty < 3 else matches[-4]
        rules = {1: "three numbers separated by dots",
                 2: "three numbers separated by dots, no leading zeros (0 itself is fine)",
                 3: "semver: three numbers without leading zeros, optionally a pre-release like -rc.1 and build "
                    "metadata like +build.5"}[difficulty]
        always = " (always with the v)" if prefix else ""
        prompt = (f"what regex can I use to check {where}? They look like {example}{always}"
                  f" — {rules}. The whole string has to be a version.")
        reference = _regex_reply("Anchored, so nothing else can be around it:", pattern)
        bad = [_regex_reply("This works:", f"^{prefix}{num}.{num}.{num}{tail}$")]  # unescaped dots
        if difficulty >= 2:
            bad.append(_regex_reply("This works:", rf"^{prefix}\d+\.\d+\.\d+{tail}$"))
        if difficulty == 3:
            bad.append(_regex_reply("This works:", rf"^{prefix}{core}(-.+)?(\+.+)?$"))
            bad.append(_regex_reply("This works:", f"^{prefix}{core}$"))
        check = RegexMatches(matches=tuple(matches), non_matches=tuple(non_matches))
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad)


_HEX = "0123456789abcdefABCDEF"


@dataclass(frozen=True)
class HexColorRegex:
    """CSS hex colours: #RRGGBB in either case (d1), #RGB too (d2), found in a stylesheet with 4/8-digit alpha
    forms, id selectors and a 7-digit typo around (d3)."""

    cluster: str = "regex_parse"
    name: str = "hex_color_regex"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        def color(n: int, case: str = "") -> str:
            digits = "".join(rng.choice(_HEX) for _ in range(n))
            return "#" + (digits.upper() if case == "up" else digits.lower() if case == "low" else digits)

        six = [color(6, "low"), color(6, "up"), color(6), "#000000", "#FFFFFF"]
        non = ["#12345", "#1234567", color(6).lstrip("#"), "#12345g", "# 123456", "##123456", color(6) + ";"]
        if difficulty == 1:
            pattern = r"^#[0-9a-fA-F]{6}$"
            matches, non_matches = six, non + [color(3)]
            bad = [_regex_reply("Here:", r"^#[0-9a-f]{6}$"), _regex_reply("Here:", r"^#[0-9a-fA-F]+$")]
            prompt = (f"need a regex to validate a colour field: # followed by exactly 6 hex digits, upper or lower "
                      f"case, like {six[0]} or {six[1]}.")
            finds: tuple[tuple[str, tuple[str, ...]], ...] = ()
            mode = "fullmatch"
        elif difficulty == 2:
            pattern = r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"
            matches, non_matches = six + [color(3, "low"), color(3, "up")], non + ["#1234", "#12"]
            bad = [_regex_reply("Here:", r"^#[0-9a-fA-F]{3,6}$"), _regex_reply("Here:", r"^#[0-9a-fA-F]{6}$")]
            prompt = (f"regex for a CSS hex colour please, either the short form like {matches[-2]} or the long one "
                      f"like {six[1]} (any case). The field holds only the colour.")
            finds, mode = (), "fullmatch"
        else:
            pattern = r"#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})\b"
            found = (color(6, "low"), color(3, "up"), color(8), color(4, "low"), color(6, "up"))
            text = (f"#main {{ color: {found[0]}; border: 1px solid {found[1]}; }}\n"
                    f".card {{ background: {found[2]}; box-shadow: 0 0 2px {found[3]}; }}\n"
                    f"#nav-bar a:hover {{ color: #1234567; outline-color: {found[4]} }} /* see #section2 */\n")
            finds = ((text, found), ("a { color: red; } #footer { margin: 0 }", ()))
            matches, non_matches, mode = [], [], "search"
            bad = [_regex_reply("Here:", r"#(?:[0-9a-fA-F]{3}){1,2}"),
                   _regex_reply("Here:", r"#[0-9a-fA-F]{3,8}"),
                   _regex_reply("Here:", r"#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")]
            prompt = (f"I want to pull every hex colour out of a stylesheet with Python re.finditer: #rgb, #rgba, "
                      f"#rrggbb and #rrggbbaa, any case (e.g. {found[0]}, {found[2]}). Don't catch id selectors like "
                      "#main or a broken 7-digit value.")
        reference = _regex_reply("Hex digits in either case:", pattern)
        check = RegexMatches(matches=tuple(matches), non_matches=tuple(non_matches), finds=finds, mode=mode)
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad)


_WORDS = ("alpha", "beta", "north wing", "main-db", "Q3 report", "prod", "eu-west-1", "hello world", "v2 api")


@dataclass(frozen=True)
class QuotedStrings:
    """Every quoted string in a line, quotes included: one per line (d1), several per line, where a greedy
    `".*"` swallows the text between them (d2), backslash-escaped quotes inside (d3)."""

    cluster: str = "regex_parse"
    name: str = "quoted_strings"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        q = rng.choice(('"', "'"))
        kind = {'"': "double", "'": "single"}[q]
        cmd = rng.choice(("set", "label", "tag", "rename"))

        def quoted(escaped: bool = False) -> str:
            word = rng.choice(_WORDS)
            if escaped:
                word = f"say \\{q}{rng.choice(('hi', 'ok', 'no'))}\\{q} now"
            return f"{q}{word}{q}"

        finds: list[tuple[str, tuple[str, ...]]] = []
        for _ in range(3):
            if difficulty == 1:
                one = quoted()
                finds.append((f"{cmd} name={one} --force", (one,)))
            else:
                picked = [quoted(), quoted(difficulty == 3), quoted()]
                finds.append((f"{cmd} {picked[0]} to {picked[1]} and {picked[2]};", tuple(picked)))
        finds.append((f"{cmd} nothing here, no quotes", ()))
        r = "[^" + q + "]*"
        pattern = {1: f"{q}{r}{q}", 2: f"{q}{r}{q}", 3: f"{q}(?:[^{q}\\\\]|\\\\.)*{q}"}[difficulty]
        example = finds[0][0]
        rules = {1: "", 2: " There can be several on one line.",
                 3: f" There can be several on one line, and a quote inside one is escaped with a backslash, like "
                    f"{q}say \\{q}hi\\{q}{q}."}[difficulty]
        prompt = (f"Regex question: I want to grab the {kind}-quoted strings (with their quotes) out of lines like\n\n"
                  f"    {example}\n\nI'm using re.findall/finditer in Python.{rules}")
        but = "anything but a quote or a backslash, or an escaped character" if difficulty == 3 else "no quote"
        reference = _regex_reply(f"Match the opening quote, then {but}, then the closing quote:",
                                 pattern)
        bad = [_regex_reply("This one:", f"{q}\\w+{q}")]
        if difficulty >= 2:
            bad.append(_regex_reply("This one:", f"{q}.*{q}"))
        if difficulty == 3:
            bad.append(_regex_reply("This one:", f"{q}{r}{q}"))
            bad.append(_regex_reply("This one:", f"{q}.*?{q}"))
        else:
            bad.append(_regex_reply("This one:", f"{q}[a-z ]+{q}"))
        check = RegexMatches(finds=tuple(finds), mode="search")
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad)


_LOCAL = ("ana", "ben.ito", "c.lee", "dev", "emma_k", "farid", "grace.h", "hiro", "ines99", "jonas")
_DOMAINS = ("example.com", "acme.io", "mail.globex.org", "corp.example.co.uk", "uni-bonn.de", "hooli.dev")


@dataclass(frozen=True)
class EmailFinds:
    """Email addresses in running text: plain, one followed by a comma (d1); dots, plus tags, subdomains and
    country domains (d2); a sentence-ending period, @handles and hosts without a TLD around (d3)."""

    cluster: str = "regex_parse"
    name: str = "email_finds"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        def email() -> str:
            local = rng.choice(_LOCAL[:4] if difficulty == 1 else _LOCAL)
            if difficulty >= 2 and rng.random() < 0.3:
                local += f"+{rng.choice(('news', 'work', 'test'))}"
            domain = rng.choice(_DOMAINS[:2] if difficulty == 1 else _DOMAINS)
            return f"{local}@{domain}"

        texts: list[tuple[str, tuple[str, ...]]] = []
        for _ in range(2):
            a, b, c = email(), email(), email()
            if difficulty == 1:
                texts.append((f"Contact {a}, or write to {b} for billing", (a, b)))
            elif difficulty == 2:
                texts.append((f"cc: {a}, {b}; reply-to <{c}>", (a, b, c)))
            else:
                texts.append((f"Ping @{a.split('@')[0].split('.')[0]} or mail {a}; admin@localhost and root@server "
                              f"are internal. Escalate to {b}.", (a, b)))
        if difficulty >= 2:
            hard = "j.smith+work@corp.example.co.uk"
            texts.append((f"from: {hard} (J. Smith)", (hard,)))
        texts.append(("nothing here @ all, just an @mention", ()))
        pattern = r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
        rules = {1: "", 2: " Addresses can have dots or a +tag before the @ and subdomains after it.",
                 3: " Don't pick up @mentions, or internal names without a dot like admin@localhost, and don't "
                    "grab the period at the end of a sentence."}[difficulty]
        prompt = (f"what's a regex to find all email addresses in text like this: \"{texts[0][0]}\"?{rules} "
                  "(Python re.findall)")
        reference = _regex_reply("A local part, an @, and a domain with at least one dot:", pattern)
        bad = [_regex_reply("Use:", r"\S+@\S+")]
        if difficulty == 1:
            bad.append(_regex_reply("Use:", r"\w+@\w+\.com"))
        else:
            bad.append(_regex_reply("Use:", r"\w+@\w+\.\w+"))
        if difficulty == 3:
            bad.append(_regex_reply("Use:", r"[\w.+-]+@[\w.-]+"))
        check = RegexMatches(finds=tuple(texts), mode="search")
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad)


_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


@dataclass(frozen=True)
class ParseDuration:
    """A function turning "90s" / "1h30m" / "1d 2h" into seconds: one unit (d1), units combined (d2), spaces
    between parts and ValueError on junk (d3). Checked by hidden asserts."""

    cluster: str = "regex_parse"
    name: str = "parse_duration"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("parse_duration", "to_seconds", "duration_seconds"))

        def sample(parts: int, sep: str = "") -> tuple[str, int]:
            units = sorted(rng.sample(list(_UNITS), parts), key=lambda u: -_UNITS[u])
            nums = [rng.randint(1, 59) for _ in units]
            return sep.join(f"{n}{u}" for n, u in zip(nums, units, strict=True)), sum(
                n * _UNITS[u] for n, u in zip(nums, units, strict=True))

        cases = [(f"{rng.randint(2, 99)}{u}", 0) for u in _UNITS]
        cases = [(s, int(s[:-1]) * _UNITS[s[-1]]) for s, _ in cases]
        if difficulty >= 2:
            cases += [sample(2), sample(3), sample(4), ("1h0m", 3600)]
        bad_inputs: list[str] = []
        if difficulty == 3:
            cases += [sample(2, " "), sample(3, " ")]
            bad_inputs = ["", "10", "5x", "h", "1h 30", "abc"]
        shown = [c[0] for c in cases[:2]] + ([cases[-3][0], cases[-1][0]] if difficulty == 3 else
                                             [cases[-2][0]] if difficulty == 2 else [])
        rules = {1: "a number and one unit: d, h, m or s",
                 2: "one or more number+unit parts (d, h, m, s) run together, like 1h30m",
                 3: "one or more number+unit parts (d, h, m, s), maybe separated by spaces; anything else should "
                    "raise ValueError"}[difficulty]
        prompt = (f"Can you write a Python function {fn}(text) that returns the number of seconds in a duration "
                  f"string? The format is {rules}. Examples: {', '.join(repr(s) for s in shown)}.")
        asserts = "".join(f"assert {fn}({s!r}) == {want}, {s!r}\n" for s, want in cases)
        for s in bad_inputs:
            asserts += (f"try:\n    {fn}({s!r})\nexcept ValueError:\n    pass\nelse:\n"
                        f"    raise AssertionError('no ValueError for ' + {s!r})\n")
        if difficulty == 3:
            code = f'''
import re

_UNITS = {{"d": 86400, "h": 3600, "m": 60, "s": 1}}


def {fn}(text):
    """Seconds in a duration like "1h 30m"; ValueError when the text is not one."""
    parts = text.split()
    if not parts or not all(re.fullmatch(r"(\\d+[dhms])+", p) for p in parts):
        raise ValueError(f"not a duration: {{text!r}}")
    return sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\\d+)([dhms])", text))
'''
        else:
            code = f'''
import re

_UNITS = {{"d": 86400, "h": 3600, "m": 60, "s": 1}}


def {fn}(text):
    """Seconds in a duration like "1h30m"."""
    return sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\\d+)([dhms])", text))
'''
        reference = _python_reply("A regex for each number+unit pair does most of the work:", code)
        single = f'''
def {fn}(text):
    units = {{"d": 86400, "h": 3600, "m": 60, "s": 1}}
    return int(text[:-1]) * units[text[-1]]
'''
        no_days = f'''
import re


def {fn}(text):
    units = {{"h": 3600, "m": 60, "s": 1}}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\\d+)([hms])", text))
'''
        bad = [_python_reply("Here you go:", no_days)]
        if difficulty >= 2:
            bad.append(_python_reply("Here you go:", single))
        if difficulty == 3:
            bad.append(_python_reply("Here you go:", code.replace(
                '    parts = text.split()\n    if not parts or not all(re.fullmatch(r"(\\d+[dhms])+", p) for p in '
                'parts):\n        raise ValueError(f"not a duration: {text!r}")\n', "")))
        else:
            bad.append(_python_reply("Here you go:", code.replace('"m": 60', '"m": 60 * 60')))
        check = PythonTests(tests=asserts, entry_point=fn)
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad)


_KEYS = ("host", "port", "user", "timeout", "retries", "log_level", "cache_dir", "region", "workers", "token")
_VALUES = ("db.internal", "5432", "svc_app", "30", "3", "info", "/var/cache/app", "eu-west-1", "8", "abc123")


@dataclass(frozen=True)
class ParseConfig:
    """A function parsing `key = value` config text into a dict: comments and blank lines, values holding "="
    (d1); inline comments and quoted values that keep their '#' (d2); [sections] as "section.key" keys (d3)."""

    cluster: str = "regex_parse"
    name: str = "parse_config"

    def _text(self, rng: random.Random, difficulty: int) -> tuple[str, dict[str, str]]:
        keys = rng.sample(range(len(_KEYS)), 5)
        lines, want = ["# generated, do not edit", ""], {}
        sections = rng.sample(("server", "db", "cache", "worker"), 2) if difficulty == 3 else [""]
        for si, section in enumerate(sections):
            if section:
                lines += ["", f"[{section}]"]
            for i in keys[si:si + 4]:
                key, value = _KEYS[i], _VALUES[i]
                spacing = rng.choice((" = ", "=", "  =  "))
                line = f"{key}{spacing}{value}"
                if difficulty >= 2 and rng.random() < 0.5:
                    line += f"  # {rng.choice(('default', 'see docs', 'was 10'))}"
                lines.append(line)
                want[f"{section}.{key}" if section else key] = value
        url = f"postgres://app:pw@db/{rng.choice(('main', 'prod'))}?sslmode=require"
        lines.append(f"dsn = {url}")
        want[f"{sections[-1]}.dsn" if sections[-1] else "dsn"] = url
        if difficulty >= 2:
            secret = f"p#{rng.randint(10, 99)}=x"
            lines.append(f'password = "{secret}"  # rotate yearly')
            want[f"{sections[-1]}.password" if sections[-1] else "password"] = secret
        lines += ["", "   # an indented comment", ""]
        return "\n".join(lines) + "\n", want

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("parse_config", "read_settings", "load_conf"))
        shown, _ = self._text(rng, difficulty)
        tests = [self._text(rng, difficulty) for _ in range(3)]
        rules = {1: "Lines starting with # are comments; blank lines are ignored; spaces around = don't matter.",
                 2: "Comments start with # (whole-line or after a value), blank lines are ignored, spaces around = "
                    "don't matter, and a value in double quotes is taken as is without the quotes, # included.",
                 3: "Like an INI file: [section] headers, keys returned as \"section.key\"; comments start with # "
                    "(whole-line or after a value), blank lines are ignored, a value in double quotes is taken "
                    "without the quotes, # included."}[difficulty]
        prompt = (f"I need a Python function {fn}(text) that parses a config file's text into a dict of strings. "
                  f"It looks like this:\n\n```\n{shown}```\n\n{rules}")
        asserts = "".join(f"assert {fn}({text!r}) == {want!r}\n" for text, want in tests)
        value_expr = "value.strip()"
        if difficulty >= 2:
            value_expr = "_value(value)"
        section_lines = ""
        key_expr = "key.strip()"
        if difficulty == 3:
            section_lines = ('        if line.startswith("[") and line.endswith("]"):\n'
                             "            section = line[1:-1].strip()\n            continue\n")
            key_expr = 'f"{section}.{key.strip()}" if section else key.strip()'
        helper = '''

def _value(raw):
    raw = raw.strip()
    if raw.startswith('"'):
        return raw[1:raw.index('"', 1)]
    return raw.split("#", 1)[0].strip()
''' if difficulty >= 2 else ""
        code = f'''{helper}

def {fn}(text):
    """key = value lines into a dict{'; [section] keys become "section.key"' if difficulty == 3 else ''}."""
    out = {{}}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
{section_lines}        key, value = line.split("=", 1)
        out[{key_expr}] = {value_expr}
    return out
'''
        reference = _python_reply("Split each line at the first `=` only, since values can contain one:", code)
        bad = [_python_reply("Here:", code.replace('line.split("=", 1)', 'line.split("=")[:2]'))]
        if difficulty >= 2:
            naive = 'value.split("#", 1)[0].strip().strip(\'"\')'  # cuts a quoted value at its '#'
            bad.append(_python_reply("Here:", code.replace("_value(value)", naive)))
        else:
            bad.append(_python_reply("Here:", code.replace('if not line or line.startswith("#")', "if not line")))
        if difficulty == 3:
            bad.append(_python_reply("Here:", code.replace(key_expr, "key.strip()")))
        check = PythonTests(tests=asserts, entry_point=fn)
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad)


TEMPLATES = (DateRegex(), SemverRegex(), HexColorRegex(), QuotedStrings(), EmailFinds(), ParseDuration(),
             ParseConfig())
