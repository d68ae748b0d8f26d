"""Cookie values (privacy/rules_http.py): headers, JSON and dicts, curl; the names stay, prose stays."""

from __future__ import annotations

import pytest

from ghost_agent.privacy.redact import redact_text
from ghost_agent.privacy.rules_http import cookie_values

T = "<REDACTED_TOKEN>"

COOKIES = [
    ("Cookie: sid=abc123; theme=dark", f"Cookie: sid={T}; theme={T}"),
    ("GET / HTTP/1.1\r\nHost: x\r\nCookie: sessionid=38afes7a8\r\nAccept: */*",
     f"GET / HTTP/1.1\r\nHost: x\r\nCookie: sessionid={T}\r\nAccept: */*"),
    ("Set-Cookie: sessionid=38afes7a8; Path=/; HttpOnly; Max-Age=3600",
     f"Set-Cookie: sessionid={T}; Path=/; HttpOnly; Max-Age=3600"),
    ('set-cookie: id="a3fWa"; Expires=Thu, 21 Oct 2021 07:28:00 GMT',
     f'set-cookie: id="{T}"; Expires=Thu, 21 Oct 2021 07:28:00 GMT'),
    ("curl -H 'Cookie: sid=abc123; csrftoken=q9w8e7' https://x", f"curl -H 'Cookie: sid={T}; csrftoken={T}' https://x"),
    ('curl --cookie "session=xyz789" https://x', f'curl --cookie "session={T}" https://x'),
    ("curl -b 'sid=abc123' https://x", f"curl -b 'sid={T}' https://x"),
    ('{"Cookie": "sid=abc123; uid=42"}', f'{{"Cookie": "sid={T}; uid={T}"}}'),
    ('{\\"Cookie\\": \\"sid=abc123\\"}', f'{{\\"Cookie\\": \\"sid={T}\\"}}'),
    ("headers = {'Cookie': 'sessionid=abc123'}", f"headers = {{'Cookie': 'sessionid={T}'}}"),
    ('headers["Cookie"] = "sessionid=abc123"', f'headers["Cookie"] = "sessionid={T}"'),
    ('document.cookie = "token=abc123; path=/";', f'document.cookie = "token={T}; path=/";'),
    ('requests.get(url, cookies={"sessionid": "abc123def", "csrftoken": "q9w8"})',
     f'requests.get(url, cookies={{"sessionid": "{T}", "csrftoken": "{T}"}})'),
    ('{"cookies": {"sid": "abc123"}}', f'{{"cookies": {{"sid": "{T}"}}}}'),
]
NEGATIVES = [
    "bake cookies at 180 degrees",
    "cookie: chocolate chip",
    "the cookie jar has 3 cookies; cookies: 3",
    "fortune_cookies = 5; my_cookie: x=1",
    "Cookie: <REDACTED_TOKEN>",
    "Cookie: sid=$SESSION; theme=${THEME}",
    "cookies = load_cookies(path)",
    "curl -b cookies.txt https://x",  # a file of cookies, not a cookie
    "response.set_cookie('theme', theme)",
]


@pytest.mark.parametrize(("text", "expected"), COOKIES)
def test_cookie_values_are_replaced_and_names_kept(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize("text", NEGATIVES)
def test_what_holds_no_cookie_value_stays(text: str) -> None:
    assert redact_text(text) == text


def test_cookie_values_reads_pairs_until_something_no_cookie_holds() -> None:
    s = "a=1; b=2; Path=/; c=$X; d=4\nnext: line"
    spans, stop = cookie_values(s, 0, len(s))
    assert [s[a:b] for a, b in spans] == ["1", "2", "4"]
    assert s[stop] == "\n"
    spans, _ = cookie_values(s, 0, len(s), first_only=True)
    assert [s[a:b] for a, b in spans] == ["1"]
