"""Context rules: the surroundings say a value is a secret, whatever it looks like.

URL credentials (`scheme://user:pass@`, `scheme://<token>@`), Slack webhook URLs, `;Pwd=` in connection strings,
the `sig=` of Azure SAS URLs, and `password=` / `api_key: "…"` / `"client_secret": …` assignments. They run
before the shape rules, so a value is removed whole even where a shape rule would recognise only part of it.
"""

from __future__ import annotations

import re

from ghost_agent.privacy.placeholders import API_KEY, CREDENTIALS, SECRET, WEBHOOK
from ghost_agent.privacy.rule import (
    DIGITS,
    GLUED_LOWER,
    IDENT,
    Hit,
    Rule,
    expand_left,
    is_inert_value,
    stem_searcher,
)
from ghost_agent.privacy.rules_prose import PROSE_WORDS

_WEBHOOK_RE = re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[a-z0-9_/-]++")


def _webhook(s: str, m: re.Match[str], floor: int) -> Hit:
    start = m.start()
    for scheme in ("https://", "http://"):
        if start - len(scheme) >= floor and s[start - len(scheme):start].lower() == scheme:
            start -= len(scheme)
            break
    return Hit(start, m.end(), WEBHOOK)


_URL_CREDS_RE = re.compile(r"://([^\s/@:\x00\"'<>]*+):([^\s/@\x00\"'<>]*+)@")


def _url_creds(s: str, m: re.Match[str], floor: int) -> Hit | None:
    return None if m.end(2) - m.start(1) == 1 else Hit(m.start(1), m.end(2), CREDENTIALS)  # "://:@" hides nothing


# A bare token as the whole userinfo ("https://<token>@host", Sentry DSNs, git remotes with a token).
_URL_TOKEN_RE = re.compile(r"://([^\s/@:\x00\"'<>?#]{16,}+)@")


def _url_token(s: str, m: re.Match[str], floor: int) -> Hit | None:
    user = m.group(1)
    if not (any(c in DIGITS for c in user) and any(c.isalpha() for c in user)):
        return None  # "://readonly_service_account@": a name, not a token
    return Hit(m.start(1), m.end(1), CREDENTIALS)


# A password in a connection string ("Server=db;Uid=app;Pwd=s3cret;"): only after a ";", since PWD= alone is the
# shell's working directory.
_CONN_PWD_RE = re.compile(r"pwd(?:(?<=;pwd)|(?<=; pwd))[ \t]*+=[ \t]*+([^;\s\"'\x00]++)")


def _conn_pwd(s: str, m: re.Match[str], floor: int) -> Hit | None:
    return None if is_inert_value(m.group(1)) else Hit(m.start(1), m.end(1), SECRET)


# The signature of an Azure shared access signature URL ("…?sv=2022-11-02&…&sig=AbC%2B…").
_SAS_SIG_RE = re.compile(r"sig=(?<=[?&;]sig=)([A-Za-z0-9%+/=]{20,}+)")  # the literal first: sre scans for it fast


def _sas_sig(s: str, m: re.Match[str], floor: int) -> Hit:
    return Hit(m.start(1), m.end(1), SECRET)


def _after(words: tuple[str, ...]) -> str:
    """Lookbehinds for "word", "word_" or "word-" right before the current position."""
    return "(?:" + "|".join(f"(?<={w})|(?<={w}[_-])" for w in words) + ")"


_DQ, _SQ = r"[^\"\\\r\n\x00]", r"[^'\\\r\n\x00]"  # a character of a double- or single-quoted value
_UNQ = r"[^\s\"'`<>()\[\]{},;&\\\x00]"  # a character of an unquoted value
_NESTED_KEY_REACH = 48  # longest key + separator: stem (10) + suffix (24) + quote, escape and operator
_VALUE_CAP = 128  # per candidate: a value holding a thousand "password=" is then scanned once, not 1000x
# Tried at each occurrence of a stem (`_ASSIGN_STEMS`), never searched: an alternation of words has no
# literal prefix, so a search would try every position of the text.
_ASSIGN_RE = re.compile(
    r"(?P<key>(?:secret|passw(?:or)?d|passphrase"
    rf"|{_after(('api', 'private', 'access', 'account', 'master', 'signing', 'encryption', 'client'))}key"
    rf"|{_after(('access', 'auth', 'refresh', 'session', 'id', 'bot', 'oauth', 'api', 'bearer'))}token)"
    r"[a-z0-9_-]{0,24}+"
    rf"|(?<!{GLUED_LOWER}|_)token)"  # bare "token=" only: pad_token, max_tokens and friends are not secrets
    r"\\?[\"']?[ \t]*+[:=](?![=:])[ \t]*+"
    rf"(?:\\?\"(?P<dq>{_DQ}{{1,{_VALUE_CAP}}}+)|\\?'(?P<sq>{_SQ}{{1,{_VALUE_CAP}}}+)"
    rf"|(?P<unq>{_UNQ}{{1,{_VALUE_CAP}}}+))"
)
_VALUE_REST = {"dq": re.compile(f"{_DQ}*+"), "sq": re.compile(f"{_SQ}*+"), "unq": re.compile(f"{_UNQ}*+")}
_CODE_REF = re.compile(r"[A-Za-z_$][A-Za-z0-9_.$]*")
_ASSIGN_STEMS = ("secret", "pass", "key", "token")  # "pass" finds password, passwd and passphrase
_API_KEY_PREFIXES = ("sk-", "sk_live_", "sk_test_", "xox", "xapp-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
                     "github_pat_")


def _assignment(s: str, m: re.Match[str], floor: int) -> Hit | int:
    group = "dq" if m.start("dq") >= 0 else "sq" if m.start("sq") >= 0 else "unq"
    start, end = m.start(group), m.end(group)
    if end - start == _VALUE_CAP:
        end = _VALUE_REST[group].match(s, end).end()  # type: ignore[union-attr]  # `*+` always matches
    value = s[start:end]
    if group == "unq" and (_is_code(s, m, value, end) or _is_prose(s, value, end)):
        return start
    if value.isdigit() and _QUANTITY.search(m.group("key")):
        return start  # PASSWORD_MIN_LENGTH = 12, token_ttl: 3600
    if is_inert_value(value):
        return start  # kept; the value may hold the next assignment
    # Look again near the value's end: it may end with the key of the next assignment ("token=api_key: 123",
    # whose value lies past this one). Only the tail: a key in the middle has its value inside this one.
    label = API_KEY if value.startswith(_API_KEY_PREFIXES) else SECRET
    return Hit(start, end, label, resume=max(start, end - _NESTED_KEY_REACH))


def _is_prose(s: str, value: str, end: int) -> bool:
    """An unquoted value that is the next word of a sentence ("password: my bank password is …", "secret: the
    name of …"): it is kept, and the prose rule (`rules_prose`) reads the sentence."""
    return value.lower() in PROSE_WORDS and end < len(s) and s[end] == " "


# Keys that name a quantity about the secret, not the secret ("password_min_length", "token_ttl_seconds").
_QUANTITY = re.compile(r"(?:length|len|size|count|timeout|ttl|age|rounds|iterations|expiry|days|hours|minutes"
                       r"|seconds|attempts|retries|version)[s_-]*$", re.IGNORECASE)
# Annotations (`password: str`, `token: Optional[str] = None`): a type, not a value.
_TYPE_NAMES = frozenset({"str", "bytes", "int", "bool", "float", "Any", "Optional", "SecretStr", "SecretBytes"})


def _is_code(s: str, m: re.Match[str], value: str, end: int) -> bool:
    """An unquoted value that is code, not a literal: a call or subscript (`api_key = os.environ[...]`,
    `password=get_pw()`), or a variable named like the key (`api_key=api_key`, `token=self.token`)."""
    if _CODE_REF.fullmatch(value) is None:
        return False
    if value in _TYPE_NAMES or (end < len(s) and s[end] in "(["):
        return True
    key_start = expand_left(s, m.start("key"), IDENT, max(0, m.start("key") - 64))
    return value.rsplit(".", 1)[-1].lower() == s[key_start:m.end("key")].lower()


WEBHOOK_RULE = Rule("webhook", _WEBHOOK_RE, _webhook, on_lower=True, gate=("hooks.slack.com",))
URL_CREDENTIALS_RULE = Rule("url_credentials", _URL_CREDS_RE, _url_creds, gate=("@",))
URL_TOKEN_RULE = Rule("url_token", _URL_TOKEN_RE, _url_token, gate=("@",))
CONNECTION_PWD_RULE = Rule("connection_string_pwd", _CONN_PWD_RE, _conn_pwd, on_lower=True, gate=(";",))
SAS_SIGNATURE_RULE = Rule("azure_sas_signature", _SAS_SIG_RE, _sas_sig, gate=("&", ";", "?"))
ASSIGNMENT_RULE = Rule("assignment", _ASSIGN_RE, _assignment, on_lower=True,
                       searcher=stem_searcher(_ASSIGN_RE, _ASSIGN_STEMS))

__all__ = ["ASSIGNMENT_RULE", "CONNECTION_PWD_RULE", "SAS_SIGNATURE_RULE", "URL_CREDENTIALS_RULE", "URL_TOKEN_RULE",
           "WEBHOOK_RULE"]
