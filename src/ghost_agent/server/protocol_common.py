"""What every endpoint's wire models share (`chat/`, `completions/`, `embeddings/` protocol modules).

- `OpenModel`: the base of every request and response model: unknown fields pass through (`extra="allow"`),
  and types are strict.
- `integral`: the validator that reads an integer as JSON Schema counts them (`2` and `2.0`), and the integer
  types built on it: `JsonInt` (I-JSON's interoperable range) and `PositiveInt` (token counts).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def integral(value: Any) -> Any:
    """JSON Schema counts `2.0` as an integer, pydantic's strict mode does not: accept exact floats as ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An `integer` as JSON Schema defines it: 2 and 2.0 pass; 2.5, true and "2" do not.
# Bounded to I-JSON's interoperable integers (RFC 7493, +-(2**53 - 1)): beyond them a client's or a fuzzer's
# float-based JSON cannot tell neighbouring values apart, so a documented maximum would not mean what it says.
SAFE_INT = 2**53 - 1
JsonInt = Annotated[int, Field(ge=-SAFE_INT, le=SAFE_INT), BeforeValidator(integral)]
# Constraints go inside the Annotated, before the validator: on the `| None` union, or after a
# BeforeValidator, pydantic would emit them into the JSON schema as bare `ge`/`le` keys instead of `minimum`.
# Token counts: llama.cpp and vLLM hold them in 32 bits.
PositiveInt = Annotated[int, Field(ge=1, le=2**31 - 1), BeforeValidator(integral)]


class OpenModel(BaseModel):
    # Strict: `"stream": 0` or `"max_tokens": "5"` are schema violations, answered 400, not silently coerced
    # (lax pydantic would turn 0 into False and then forward the coerced value upstream).
    model_config = ConfigDict(extra="allow", strict=True)


__all__ = ["SAFE_INT", "JsonInt", "OpenModel", "PositiveInt", "integral"]
