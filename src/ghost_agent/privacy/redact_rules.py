"""The text rules of redaction in the order they run, and the pass that applies them to one text.

The rules themselves live in the `rules_*` modules (what a rule is: `rule`); `ghost_agent.privacy.redact`
states the contract (typed placeholders, idempotent, order-preserving, linear time) and why the order is
what it is.
"""

from __future__ import annotations

from functools import partial
from typing import Any, AnyStr, Final

from ghost_agent.privacy import rules_cli, rules_context, rules_http, rules_personal, rules_prose, rules_shapes
from ghost_agent.privacy.rule import Rule, forget_positions, lower_same_length, shape_of

# A replacement can reveal a secret to a rule that ran earlier in the pass ("1.2.3.4sk-…": the key is glued to
# the IP until the IP becomes "<REDACTED_IP>"), so passes repeat until nothing changes; two almost always do.
MAX_PASSES: Final = 4
_MIN_LEN = 6  # the shortest text any rule can match ("a@b.cd")

RULES: Final[tuple[Rule[Any], ...]] = (
    # A private key block first: its body is base64 in which later rules would find (and cut) fragments.
    rules_shapes.PEM_RULE,
    # The only rule that pairs two tokens (an id, then its secret), so it must see the id before any context
    # rule swallows it ("Bearer AKIA…, <secret>").
    rules_shapes.AWS_RULE,
    rules_context.WEBHOOK_RULE,
    rules_context.URL_CREDENTIALS_RULE,
    rules_context.CONNECTION_PWD_RULE,
    rules_context.SAS_SIGNATURE_RULE,
    rules_http.AUTH_HEADER_RULE,
    rules_http.COOKIE_RULE,
    rules_http.BEARER_RULE,
    rules_cli.CLI_PASSWORD_RULE,  # before assignments: "-p'pa=ss'" is one value
    rules_context.ASSIGNMENT_RULE,
    rules_prose.PROSE_PASSWORD_RULE,  # after assignments: "password: X" is theirs
    rules_shapes.SK_RULE,
    rules_shapes.SLACK_RULE,
    rules_shapes.GITHUB_RULE,
    rules_shapes.GITHUB_PAT_RULE,
    rules_shapes.JWT_RULE,
    *rules_shapes.VENDOR_RULES,  # Discord bot tokens with the "." family
    rules_shapes.TELEGRAM_RULE,
    rules_shapes.AZURE_AD_RULE,
    rules_context.URL_TOKEN_RULE,  # after the shapes: a known token keeps its type
    rules_personal.EMAIL_RULE,  # before onion: alice@x.onion hides alice too
    rules_personal.ONION_RULE,
    rules_personal.HOME_RULE,
    rules_personal.IPV4_RULE,
    # Digit runs, in the text's shape: an IBAN's digits can look like a card's, so IBANs first.
    rules_personal.IBAN_RULE,
    rules_personal.CARD_RULE,
    rules_personal.SSN_RULE,
    rules_prose.PIN_RULE,
)

def _apply(rule: Rule[AnyStr], s: str, hay: AnyStr) -> str:
    """One rule over `s` (matched in `hay`, same indices); returns `s` itself when nothing was replaced."""
    if rule.gate:
        for literal in rule.gate:
            if literal in hay:
                break
        else:
            return s
    if rule.searcher is not None:
        search = rule.searcher(hay)
    elif rule.regex.search(hay) is None:  # the common case, without building a closure
        return s
    else:
        search = partial(rule.regex.search, hay)
    out: list[str] = []
    last = pos = 0
    while (m := search(pos)) is not None:
        hit = rule.handler(s, m, last)
        if hit is None:
            pos = m.end()
        elif isinstance(hit, int):
            pos = max(hit, m.start() + 1)
        else:
            start = max(hit.start, last)  # a match found by looking again inside the previous replacement
            if hit.end > start:
                out.append(s[last:start])
                out.append(hit.replacement)
                last = hit.end
            pos = max(hit.resume, m.start() + 1) if hit.resume >= 0 else max(hit.end, m.end())
    if not out:
        return s
    out.append(s[last:])
    return "".join(out)


def _one_pass(s: str, rules: tuple[Rule[Any], ...]) -> str:
    low: str | None = None
    shape: bytes | None = None
    for rule in rules:
        if rule.on_lower:
            if low is None:
                low = lower_same_length(s)
            new = _apply(rule, s, low)
        elif rule.on_shape:
            if shape is None:
                shape = shape_of(s)
            new = _apply(rule, s, shape)
        else:
            new = _apply(rule, s, s)
        if new is not s:
            s, low, shape = new, None, None
    return s


def redact_with(s: str, rules: tuple[Rule[Any], ...]) -> str:
    """`s` redacted by `rules` only (in that order); `s` itself when nothing matched. For measuring a subset."""
    if len(s) < _MIN_LEN:
        return s
    for _ in range(MAX_PASSES):
        new = _one_pass(s, rules)
        if new is s:
            break
        s = new
    forget_positions()
    return s


def redact_text(s: str) -> str:
    """`s` with every secret replaced by its placeholder; `s` itself (same object) when nothing matched."""
    return redact_with(s, RULES)


__all__ = ["MAX_PASSES", "RULES", "redact_text", "redact_with"]
