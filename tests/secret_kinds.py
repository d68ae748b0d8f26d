"""A catalogue of secret kinds in their real formats, generated at random, for the redaction tests.

Each kind makes a `Secret`: the phrase as it would appear in text (`text`, with its context where the kind is
defined by one: `password=…`, `Authorization: Bearer …`) and the random `parts` that must never reach the disk.
`needles(parts)` turns the parts into the substrings a test greps for: the whole part, and for long parts every
aligned 16-character window, so a secret cut in two by a partial match is still found.
"""

from __future__ import annotations

import base64
import random
import string
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"
HEX = "0123456789abcdef"
WINDOW = 16


@dataclass(frozen=True)
class Secret:
    """A generated secret: `text` to embed, `parts` that must not survive."""

    kind: str
    text: str
    parts: tuple[str, ...]

    def one_line(self) -> str:
        """`text` fit for an HTTP header: PEM lines joined by spaces, accents dropped ("contraseña" ->
        "contrasena", as typed on a keyboard without them)."""
        text = " ".join(self.text.split("\n"))
        return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    """`n` random characters holding at least one uppercase letter, one lowercase and one digit where the
    alphabet has them (real generated tokens do; an all-lowercase body is a word, not a key)."""
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(n))
        classes = [set(alphabet) & set(c) for c in (string.ascii_uppercase, string.ascii_lowercase, string.digits)]
        if n < 6 or all(not cls or set(out) & cls for cls in classes):
            return out


Maker = Callable[[random.Random], tuple[str, tuple[str, ...]]]


def _pem(label: str, headers: str = "") -> Maker:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        lines = [_s(rng, B64, 64) for _ in range(5)] + [_s(rng, B64, 40) + "=="]
        body = "\n".join(lines)
        return f"-----BEGIN {label}-----\n{headers}{body}\n-----END {label}-----", tuple(lines)

    return make


def _jwt(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = f'{{"sub":"{rng.randrange(10**9)}","name":"{_s(rng, ALNUM, 12)}","iat":{rng.randrange(10**9)}}}'
    payload = base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=")
    signature = _s(rng, B64URL, 43)
    return f"{header}.{payload}.{signature}", (payload, signature)


def _aws(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key_id, secret = "AKIA" + _s(rng, UPPER_DIGITS, 16), _s(rng, B64, 40)
    return f"{key_id} {secret}", (key_id, secret)


def _slack_webhook(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    path = f"T{_s(rng, UPPER_DIGITS, 10)}/B{_s(rng, UPPER_DIGITS, 10)}/{_s(rng, ALNUM, 24)}"
    return f"https://hooks.slack.com/services/{path}", (path,)


def _azure_storage(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key = _s(rng, B64, 86) + "=="
    return (f"DefaultEndpointsProtocol=https;AccountName=acct{rng.randrange(1000)};AccountKey={key};"
            "EndpointSuffix=core.windows.net"), (key,)


def _db_url(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    password = _s(rng, ALNUM, 20)
    return f"postgres://app_user:{password}@db.internal:5432/app", (password,)


def _basic(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    token = base64.b64encode(f"admin:{_s(rng, ALNUM, 18)}".encode()).decode()
    return f"Authorization: Basic {token}", (token,)


def _telegram(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    body = "AA" + _s(rng, B64URL, 33)
    return f"{rng.randrange(10**8, 10**10)}:{body}", (body,)


def _luhn_digit(body: str) -> str:
    """The check digit that makes `body` + it Luhn-valid."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str(-total % 10)


def _card(prefix: str, length: int, groups: tuple[int, ...] = (), sep: str = " ") -> Maker:
    """A Luhn-valid card number of a real scheme: bare, or printed in `groups` joined by `sep`."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
        number = body + _luhn_digit(body)
        if groups:
            cut, out = 0, []
            for size in groups:
                out.append(number[cut:cut + size])
                cut += size
            number = sep.join(out)
        return number, (number,)

    return make


def _iban(country: str, bban: Callable[[random.Random], str], grouped: bool) -> Maker:
    """An IBAN with valid check digits (ISO 13616 mod 97), compact or in groups of four."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        body = bban(rng)
        numeric = "".join(str(int(c, 36)) for c in body + country + "00")
        iban = f"{country}{98 - int(numeric) % 97:02d}{body}"
        if grouped:
            iban = " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
        return iban, (iban,)

    return make


def _ssn(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    ssn = f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
    return rng.choice(["SSN {}", "social security number: {}", "{}"]).format(ssn), (ssn,)


def _discord(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    user_id = str(rng.randint(10**17, 10**19 - 1))
    head = base64.b64encode(user_id.encode()).decode().rstrip("=")
    token = f"{head}.{_s(rng, B64URL, 6)}.{_s(rng, B64URL, rng.choice([27, 38]))}"
    return token, (token,)


def _cookies(form: str, names: tuple[str, ...]) -> Maker:
    """A cookie string in `form` ("Cookie: {}"), each of `names` with a random session-like value."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        values = tuple(_s(rng, ALNUM, 24) for _ in names)
        return form.format("; ".join(f"{n}={v}" for n, v in zip(names, values, strict=True))), values

    return make


def _password_in(form: str, alphabet: str = ALNUM + "!#%", n: int = 14) -> Maker:
    """A random password inside `form` (a command line or a sentence)."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        password = _s(rng, alphabet, n)
        return form.format(password), (password,)

    return make


def _prefixed(prefix: str, alphabet: str, n: int, suffix: str = "") -> Maker:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        body = _s(rng, alphabet, n)
        return prefix + body + suffix, (body,)

    return make


def _with(context: str, make: Maker) -> Maker:
    def wrapped(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        text, parts = make(rng)
        return context.format(text), parts

    return wrapped


KINDS: dict[str, Maker] = {
    "pem_rsa": _pem("RSA PRIVATE KEY"),
    "pem_ec": _pem("EC PRIVATE KEY"),
    "pem_dsa": _pem("DSA PRIVATE KEY"),
    "pem_openssh": _pem("OPENSSH PRIVATE KEY"),
    "pem_pkcs8": _pem("PRIVATE KEY"),
    "pem_encrypted": _pem("ENCRYPTED PRIVATE KEY"),
    "pem_rsa_legacy_encrypted": _pem("RSA PRIVATE KEY", "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,"
                                     "0123456789ABCDEF0123456789ABCDEF\n\n"),
    "jwt": _jwt,
    "google_api_key": _prefixed("AIza", B64URL, 35),
    "google_oauth_secret": _prefixed("GOCSPX-", B64URL, 28),
    "huggingface": _prefixed("hf_", string.ascii_letters, 34),
    "npm": _prefixed("npm_", ALNUM, 36),
    "gitlab_pat": _prefixed("glpat-", B64URL, 20),
    "aws_key_pair": _aws,
    "github_classic": _prefixed("ghp_", ALNUM, 36),
    "github_oauth": _prefixed("gho_", ALNUM, 36),
    "github_fine_grained": _prefixed("github_pat_11A", ALNUM + "_", 79),
    "slack_bot": _prefixed("xoxb-2635942065-", ALNUM, 24),
    "slack_webhook": _slack_webhook,
    "stripe_live": _prefixed("sk_live_", ALNUM, 24),
    "stripe_restricted": _prefixed("rk_live_", ALNUM, 24),
    "openai_project": _prefixed("sk-proj-", B64URL, 48, "T3BlbkFJ" + "Zq9" * 8),
    "anthropic": _prefixed("sk-ant-api03-", B64URL, 93, "AA"),
    "twilio": _prefixed("SK", HEX, 32),
    "sendgrid": _prefixed("SG." + "aB3dE6gH9jK2mN5pQ8sT1v" + ".", B64URL, 43),
    "azure_storage": _azure_storage,
    "db_url": _db_url,
    "password_assignment": _with("password={}", _prefixed("", ALNUM + "!#%", 16)),
    "secret_colon": _with('client_secret: "{}"', _prefixed("", ALNUM, 24)),
    "bearer_header": _with("Authorization: Bearer {}", _prefixed("", ALNUM + "-._~", 40)),
    "basic_header": _basic,
    "pypi": _prefixed("pypi-AgEIcHlwaS5vcmc", B64URL, 70),
    "digitalocean": _prefixed("dop_v1_", HEX, 64),
    "vault": _prefixed("hvs.", B64URL, 90),
    "telegram_bot": _telegram,
    "age": _prefixed("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    # issue 20, item 5: personal data, cookies, bot tokens, passwords on command lines and in prose
    "card_visa": _card("4", 16),
    "card_mastercard_spaced": _card("5", 16, (4, 4, 4, 4)),
    "card_amex_dashed": _card("37", 15, (4, 6, 5), "-"),
    "card_discover": _card("6011", 16),
    "iban_de_grouped": _iban("DE", lambda rng: "".join(rng.choice(string.digits) for _ in range(18)), True),
    "iban_gb_compact": _iban("GB", lambda rng: _s(rng, string.ascii_uppercase, 4)
                             + "".join(rng.choice(string.digits) for _ in range(14)), False),
    "us_ssn": _ssn,
    "discord_bot": _discord,
    "cookie_header": _cookies("Cookie: {}", ("sessionid", "csrftoken")),
    "set_cookie": _cookies("Set-Cookie: {}; Path=/; HttpOnly; Secure", ("session",)),
    "cookie_json": _cookies('{{"Cookie": "{}"}}', ("sid",)),
    "curl_cookie": _cookies("curl -b '{}' https://example.com/api", ("sid",)),
    "mysql_cli": _password_in("mysql -u root -p{} app_db"),
    "sshpass_cli": _password_in("sshpass -p '{}' ssh -p 2222 deploy@build"),
    "curl_user_cli": _password_in("curl -u admin:{} https://api.example.com/v1"),
    "redis_cli": _password_in("redis-cli -h cache -a {} ping"),
    "smbclient_cli": _password_in("smbclient //fs/share -U admin%{}"),
    "htpasswd_cli": _password_in("htpasswd -b /etc/nginx/.htpasswd alice {}"),
    "prose_password": _password_in("my bank password is {}"),
    "prose_wifi_password": _password_in("the wifi password is: {}"),
    "prose_use_as_password": _password_in("use {} as the password"),
    "prose_password_es": _password_in("mi contraseña es {}"),
    "prose_password_de": _password_in("das Passwort lautet {}"),
    "prose_password_fr": _password_in("le mot de passe est : {}"),
    "prose_pin": _password_in("my PIN is {}", string.digits, 8),
}


def make_secret(kind: str, rng: random.Random) -> Secret:
    """A fresh secret of `kind`."""
    text, parts = KINDS[kind](rng)
    return Secret(kind, text, parts)


def needles(parts: Iterable[str]) -> set[str]:
    """What a test greps for: each part whole, and every aligned 16-character window of a long part."""
    out: set[str] = set()
    for part in parts:
        out.add(part)
        for i in range(0, len(part) - WINDOW + 1, WINDOW):
            out.add(part[i:i + WINDOW])
    return out
