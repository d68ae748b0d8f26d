"""Discord bot tokens (privacy/rules_shapes.py): the bot's user id in base64, a timestamp, an HMAC."""

from __future__ import annotations

import pytest

from ghost_agent.privacy.redact import redact_text

TOKEN = "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"
NEWER = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhIjKl.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789ab"


@pytest.mark.parametrize(("text", "expected"), [
    (TOKEN, "<REDACTED_TOKEN>"),
    (f"client.run('{TOKEN}')", "client.run('<REDACTED_TOKEN>')"),
    (f"DISCORD_TOKEN {NEWER}.", "DISCORD_TOKEN <REDACTED_TOKEN>."),
    (f"\\n{TOKEN}\\n and %20{TOKEN}", "\\n<REDACTED_TOKEN>\\n and %20<REDACTED_TOKEN>"),
])
def test_discord_bot_tokens_are_replaced(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize("text", [
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ is half a token",
    "QUJDREVGR0hJSktMTU5PUFFSU1RV.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",  # the head is not a user id
    "xMTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",  # glued to a word
    "os.path.join module.submodule.function_name_that_is_long_enough_here",
])
def test_dotted_words_that_are_not_discord_tokens_stay(text: str) -> None:
    assert redact_text(text) == text
