"""The placeholders redaction writes in place of what it removes: one per kind, so a reader knows what was there.

None of them matches any rule (that is what keeps redaction idempotent), and `redact.session_key` names a
pseudonym after them (`REDACTED_API_KEY-3f2a…`).
"""

from __future__ import annotations

from typing import Final

API_KEY: Final = "<REDACTED_API_KEY>"
AWS_KEY: Final = "<REDACTED_AWS_KEY>"
SECRET: Final = "<REDACTED_SECRET>"
TOKEN: Final = "<REDACTED_TOKEN>"
PRIVATE_KEY: Final = "<REDACTED_PRIVATE_KEY>"
WEBHOOK: Final = "<REDACTED_WEBHOOK>"
CREDENTIALS: Final = "<REDACTED_CREDENTIALS>"
ONION: Final = "<REDACTED_ONION>"
EMAIL: Final = "<REDACTED_EMAIL>"
IP: Final = "<REDACTED_IP>"
CARD: Final = "<REDACTED_CARD>"
SSN: Final = "<REDACTED_SSN>"
IBAN: Final = "<REDACTED_IBAN>"
PASSWORD: Final = "<REDACTED_PASSWORD>"
USER: Final = "<user>"
TOO_DEEP: Final = "<REDACTED_TOO_DEEP>"

__all__ = ["API_KEY", "AWS_KEY", "CARD", "CREDENTIALS", "EMAIL", "IBAN", "IP", "ONION", "PASSWORD", "PRIVATE_KEY",
           "SECRET", "SSN", "TOKEN", "TOO_DEEP", "USER", "WEBHOOK"]
