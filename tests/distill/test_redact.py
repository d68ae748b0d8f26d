"""Redaction (distill/redact.py): every kind of secret, what must survive, idempotence, structures, the log."""

from __future__ import annotations

import copy
import enum
import re
import string
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ghost_agent.distill.redact import (
    MAX_DEPTH,
    TOO_DEEP,
    is_secret_key,
    redact_event,
    redact_obj,
    redact_text,
    redact_trajectory,
)
from ghost_agent.distill.trajectory import Outcome, Step, Trajectory
from ghost_agent.logging import configure_logging, get_logger

# ----------------------------------------------------------------------------- positive cases, per kind

OPENAI = "sk-" + "A1b2C3d4E5" * 2 + "T3BlbkFJ" + "f6G7h8I9j0" * 2
OPENAI_PROJ = "sk-proj-" + "Ab1_Cd2-Ef3" * 12
ANTHROPIC = "sk-ant-api03-" + "Zz9_Yy8-Xx7" * 8 + "AA"
SLACK_BOT = "xoxb-263594206564-2343594206574-FGqddMF8t08v8N7Oq4i57vs1"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_11ABCDEFG0123456789abc_" + "x1Y2z3" * 9 + "q1Y2z"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

POSITIVE = [
    # OpenAI, Anthropic, Stripe
    (f"my key is {OPENAI} ok", "my key is <REDACTED_API_KEY> ok"),
    ("live test: sk-liveABCDEFGH12345678", "live test: <REDACTED_API_KEY>"),
    (f"OPENAI_API_KEY={OPENAI_PROJ}", "OPENAI_API_KEY=<REDACTED_API_KEY>"),
    ("sk-svcacct-abcdefghijklmnopqrstuvwxyz", "<REDACTED_API_KEY>"),
    (f"({ANTHROPIC})", "(<REDACTED_API_KEY>)"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe <REDACTED_API_KEY>"),
    ("risk-aaaa-sk-ABCDEF1234567890XYZ", "risk-aaaa-<REDACTED_API_KEY>"),  # a key after a rejected candidate
    # Slack
    (f"token {SLACK_BOT} end", "token <REDACTED_API_KEY> end"),
    ("xoxp-1234567890-abcdefghij xapp-1-A0123456789-1234567890123-abcdef", "<REDACTED_API_KEY> <REDACTED_API_KEY>"),
    ("post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX.",
     "post to <REDACTED_WEBHOOK>."),
    # GitHub
    (f"git clone https://{GITHUB}@github.com/me/repo", "git clone https://<REDACTED_API_KEY>@github.com/me/repo"),
    (f"GH_TOKEN={GITHUB_PAT}", "GH_TOKEN=<REDACTED_API_KEY>"),
    (f"gho_{'Q' * 36} ghs_{'1' * 36}", "<REDACTED_API_KEY> <REDACTED_API_KEY>"),
    # AWS
    (f"key id {AWS_ID} here", "key id <REDACTED_AWS_KEY> here"),
    (f"{AWS_ID},{AWS_SECRET}\n", "<REDACTED_AWS_KEY>,<REDACTED_SECRET>\n"),
    (f"aws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}",
     "aws_access_key_id = <REDACTED_AWS_KEY>\naws_secret_access_key = <REDACTED_SECRET>"),
    (f'{{"SecretAccessKey": "{AWS_SECRET}"}}', '{"SecretAccessKey": "<REDACTED_SECRET>"}'),
    # generic assignments
    ("password=hunter2 --user bob", "password=<REDACTED_SECRET> --user bob"),
    ('{"api_key": "abc123", "n": 1}', '{"api_key": "<REDACTED_SECRET>", "n": 1}'),
    ("db: {passwd: 's3cr3t'}", "db: {passwd: '<REDACTED_SECRET>'}"),
    ("X-Api-Key: 0123456789abcdef", "X-Api-Key: <REDACTED_SECRET>"),
    ("https://api.example.com/v1?token=abc123&x=1", "https://api.example.com/v1?token=<REDACTED_SECRET>&x=1"),
    ('{\\"client_secret\\": \\"topsecret\\"}', '{\\"client_secret\\": \\"<REDACTED_SECRET>\\"}'),
    ("password = input('Password: '); token = 'abc123'", "password = input('Password: '); token = '<REDACTED_SECRET>'"),
    (f'api_key="{OPENAI}"', 'api_key="<REDACTED_API_KEY>"'),  # typed when the value's shape is known
    # bearer tokens, HTTP and JSON-quoted
    ('curl -H "Authorization: Bearer xyz" http://h', 'curl -H "Authorization: Bearer <REDACTED_TOKEN>" http://h'),
    ('{"Authorization": "Bearer xyz"}', '{"Authorization": "Bearer <REDACTED_TOKEN>"}'),
    ('{"authorization":"bearer xyz"}', '{"authorization":"bearer <REDACTED_TOKEN>"}'),
    ("{'Authorization': 'Basic dXNlcjpwYXNz'}", "{'Authorization': 'Basic <REDACTED_TOKEN>'}"),
    ("authorization:Authorization: Bearer xyz", "authorization:Authorization: Bearer <REDACTED_TOKEN>"),
    ("Authorization: 0123456789abcdef", "Authorization: <REDACTED_TOKEN>"),
    ("use Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "use Bearer <REDACTED_TOKEN>"),
    # URL credentials
    ("postgres://admin:s3cret@db.internal:5432/app", "postgres://<REDACTED_CREDENTIALS>@db.internal:5432/app"),
    # .onion, emails
    ("see http://abcdefghijklmnop.onion/x and sub.x.ONION", "see http://<REDACTED_ONION>/x and <REDACTED_ONION>"),
    ("mail alice.smith+tag@example.co.uk.", "mail <REDACTED_EMAIL>."),
    ("bob@mail.example.com, carol@x.io", "<REDACTED_EMAIL>, <REDACTED_EMAIL>"),
    ("alice@abcdefghijklmnop.onion", "<REDACTED_EMAIL>"),
    # home directories: the rest of the path is kept
    ("cd /home/alice/project && ls", "cd /home/<user>/project && ls"),
    ("open /Users/bob/Library/x.txt", "open /Users/<user>/Library/x.txt"),
    ("file:///home/carol", "file:///home/<user>"),
    ("it is in /home/dave.", "it is in /home/<user>."),
    # non-loopback IPv4
    ("connect 10.0.0.5:8080 then 8.8.8.8.", "connect <REDACTED_IP>:8080 then <REDACTED_IP>."),
    ("from 192.168.1.254/24", "from <REDACTED_IP>/24"),
    # a match never hides the next one: rejected candidates, values ending in the next key, paired AWS secrets
    ("token=api_key: 0123456789", "token=<REDACTED_SECRET> <REDACTED_SECRET>"),
    ("Authorization: Bearer 0001:(api_key: 0002", "Authorization: Bearer <REDACTED_TOKEN>:(api_key: <REDACTED_SECRET>"),
    (f"Bearer ={AWS_ID},{AWS_SECRET}", "Bearer =<REDACTED_AWS_KEY>,<REDACTED_SECRET>"),
    (f"host 1.2.3.4{OPENAI}", "host <REDACTED_IP><REDACTED_API_KEY>"),  # revealed by a replacement: 2nd pass
    ("version <REDACTED_IP>=10.0.0.7", "version <REDACTED_IP>=<REDACTED_IP>"),  # our ">" is no ">=" pin
    # escapes stand for separators: JSON-escaped newlines, URL-encoded spaces
    (f"out:\\n{OPENAI}\\n", "out:\\n<REDACTED_API_KEY>\\n"),
    (f"q=hi%20{GITHUB}", "q=hi%20<REDACTED_API_KEY>"),
    ("to=%2010.0.0.1", "to=%20<REDACTED_IP>"),
    ("log\\n/home/erin/x \\t10.1.2.3", "log\\n/home/<user>/x \\t<REDACTED_IP>"),
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_each_kind_is_replaced_by_its_placeholder(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_redacting_twice_changes_nothing(text: str, expected: str) -> None:
    assert redact_text(expected) == expected


# ----------------------------------------------------------------------------- negative cases

NEGATIVE = [
    "An ordinary sentence with words, numbers 42 and 3.14, and punctuation!",
    "a risk-based approach; ask-me-anything; sk-learn; task-runner",
    "sk-internationalization-of-things",  # long enough, but no capitals or digits: prose
    "sk-short1",
    "xoxo-gossip-girl and ghp_short",
    "127.0.0.1 and 127.10.20.30 and 0.0.0.0",  # loopback, unspecified
    "netmask 255.255.255.0",
    "version 1.2.3.4, Version: 10.0.0.1, pkg==1.2.3.4, v1.2.3.4",  # version strings
    "999.1.2.3 and 1.2.3.4.5 and 1.2.3",
    "/home/<user>/project and /Users/<user>/x",  # already redacted
    "/Users/Shared/Public and src/home/page.tsx and https://x.com/home",
    "git@github.com:me/repo.git",
    "@dataclass and x @ y and decorators @property",
    "the bearer of bad news; Authorization: required",
    "max_tokens=512, pad_token='<pad>', eos_token=None, tokens: 12",
    "password = os.environ['PASSWORD']; api_key=get_key(); secret=${SECRET}; password: None",
    "self.api_key = api_key; OpenAI(api_key=api_key); password=self.password; token=args.token",  # code
    "if password == stored: pass",
    "api_key: <your-api-key-here>",
    "Authorization: Bearer <REDACTED_TOKEN>",
    "AKIA1234 is too short; AKIAIOSFODNN7EXAMPLEX is too long",
    "git sha 5d41402abc4b2a76b9719d911017c592e2a3b4c5",
    "short",
    "",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_what_is_not_a_secret_survives(text: str) -> None:
    assert redact_text(text) == text


def test_unchanged_text_is_the_same_object() -> None:
    text = "nothing to see here, just text " * 10
    assert redact_text(text) is text


def test_placeholders_match_no_rule() -> None:
    placeholders = ["<REDACTED_API_KEY>", "<REDACTED_AWS_KEY>", "<REDACTED_SECRET>", "Bearer <REDACTED_TOKEN>",
                    "<REDACTED_WEBHOOK>", "x://<REDACTED_CREDENTIALS>@h", "<REDACTED_ONION>", "<REDACTED_EMAIL>",
                    "<REDACTED_IP>", "/home/<user>/", "/Users/<user>/", "<REDACTED_TOO_DEEP>"]
    joined = " ".join(placeholders) + "".join(placeholders) + "=".join(placeholders)
    assert redact_text(joined) == joined


# ----------------------------------------------------------------------------- structures


class Color(str, enum.Enum):
    RED = "red"


def test_redact_obj_goes_deep_and_never_mutates() -> None:
    obj: dict[str, Any] = {
        "messages": [{"role": "user", "content": f"key {OPENAI}"}, {"role": "tool", "content": "ok"}],
        "tool_args": {"cmd": "cat /home/alice/.netrc", "nested": [("mail bob@example.com", 3, None, 1.5, True)]},
        "n": 7,
        "color": Color.RED,
    }
    before = copy.deepcopy(obj)
    out = redact_obj(obj)
    assert obj == before
    assert out["messages"][0]["content"] == "key <REDACTED_API_KEY>"
    assert out["tool_args"]["cmd"] == "cat /home/<user>/.netrc"
    assert out["tool_args"]["nested"] == [("mail <REDACTED_EMAIL>", 3, None, 1.5, True)]
    assert isinstance(out["tool_args"]["nested"][0], tuple)
    assert out["color"] is Color.RED and out["n"] == 7


def test_redact_obj_returns_the_same_object_when_clean() -> None:
    obj = {"a": ["b", {"c": "d"}], "e": 1}
    assert redact_obj(obj) is obj


def test_dict_keys_are_redacted_and_collisions_keep_every_value() -> None:
    obj = {"alice@example.com": 1, "bob@example.com": 2, "<REDACTED_EMAIL>": 3, "plain": 4}
    out = redact_obj(obj)
    assert out == {"<REDACTED_EMAIL>#2": 1, "<REDACTED_EMAIL>#3": 2, "<REDACTED_EMAIL>": 3, "plain": 4}
    assert redact_obj(out) == out


@pytest.mark.parametrize("key", ["password", "api_key", "X-Api-Key", "Authorization", "client_secret", "token",
                                 "AWS_SECRET_ACCESS_KEY", "refresh_token", "Cookie"])
def test_values_under_secret_named_keys_are_replaced_whole(key: str) -> None:
    assert is_secret_key(key)
    assert redact_obj({key: "hunter2"}) == {key: "<REDACTED_SECRET>"}
    assert redact_obj({key: {"deeper": ["a b c"]}}) == {key: {"deeper": ["<REDACTED_SECRET>"]}}


@pytest.mark.parametrize("key", ["max_tokens", "tokenizer", "prompt_tokens", "key", "description", "keys"])
def test_ordinary_keys_are_not_secret_names(key: str) -> None:
    assert not is_secret_key(key)
    assert redact_obj({key: "value"}) == {key: "value"}


def test_inert_values_under_secret_keys_are_kept() -> None:
    obj = {"password": "", "api_key": "<your key>", "token": "None", "secret": "${SECRET}", "x": {"password": 5}}
    assert redact_obj(obj) is obj


def test_a_string_holding_the_join_separator_is_still_redacted_on_its_own() -> None:
    out = redact_obj(["a\x00" + OPENAI, "b@x.com", "plain"])
    assert out == ["a\x00<REDACTED_API_KEY>", "<REDACTED_EMAIL>", "plain"]


def test_depth_is_capped_and_cycles_terminate() -> None:
    deep: list[Any] = ["sk-x"]
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    out = redact_obj(deep)
    for _ in range(MAX_DEPTH):
        out = out[0]
    assert out == TOO_DEEP
    cycle: list[Any] = ["mail bob@example.com"]
    cycle.append(cycle)
    out = redact_obj(cycle)
    assert out[0] == "mail <REDACTED_EMAIL>"


def test_redact_trajectory_keeps_ids_and_enums_and_redacts_everything_else() -> None:
    traj = Trajectory(
        session_id="alice@example.com",
        user_request=f"use {OPENAI} from /Users/alice/keys.txt",
        steps=[Step(i=0, description="call the api", tool_name="http",
                    tool_args={"headers": {"Authorization": "Bearer abc"}, "url": "http://10.1.2.3/x"},
                    ok=False, error=f"401 for key {GITHUB}", result_preview="mail bob@example.com")],
        final_response="done, see /home/alice/out.txt",
        outcome=Outcome.FAILED,
        extra={"notes": [f"{AWS_ID} {AWS_SECRET}"]},
    )
    record = traj.to_dict()
    before = copy.deepcopy(record)
    out = redact_trajectory(record)
    assert record == before and out is not record
    assert list(out) == list(record)
    for key in ("id", "ts", "schema", "outcome", "source"):
        assert out[key] == record[key]
    assert out["session_id"] == "<REDACTED_EMAIL>"  # clients choose it: it is content
    data = orjson.dumps(out).decode()
    for secret in (OPENAI, GITHUB, AWS_ID, AWS_SECRET, "alice", "bob@example.com", "10.1.2.3", "Bearer abc"):
        assert secret not in data
    assert out["steps"][0]["tool_args"]["headers"]["Authorization"] == "<REDACTED_SECRET>"
    assert out["final_response"] == "done, see /home/<user>/out.txt"
    assert Trajectory.from_dict(out).id == traj.id


def test_redact_trajectory_on_a_clean_record_is_a_new_equal_dict() -> None:
    record = Trajectory(user_request="hello", final_response="hi").to_dict()
    out = redact_trajectory(record)
    assert out == record and out is not record


# ----------------------------------------------------------------------------- robustness


ADVERSARIAL = {
    "long word then an email": "a" * 1_000_000 + "@example.com",
    "sk- repeated": "sk-" * 333_333,
    "sk- then a long lowercase body": "sk-" + "a" * 1_000_000,
    "headers without values": "authorization:" * 70_000,
    "assignments with inert values": "password: ')" * 80_000,
    "nested assignments": "password=" * 110_000,
    "stems everywhere": "keytokensecretpassw" * 50_000,
    "dotted digits": "1." * 500_000,
    "dotted quads glued": "1.2.3.4." * 125_000,
    "at-signs and dots": "@a." * 333_333,
    "onion labels": "a." * 500_000 + "onion",
    "home prefixes": "/home/" * 160_000,
    "aws ids and base64": ("AKIAIOSFODNN7EXAMPLE " + "a/" * 90) * 5_000,
    "url credentials": "://a:" * 200_000,
    "tabs and bearer": "bearer" + "\t" * 1_000_000,
    "escapes": "\\n" * 500_000,
}


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_no_catastrophic_backtracking_on_a_megabyte(name: str) -> None:
    text = ADVERSARIAL[name]
    t0 = time.perf_counter()
    out = redact_text(text)
    elapsed = time.perf_counter() - t0
    assert elapsed < 10.0, f"{name}: {elapsed:.2f}s"  # ~0.2 s measured; quadratic would take hours
    assert redact_text(out) == out


def test_text_that_lowercases_to_a_different_length() -> None:
    text = "İstanbul Authorization: Bearer xyz İ"  # "İ".lower() is two characters
    assert redact_text(text) == "İstanbul Authorization: Bearer <REDACTED_TOKEN> İ"


# ----------------------------------------------------------------------------- properties

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64URL = ALNUM + "_-"
B64 = ALNUM + "+/"
TOKEN68 = ALNUM + "-._~+/"
BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
# A secret is a token: something ends it on both sides (glued to a word, it would not be one).
BEFORE = [" ", "\n", "\t", '"', "'", "=", ":", ",", ";", "(", ")", "[", "]", "{", "}", "|", "\\n", "%20", "> "]
AFTER = [" ", "\n", "\t", '"', "'", ":", ",", ";", ")", "]", "}", "|", "\\n", "%20", ". ", "! "]
# Fragments that tempt the rules, for the idempotence property.
FRAGMENTS = ["sk-", "sk-proj-", "xoxb-", "ghp_", "github_pat_", "AKIA", "Authorization", ": ", "=", '"', "'",
             "Bearer ", "bearer", "token", "password", "api_key", "secret", "@", ".", ".onion", "/home/", "/Users/",
             "://", "1.2.3.4", "10.0.0.", "255.", "version ", "==", "<REDACTED_SECRET>", "<user>", "\\n", "%20",
             "\x00", "İ", "git@", "hooks.slack.com/services/", "T3BlbkFJ", "A1b2C3d4E5f6G7h8"]


def _text(alphabet: str, lo: int, hi: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=lo, max_size=lo if hi is None else hi)


@st.composite
def openai_keys(draw: st.DrawFn) -> tuple[str, list[str]]:
    prefix = draw(st.sampled_from(["sk-", "sk-proj-", "sk-svcacct-", "sk-admin-"]))
    body = ALNUM if prefix == "sk-" else B64URL
    key = prefix + draw(_text(body, 20, 70)) + "T3BlbkFJ" + draw(_text(body, 20, 70))  # OpenAI's marker
    return key, [key]


@st.composite
def anthropic_keys(draw: st.DrawFn) -> tuple[str, list[str]]:
    key = "sk-ant-api03-" + draw(_text(B64URL, 93)) + "AA"
    return key, [key]


@st.composite
def stripe_keys(draw: st.DrawFn) -> tuple[str, list[str]]:
    key = draw(st.sampled_from(["sk_live_", "sk_test_"])) + draw(_text(ALNUM, 24, 99))
    return key, [key]


@st.composite
def slack_tokens(draw: st.DrawFn) -> tuple[str, list[str]]:
    digits = string.digits
    if draw(st.booleans()):
        token = (f"xox{draw(st.sampled_from('abprs'))}-{draw(_text(digits, 10, 13))}-"
                 f"{draw(_text(digits, 10, 13))}-{draw(_text(ALNUM, 24, 32))}")
    else:
        hex64 = draw(_text("0123456789abcdef", 64))
        token = f"xapp-1-A{draw(_text(UPPER_DIGITS, 10))}-{draw(_text(digits, 13))}-{hex64}"
    return token, [token]


@st.composite
def slack_webhooks(draw: st.DrawFn) -> tuple[str, list[str]]:
    secret = f"T{draw(_text(UPPER_DIGITS, 8, 10))}/B{draw(_text(UPPER_DIGITS, 8, 10))}/{draw(_text(ALNUM, 24))}"
    url = f"https://hooks.slack.com/{draw(st.sampled_from(['services', 'workflows', 'triggers']))}/{secret}"
    return url, [url, secret]


@st.composite
def github_tokens(draw: st.DrawFn) -> tuple[str, list[str]]:
    if draw(st.booleans()):
        token = draw(st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])) + draw(_text(ALNUM, 36))
    else:
        token = "github_pat_" + draw(_text(ALNUM, 22)) + "_" + draw(_text(ALNUM, 59))
    return token, [token]


def aws_ids() -> st.SearchStrategy[str]:
    return st.builds(lambda p, s: p + s, st.sampled_from(["AKIA", "ASIA"]), _text(UPPER_DIGITS, 16))


@st.composite
def aws_secrets(draw: st.DrawFn) -> str:
    chars = list(draw(_text(B64, 38))) + [draw(st.sampled_from(string.ascii_uppercase)),
                                         draw(st.sampled_from(string.ascii_lowercase))]
    return "".join(draw(st.permutations(chars)))


@st.composite
def aws_credentials(draw: st.DrawFn) -> tuple[str, list[str]]:
    key_id, secret = draw(aws_ids()), draw(aws_secrets())
    form = draw(st.integers(0, 3))
    if form == 0:
        return key_id, [key_id]
    if form == 1:  # the credentials CSV and friends
        return key_id + draw(st.sampled_from([",", " ", "\n", "\t", ": "])) + secret, [key_id, secret]
    if form == 2:
        return f"aws_access_key_id = {key_id}\naws_secret_access_key = {secret}", [key_id, secret]
    return f'{{"AccessKeyId": "{key_id}", "SecretAccessKey": "{secret}"}}', [key_id, secret]


ASSIGN_KEYS = ["api_key", "API_KEY", "apiKey", "x-api-key", "password", "PASSWORD", "passwd", "client_secret",
               "access_token", "auth_token", "token", "private_key", "DB_PASSWORD", "SECRET_KEY", "passphrase"]
ASSIGN_FORMS = ["{k}={v}", "{k}: {v}", '"{k}": "{v}"', "'{k}': '{v}'", '{k} = "{v}"', "--{k}={v}", "{k}='{v}'",
                '{{\\"{k}\\": \\"{v}\\"}}']


@st.composite
def assignments(draw: st.DrawFn) -> tuple[str, list[str]]:
    value = draw(_text(ALNUM + "!#%*+./~^-_@", 10, 40).filter(lambda v: any(c.isdigit() for c in v)))
    assume(value.strip("$*.xX"))
    form = draw(st.sampled_from(ASSIGN_FORMS))
    return form.format(k=draw(st.sampled_from(ASSIGN_KEYS)), v=value), [value]


BEARER_FORMS = ["Authorization: Bearer {t}", '"Authorization": "Bearer {t}"', '"authorization":"bearer {t}"',
                "'Authorization': 'Bearer {t}'", "-H 'authorization: Bearer {t}'", "Proxy-Authorization: Bearer {t}",
                "Authorization: Basic {t}", "Authorization: token {t}", '{{\\"Authorization\\": \\"Bearer {t}\\"}}']


@st.composite
def bearer_tokens(draw: st.DrawFn) -> tuple[str, list[str]]:
    if draw(st.booleans()):
        token = draw(_text(TOKEN68, 12, 64)) + draw(st.sampled_from(["", "=", "=="]))
        return draw(st.sampled_from(BEARER_FORMS)).format(t=token), [token]
    jwt = "eyJ" + draw(_text(B64URL, 10, 40)) + "." + draw(_text(B64URL, 10, 60)) + "." + draw(_text(B64URL, 10, 43))
    return f"Bearer {jwt}", [jwt]


@st.composite
def url_credentials(draw: st.DrawFn) -> tuple[str, list[str]]:
    user, password = draw(_text(ALNUM, 1, 12)), draw(_text(ALNUM + "!*-._~", 8, 30))
    scheme = draw(st.sampled_from(["postgres", "mysql", "https", "redis", "amqp"]))
    return f"{scheme}://{user}:{password}@db.internal:5432/app", [f"{user}:{password}@", password]


@st.composite
def onion_hosts(draw: st.DrawFn) -> tuple[str, list[str]]:
    host = draw(_text(BASE32, 56)) if draw(st.booleans()) else draw(_text(BASE32, 16))
    host += ".onion"
    return draw(st.sampled_from(["{h}", "http://{h}/path", "https://www.{h}"])).format(h=host), [host]


@st.composite
def emails(draw: st.DrawFn) -> tuple[str, list[str]]:
    local = draw(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._%+-]{0,19}", fullmatch=True))
    assume(local != "git")
    labels = draw(st.lists(st.from_regex(r"[A-Za-z0-9]{1,10}", fullmatch=True), min_size=1, max_size=3))
    address = f"{local}@{'.'.join(labels)}.{draw(_text(string.ascii_letters, 2, 6))}"
    return address, [address]


@st.composite
def home_paths(draw: st.DrawFn) -> tuple[str, list[str]]:
    name = draw(st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,15}", fullmatch=True))
    assume(name != "Shared")
    prefix = draw(st.sampled_from(["/home/", "/Users/", "file:///home/"]))
    return f"{prefix}{name}/{draw(_text(ALNUM + '/._-', 0, 20))}", [f"/{prefix.split('/')[-2]}/{name}/"]


@st.composite
def ipv4s(draw: st.DrawFn) -> tuple[str, list[str]]:
    first = draw(st.integers(1, 254).filter(lambda n: n != 127))
    ip = ".".join(str(n) for n in [first, *draw(st.lists(st.integers(0, 255), min_size=3, max_size=3))])
    return ip, [ip]


SECRET_KINDS = {
    "openai": openai_keys(), "anthropic": anthropic_keys(), "stripe": stripe_keys(), "slack": slack_tokens(),
    "slack_webhook": slack_webhooks(), "github": github_tokens(), "aws": aws_credentials(),
    "assignment": assignments(), "bearer": bearer_tokens(), "url_credentials": url_credentials(),
    "onion": onion_hosts(), "email": emails(), "home": home_paths(), "ipv4": ipv4s(),
}
VERSION_CONTEXT = re.compile(r"(?i)(?:version|ver|release|build|firmware)\W*\Z|[=<>~!]=\s*\Z")

filler = st.one_of(st.text(max_size=30), st.sampled_from(FRAGMENTS))


@st.composite
def texts_with_secrets(draw: st.DrawFn) -> tuple[str, list[str]]:
    parts: list[str] = []
    phrases: list[tuple[str, list[str]]] = []
    for _ in range(draw(st.integers(1, 3))):
        text, found = draw(st.one_of(*SECRET_KINDS.values()))
        before = draw(filler) + draw(st.sampled_from(BEFORE))
        if text[0].isdigit():  # an IP right after "version " or "==" is a version string by design
            assume(not VERSION_CONTEXT.search("".join(parts) + before))
        parts += [before, text, draw(st.sampled_from(AFTER))]
        phrases.append((text, found))
    parts.append(draw(filler))
    whole = "".join(parts)
    for text, found in phrases:  # a secret must not also occur by chance outside its own phrase
        rest = whole.replace(text, "")
        assume(not any(secret in rest for secret in found))
    return whole, [secret for _, found in phrases for secret in found]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(texts_with_secrets())
def test_no_generated_secret_survives(case: tuple[str, list[str]]) -> None:
    text, secrets = case
    for out in (redact_text(text), redact_obj({"k": [text]})["k"][0]):
        for secret in secrets:
            assert secret not in out, (secret, out)


@pytest.mark.parametrize("kind", list(SECRET_KINDS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_no_generated_secret_survives_per_kind(kind: str, data: st.DataObject) -> None:
    text, secrets = data.draw(SECRET_KINDS[kind])
    out = redact_text(f"before {text} after")
    for secret in secrets:
        assert secret not in out
    assert out.startswith("before ") and out.endswith(" after")  # order-preserving


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(), st.lists(st.one_of(st.text(max_size=12), st.sampled_from(FRAGMENTS))).map("".join)))
def test_idempotent_on_arbitrary_text(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(FRAGMENTS)).map("".join)), max_size=8))
def test_one_pass_over_many_strings_equals_one_pass_each(texts: list[str]) -> None:
    # redact_obj joins a record's strings with a separator and redacts them together: the separator must act
    # as a hard boundary, even when a string contains it.
    assert redact_obj(texts) == [redact_text(t) for t in texts]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_with_secrets())
def test_idempotent_on_text_with_secrets(case: tuple[str, list[str]]) -> None:
    once = redact_text(case[0])
    assert redact_text(once) == once


# ----------------------------------------------------------------------------- the structured log


@pytest.fixture
def log_file(tmp_path: Path) -> Any:
    path = tmp_path / "ghost.jsonl"
    configure_logging(path, console=None)
    yield path
    configure_logging(None, console=None)  # close our file; the next test that logs configures its own


def test_log_user_content_fields_are_redacted_before_the_file(log_file: Path) -> None:
    log = get_logger("test")
    log.info("chat_turn", user_request=f"my key is {OPENAI}", status=200, path="/v1/chat/completions")
    log.warning("request", error=f"upstream said: invalid key {GITHUB} for alice@example.com", api_key="hunter2",
                messages=[{"role": "user", "content": "I live at /home/alice/"}])
    data = log_file.read_text()
    for secret in (OPENAI, GITHUB, "alice@example.com", "hunter2", "/home/alice"):
        assert secret not in data
    first, second = (orjson.loads(line) for line in data.splitlines())
    assert first["user_request"] == "my key is <REDACTED_API_KEY>"
    assert (first["status"], first["path"], first["event"]) == (200, "/v1/chat/completions", "chat_turn")
    assert second["error"] == "upstream said: invalid key <REDACTED_API_KEY> for <REDACTED_EMAIL>"
    assert second["api_key"] == "<REDACTED_SECRET>"
    assert second["messages"] == [{"role": "user", "content": "I live at /home/<user>/"}]


def test_log_exception_text_is_redacted(log_file: Path) -> None:
    try:
        raise ValueError(f"bad token {OPENAI}")
    except ValueError as exc:
        get_logger("test").error("unhandled_error", exc_info=exc)
    data = log_file.read_text()
    assert OPENAI not in data and "<REDACTED_API_KEY>" in data


def test_redact_event_leaves_other_fields_alone() -> None:
    event = {"event": "request", "path": "/v1/x", "model": "sk-not-user-content-but-a-model-name", "error": None}
    assert redact_event(None, "info", dict(event)) == event
