"""Generated secrets of the issue-20 kinds (item 5) in wider forms than tests/secret_kinds.py pins: other card
issuers and groupings, every IBAN country, SSNs with and without dashes, prose passwords in four languages and
several phrasings, PINs, command lines of six tools, cookie values in ten places; passwords in four styles (a
plain lowercase word among them).

Each generator returns (text, the secret in it). Used by bench_redaction_coverage.py (detection rates) and
bench_redaction.py (the on-disk fuzz).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

from ghost_agent.privacy.rules_personal import IBAN_LENGTHS, luhn_ok

_CTX = ["bank", "wifi", "server", "router", "email", "admin", "vpn", "laptop", "db"]
_PROSE = {
    "en": ["my {c} password is {p}", "the {c} password is: {p}", "password for the {c}: {p}", "use {p} as the password",
           "use {p} as my {c} password", "the password for the {c} is {p}", "set the {c} password to {p}",
           "My {c} password was {p}.", "the passcode is {p}", "the {c} passphrase is '{p}'", "{c} password = {p}"],
    "es": ["mi contraseña del {c} es {p}", "la contraseña es: {p}", "contraseña: {p}", "usa {p} como contraseña",
           "la contraseña de {c} es {p}"],
    "de": ["mein Passwort ist {p}", "das Passwort für den {c} lautet {p}", "Passwort: {p}", "das {c}-Passwort ist {p}",
           "Kennwort: {p}"],
    "fr": ["mon mot de passe est {p}", "le mot de passe du {c} est : {p}", "mot de passe : {p}",
           "utilise {p} comme mot de passe"],
}
_CLI = ["mysql -u root -p{p} app", "mysqldump -uadmin -p'{p}' --all-databases", "mysql --user=app --password={p} db",
        "sshpass -p '{p}' ssh deploy@host", "sshpass -p{p} scp f host:", "curl -u admin:{p} https://api.x",
        "curl --user 'bob:{p}' -X POST https://x", "redis-cli -h cache -a {p} ping", "redis-cli --pass {p} info",
        "smbclient //fs/share -U admin%{p}", "smbclient -U 'CORP\\bob%{p}' //fs/c", "htpasswd -b .htpasswd alice {p}",
        "htpasswd -nbB alice {p}", '{{"cmd": "mysql -uroot -p{p} db"}}', '["sshpass", "-p", "{p}", "ssh", "h"]']
_COOKIE = ["Cookie: sid={v}", "Cookie: sessionid={v}; csrftoken={w}", "Set-Cookie: session={v}; Path=/; HttpOnly",
           '{{"Cookie": "sid={v}"}}', "headers = {{'Cookie': 'sid={v}'}}", 'requests.get(u, cookies={{"sid": "{v}"}})',
           "curl -b 'sid={v}' https://x", "curl -H 'Cookie: token={v}' https://x", 'document.cookie = "sid={v}"',
           "GET / HTTP/1.1\r\nCookie: sid={v}\r\n"]
_ISSUERS = [("4", 16), ("4", 13), ("4", 19), ("51", 16), ("55", 16), ("2221", 16), ("2720", 16), ("34", 15), ("37", 15),
            ("6011", 16), ("65", 16), ("3528", 16), ("36", 14), ("62", 16), ("62", 19)]


def _password(rng: random.Random) -> str:
    style = rng.randrange(4)
    if style == 0:
        return "".join(rng.choice(string.ascii_letters + string.digits + "!#%&*") for _ in range(rng.randint(8, 20)))
    if style == 1:
        return rng.choice(["Sunshine", "Dragon", "Monkey", "Autumn", "Falcon"]) + str(rng.randint(1, 9999)) + "!"
    if style == 2:
        return rng.choice(["sunshine", "dragonfly", "monkeybars", "tractor", "pumpkin"])  # a plain word
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(rng.randint(6, 12)))


def _luhn_complete(body: str) -> str:
    for d in "0123456789":
        if luhn_ok(body + d):
            return body + d
    raise AssertionError(body)


def _variant_card(rng: random.Random) -> tuple[str, str]:
    prefix, n = rng.choice(_ISSUERS)
    number = _luhn_complete(prefix + "".join(rng.choice(string.digits) for _ in range(n - len(prefix) - 1)))
    sep = rng.choice(["", " ", "-"])
    groups = [4, 6, 5] if n == 15 else [4, 6, 4] if n == 14 else [4] * (n // 4) + ([n % 4] if n % 4 else [])
    if sep:
        cut, out = 0, []
        for size in groups:
            out.append(number[cut:cut + size])
            cut += size
        number = sep.join(out)
    return rng.choice(["card {}", "{}", "paid with {} yesterday", "cc: {}"]).format(number), number


def _variant_iban(rng: random.Random) -> tuple[str, str]:
    country, length = rng.choice(sorted(IBAN_LENGTHS.items()))
    body = "".join(rng.choice(string.digits) for _ in range(length - 4))
    check = 98 - int("".join(str(int(c, 36)) for c in body + country + "00")) % 97
    iban = f"{country}{check:02d}{body}"
    if rng.random() < 0.5:
        iban = " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
    return rng.choice(["IBAN {}", "{}", "transfer to {} please"]).format(iban), iban


def _variant_ssn(rng: random.Random) -> tuple[str, str]:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    group, serial = rng.randint(1, 99), rng.randint(1, 9999)
    form = rng.randrange(3)
    ssn = (f"{area:03d}-{group:02d}-{serial:04d}" if form == 0 else f"{area:03d}{group:02d}{serial:04d}" if form == 1
           else f"{area:03d} {group:02d} {serial:04d}")
    template = "my SSN is {}" if form else rng.choice(["SSN {}", "{}", "ssn: {}", "social security no. {}"])
    return template.format(ssn), ssn


def _variant_prose(rng: random.Random) -> tuple[str, str]:
    password = _password(rng)
    template = rng.choice(_PROSE[rng.choice(list(_PROSE))])
    return template.format(c=rng.choice(_CTX), p=password), password


def _variant_pin(rng: random.Random) -> tuple[str, str]:
    pin = "".join(rng.choice(string.digits) for _ in range(rng.randint(4, 8)))
    return rng.choice(["my pin is {}", "PIN: {}", "the PIN code is {}.", "pin number: {}", "your PIN is {}"]).format(
        pin), pin


def _variant_cli(rng: random.Random) -> tuple[str, str]:
    password = "".join(rng.choice(string.ascii_letters + string.digits + "!#%") for _ in range(rng.randint(8, 16)))
    return rng.choice(_CLI).format(p=password), password


def _variant_cookie(rng: random.Random) -> tuple[str, str]:
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randint(16, 40)))
    return rng.choice(_COOKIE).format(v=value, w=value[::-1]), value


VARIANTS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "cards (15 issuer/length pairs, 3 formats)": _variant_card, "IBANs (every country)": _variant_iban,
    "US SSNs (dashed, or with context)": _variant_ssn, "prose passwords (en/es/de/fr)": _variant_prose,
    "PINs": _variant_pin, "command-line passwords": _variant_cli, "cookie values": _variant_cookie,
}


