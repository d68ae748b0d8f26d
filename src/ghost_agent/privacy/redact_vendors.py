"""Vendor token formats: secrets recognisable by a fixed prefix and the shape of what follows it.

Data only; `privacy.rules_shapes` compiles each entry into a rule (the prefix doubles as the rule's literal
gate and, through a lookbehind, as its left boundary: a prefix glued to a word is not a token). The formats
follow the public rules of well-kept secret scanners (gitleaks, GitHub secret scanning) and the vendors' own
documentation; they were written here by hand, nothing is fetched at run time. Shapes with no prefix of their
own (Telegram, Azure AD client secrets) and the multi-part ones (PEM blocks, JWTs) live in
`rules_shapes` with handlers that look around the anchor.

A `check` rejects candidates that have the right shape but not a random body (identifiers such as
`hf_hub_download_helper_for_tests_only` or `npm_config_cache`): real tokens are generated, so they mix
cases or digits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple


def mixed_case(token: str) -> bool:
    """Both an upper- and a lowercase ASCII letter: random base62 bodies have them, identifiers rarely."""
    return any("A" <= c <= "Z" for c in token) and any("a" <= c <= "z" for c in token)


def upper_or_digit(token: str) -> bool:
    """A capital or a digit somewhere: prose and snake_case identifiers have neither."""
    return any("A" <= c <= "Z" or "0" <= c <= "9" for c in token)


def hex_mixed(token: str) -> bool:
    """Hex with both letters and digits (a random 128-bit value nearly always has both)."""
    return any(c.isdigit() for c in token) and any(c in "abcdefABCDEF" for c in token)


class VendorToken(NamedTuple):
    """A token is one of `literals` + `rest` (a regex; repeats possessive); `check(body)` must accept the part
    after the literal."""

    name: str
    literals: tuple[str, ...]
    rest: str
    token: bool = False  # placeholder <REDACTED_TOKEN> (a session/OAuth token) rather than <REDACTED_API_KEY>
    check: Callable[[str], bool] | None = None


_B62 = "[0-9A-Za-z]"
_B64URL = "[0-9A-Za-z_-]"
_GITLAB = ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-", "gloas-", "glft-", "glimt-", "glagent-",
           "glffct-", "glwt-")

VENDOR_TOKENS: Final = (
    VendorToken("google_api_key", ("AIza",), f"{_B64URL}{{35,}}+"),
    VendorToken("google_oauth_client_secret", ("GOCSPX-",), f"{_B64URL}{{24,}}+"),
    VendorToken("google_oauth_access_token", ("ya29.",), "[0-9A-Za-z_.-]{20,}+", token=True, check=upper_or_digit),
    VendorToken("huggingface", ("hf_", "api_org_"), f"{_B62}{{30,}}+", check=mixed_case),
    VendorToken("npm", ("npm_",), f"{_B62}{{36,}}+", check=upper_or_digit),
    VendorToken("gitlab", _GITLAB, f"{_B64URL}{{20,}}+", check=upper_or_digit),
    VendorToken("gitlab_runner_registration", ("GR1348941",), f"{_B64URL}{{20,}}+"),
    VendorToken("grafana", ("glc_",), "[0-9A-Za-z+/]{32,}+={0,2}", check=upper_or_digit),
    VendorToken("grafana_service_account", ("glsa_",), "[0-9A-Za-z]{32}_[0-9A-Fa-f]{8,}+"),
    VendorToken("pypi", ("pypi-AgEIcHlwaS5vcmc",), f"{_B64URL}{{50,}}+"),
    VendorToken("digitalocean", ("doo_v1_", "dop_v1_", "dor_v1_"), "[0-9a-f]{64,}+"),
    VendorToken("shopify", ("shpat_", "shpca_", "shppa_", "shpss_"), "[0-9a-fA-F]{32,}+"),
    VendorToken("hashicorp_vault", ("hvs.", "hvb.", "hvr."), f"{_B64URL}{{24,}}+", token=True, check=upper_or_digit),
    VendorToken("age_secret_key", ("AGE-SECRET-KEY-1",), "[0-9A-Z]{58,}+"),
    VendorToken("databricks", ("dapi",), "[0-9a-f]{32,}+(?:-[0-9]++)?", check=hex_mixed),
    VendorToken("sendgrid", ("SG.",), f"{_B64URL}{{20,}}+\\.{_B64URL}{{40,}}+"),
    VendorToken("twilio_api_key", ("SK",), "[0-9a-fA-F]{32}+(?![0-9A-Za-z])", check=hex_mixed),
    VendorToken("stripe_restricted", ("rk_live_", "rk_test_"), f"{_B62}{{16,}}+"),
    VendorToken("stripe_webhook_secret", ("whsec_",), "[0-9A-Za-z+/=]{24,}+"),
    VendorToken("linear", ("lin_api_",), f"{_B62}{{40,}}+"),
    VendorToken("postman", ("PMAK-",), "[0-9a-f]{24}-[0-9a-f]{34,}+"),
    VendorToken("new_relic", ("NRAK-",), "[0-9A-Z]{27,}+"),
    VendorToken("doppler", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."), f"{_B62}{{40,}}+"),
    VendorToken("square", ("sq0atp-", "sq0csp-"), f"{_B64URL}{{22,}}+"),
    VendorToken("atlassian", ("ATATT3",), "[0-9A-Za-z_=-]{150,}+"),
    VendorToken("flyio", ("fo1_",), f"{_B64URL}{{43,}}+"),
)
