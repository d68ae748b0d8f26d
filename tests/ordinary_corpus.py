"""Ordinary text that must come out of redaction unchanged: the false-positive corpus.

`FIXED` holds hand-written requests, code and tool output that share a shape with a secret (numbers, dates,
hashes, ids, version strings, ports, passwords *mentioned*, cookies baked); `CATEGORIES` generates more of each
kind at random (`ordinary_texts`). The redaction tests assert that none of it changes, and
`bench/bench_redaction_coverage.py` reports the rate at which it does.
"""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Callable

from ghost_agent.privacy.rules_personal import luhn_ok

FIXED = [
    # the brief's examples
    "I forgot my password, how do I reset it?",
    "def check_password(password):\n    return bcrypt.checkpw(password.encode(), stored)",
    "bake cookies at 180 degrees for 12 minutes",
    "docker run -p 8080:80 nginx",
    "ssh -p 2222 build-box && ssh -p 22 -i ~/.ssh/id_ed25519 gateway",
    "python -m http.server -p 8080",
    # numbers, dates, times, ids
    "Order #4532015112830367 shipped on 2024-03-15",  # fails Luhn
    "ISBN 978-3-16-148410-0, ISBN-13 9783161484100, ISBN-10 0-306-40615-2",
    "epoch 1712345678, in ms 1712345678901, in ns 1712345678901234567",
    "commit 5d41402abc4b2a76b9719d911017c592e2a3b4c5 on 2024-01-15T12:30:45Z",
    "request 9b2c6f0e-7a41-4d5e-8f3b-1c2d3e4f5a6b took 1234.5 ms",
    "pip install numpy==1.26.4 pandas>=2.2.0 torch~=2.3.1",
    "mean=0.4532015112830366 std=0.12345678901234567 n=1000000",
    "call +1 (555) 123-4567 or +44 20 7946 0958 or +4915112345678",
    "the account number is 12345678 and the sort code 12-34-56",
    "ports 3000 3001 5432 6379 8080 9200; years 2019 2020 2021 2022",
    "matrix = [[4000, 4500], [5000, 5500]] and 4000 4500 5000 5500 6000 6500",
    "part no. 123-45-67890, SKU AB-1234-XY, lot 987-65-43210",
    "zip codes 94103-1234 and 10001; dates 12/31/2024 and 31.12.2024",
    "UTF8 SHA256 ISO8601 TLS13 ES2015 RFC9110 HTTP2 IPv6 MD5",
    "the build 20240115123045 finished; invoice INV-2024-000123",
    "GB grew 22% and DE89 is a row label; NL is 18 chars",
    # shell and code that mention passwords or cookies without holding one
    "mysql -u root -p app_db",
    "mysql -u root -p",
    "mysql -h db -P 3306 -u app -p$MYSQL_PASSWORD app",
    'mysqldump -u backup -p"$DB_PASS" --all-databases > dump.sql',
    "sshpass -e ssh deploy@host && sshpass -f ~/.pw ssh host",
    'curl -u "$USER:$TOKEN" https://api.example.com && curl -u alice https://x',
    "redis-cli -h cache -p 6379 ping",
    "smbclient -L //fileserver -U alice",
    "htpasswd -c /etc/nginx/.htpasswd alice",
    "mkdir -p /tmp/build && cp -a src dst && tar -xzf a.tgz && ls -la",
    "git log -p --stat && git commit -am 'fix' && grep -rn pattern .",
    "zip -r out.zip dir && unzip -l out.zip && 7z l archive.7z",
    "openssl rand -hex 32 && openssl s_client -connect host:443 -servername host",
    "docker login -u bob --password-stdin registry.example.com < token.txt",
    "password = getpass.getpass('Password: ')",
    "if password is None or password == '':\n    raise ValueError('password is required')",
    "user.set_password(form.cleaned_data['password'])",
    "PASSWORD_MIN_LENGTH = 12  # the password is too short below this",
    "self.assertEqual(response.cookies['sessionid'], session_id)",
    "response.set_cookie('theme', theme)",
    "cookies = request.cookies; cookie_jar.clear()",
    "pin the version: pin numpy to 1.26.4, pinned 3 issues",
    "GPIO pin 18 drives the LED; pin: 2.31.0",
    # prose about passwords, in four languages
    "Your password is required to continue.",
    "The password is incorrect, try again.",
    "The password is too short and the password is case-sensitive.",
    "My password is expired, and the wifi password is changing tomorrow.",
    "The password is stored as a bcrypt hash, never in plain text.",
    "What is the password policy? The password must be 12 characters.",
    "Use a passphrase as the password, not a single word.",
    "Change your password to something stronger.",
    "la contraseña es incorrecta, la contraseña es obligatoria",
    "das Passwort ist falsch; das Passwort ist erforderlich",
    "le mot de passe est incorrect; le mot de passe est obligatoire",
    "Password reset emails go out at 1400. Meet at 12:30.",
    "I love chocolate chip cookies; the cookie jar holds 3 cookies.",
    "Cookie consent banner: accept all cookies?",
]


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _order_id(rng: random.Random) -> str:
    """A 16-digit order id that starts like a card but fails the Luhn check."""
    while True:
        number = rng.choice("3456") + _digits(rng, 15)
        if not luhn_ok(number):
            return rng.choice(["order {}", "Order #{}", "ref {} confirmed", "tracking: {}"]).format(number)


def _isbn(rng: random.Random) -> str:
    body = "978" + _digits(rng, 9)
    check = (10 - sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(body)) % 10) % 10
    isbn = body + str(check)
    if rng.random() < 0.5:
        return f"ISBN {isbn}"
    return f"ISBN-13: {isbn[:3]}-{isbn[3]}-{isbn[4:7]}-{isbn[7:12]}-{isbn[12]}"


def _date_time(rng: random.Random) -> str:
    y, mo, d, h, mi, s = (rng.randint(1990, 2030), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
                          rng.randint(0, 59), rng.randint(0, 59))
    return rng.choice([f"{y}-{mo:02d}-{d:02d}", f"{y}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}Z",
                       f"{mo:02d}/{d:02d}/{y}", f"{d:02d}.{mo:02d}.{y} {h:02d}:{mi:02d}", f"{y}{mo:02d}{d:02d}"])


def _number(rng: random.Random) -> str:
    return rng.choice([repr(rng.random()), repr(rng.uniform(-1e6, 1e6)), str(rng.randint(0, 10**9)),
                       f"{rng.randint(1, 999)},{rng.randint(0, 999):03d},{rng.randint(0, 999):03d}",
                       str(rng.randint(10**9, 10**10)), f"{rng.randint(1, 99)}%"])


def _timestamp(rng: random.Random) -> str:
    seconds = rng.randint(1_500_000_000, 1_900_000_000)
    return rng.choice([str(seconds), str(seconds * 1000 + rng.randint(0, 999)),
                       str(seconds * 10**9 + rng.randint(0, 10**9 - 1))])


def _hash(rng: random.Random) -> str:
    n = rng.choice([7, 12, 32, 40, 64])
    value = "".join(rng.choice("0123456789abcdef") for _ in range(n))
    return rng.choice(["commit {}", "sha256:{}", "md5 {}", "{}", "git show {}"]).format(value)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _version(rng: random.Random) -> str:
    v = f"{rng.randint(0, 30)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"
    return rng.choice(["v{}", "version {}", "pkg=={}", "{}-rc1", "Python {}", "node {}"]).format(v)


def _phone(rng: random.Random) -> str:
    return rng.choice([f"+1 ({_digits(rng, 3)}) {_digits(rng, 3)}-{_digits(rng, 4)}",
                       f"{_digits(rng, 3)}-{_digits(rng, 3)}-{_digits(rng, 4)}",
                       f"+44 20 {_digits(rng, 4)} {_digits(rng, 4)}", f"+49{_digits(rng, 11)}"])


def _part_number(rng: random.Random) -> str:
    return rng.choice([f"{rng.choice(string.ascii_uppercase)}{rng.choice(string.ascii_uppercase)}-{_digits(rng, 4)}",
                       f"P/N {_digits(rng, 3)}-{_digits(rng, 4)}-{_digits(rng, 2)}",
                       f"{_digits(rng, 5)}-{_digits(rng, 4)}", f"#{_digits(rng, 6)}"])


def _port_command(rng: random.Random) -> str:
    port = rng.choice([22, 2222, 80, 8080, 5432, 6379, 3306, 27017])
    return rng.choice([f"ssh -p {port} user@host", f"docker run -p {port}:{port} image", f"nc -l -p {port}",
                       f"redis-cli -p {port} ping", f"mysql -h db -P {port} -u app -p", f"scp -P {port} f host:",
                       f"kubectl port-forward svc/x {port}:{port}", f"python -m http.server {port}"])


_PROSE = ["the agent ran the tests and they pass", "reset your password from the settings page",
          "the password field is empty", "a cookie is a small piece of data", "pin the dependency versions",
          "the password is wrong", "your PIN must have four digits", "enter the password twice",
          "passwords are hashed with argon2", "the session cookie expires in 30 minutes"]


def _prose(rng: random.Random) -> str:
    return " and ".join(rng.sample(_PROSE, rng.randint(1, 3))) + rng.choice([".", "!", "?", ""])


CATEGORIES: dict[str, Callable[[random.Random], str]] = {
    "order ids failing Luhn": _order_id, "ISBNs": _isbn, "dates and times": _date_time, "numbers": _number,
    "timestamps": _timestamp, "hashes and git SHAs": _hash, "UUIDs": _uuid, "version strings": _version,
    "phone numbers": _phone, "part numbers": _part_number, "ports on command lines": _port_command,
    "prose about passwords and cookies": _prose,
}


def ordinary_texts(rng: random.Random, per_category: int) -> dict[str, list[str]]:
    """`per_category` generated texts of each category, and the fixed ones under "fixed"."""
    out = {name: [make(rng) for _ in range(per_category)] for name, make in CATEGORIES.items()}
    out["fixed"] = list(FIXED)
    return out
