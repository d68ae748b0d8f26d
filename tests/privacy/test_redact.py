"""Redaction (privacy/redact.py): every kind of secret, what must survive, idempotence, structures, the log."""

from __future__ import annotations

import copy
import enum
import random
import re
import string
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ghost_agent.logging import configure_logging, get_logger
from ghost_agent.privacy.redact import (
    MAX_DEPTH,
    TOO_DEEP,
    is_secret_key,
    redact_event,
    redact_obj,
    redact_text,
    redact_trajectory,
    redact_url,
    request_id,
    session_key,
)
from ghost_agent.trajectories.record import Outcome, Step, Trajectory
from tests.secret_kinds import KINDS as CATALOGUE
from tests.secret_kinds import make_secret, needles

# ----------------------------------------------------------------------------- positive cases, per kind

OPENAI = "sk-" + "A1b2C3d4E5" * 2 + "T3BlbkFJ" + "f6G7h8I9j0" * 2
OPENAI_PROJ = "sk-proj-" + "Ab1_Cd2-Ef3" * 12
ANTHROPIC = "sk-ant-api03-" + "Zz9_Yy8-Xx7" * 8 + "AA"
SLACK_BOT = "xoxb-263594206564-2343594206574-FGqddMF8t08v8N7Oq4i57vs1"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_11ABCDEFG0123456789abc_" + "x1Y2z3" * 9 + "q1Y2z"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PEM_LINE = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB"
PEM_BODY = "\n".join([PEM_LINE, "aNpYxX1b2Y3j4y5Z3+Q1Zy8X9s2pNkNEmYkQ2Y9XkZ1mP7X3e4b1Lb8vW8L2y5Gz", "x9Zk1Q=="])
JWT_HEADER = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
JWT = JWT_HEADER + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

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
    # private key blocks: whole, JSON-escaped, with headers, PGP, and cut short (no END line)
    (f"key:\n-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\nthen run it",
     "key:\n<REDACTED_PRIVATE_KEY>\nthen run it"),
    (f'{{"private_key": "-----BEGIN PRIVATE KEY-----\\n{PEM_LINE}\\n-----END PRIVATE KEY-----\\n"}}',
     '{"private_key": "<REDACTED_PRIVATE_KEY>\\n"}'),
    (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----",
     "<REDACTED_PRIVATE_KEY>"),
    (f"-----BEGIN EC PRIVATE KEY----- {PEM_LINE} -----END EC PRIVATE KEY-----", "<REDACTED_PRIVATE_KEY>"),
    (f"-----BEGIN ENCRYPTED PRIVATE KEY-----\r\n{PEM_LINE}\r\n-----END ENCRYPTED PRIVATE KEY-----",
     "<REDACTED_PRIVATE_KEY>"),
    (f"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,0A1B2C3D\n\n{PEM_BODY}\n"
     "-----END RSA PRIVATE KEY-----", "<REDACTED_PRIVATE_KEY>"),
    (f"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n{PEM_BODY}\n=Xy1z\n"
     "-----END PGP PRIVATE KEY BLOCK-----", "<REDACTED_PRIVATE_KEY>"),
    (f"preview: -----BEGIN DSA PRIVATE KEY-----\n{PEM_BODY}\n[... truncated 900 chars ...]",
     "preview: <REDACTED_PRIVATE_KEY>\n[... truncated 900 chars ...]"),
    # JWTs, bare (the header proves it) or with a JSON payload
    (f"token {JWT}.", "token <REDACTED_TOKEN>."),
    (f"cookie value {JWT_HEADER}.e30.", "cookie value <REDACTED_TOKEN>."),
    ("x eyJzdWIiOiIxMjM0NTY3ODkwIn0.eyJuYW1lIjoiSm9obiJ9.c2ln y", "x <REDACTED_TOKEN> y"),
    # vendor tokens (privacy/redact_vendors.py)
    ("GOOGLE_KEY AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "GOOGLE_KEY <REDACTED_API_KEY>"),
    ("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", "<REDACTED_API_KEY>"),
    ("ya29.a0AfH6SMBx3d5Y7k9Q1w2E3r4T5y6U7i8O9p0", "<REDACTED_TOKEN>"),
    ("HF hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "HF <REDACTED_API_KEY>"),
    ("api_org_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "<REDACTED_API_KEY>"),
    ("//registry.npmjs.org/:_authToken npm_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
     "//registry.npmjs.org/:_authToken <REDACTED_API_KEY>"),
    ("glpat-xY7zK9mN2pQ4rS6tU8vW gldt-Ab1Cd2Ef3Gh4Ij5Kl6Mn", "<REDACTED_API_KEY> <REDACTED_API_KEY>"),
    ("glc_eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLTEyMzQ1Ni1obS1yZWFkIiwiayI6IjEyMyJ9", "<REDACTED_API_KEY>"),
    ("GR1348941aB3dE6gH9jK2mN5pQ8sT", "<REDACTED_API_KEY>"),
    ("pypi-AgEIcHlwaS5vcmc" + "Ab1_Cd2-Ef3" * 6, "<REDACTED_API_KEY>"),
    ("dop_v1_" + "0a1b2c3d" * 8, "<REDACTED_API_KEY>"),
    ("shpat_0123456789abcdef0123456789ABCDEF", "<REDACTED_API_KEY>"),
    ("VAULT_TOKEN hvs.CAESIJ1a2B3c4D5e6F7g8H9i0J1k", "VAULT_TOKEN <REDACTED_TOKEN>"),
    ("AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE6M", "<REDACTED_API_KEY>"),
    ("dapi0123456789abcdef0123456789abcdef", "<REDACTED_API_KEY>"),
    ("SG.aB3dE6gH9jK2mN5pQ8sT1v.aB3dE6gH9jK2mN5pQ8sT1vwXyZ0123456789-_aBcDe", "<REDACTED_API_KEY>"),
    ("twilio SK0123456789abcdef0123456789abcdef", "twilio <REDACTED_API_KEY>"),
    ("rk_live_4eC39HqLyjWDarjtT1zdp7dc whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
     "<REDACTED_API_KEY> <REDACTED_API_KEY>"),
    ("lin_api_" + "a1B2c3D4e5" * 4, "<REDACTED_API_KEY>"),
    ("PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01", "<REDACTED_API_KEY>"),
    ("NRAK-ABCDEFGHIJ0123456789ABCDEFG", "<REDACTED_API_KEY>"),
    ("dp.pt." + "a1B2c3D4e5" * 4 + "xyz", "<REDACTED_API_KEY>"),
    ("sq0atp-1a2B3c4D5e6F7g8H9i0J1k2L", "<REDACTED_API_KEY>"),
    ("ATATT3" + "xFfGF0T4bZ-_" * 15, "<REDACTED_API_KEY>"),
    ("fo1_" + "Ab1_Cd2-Ef3" * 3 + "Gh4Ij5Kl6Mn", "<REDACTED_API_KEY>"),
    # shapes anchored inside: Telegram bot tokens, Azure AD client secrets
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq ok", "bot <REDACTED_API_KEY> ok"),
    ("secret abc8Q~aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456", "secret <REDACTED_SECRET>"),
    # Azure connection strings and SAS URLs, ADO-style Pwd=, token userinfo (Sentry DSNs, git remotes)
    ("AccountName=acct;AccountKey=AbCdEf0123456789+/AbCdEf==;EndpointSuffix=core.windows.net",
     "AccountName=acct;AccountKey=<REDACTED_SECRET>;EndpointSuffix=core.windows.net"),
    ("https://a.blob.core.windows.net/c?sv=2022-11-02&sig=AbCdEfGhIjKlMnOp%2BqRsTuVwXyZ%3D",
     "https://a.blob.core.windows.net/c?sv=2022-11-02&sig=<REDACTED_SECRET>"),
    ("Server=db;Uid=app;Pwd=s3cret!;", "Server=db;Uid=app;Pwd=<REDACTED_SECRET>;"),
    ("https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42",
     "https://<REDACTED_CREDENTIALS>@o1.ingest.sentry.io/42"),
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
    # ordinary identifiers, hashes and encodings that share a shape with a secret (precision)
    "commit 5d41402abc4b2a76b9719d911017c592e2a3b4c5, sha256 "
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, md5 d41d8cd98f00b204e9800998ecf8427e",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and request 9b2c6f0e-7a41-4d5e-8f3b-1c2d3e4f5a6b",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
    "rkJggg==",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA me@laptop",
    'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n    kind = "rsa"',
    "-----BEGIN PRIVATE KEY-----\n<paste your key here>\n-----END PRIVATE KEY-----",
    "from huggingface_hub import hf_hub_download; hf_hub_download_with_progress_bar_and_cache()",
    "npm_config_cache and npm_package_version; glpat-token-placeholder",
    "eyJ is how base64 JSON starts; header = base64.urlsafe_b64encode(b'{\"alg\":\"HS256\"}')",
    "SKU-12345, ASK0123456789abcdef0123456789abcdef, TASK_0123456789abcdef0123456789abcdef",
    "export PWD=/srv/app; cd $PWD; meet at 12:AAA; sig=abc; Q~ is a tilde; os.getcwd() # pwd = here",
    "postgres://localhost:5432/app and https://readonly_service_account@intranet/x and ssh://git@github.com/a/b",
    "def sign(payload: dict, key: bytes) -> str:\n    return jwt.encode(payload, key, algorithm='HS256')",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_what_is_not_a_secret_survives(text: str) -> None:
    assert redact_text(text) == text


def test_unchanged_text_is_the_same_object() -> None:
    text = "nothing to see here, just text " * 10
    assert redact_text(text) is text


def test_placeholders_match_no_rule() -> None:
    placeholders = ["<REDACTED_API_KEY>", "<REDACTED_AWS_KEY>", "<REDACTED_SECRET>", "Bearer <REDACTED_TOKEN>",
                    "<REDACTED_PRIVATE_KEY>", "<REDACTED_TOKEN>", "https://<REDACTED_CREDENTIALS>@h",
                    "<REDACTED_WEBHOOK>", "x://<REDACTED_CREDENTIALS>@h", "<REDACTED_ONION>", "<REDACTED_EMAIL>",
                    "<REDACTED_IP>", "/home/<user>/", "/Users/<user>/", "<REDACTED_TOO_DEEP>", "<REDACTED_CARD>",
                    "<REDACTED_IBAN>", "<REDACTED_SSN>", "<REDACTED_PASSWORD>"]
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
                                 "AWS_SECRET_ACCESS_KEY", "refresh_token", "Cookie", "pin", "PIN", "cvv",
                                 "card_number", "ssn", "Passwort", "contraseña", "mot_de_passe"])
def test_values_under_secret_named_keys_are_replaced_whole(key: str) -> None:
    assert is_secret_key(key)
    assert redact_obj({key: "hunter2"}) == {key: "<REDACTED_SECRET>"}
    assert redact_obj({key: {"deeper": ["a b c"]}}) == {key: {"deeper": ["<REDACTED_SECRET>"]}}


@pytest.mark.parametrize("key", ["max_tokens", "tokenizer", "prompt_tokens", "key", "description", "keys", "spin",
                                 "pinned", "mapping", "pin_memory", "ssn_valid"])
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
    "key block markers without bodies": '-----BEGIN RSA PRIVATE KEY-----"' * 30_000,
    "a key block body without an end": "-----BEGIN PRIVATE KEY-----\n" + "QUJD\n" * 200_000,
    "key block dashes": "-----BEGIN PRIVATE KEY-----" + "-" * 1_000_000,
    "jwt headers": "eyJhbGciOiJIUzI1NiJ9." * 50_000,
    "jwt-like dots": "eyJ" + "a." * 500_000,
    "telegram anchors": ":AA" * 333_333,
    "azure anchors": "abc1Q~" * 160_000,
    "vendor prefixes": "AIza hf_ npm_ glpat- SG. SK dapi hvs. " * 25_000,
    # issue 20, item 5: cards, IBANs, SSNs, PINs (digit runs in the text's shape), Discord, cookies, command lines,
    # prose
    "one long digit run": "1" * 1_000_000,
    "card-like groups": "4111 " * 200_000,
    "digit runs after URL escapes": "%2041111111" * 90_000,
    "ssn-like runs": "123-45-6789-" * 80_000,
    "iban prefixes": "DE89 " * 200_000,
    "an iban country then digits": "DE" + "1" * 1_000_000,
    "pins": "pin is 1234 " * 80_000,
    "discord dots": ".abcdef." * 125_000,
    "discord heads": "MTk4NjIyNDgzNDcxOTI1MjQ4." * 40_000,
    "cookie headers": "Cookie: a=b; " * 80_000,
    "one cookie header, many pairs": "Cookie: " + "a=b; " * 200_000,
    "cookie dicts": 'cookies={"a": "b", ' * 50_000,
    "tools and glued passwords": "mysql -p" * 120_000,
    "line continuations": "mysql \\\n" * 100_000,
    "password is": "password is " * 80_000,
    "use as": "use x " * 160_000 + "as the password",
    "mot de passe": "mot de passe " * 75_000,
}  # dense command lines: tests/privacy/test_rules_cli.py, test_reading_command_lines_is_linear


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_no_catastrophic_backtracking_on_a_megabyte(name: str) -> None:
    text = ADVERSARIAL[name]
    t0 = time.perf_counter()
    out = redact_text(text)
    elapsed = time.perf_counter() - t0
    assert elapsed < 10.0, f"{name}: {elapsed:.2f}s"  # 0.1-4 s measured; quadratic would take hours
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


@st.composite
def catalogue_secrets(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Any kind of `tests/secret_kinds.py` (PEM blocks, JWTs, vendor tokens, ...), generated from a drawn seed."""
    secret = make_secret(draw(st.sampled_from(sorted(CATALOGUE))), random.Random(draw(st.integers(0, 2**32))))
    return secret.text, list(secret.parts)


SECRET_KINDS = {
    "catalogue": catalogue_secrets(),
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


def test_redact_event_leaves_clean_fields_alone() -> None:
    event = {"event": "request", "path": "/v1/x", "model": "sk-not-user-content-but-a-model-name", "error": None,
             "status": 200, "ids": ["5d41402abc4b2a76b9719d911017c592"]}
    assert redact_event(None, "info", dict(event)) == event


def test_redact_event_redacts_every_field_not_only_user_content() -> None:
    # Request ids, settings and object reprs reached the log raw: every field is redacted now.
    event = {"event": "startup", "request_id": OPENAI, "settings": {"upstream_url": "http://u:pw@h/v1"},
             "workspace": Path("/home/alice/ws"), "failure": ValueError(f"bad {GITHUB}"), "n": 3}
    out = redact_event(None, "info", event)
    assert out["request_id"] == "<REDACTED_API_KEY>"
    assert out["settings"] == {"upstream_url": "http://<REDACTED_CREDENTIALS>@h/v1"}
    assert (out["workspace"], out["failure"], out["n"]) == ("/home/<user>/ws", "bad <REDACTED_API_KEY>", 3)


def test_every_log_field_is_redacted_before_the_file(log_file: Path) -> None:
    pem = f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}\n-----END EC PRIVATE KEY-----"
    get_logger("test").info("lessons_shown", request_id=f"rid {AWS_ID}", session=f"{JWT}", note=pem)
    data = log_file.read_text()
    for secret in (AWS_ID, JWT, PEM_LINE):
        assert secret not in data


# ----------------------------------------------------------------------------- the catalogue, kind by kind


@pytest.mark.parametrize("kind", sorted(CATALOGUE))
def test_every_catalogued_kind_is_redacted_in_any_surrounding(kind: str) -> None:
    rng = random.Random(kind)
    for _ in range(25):
        secret = make_secret(kind, rng)
        for context in ("{}", "before {} after", 'x = "{}"', "'{}'", "({})", "see:\n{}\n.", "{}.", "\\n{}\\n",
                        "%20{}%20", '{{"v": "{}"}}'):
            text = context.format(secret.text)
            out = redact_text(text)
            assert not [n for n in needles(secret.parts) if n in out], (kind, out)
            assert redact_text(out) == out
        assert not [n for n in needles(secret.parts) if n in redact_text(secret.one_line())]


# ----------------------------------------------------------------------------- URLs and client-chosen ids


@pytest.mark.parametrize(("url", "shown"), [
    ("http://user:pw@10.0.0.5:8080/v1", "http://<REDACTED_CREDENTIALS>@10.0.0.5:8080/v1"),
    ("https://tok@upstream.example/v1", "https://<REDACTED_CREDENTIALS>@upstream.example/v1"),
    ("http://a:b@c@host/v1", "http://<REDACTED_CREDENTIALS>@host/v1"),  # the last @ ends the userinfo
    ("http://127.0.0.1:8080/v1?api_key=abc123", "http://127.0.0.1:8080/v1?api_key=<REDACTED_SECRET>"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("upstream http://u:p@h/v1 unreachable", "upstream http://<REDACTED_CREDENTIALS>@h/v1 unreachable"),
    ("not a url", "not a url"),
])
def test_redact_url_hides_userinfo_and_keeps_the_host(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert redact_url(shown) == shown


def test_a_session_id_holding_a_secret_becomes_a_stable_pseudonym() -> None:
    assert session_key("default") == "default" and session_key("alice-laptop.2") == "alice-laptop.2"
    assert session_key("x" * 300) == "x" * 128  # clean ids are only bounded
    key = session_key(GITHUB)
    assert re.fullmatch(r"REDACTED_API_KEY-[0-9a-f]{16}", key)
    assert session_key(GITHUB) == key and session_key(GITHUB[:-1] + "Z") != key  # stable, and distinct
    assert re.fullmatch(r"REDACTED_EMAIL-[0-9a-f]{16}", session_key("team alice@example.com"))
    # redacted first, then cut: a secret past the cut still makes the id a pseudonym
    long = "a" * 120 + " " + OPENAI
    assert session_key(long).startswith("REDACTED_API_KEY-")
    for value in (GITHUB, "password=hunter2hunter2", f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n"):
        assert redact_text(session_key(value)) == session_key(value)
        assert not any(n in session_key(value) for n in ("ghp_", "hunter2", PEM_LINE))


def test_a_request_id_is_redacted_then_made_safe_then_cut() -> None:
    assert request_id("") == ""
    assert request_id("req-1234_abc") == "req-1234_abc"
    assert request_id('a b"c\n<d>') == "a_b_c_d_"
    assert request_id("r" * 500) == "r" * 64
    rid = request_id(JWT)
    assert re.fullmatch(r"REDACTED_TOKEN-[0-9a-f]{16}", rid) and JWT_HEADER not in rid
    # redacted first, then cut: cut first, the id would keep 60 x and the JWT's first three characters
    assert request_id("x" * 60 + " " + JWT).startswith("REDACTED_TOKEN-")


def test_a_few_characters_of_syntax_after_token_are_kept() -> None:
    # seen in self-play: SQLite's error about a broken quote, in a validator's detail
    error = 'SQL error: unrecognized token: "\'\')\nresult = cursor.fetchone()[0]'
    assert redact_text(error) == error
    assert redact_text('token: "a1!?"') == 'token: "<REDACTED_SECRET>"'  # any letter or digit: a value
