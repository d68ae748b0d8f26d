"""Passwords on command lines: `mysql -pX`, `sshpass -p X`, `curl -u user:X`, `redis-cli -a X`, `smbclient -U
user%X`, `htpasswd -b file user X`, and the like for a table of tools (`TOOLS`: one entry per tool, data);
cookies given to curl with `-b` are redacted as the cookie rule does (`rules_http.cookie_values`).

Anchored on an option (" -" before it): only a line that holds an option is searched for a tool name, and a
tool's command is read once, as a shell would split it (quotes, `\\"` inside JSON strings, `argv` lists,
line continuations), up to its end (a line break, `;`, `|`, `&`, the string holding it). What the tool takes
as a port or a prompt stays (`mysql -p`, `mysql -p 8080`: a prompt and a database; `redis-cli -p 6379`), and so
do `$VAR`, `"$PASS"`, `$(cat file)` and placeholders (`<password>`, `YOUR_PASSWORD`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from ghost_agent.privacy.placeholders import PASSWORD, TOKEN
from ghost_agent.privacy.rule import IDENT, Hit, Rule, Searcher, after_escape, glued, is_inert_value
from ghost_agent.privacy.rules_http import cookie_values, spans_hit


@dataclass(frozen=True)
class PasswordOption:
    """An option whose value is (or holds) a password."""

    names: tuple[str, ...]  # as typed: "-p", "--password", "-passin"
    glued: bool = False  # the value may follow a one-letter option in the same word: -pS3cret
    spaced: bool = True  # the value may be the next word: -a S3cret
    after: str = ""  # the password is what follows the first `after` in the value ("bob:pw" -> "pw")
    cookie: bool = False  # the value is a cookie string (curl -b "sid=…"): its values go, the names stay


@dataclass(frozen=True)
class CliTool:
    """A command that can take a password on its command line, and how it reads its options."""

    names: tuple[str, ...]
    options: tuple[PasswordOption, ...] = ()
    takes_value: str = ""  # one-letter options whose value follows (so "-uphil" is -u phil, not -p hil)
    single_dash_long: bool = False  # options are whole words after one dash (openssl -passin, keytool -storepass)
    switches: bool = False  # 7-Zip/RAR style: "-p<value>", the first letter names the switch, no clusters
    stop_at_operand: bool = False  # options end at the first operand (sshpass: what follows is the command it runs)
    subcommand: tuple[str, ...] = ()  # only after these operands ("docker login")
    operand_password: Callable[[str, int], int | None] | None = None  # (flags, operands) -> the password's
    max_operands: int = 0  # stop reading after this many operands (0: read the whole command)
    by_name: dict[str, PasswordOption] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {name: opt for opt in self.options for name in opt.names})


def _htpasswd_password(flags: str, operands: int) -> int | None:
    """htpasswd -b[n] [file] user password: the last operand, in batch mode only."""
    if "b" not in flags:
        return None
    index = 1 if "n" in flags else 2
    return index if index < operands else None


_P_GLUED = PasswordOption(("-p",), glued=True, spaced=False)
_MYSQL = ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "mysqlslap",
          "mysqlbinlog", "mysqlsh", "mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import", "mariadb-check",
          "mariadb-show", "mariadb-slap", "mariadb-binlog")
_MONGO = ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop",
          "mongofiles")
_LDAP = ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldapcompare", "ldapmodrdn", "ldapexop")
_SNMP = ("snmpwalk", "snmpget", "snmpset", "snmpbulkwalk", "snmpgetnext", "snmptable", "snmptrap")
_REGISTRY_LOGIN = PasswordOption(("-p", "--password"))

TOOLS: Final = (
    CliTool(_MYSQL, (_P_GLUED,), takes_value="uhPDSeOo"),
    CliTool(("sshpass",), (PasswordOption(("-p",), glued=True),), takes_value="fdP", stop_at_operand=True),
    CliTool(("curl",), (PasswordOption(("-u", "--user", "-U", "--proxy-user"), glued=True, after=":"),
                        PasswordOption(("-b", "--cookie"), glued=True, cookie=True)),
            takes_value="AbcCdDeEFHKmoPQrtTuUwxXyYz"),
    CliTool(("http", "https"), (PasswordOption(("-a", "--auth"), glued=True, after=":"),)),  # HTTPie
    CliTool(("redis-cli", "valkey-cli", "keydb-cli"), (PasswordOption(("-a", "--pass")),), takes_value="hpsnuri"),
    CliTool(("smbclient", "rpcclient", "smbcacls", "smbget", "smbtree"),
            (PasswordOption(("-U", "--user"), glued=True, after="%"),), takes_value="WOnRsdlAIpmtDMTcE"),
    CliTool(("smbmap",), (PasswordOption(("-p",)),), takes_value="uHdPs"),
    CliTool(("htpasswd",), takes_value="Cr", operand_password=_htpasswd_password, max_operands=3),
    CliTool(_MONGO, (PasswordOption(("-p", "--password"), glued=True),), takes_value="uhdcoqf"),
    CliTool(_LDAP, (PasswordOption(("-w",), glued=True),), takes_value="bDHhpsfyaEeoOPRUXYlzT"),
    CliTool(("ldappasswd",), (PasswordOption(("-w", "-a", "-s"), glued=True),), takes_value="DHhpyEeoOPRUXYtT"),
    CliTool(("sqlcmd", "bcp", "osql"), (PasswordOption(("-P",), glued=True),), takes_value="SUdQqiohsAcfLyYkKt"),
    CliTool(("ipmitool",), (PasswordOption(("-P",)),), takes_value="HUIpLCkKyYofOtTbBlmRN"),
    CliTool(_SNMP, (PasswordOption(("-c", "-A", "-X"), glued=True),), takes_value="vulaxytrmMOICEnZ"),
    CliTool(("docker", "podman", "nerdctl", "buildah", "skopeo", "oras"), (_REGISTRY_LOGIN,), takes_value="u",
            subcommand=("login",)),
    CliTool(("helm",), (_REGISTRY_LOGIN,), takes_value="u", subcommand=("registry", "login")),
    CliTool(("az",), (_REGISTRY_LOGIN,), takes_value="ut", subcommand=("login",)),
    CliTool(("openssl",), (PasswordOption(("-passin", "-passout", "-pass", "-password"), after="pass:"),
                           PasswordOption(("-k",))), single_dash_long=True),
    CliTool(("keytool", "jarsigner"), (PasswordOption(("-storepass", "-keypass", "-srcstorepass", "-deststorepass",
                                                       "-srckeypass", "-destkeypass", "-new")),),
            single_dash_long=True),
    CliTool(("pscp", "plink", "psftp", "putty"), (PasswordOption(("-pw",)),), single_dash_long=True),
    CliTool(("7z", "7za", "7zr", "7zz", "rar", "unrar"), (_P_GLUED,), switches=True),
    CliTool(("zip", "unzip", "zipcloak"), (PasswordOption(("-P", "--password")),), takes_value="bntxiOQsZdU"),
    CliTool(("gpg", "gpg2"), (PasswordOption(("--passphrase",)),)),
    CliTool(("wget",), (PasswordOption(("--password", "--http-password", "--ftp-password", "--proxy-password")),)),
)
_BY_NAME: Final = {name: tool for tool in TOOLS for name in tool.names}
# A word that may name a tool: runs of these characters ("/usr/bin/mysql" holds "mysql", "libmysqlclient" is one
# word, no tool). Searched only between the options of a line, so a charset-first pattern costs little.
_TOOL_WORD = re.compile(r"[A-Za-z0-9_.-]+")
_WORD = IDENT | frozenset(".-")
# An option's dash, after a blank, a quote or an argv list's "[": "-p", "--user", not "->" nor " - ".
_OPTION_RE = re.compile(r"-(?<=[ \t\"'\[]-)(?=-?[A-Za-z])")
_LINE_BREAKS = ("\n", "\r", "\x00", "\\n", "\\r")
_LOOKBACK = 8192  # how far before an option its tool's name is looked for
_MAX_WORDS = 512  # words of one command read at most
# A quote that closes further away, or on another line, pairs with an unrelated one ('pw"naïve … 2 KB …"'): it
# is taken as unclosed, and ends the command.
_QUOTE_REACH = 512
_COMMAND_ENDS = frozenset("\n\r\x00;|&)`")
_QUOTES = "\"'"
_PLACEHOLDER_WORD = re.compile(
    r"(?:your|my|the|new|old|db|admin|root|user|some)?[_-]?(?:password|passwd|pass|pwd|pw|secret|passphrase)"
    r"(?:[_-]?here)?|x{3,}|\.{3}|…",
    re.IGNORECASE,
)


class Word(NamedTuple):
    """A shell word: `s[start:end]` as written (quotes included)."""

    start: int
    end: int


def _enclosing_quote(s: str, pos: int) -> str:
    """The quote of a string the command is written inside ("cmd": "mysql …"), if one opens right before it."""
    i = pos
    while i > 0 and s[i - 1] in " \t":
        i -= 1
    if i == 0 or s[i - 1] not in _QUOTES:
        return ""
    quote = "\\" + s[i - 1] if i > 1 and s[i - 2] == "\\" else s[i - 1]
    before = i - len(quote) - 1  # what precedes the quote: a quote that opens a string follows no word
    return quote if before < 0 or s[before] not in _WORD else ""


_PLAIN = re.compile(r"[^ \t\n\r\x00;|&)`\\\"']++")  # characters a word runs over without a second look


def _closing(s: str, quote: str, pos: int) -> int:
    """Where `quote` closes after `pos` on the same line and within `_QUOTE_REACH`, or -1."""
    close = s.find(quote, pos, pos + _QUOTE_REACH + len(quote))
    if close < 0:
        return -1
    return -1 if any(s.find(brk, pos, close) >= 0 for brk in ("\n", "\r", "\x00")) else close


def _word_end(s: str, pos: int, enclosing: str) -> int:
    """Where the word at `pos` ends, inside a string quoted by `enclosing` (JSON escapes read as the shell
    would read the text they stand for)."""
    end = len(s)
    while pos < end:
        if (plain := _PLAIN.match(s, pos)) is not None:
            pos = plain.end()
            if pos >= end:
                break
        c = s[pos]
        if c in " \t" or c in _COMMAND_ENDS:
            return pos
        if c == "\\":
            nxt = s[pos + 1:pos + 2]
            if nxt in ("n", "r", "t") and enclosing:
                return pos  # an escaped line break or tab in a JSON string
            if nxt in _QUOTES and enclosing == "\\" + nxt:
                return pos  # the end of the JSON-escaped string holding the command
            if nxt in _QUOTES and enclosing:  # \" inside a JSON string: a shell double quote
                close = _closing(s, "\\" + nxt, pos + 2)
                if close < 0:
                    return pos  # never closed: the command ends here
                pos = close + 2
                continue
            pos += 2
            continue
        if enclosing == c:
            nxt = s[pos + 1:pos + 2]
            if not nxt or nxt in " \t\n\r\x00,;:)]}" or _closing(s, c, pos + 1) < 0:
                return pos  # the string holding the command closes
            # Else a quote nested in it by a careless writer ('… -p'S3cret' …'): read it as the shell would.
        close = _closing(s, c, pos + 1)  # a quote
        if close < 0:
            return pos  # never closed (nearby): the command ends here
        pos = close + 1
        if pos < end and s[pos] in ",]":
            return pos  # the end of an argv list's item: ["mysql", "-pX"]
    return min(pos, end)


def _closes(s: str, pos: int, enclosing: str) -> bool:
    """Whether the quote at `pos` closes the string holding the command. The same quote after a blank and
    before a word opens a quoted word instead ('curl -b 'sid=…' url': the writer nested the quotes)."""
    if not enclosing or not s.startswith(enclosing, pos):
        return False
    after = pos + len(enclosing)
    return not (s[pos - 1] in " \t" and after < len(s) and s[after] not in " \t\n\r\x00" + enclosing[-1])


# Blanks and line continuations between words; a word outside any enclosing string: plain characters, escapes,
# quoted parts, the last quoted part maybe ending an argv item ('-p', …). A quote that does not close within
# `_QUOTE_REACH` ends the command instead of pairing with an unrelated quote far away (it would hide the
# commands between), and so does a JSON-escaped line break ("\\n").
_BLANKS = re.compile(r"(?:[ \t]++|\\\n)*+")
_QUOTED = rf"'[^'\n\r\x00]{{0,{_QUOTE_REACH}}}+'|\"[^\"\n\r\x00]{{0,{_QUOTE_REACH}}}+\""
_RAW_WORD = re.compile(rf"(?:[^ \t\n\r\x00;|&)`\\\"']++|\\(?![nr])(?s:.)|(?:{_QUOTED})(?![,\]]))*+(?:{_QUOTED})?")


def iter_words(s: str, pos: int, enclosing: str = "") -> Iterator[Word]:
    """The words of the command that starts at `pos`, as a shell splits them, up to the command's end.

    `enclosing` is the quote of a string that holds the command (`"` or `\\"`): it ends the command, and JSON
    escapes inside it (`\\n`, `\\"`) read as a shell would read the unescaped text.
    """
    while pos < len(s):
        pos = _BLANKS.match(s, pos).end()  # type: ignore[union-attr]  # `*+` always matches
        if pos >= len(s):
            return
        c = s[pos]
        if c in _COMMAND_ENDS or _closes(s, pos, enclosing):
            return
        if c == "\\" and s[pos + 1:pos + 2] in ("n", "r"):
            return
        if not enclosing:
            end = _RAW_WORD.match(s, pos).end()  # type: ignore[union-attr]  # `*+` always matches
        else:
            end = _word_end(s, pos, enclosing if not s.startswith(enclosing, pos) else "")
        if end == pos:
            return
        yield Word(pos, end)
        pos = end
        if pos < len(s) and s[pos - 1] in _QUOTES and s[pos] in ",]":  # an argv list: ["mysql", "-pX"]
            if s[pos] == "]":
                return
            pos += 1


class Words:
    """The words of one command, read as far as they are asked for (at most `max_words`): a tool whose options
    end at its first operand reads three words, not the whole line. A count, not a length: redaction changes
    lengths, never the words, so a second pass reads the same words."""

    def __init__(self, words: Iterator[Word], max_words: int = _MAX_WORDS) -> None:
        self._iter, self._max = words, max_words
        self._read: list[Word] = []

    def get(self, i: int) -> Word | None:
        """Word `i`, or None past the command's end."""
        while len(self._read) <= i < self._max:
            word = next(self._iter, None)
            if word is None:
                self._max = len(self._read)
                break
            self._read.append(word)
        return self._read[i] if i < len(self._read) else None


def _unquoted_span(s: str, start: int, end: int) -> tuple[int, int]:
    """`s[start:end]` without the quotes around it, if it is quoted whole ('x', "x", \\"x\\")."""
    if s[start] not in "\"'\\":
        return start, end
    for q in ('\\"', "\\'", '"', "'"):
        if end - start >= 2 * len(q) and s.startswith(q, start) and s.startswith(q, end - len(q)):
            return start + len(q), end - len(q)
    return start, end


def _secret_span(s: str, start: int, end: int, after: str = "") -> tuple[int, int] | None:
    """The password inside a value written at `s[start:end]` (after the first `after` in it), or None."""
    start, end = _unquoted_span(s, start, end)
    if after:
        at = s.find(after, start, end)
        if at < 0:
            return None  # "curl -u bob": a user name, the password is asked for
        start = at + len(after)
    value = s[start:end]
    if not value or value.startswith(("-", "$(")) or is_inert_value(value):
        return None
    if _PLACEHOLDER_WORD.fullmatch(value) or (value[0] in "[{" and value[-1] in "]}"):
        return None
    return start, end


def _value(s: str, words: Words, i: int, opt: PasswordOption, start: int, end: int) -> list[tuple[int, int, str]]:
    """The spans to redact for option `opt` of word `i`, whose value is `s[start:end]` in that word (`end`: the
    word's end, its closing quote excluded), or the next word when `start` is `end`."""
    if start >= end:
        following = words.get(i + 1) if opt.spaced else None
        if following is None:
            return []
        start, end = following
    if opt.cookie:
        vs, ve = _unquoted_span(s, start, end)
        return [(a, b, TOKEN) for a, b in cookie_values(s, vs, ve)[0]]
    span = _secret_span(s, start, end, opt.after)
    return [(*span, PASSWORD)] if span else []


def _cluster(tool: CliTool, text: str, start: int, end: int) -> tuple[PasswordOption | None, int, bool]:
    """One-letter options in one word ("-uroot", "-sSu", "-xw"): the password option among them, where its
    value starts (`end`: the next word), and whether the next word is another option's value."""
    for j in range(1, len(text)):
        opt = tool.by_name.get("-" + text[j])
        if opt is not None:
            if j + 1 < len(text):
                return (opt, start + j + 1, False) if opt.glued else (None, -1, False)
            return opt, end, False
        if text[j] in tool.takes_value:
            return None, -1, j + 1 == len(text)
        if not text[j].isalnum():
            break
    return None, -1, False


def _option(tool: CliTool, text: str, start: int, end: int) -> tuple[PasswordOption | None, int, bool]:
    """The password option a word `text` (at `s[start:end]`, quotes off) names, where its value starts, and
    whether the next word is some option's value."""
    name, eq, _ = text.partition("=")
    opt = tool.by_name.get(name)
    if opt is not None:  # the option by its whole name: "-a", "--password=…", "-passin"
        return opt, (start + len(name) + 1 if eq else end), False
    if tool.switches:
        opt = tool.by_name.get(text[:2])
        return (opt, start + 2, False) if opt is not None and len(text) > 2 else (None, -1, False)
    if text[1] != "-" and not tool.single_dash_long:
        return _cluster(tool, text, start, end)
    return None, -1, False


_NAMES: Final = frozenset(_BY_NAME) | {name + ".exe" for name in _BY_NAME}
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")


def _may_name_tool(token: str) -> bool:
    """A token that names a tool, maybe after an escape's tail ("ncurl" of "\\ncurl", "20curl" of "%20curl"):
    everything `_tool_of` accepts, and a little more."""
    return token in _NAMES or (token[1:] in _NAMES and token[0] in "nrt") or (
        token[2:] in _NAMES and token[0] in _HEX_CHARS and token[1] in _HEX_CHARS)


def _holds_tool(s: str, word: Word) -> bool:
    """Whether the word holds a tool's name where the searcher could take it for one: there, a command written
    after this one begins ("… -pX app, then curl -u …", '"mysql -pX"'), and this one's words end. So no word
    is read for two commands, whatever the text."""
    return any(_may_name_tool(token) for token in _TOOL_WORD.findall(s, word.start, word.end))


def parse_command(tool: CliTool, s: str, words: Words) -> list[tuple[int, int, str]]:
    """The spans to redact in one command of `tool` (`words`: those after its name), sorted, each with its
    placeholder. Reading stops at the command's end, at the first operand for some tools, after the operands
    that matter for others, and at a word naming another tool (a command written after this one on the same
    line: "… -pX app, then curl -u …")."""
    spans: list[tuple[int, int, int, str]] = []  # (word index, start, end, placeholder)
    operands: list[tuple[int, str]] = []
    flags = ""
    i = 0
    while (word := words.get(i)) is not None:
        if _holds_tool(s, word):
            break
        start, end = _unquoted_span(s, *word)
        text = s[start:end]
        if text == "--":
            i += 1
            break
        if len(text) > 1 and text[0] == "-":
            if text[1] != "-":
                flags += text[1:]
            opt, value_start, skip = _option(tool, text, start, end)
            if opt is not None:
                spans += [(i, *span) for span in _value(s, words, i, opt, value_start, end)]
                skip = value_start >= end and opt.spaced
            value = words.get(i + 1) if skip else None
            if value is not None and _holds_tool(s, value):
                break  # "-u curl", '-d "curl …"': read as this option's value, and the end of this command
            i += 1 + skip
            continue
        operands.append((i, text))
        i += 1
        if tool.stop_at_operand or len(operands) == tool.max_operands:
            break
    first = -1
    if tool.subcommand:
        if tuple(text for _, text in operands[:len(tool.subcommand)]) != tool.subcommand:
            return []
        first = operands[len(tool.subcommand) - 1][0]
    if tool.operand_password is not None:
        k = tool.operand_password(flags, len(operands))
        if k is not None:
            index = operands[k][0]
            span = _secret_span(s, *words.get(index) or (0, 0))
            spans += [(index, *span, PASSWORD)] if span else []
    return sorted(span[1:] for span in spans if span[0] > first)


def _last_break(s: str, lo: int, hi: int) -> int:
    """Where the line holding `s[hi]` starts, if a line break lies in `s[lo:hi]`; else -1. A break after a
    backslash continues the command ("mysql \\<newline> -pX"; "\\\\\\n" in JSON-escaped text)."""
    found = -1
    for brk in _LINE_BREAKS:
        at = s.rfind(brk, lo, hi)
        while at > lo and s[at - 1] == "\\" and (brk[0] != "\\" or (at >= 2 and s[at - 2] == "\\")):
            at = s.rfind(brk, lo, at - 1)
        if at >= 0:
            found = max(found, at + len(brk))
    return found


def _cli_searcher(hay: str) -> Searcher[str]:
    """The next tool name that starts a command holding an option, each tool found at most once.

    Options are found by their dash (a literal: sre's fast scan); for each, the text between the previous
    option (or the start of its line) and it is searched for a tool name, so every character is looked at a
    bounded number of times whatever the text holds.
    """
    options = _OPTION_RE.finditer(hay)
    line_start = scanned = 0
    tool: re.Match[str] | None = None
    returned = -1

    def search(pos: int) -> re.Match[str] | None:
        nonlocal line_start, scanned, tool, returned
        for opt in options:
            o = opt.start()
            if o < pos:
                continue
            brk = _last_break(hay, max(scanned, o - _LOOKBACK), o)
            if brk >= 0 or o - line_start > _LOOKBACK:
                line_start, tool = max(brk, o - _LOOKBACK), None
            for m in _TOOL_WORD.finditer(hay, max(scanned, line_start), o):
                if _may_name_tool(m.group()) and _tool_of(hay, m) is not None:
                    tool = m
            scanned = o
            if tool is not None and tool.start() > returned:
                returned = tool.start()
                return tool
        return None

    return search


def _tool_of(s: str, m: re.Match[str]) -> tuple[CliTool, int] | None:
    """The tool a word names ("mysql", "mysql.exe", "\\nmysql" in JSON-escaped text), if any, and where its
    name starts."""
    start, word = m.start(), m.group()
    tool = _BY_NAME.get(word[:-4] if word.endswith(".exe") else word)
    if tool is None:
        start = after_escape(s, start)
        if start == m.start():
            return None
        word = s[start:m.end()]
        tool = _BY_NAME.get(word[:-4] if word.endswith(".exe") else word)
    return (tool, start) if tool is not None and not glued(s, start, _WORD) else None


def _cli(s: str, m: re.Match[str], floor: int) -> Hit | int:
    found = _tool_of(s, m)
    if found is None:
        return m.end()
    tool, name_start = found
    start, enclosing = m.end(), _enclosing_quote(s, name_start)
    if enclosing and s.startswith(enclosing, start):  # an argv list: ["mysql", "-pX"], the name quoted alone
        start, enclosing = start + len(enclosing), ""
        start += s[start:start + 1] == ","
    spans = [span for span in parse_command(tool, s, Words(iter_words(s, start, enclosing))) if span[0] >= floor]
    # Look for the next command from here, not from where reading stopped: a quoted word this command took as
    # an operand may hold one ('ssh host "mysql -pX"'). Each tool is parsed once (the searcher), so linear.
    return spans_hit(s, spans, resume=spans[-1][1]) if spans else m.end()


CLI_PASSWORD_RULE = Rule("cli_password", _TOOL_WORD, _cli, gate=("-",), searcher=_cli_searcher)

__all__ = ["CLI_PASSWORD_RULE", "TOOLS", "CliTool", "PasswordOption", "Word", "Words", "iter_words", "parse_command"]
