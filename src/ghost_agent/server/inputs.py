"""Validation shared by the endpoints that take text-or-tokens inputs (`/v1/embeddings` `input`, `/v1/completions`
`prompt`): a string, an array of strings, an array of token ids, or an array of token arrays."""

from __future__ import annotations

from typing import Any

from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from ghost_agent.jsonsafe import find_problem

# The accepted shapes as JSON Schema (the validator below checks them with clearer messages than a union would).
MAX_ITEMS = 2048  # OpenAI's own limit on inputs (prompts) per request
# The token-id range any tokenizer uses (a vocabulary is far smaller; the backend refuses ids it lacks).
MAX_TOKEN_ID = 2**31 - 1
_TOKEN: JsonDict = {"type": "integer", "minimum": 0, "maximum": MAX_TOKEN_ID}
TEXT_OR_TOKENS_SCHEMA: JsonDict = {
    "anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "maxItems": MAX_ITEMS, "items": {"type": "string", "minLength": 1}},
        {"type": "array", "minItems": 1, "items": _TOKEN},
        {
            "type": "array", "minItems": 1, "maxItems": MAX_ITEMS,
            "items": {"type": "array", "minItems": 1, "items": _TOKEN},
        },
    ]
}


def _invalid(param: str, message: str) -> PydanticCustomError:
    # The error handler names `param` from the context (server/errors.py).
    return PydanticCustomError("invalid_input", "{problem}", {"problem": message, "param": param})


def _token(value: Any) -> int | None:
    """A token id as JSON Schema counts integers (`7` and `7.0`), else None."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_ID:
        return value
    return None


def _tokens(values: list[Any]) -> list[int] | None:
    out = [_token(v) for v in values]
    return None if any(t is None for t in out) else [t for t in out if t is not None]


def writable(data: Any) -> Any:
    """The chat request's door check, for these bodies too: refuse what is not sendable JSON (lone surrogates,
    NaN, nesting past `jsonsafe.MAX_DEPTH`; integers past 64 bits pass, as on chat) anywhere in the body."""
    problem = find_problem(data, big_ints=True)
    if problem is not None:
        raise PydanticCustomError(
            "unwritable_json", "{problem}", {"problem": problem.message, "param": problem.path or None}
        )
    return data


def text_or_tokens(value: Any, param: str, *, max_items: int) -> Any:
    """Check `value` is a non-empty string, array of non-empty strings, token array or array of token arrays
    with at most `max_items` entries; return it (token ids as ints), or raise a validation error naming `param`."""
    shape = f"`{param}` must be a string, an array of strings, an array of token ids or an array of token arrays"
    if isinstance(value, str):
        if not value:
            raise _invalid(param, f"`{param}` is an empty string")
        return value
    if not isinstance(value, list):
        raise _invalid(param, shape)
    if not value:
        raise _invalid(param, f"`{param}` is an empty array")
    tokens = _tokens(value)
    if tokens is not None:
        return tokens
    if len(value) > max_items:
        raise _invalid(param, f"`{param}` has {len(value)} entries; at most {max_items} are accepted per request")
    out: list[Any] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            if not item:
                raise _invalid(f"{param}.{i}", f"`{param}[{i}]` is an empty string")
            out.append(item)
        elif isinstance(item, list):
            ids = _tokens(item) if item else None
            if ids is None:
                what = f"a non-empty array of token ids (integers 0..{MAX_TOKEN_ID})"
                raise _invalid(f"{param}.{i}", f"`{param}[{i}]` must be {what}")
            out.append(ids)
        else:
            raise _invalid(f"{param}.{i}", shape)
    if len({type(v) for v in out}) > 1:
        raise _invalid(param, f"{shape}, not a mix of them")
    return out


__all__ = ["MAX_ITEMS", "MAX_TOKEN_ID", "TEXT_OR_TOKENS_SCHEMA", "text_or_tokens", "writable"]
