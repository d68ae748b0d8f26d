"""bash: one-liners and short scripts over files in the workspace (logs, CSVs, lists, a folder tree).

The reply's script runs in the sandbox (`ScriptOutput`, language bash) on `hidden_files`: the same files with
other rows, as the user will run it on tomorrow's log, so a script that echoes the number it saw fails.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ghost_agent.selfplay.checks import ScriptOutput
from ghost_agent.selfplay.task import Task, draft

SERVICES = ("auth", "billing", "search", "mailer", "api", "scheduler", "export")
USERS = ("ana", "ben", "chloe", "dev", "emma", "farid", "grace", "hiro", "ines", "jonas", "kemi", "liam", "mona",
         "nils", "olga", "pablo", "quinn", "rosa", "sven", "tara")
_INFO_MESSAGES = ("request handled", "cache warmed", "job finished", "connection opened", "config reloaded")
_WARN_MESSAGES = ("slow response", "retrying request", "queue is filling up", "deprecated flag used")
_ERROR_MESSAGES = ("timeout talking to db", "upstream returned 502", "could not parse payload", "disk quota hit")
_DEBUG_MESSAGES = ("payload size ok", "token refreshed", "cache miss")


def _bash(intro: str, script: str, after: str = "") -> str:
    """A reply as a good assistant writes it: a sentence, the script in a bash fence, maybe a note."""
    return f"{intro}\n\n```bash\n{script}\n```" + (f"\n\n{after}" if after else "")


def _hardcoded(intro: str, value: str) -> str:
    """The shortcut a model takes: it read the file and echoes what it counted there."""
    return _bash(intro, f"echo {value}")


@dataclass(frozen=True)
class CountLogLines:
    """How many lines of a log are at one level (d1), of one service too (d2), on one day too (d3); decoys: the
    level's word inside other lines' messages, a service named in another's message, a service whose name
    starts like the asked one."""

    cluster: str = "bash"
    name: str = "count_log_lines"

    def _log(self, rng: random.Random, difficulty: int, level: str, service: str, day: int) -> tuple[str, int]:
        others = [s for s in SERVICES if s != service]
        prefixed = f"{service}-proxy"
        lines: list[tuple[str, str, str, str]] = []  # (day, level, service, message)
        for _ in range((14, 28, 45)[difficulty - 1]):
            lvl = rng.choice(("INFO", "INFO", "WARN", "ERROR", "DEBUG"))
            svc = rng.choice([service, *others[:3]]) if difficulty >= 2 else rng.choice(SERVICES)
            msg = rng.choice({"INFO": _INFO_MESSAGES, "WARN": _WARN_MESSAGES, "ERROR": _ERROR_MESSAGES,
                              "DEBUG": _DEBUG_MESSAGES}[lvl])
            lines.append((f"{day + rng.choice((-1, 0, 0))}" if difficulty == 3 else f"{day}", lvl, svc, msg))
        # decoys that a sloppy grep counts, placed where the grep's mistake shows
        lines.append((f"{day}", "INFO", service, f"recovered after {level} in worker"))
        lines.append((f"{day}", "WARN", service, f"{level} rate above threshold"))
        lines.append((f"{day}", level, rng.choice(others), f"call to {service} failed"))
        lines.append((f"{day}", level, service, rng.choice(_ERROR_MESSAGES)))  # at least one to count
        if difficulty == 3:
            lines.append((f"{day}", level, prefixed, rng.choice(_ERROR_MESSAGES)))
            lines.append((f"{day - 1}", level, service, rng.choice(_ERROR_MESSAGES)))
        rng.shuffle(lines)
        text = "".join(
            f"2024-05-{int(d):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} "
            f"[{lvl}] {svc}: {msg}\n" for d, lvl, svc, msg in lines
        )
        count = sum(1 for d, lvl, svc, _ in lines if lvl == level and (difficulty < 2 or svc == service)
                    and (difficulty < 3 or int(d) == day))
        return text, count

    def make(self, rng: random.Random, difficulty: int) -> Task:
        level = rng.choice(("ERROR", "WARN"))
        service = rng.choice(SERVICES)
        day = rng.randint(3, 27)
        log, seen = self._log(rng, difficulty, level, service, day)
        hidden, count = self._log(rng, difficulty, level, service, day)
        while count == seen:  # the hardcoded reply must fail
            hidden, count = self._log(rng, difficulty, level, service, day)
        date = f"2024-05-{day:02d}"
        what = {1: f"{level} lines", 2: f"{level} lines from the {service} service",
                3: f"{level} lines from the {service} service on {date}"}[difficulty]
        prompt = (f"app.log in the current folder is our service log, lines like `{log.splitlines()[0]}`. Give me "
                  f"a bash one-liner that prints how many {what} there are, just the number. I'll run it on "
                  "every day's log, so it has to work on the file, not on today's count.")
        lvl = f"\\[{level}\\]"
        script = {1: f"grep -c '{lvl}' app.log", 2: f"grep -c '{lvl} {service}:' app.log",
                  3: f"grep -c '^{date} .*{lvl} {service}:' app.log"}[difficulty]
        reference = _bash("The level sits in brackets right before the service name, so match on that:", script)
        bad = [_hardcoded("There are this many:", str(seen))]
        if difficulty == 1:
            bad.append(_bash("Count the lines that mention it:", f"grep -c '{level}' app.log"))
            bad.append(_bash("Case-insensitive, to be safe:", f"grep -ci '{level.lower()}' app.log"))
        else:
            bad.append(_bash("Filter on the level, then the service:",
                             f"grep '{lvl}' app.log | grep -c '{service}'"))
            bad.append(_bash("Count the level:", f"grep -c '{lvl}' app.log"))
        if difficulty == 3:
            bad.append(_bash("Level and service:", f"grep -c '{lvl} {service}' app.log"))
        check = ScriptOutput("bash", f"{count}\n", hidden_files={"app.log": hidden})
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad,
                     files={"app.log": log})


CATEGORIES = ("travel", "food", "office", "software", "hardware", "training")
VENDORS = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne")


@dataclass(frozen=True)
class SumCsvColumn:
    """The total of an amount column in a CSV whose column order varies by seed: all rows (d1), one category
    (d2), one category in one month with a look-alike category (d3)."""

    cluster: str = "bash"
    name: str = "sum_csv_column"

    def _rows(self, rng: random.Random, difficulty: int, category: str, month: int) -> list[dict[str, str]]:
        rows = []
        for _ in range((8, 20, 40)[difficulty - 1]):
            cents = rng.randint(500, 90000) if difficulty >= 2 else rng.randint(5, 900) * 100
            rows.append({"date": f"2024-{rng.choice((month, month, month % 12 + 1)):02d}-{rng.randint(1, 28):02d}",
                         "category": rng.choice(CATEGORIES), "vendor": rng.choice(VENDORS),
                         "amount": f"{cents // 100}.{cents % 100:02d}"})
        rows[0]["category"] = category
        rows[0]["date"] = f"2024-{month:02d}-{rng.randint(1, 28):02d}"
        if difficulty == 3:
            rows.append({"date": rows[0]["date"], "category": f"{category}-refund", "vendor": rng.choice(VENDORS),
                         "amount": f"{rng.randint(10, 400)}.{rng.randint(0, 99):02d}"})
            rng.shuffle(rows)
        return rows

    @staticmethod
    def _total(rows: list[dict[str, str]], keep: Callable[[dict[str, str]], bool]) -> str:
        cents = sum(int(r["amount"].replace(".", "")) for r in rows if keep(r))
        return f"{cents // 100}.{cents % 100:02d}"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        columns = ["date", "category", "vendor", "amount"]
        rng.shuffle(columns)
        category = rng.choice(CATEGORIES)
        month = rng.randint(1, 11)
        seen_rows = self._rows(rng, difficulty, category, month)
        hidden_rows = self._rows(rng, difficulty, category, month)
        prefix = f"2024-{month:02d}-"

        def keep(r: dict[str, str]) -> bool:
            return (difficulty < 2 or r["category"] == category) and (difficulty < 3 or r["date"].startswith(prefix))

        def csv(rows: list[dict[str, str]]) -> str:
            return ",".join(columns) + "\n" + "".join(",".join(r[c] for c in columns) + "\n" for r in rows)

        total, seen = self._total(hidden_rows, keep), self._total(seen_rows, keep)
        a, c, d = (columns.index(k) + 1 for k in ("amount", "category", "date"))
        what = {1: "all the amounts", 2: f"the amount for the {category} category",
                3: f"the amount for the {category} category in {prefix[:-1]}"}[difficulty]
        prompt = (f"expenses.csv has a header row ({','.join(columns)}) and no quoted fields. What's a quick awk "
                  f"command to print the total of {what}? Print it with two decimals, like 1234.50.")
        cond = {1: "NR > 1", 2: f'NR > 1 && ${c} == "{category}"',
                3: f'NR > 1 && ${c} == "{category}" && ${d} ~ /^{prefix}/'}[difficulty]
        script = f"awk -F, '{cond} {{ s += ${a} }} END {{ printf \"%.2f\\n\", s }}' expenses.csv"
        reference = _bash(f"Column {a} is the amount; sum it over the rows you want:", script)
        wrong_col = a % len(columns) + 1
        bad = [
            _bash("Sum the amount column:", script.replace(f"s += ${a}", f"s += ${wrong_col}")),
        ]
        if seen != total:
            bad.append(_hardcoded("The total is", seen))
        if a != 1:  # with the amount first, awk's whitespace split still reads it as the line's leading number
            bad.append(_bash("Sum it (awk splits fields for you):", script.replace("awk -F, ", "awk ")))
        if difficulty == 3:
            bad.append(_bash("Sum the category:", script.replace(f'${c} == "{category}"', f'${c} ~ /{category}/')))
        if difficulty == 3:
            bad.append(_bash("Sum the category:", script.replace(f" && ${d} ~ /^{prefix}/", "")))
        check = ScriptOutput("bash", f"{total}\n", hidden_files={"expenses.csv": csv(hidden_rows)})
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad,
                     files={"expenses.csv": csv(seen_rows)})


@dataclass(frozen=True)
class FindFiles:
    """Paths of the files with one extension anywhere below here (d1), bigger than 2 KB (d2), outside an
    archive folder and not a directory whose name ends in the extension (d3)."""

    cluster: str = "bash"
    name: str = "find_files"

    def _tree(self, rng: random.Random, difficulty: int, ext: str, tag: str) -> dict[str, str]:
        folders = ["", "logs", "logs/app", "data", f"data/{tag}", "tmp"]
        if difficulty == 3:
            folders += ["archive", "logs/archive"]
        files: dict[str, str] = {}
        for i in range((8, 14, 20)[difficulty - 1]):
            folder = rng.choice(folders)
            e = rng.choice((ext, ext, "txt" if ext != "txt" else "md", "py"))
            size = rng.choice((rng.randint(40, 1500), rng.randint(3000, 9000))) if difficulty >= 2 else 60
            path = f"{folder}/{tag}{i}.{e}".lstrip("/")
            files[path] = ("x" * 63 + "\n") * (size // 64) + "end\n"
        files[f"logs/{tag}-big.{ext}"] = ("y" * 63 + "\n") * 80
        files[f"{tag}-small.{ext}"] = "tiny\n"
        files[f"data/{tag}.{ext}.bak"] = "old\n"
        if difficulty == 3:
            files[f"archive/{tag}-old.{ext}"] = ("z" * 63 + "\n") * 80
            files[f"data/{tag}-dir.{ext}/README"] = "a folder, not a file\n"
        return files

    def _want(self, files: dict[str, str], difficulty: int, ext: str) -> list[str]:
        out = []
        for path, text in files.items():
            if not path.endswith(f".{ext}") or (difficulty >= 2 and len(text.encode()) <= 2048):
                continue
            if difficulty == 3 and "archive" in path.split("/"):
                continue
            out.append(f"./{path}")
        return sorted(out)

    def make(self, rng: random.Random, difficulty: int) -> Task:
        ext = rng.choice(("log", "csv", "txt", "json"))
        tag = rng.choice(("report", "run", "batch", "export", "dump"))
        seen = self._tree(rng, difficulty, ext, tag)
        hidden = self._tree(rng, difficulty, ext, tag + "x")
        union = {**seen, **hidden}
        want = self._want(union, difficulty, ext)
        what = {1: f"every .{ext} file", 2: f"every .{ext} file bigger than 2 KB",
                3: f"every .{ext} file bigger than 2 KB, skipping anything inside a folder called archive"}[difficulty]
        prompt = (f"I need a command that lists {what} anywhere under the current folder (subfolders too), one path "
                  f"per line like ./logs/{tag}-big.{ext}. Order doesn't matter.")
        size = " -size +2k" if difficulty >= 2 else ""
        script = {1: f"find . -type f -name '*.{ext}'", 2: f"find . -type f -name '*.{ext}'{size}",
                  3: f"find . -type d -name archive -prune -o -type f -name '*.{ext}'{size} -print"}[difficulty]
        reference = _bash("`find` walks the subfolders for you:", script,
                          "`-size +2k` means more than 2 KiB." if difficulty >= 2 else "")
        bad = [_bash("List them:", f"ls *.{ext} */*.{ext}")]
        if difficulty == 1:
            bad.append(_bash("All of them:", f"ls -R | grep '\\.{ext}$'"))
        else:
            bad.append(_bash("Find them:", f"find . -type f -name '*.{ext}'"))
            bad.append(_bash("Bigger than 2 KB:", f"find . -type f -name '*.{ext}' -size -2k"))
        if difficulty == 3:
            bad.append(_bash("Skip archive:", f"find . -name '*.{ext}'{size} -not -path './archive/*'"))
        check = ScriptOutput("bash", "\n".join(want) + "\n", sort_lines=True, hidden_files=hidden)
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad, files=seen)


PATHS = ("/", "/login", "/api/items", "/api/cart", "/static/app.js", "/search", "/api/orders", "/health")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class TopIps:
    """An access log (combined format): the busiest IP (d1), the top 3 with counts, busiest first (d2), the top
    3 by server errors (5xx) only (d3). Counts are distinct, so the order is unambiguous."""

    cluster: str = "bash"
    name: str = "top_ips"

    def _log(self, rng: random.Random, difficulty: int) -> tuple[str, list[tuple[int, str]]]:
        ips = [f"10.{rng.randint(0, 9)}.{rng.randint(0, 255)}.{i + 2}" for i in range(6)]
        counts = rng.sample(range(2, 14), len(ips))  # distinct
        first = ips.index(min(ips))
        if counts[first] == max(counts):
            counts[first], counts[-1 if first == 0 else 0] = counts[-1 if first == 0 else 0], counts[first]
        picked: list[tuple[str, int]] = []  # (ip, status)
        for ip, n in zip(ips, counts, strict=True):
            picked += [(ip, rng.choice((500, 502, 503)) if difficulty == 3 else rng.choice((200, 200, 404, 500)))
                       for _ in range(n)]
        if difficulty == 3:  # plenty of successful requests, most from the IP with the fewest errors
            quiet = ips[counts.index(min(counts))]
            picked += [(quiet, 200) for _ in range(20)] + [(rng.choice(ips), rng.choice((200, 304))) for _ in range(8)]
        rng.shuffle(picked)
        month = rng.choice(MONTHS)
        lines = []
        for i, (ip, status) in enumerate(picked):
            method, path = rng.choice((("GET", rng.choice(PATHS)), ("POST", "/api/orders")))
            when = f"{7 + i // 40:02d}/{month}/2024:{10 + i // 60:02d}:{i % 60:02d}:{rng.randint(0, 59):02d} +0000"
            lines.append(f'{ip} - - [{when}] "{method} {path} HTTP/1.1" {status} {rng.randint(100, 9000)}\n')
        errors = Counter(ip for ip, status in picked if difficulty < 3 or status >= 500)
        ranked = sorted(((n, ip) for ip, n in errors.items()), reverse=True)
        return "".join(lines), ranked

    def make(self, rng: random.Random, difficulty: int) -> Task:
        log, seen = self._log(rng, difficulty)
        hidden, ranked = self._log(rng, difficulty)
        if difficulty == 1:
            want = f"{ranked[0][1]}\n"
            ask = "which IP made the most requests? Just print that IP"
        else:
            want = "".join(f"{n} {ip}\n" for n, ip in ranked[:3])
            what = "requests" if difficulty == 2 else "server errors (status 5xx)"
            ask = (f"which 3 IPs got the most {what}? Print the count and the IP on each line, like `12 10.0.0.5` "
                   "(no leading spaces), busiest first")
        prompt = (f"access.log is an nginx access log (combined format, e.g. `{log.splitlines()[0]}`). "
                  f"{ask[0].upper()}{ask[1:]}.")
        pick = "awk '$9 ~ /^5/ {print $1}' access.log" if difficulty == 3 else "awk '{print $1}' access.log"
        if difficulty == 1:
            script = f"{pick} | sort | uniq -c | sort -rn | head -1 | awk '{{print $2}}'"
        else:
            script = f"{pick} | sort | uniq -c | sort -rn | head -3 | awk '{{print $1, $2}}'"
        reference = _bash("Count per IP with `sort | uniq -c`, then sort by that count:", script)
        bad = [_hardcoded("Here it is:", seen[0][1] if difficulty == 1 else f"'{seen[0][0]} {seen[0][1]}'")]
        if seen[:3] == ranked[:3]:
            bad = []
        bad.append(_bash("Count and sort:", script.replace("sort -rn", "sort -n")))
        if difficulty == 1:  # counted but not ranked: the first IP in sort order, never the busiest (see _log)
            bad.append(_bash("Count them:", script.replace("| sort -rn ", "")))
        else:
            bad.append(_bash("Count them:", script.replace("| sort | uniq -c", "| uniq -c")))
        if difficulty == 3:
            bad.append(_bash("Count per IP:", script.replace("$9 ~ /^5/ ", "")))
        check = ScriptOutput("bash", want, hidden_files={"access.log": hidden})
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad,
                     files={"access.log": log})


@dataclass(frozen=True)
class LogFields:
    """key=value log lines: the distinct users, sorted (d1); the request ids slower than a threshold, in file
    order (d2); the same among server errors, with the keys in a different order on each line (d3). Durations
    read as text ("1200ms" < "500") or a >= for > give other ids."""

    cluster: str = "bash"
    name: str = "log_fields"

    def _log(self, rng: random.Random, difficulty: int, limit: int) -> tuple[str, list[str], list[str]]:
        lines, users, slow = [], set(), []
        durations = [rng.randint(5, 2 * limit + 200) for _ in range((10, 18, 30)[difficulty - 1])]
        durations += [limit, limit * 3, rng.randint(10, 99), rng.randint(1000, 2999)]  # the edges of a bad reading
        rng.shuffle(durations)
        for i, dur in enumerate(durations):
            user = rng.choice(USERS[:8])
            status = rng.choice((200, 200, 201, 404, 500, 503)) if difficulty == 3 else 200
            if difficulty == 3 and dur in (limit, limit * 3):
                status = 502
            req = f"{rng.getrandbits(24):06x}"
            fields = [f"req={req}", f"user={user}", f"dur={dur}ms", f"status={status}"]
            if difficulty == 3:
                rng.shuffle(fields)
            lines.append(f"2024-05-07T10:{i // 60:02d}:{i % 60:02d}Z level=info msg=done {' '.join(fields)}\n")
            users.add(user)
            if dur > limit and (difficulty < 3 or status >= 500):
                slow.append(req)
        return "".join(lines), sorted(users), slow

    def make(self, rng: random.Random, difficulty: int) -> Task:
        limit = rng.choice((250, 400, 500, 750, 800))
        log, seen_users, seen_slow = self._log(rng, difficulty, limit)
        hidden, users, slow = self._log(rng, difficulty, limit)
        example = log.splitlines()[0]
        if difficulty == 1:
            ask = "print each user that appears in it once, sorted alphabetically, just the names"
            script = "grep -o 'user=[^ ]*' app.log | cut -d= -f2 | sort -u"
            want = users
            bad = [_bash("Pull the user field:", "grep -o 'user=[^ ]*' app.log | sort -u"),
                   _bash("Pull the user field:", "grep -o 'user=[^ ]*' app.log | cut -d= -f2 | uniq"),
                   _hardcoded("The users are:", "'" + "\n".join(seen_users) + "'")][:3 if seen_users != users else 2]
        else:
            extra = " and ended in a server error (status 5xx)" if difficulty == 3 else ""
            ask = (f"print the req id of every request that took longer than {limit}ms{extra}, in the order they "
                   "appear, one per line")
            cond = f'v["dur"] + 0 > {limit}' + (' && v["status"] >= 500' if difficulty == 3 else "")
            script = ("awk '{ for (i = 1; i <= NF; i++) { split($i, kv, \"=\"); v[kv[1]] = kv[2] }\n"
                      f"       if ({cond}) print v[\"req\"] }}' app.log")
            want = slow
            bad = [_bash("Compare the duration:", script.replace('v["dur"] + 0', 'v["dur"]')),
                   _bash("Compare the duration:", script.replace(f"> {limit}", f">= {limit}")),
                   _hardcoded("Those are:", "'" + "\n".join(seen_slow) + "'")][:3 if seen_slow != slow else 2]
            if difficulty == 3:
                bad.append(_bash("Fields by position:", "awk '{ split($7, d, \"=\"); split($8, s, \"=\"); "
                                 f"split($5, r, \"=\"); if (d[2] + 0 > {limit} && s[2] >= 500) print r[2] }}' app.log"))
        prompt = (f"Our app writes key=value logs to app.log, like:\n\n    {example}\n\nCan you give me a shell "
                  f"command to {ask}?")
        reference = _bash("Split each line into its key=value pairs and pick the fields:", script)
        check = ScriptOutput("bash", "".join(f"{w}\n" for w in want), hidden_files={"app.log": hidden})
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad,
                     files={"app.log": log})


@dataclass(frozen=True)
class ListDifference:
    """The lines of one list missing from another, sorted: clean lists (d1); names that are substrings of other
    names (d2: `grep -v -f` drops them); duplicates and Windows line endings in the second list (d3)."""

    cluster: str = "bash"
    name: str = "list_difference"

    _STEMS = ("ann", "rob", "sam", "max", "al", "ed", "jo", "lee", "kim", "tom")
    _LONG = ("joanna", "robert", "samantha", "maxine", "alice", "edward", "jonas", "leena", "kimberly", "tomas")

    def _lists(self, rng: random.Random, difficulty: int, names: list[str]) -> tuple[str, str, list[str]]:
        everyone = list(names)
        rng.shuffle(everyone)
        keep = set(rng.sample(everyone, len(everyone) // 2))
        if difficulty >= 2:  # a short name in the second list that is part of a longer name missing from it
            for stem, long in zip(self._STEMS, self._LONG, strict=True):
                if stem in everyone and long in everyone:
                    keep.add(stem)
                    keep.discard(long)
        first = list(everyone)
        if difficulty == 3:
            first += rng.sample(everyone, 3)  # a name signed up twice
            rng.shuffle(first)
        second = [n for n in everyone if n in keep]
        rng.shuffle(second)
        eol = "\r\n" if difficulty == 3 else "\n"
        missing = sorted(set(everyone) - keep)
        return "".join(f"{n}\n" for n in first), "".join(f"{n}{eol}" for n in second), missing

    def make(self, rng: random.Random, difficulty: int) -> Task:
        a, b = rng.choice((("signups.txt", "paid.txt"), ("invited.txt", "attended.txt"), ("staff.txt", "badges.txt")))
        pool = [u for u in USERS if u not in self._LONG]

        def names() -> list[str]:
            picked = rng.sample(pool, (6, 8, 10)[difficulty - 1])
            if difficulty >= 2:
                for i in rng.sample(range(len(self._STEMS)), 2):
                    picked += [self._STEMS[i], self._LONG[i]]
            return list(dict.fromkeys(picked))

        first, second, seen = self._lists(rng, difficulty, names())
        hidden_a, hidden_b, missing = self._lists(rng, difficulty, names())
        note = " (the second one was exported from Excel on Windows)" if difficulty == 3 else ""
        prompt = (f"I have two lists of usernames, one per line (`{first.split()[0]}`, `{first.split()[1]}`, ...): "
                  f"{a} and {b}{note}. What's the bash to print the "
                  f"names that are in {a} but not in {b}, sorted, each once?")
        clean = f"tr -d '\\r' < {b} | sort -u" if difficulty == 3 else f"sort -u {b}"
        script = f"comm -23 <(sort -u {a}) <({clean})"
        reference = _bash("`comm` needs both inputs sorted; `-23` keeps the lines only in the first file:", script)
        bad = [_bash("Compare them:", f"comm -23 {a} {b}"),
               _bash("Compare them:", f"comm -13 <(sort -u {a}) <({clean})"),
               _hardcoded("Those are:", "'" + "\n".join(seen) + "'")][:3 if seen != missing else 2]
        if difficulty >= 2:
            bad.append(_bash("Filter out the second list:", f"grep -v -f {b} {a} | sort -u"))
        if difficulty == 3:
            bad.append(_bash("Sort both and compare:", f"comm -23 <(sort -u {a}) <(sort -u {b})"))
        check = ScriptOutput("bash", "".join(f"{n}\n" for n in missing), hidden_files={a: hidden_a, b: hidden_b})
        return draft(self, difficulty, prompt=prompt, check=check, reference=reference, bad=bad,
                     files={a: first, b: second})


TEMPLATES = (CountLogLines(), SumCsvColumn(), FindFiles(), TopIps(), LogFields(), ListDifference())
