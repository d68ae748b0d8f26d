"""Passwords on command lines (privacy/rules_cli.py): each tool of the table, the shell's quoting, and what
a tool takes as a port, a prompt or a variable."""

from __future__ import annotations

import json
import time

import pytest

from ghost_agent.privacy.redact import redact_text
from ghost_agent.privacy.rules_cli import TOOLS, Words, iter_words

P = "<REDACTED_PASSWORD>"

COMMANDS = [
    # the tools of the issue
    ("mysql -u root -pS3cret app_db", f"mysql -u root -p{P} app_db"),
    ("mysqldump -uroot -p'S3 cret' --all-databases > dump.sql", f"mysqldump -uroot -p'{P}' --all-databases > dump.sql"),
    ("mariadb -h db -P 3306 -u app -p\"x!y#z\" app", f'mariadb -h db -P 3306 -u app -p"{P}" app'),
    ("mysql --password=hunter2 -u x", "mysql --password=<REDACTED_SECRET> -u x"),  # the assignment rule's
    ("sshpass -p 'pw123' ssh -p 2222 user@host", f"sshpass -p '{P}' ssh -p 2222 user@host"),
    ("sshpass -pS3cr3t scp -P 22 f host:", f"sshpass -p{P} scp -P 22 f host:"),
    ("curl -u bob:pw123 https://x", f"curl -u bob:{P} https://x"),
    ('curl -su "bob:pw 123" https://x', f'curl -su "bob:{P}" https://x'),
    ("curl --user alice:Secr3t --proxy-user p:Pr0xy https://api",
     f"curl --user alice:{P} --proxy-user p:{P} https://api"),
    ("curl -uadmin:S3cret https://x", f"curl -uadmin:{P} https://x"),
    ("redis-cli -h cache -p 6379 -a s3cret ping", f"redis-cli -h cache -p 6379 -a {P} ping"),
    ("redis-cli --user app --pass s3cret --no-auth-warning", f"redis-cli --user app --pass {P} --no-auth-warning"),
    ("smbclient //srv/share -U admin%Passw0rd", f"smbclient //srv/share -U admin%{P}"),
    ("smbclient -Uadmin%Passw0rd //srv/share", f"smbclient -Uadmin%{P} //srv/share"),
    ("rpcclient -U 'CORP\\\\admin%Passw0rd' dc01", f"rpcclient -U 'CORP\\\\admin%{P}' dc01"),
    ("htpasswd -b /etc/nginx/.htpasswd alice Sup3rS3cret", f"htpasswd -b /etc/nginx/.htpasswd alice {P}"),
    ("htpasswd -nbB alice Sup3rS3cret", f"htpasswd -nbB alice {P}"),
    ("htpasswd -bc -C 10 .htpasswd alice Sup3rS3cret", f"htpasswd -bc -C 10 .htpasswd alice {P}"),
    # more of the table
    ("mongosh -u admin -p S3cret --authenticationDatabase admin",
     f"mongosh -u admin -p {P} --authenticationDatabase admin"),
    ("ldapsearch -x -D cn=admin -w S3cret -b dc=x", f"ldapsearch -x -D cn=admin -w {P} -b dc=x"),
    ("sqlcmd -S db -U sa -P 'S3cret!' -Q 'select 1'", f"sqlcmd -S db -U sa -P '{P}' -Q 'select 1'"),
    ("ipmitool -I lanplus -H bmc -U admin -P S3cret power status",
     f"ipmitool -I lanplus -H bmc -U admin -P {P} power status"),
    ("docker login -u bob -p S3cret registry.io", f"docker login -u bob -p {P} registry.io"),
    ("podman login --password=S3cret quay.io", f"podman login --password={P} quay.io"),
    ("helm registry login -u bob -p S3cret r.io", f"helm registry login -u bob -p {P} r.io"),
    ("openssl enc -aes-256-cbc -pass pass:S3cret -in x", f"openssl enc -aes-256-cbc -pass pass:{P} -in x"),
    ("openssl pkcs12 -export -passout pass:S3cret -out a.p12", f"openssl pkcs12 -export -passout pass:{P} -out a.p12"),
    ("keytool -genkey -storepass changeit1 -keypass K3ypass", f"keytool -genkey -storepass {P} -keypass {P}"),
    ("7z a -pS3cret -mhe=on -o/tmp/out out.7z dir", f"7z a -p{P} -mhe=on -o/tmp/out out.7z dir"),
    ("zip -P pw123 out.zip f && unzip -P pw456 out.zip", f"zip -P {P} out.zip f && unzip -P {P} out.zip"),
    ("gpg --batch --passphrase S3cret -d f.gpg", f"gpg --batch --passphrase {P} -d f.gpg"),
    ("plink -ssh -pw S3cret admin@router", f"plink -ssh -pw {P} admin@router"),
    ("http -a bob:S3cret https://api.example.com", f"http -a bob:{P} https://api.example.com"),
    ("snmpwalk -v3 -u admin -A authPass1 -X privPass2 -l authPriv host",
     f"snmpwalk -v3 -u admin -A {P} -X {P} -l authPriv host"),
    # where the command is written
    ('{"cmd": "mysql -u root -pS3cret db"}', f'{{"cmd": "mysql -u root -p{P} db"}}'),
    ('["mysql", "-u", "root", "-pS3cret"]', f'["mysql", "-u", "root", "-p{P}"]'),
    ("subprocess.run(['sshpass', '-p', 'S3cret', 'ssh', 'host'])",
     f"subprocess.run(['sshpass', '-p', '{P}', 'ssh', 'host'])"),
    ('{"cmd": "curl -u \\"bob:S3cret\\" https://x"}', f'{{"cmd": "curl -u \\"bob:{P}\\" https://x"}}'),
    ("out:\\nmysql -u root -pS3cret db\\n", f"out:\\nmysql -u root -p{P} db\\n"),
    ("mysql \\\n  -u root \\\n  -pS3cret app", f"mysql \\\n  -u root \\\n  -p{P} app"),
    ("cd /srv && /usr/bin/mysql -pS3cret app; echo done", f"cd /srv && /usr/bin/mysql -p{P} app; echo done"),
    ('sshpass -pOuter1 ssh host "mysql -pInner1 db"', f'sshpass -p{P} ssh host "mysql -p{P} db"'),
    ("'curl -b 'sid=abc123' https://x'", "'curl -b 'sid=<REDACTED_TOKEN>' https://x'"),
    ("x = 'mysqldump -uadmin -p'S3cret' --all-databases'", f"x = 'mysqldump -uadmin -p'{P}' --all-databases'"),
    ("C:\\> mysql.exe -u root -pS3cret", f"C:\\> mysql.exe -u root -p{P}"),
    ("the agent's mysqldump -uadmin -p'S3cret' --all-databases",
     f"the agent's mysqldump -uadmin -p'{P}' --all-databases"),
]
KEPT = [
    "mysql -p app_db",  # -p alone asks for the password; app_db is the database
    "mysql -u root -p",
    "mysql -u root -p 8080",
    "mysql -h db -P 3306 -u app -p$MYSQL_PASSWORD app",
    'mysql -u root -p"$PASS" db',
    "mysql -uroot -p${DB_PASSWORD} db",
    "mysql -u root -p$(cat /run/secrets/db) db",
    "mysql -u root -p<password> db",
    "mysql -u root -pYOUR_PASSWORD db",
    "mysql -u root -p[password] db",
    "mysql -uphil db",  # -u phil, not -p hil
    "ssh -p 2222 user@host",
    "docker run -p 8080:80 nginx",
    "redis-cli -p 6379 ping",
    'sshpass -p "$SSHPASS" ssh host',
    "sshpass -e ssh host",
    'curl -u "$USER:$PASS" https://x',
    "curl -u alice https://x",
    "curl -b cookies.txt https://x",
    "smbclient -L //fs -U alice",
    "htpasswd -c /etc/nginx/.htpasswd alice",
    "htpasswd -v .htpasswd alice",
    "mkdir -p /tmp/x && pip install -U requests && python -m pytest -p no:cacheprovider",
    "libmysqlclient -pS3cret and mycurl -u a:b",  # not the tools
    "7z a -o/tmp/out out.7z dir",
    "openssl enc -pass env:SECRET -in x && openssl enc -pass file:/run/pw -in y",
    "docker logout registry.io && docker push -p x",
]


@pytest.mark.parametrize(("text", "expected"), COMMANDS)
def test_passwords_on_command_lines_are_replaced(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize("text", KEPT)
def test_ports_prompts_variables_and_placeholders_stay(text: str) -> None:
    assert redact_text(text) == text


def test_a_json_encoded_command_is_redacted_like_the_raw_one() -> None:
    raw = "sshpass -p 'pw 123' ssh deploy@host 'mysql -uroot -pInner1 db'"
    out = redact_text(json.dumps({"cmd": raw}))
    assert "pw 123" not in out and "Inner1" not in out
    assert json.loads(out)["cmd"] == redact_text(raw)


def test_words_are_split_as_a_shell_splits_them() -> None:
    s = "mysql -u 'a b' -p\"c d\" x\\ y; next"
    words = [s[a:b] for a, b in iter_words(s, len("mysql"))]
    assert words == ["-u", "'a b'", '-p"c d"', "x\\ y"]
    lazy = Words(iter_words(s, len("mysql")), max_words=2)
    assert lazy.get(1) is not None and lazy.get(2) is None


def test_every_tool_name_is_unique() -> None:
    names = [name for tool in TOOLS for name in tool.names]
    assert len(names) == len(set(names))


# Dense command lines: each command is parsed once and its words read for it alone (a word holding another tool's
# name ends a command), however the commands nest, quote or glue. Python reads a command at ~20-40 us a pass, so
# a megabyte of them takes seconds (3-7 s measured on a loaded 2-core machine): linear time is shown by the ratio
# of 500 KB to a quarter of it (4x when linear, 16x when quadratic), whatever the machine's speed or load.
DENSE = {
    "commands on one line": "curl -u a:b ",
    "tools as option values": "curl -u a:curl ",
    "escaped quotes": 'curl -d \\"',
    "commands in quoted words": 'curl -u a:b "mysql -pX" ',
    "sshpass chains": "sshpass -p x ",
    "a tool, then a line of options": " -p",
    "unclosed quotes": "curl -u '",
    "argv lists": '["mysql", "-p',
}


@pytest.mark.parametrize("name", list(DENSE))
def test_reading_command_lines_is_linear(name: str) -> None:
    # Quadratic reading makes 4x the text cost 16x; linear, 4x. A loaded machine can stall one measurement, so
    # each size keeps its best of up to three tries (a real quadratic fails all three).
    unit = DENSE[name]
    best = [float("inf"), float("inf")]
    for _ in range(3):
        for i, size in enumerate((125_000, 500_000)):
            text = unit * (size // len(unit))
            if name == "a tool, then a line of options":
                text = "mysql" + text
            t0 = time.perf_counter()
            redact_text(text)
            best[i] = min(best[i], time.perf_counter() - t0)
        if best[1] < 8 * best[0] + 0.5:
            return
    assert best[1] < 8 * best[0] + 0.5, f"{name}: {best[0]:.2f}s for 125 KB, {best[1]:.2f}s for 500 KB"
