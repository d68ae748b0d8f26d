"""One setting's value from what a user wrote, converted and checked by pydantic.

Each value goes through two `pydantic.TypeAdapter`s chosen by the key's declared type (`Spec.base`, from the
section field's real annotation): `read` turns an env/flag string or a TOML scalar into that type, `check`
holds the typed value to the key's choices (its `Literal`) and range (`Field(ge=, le=)`). The few pins below
keep the inputs accepted exactly as before pydantic: only 1/true/yes/on and 0/false/no/off are booleans, a
boolean is not a number, "8000.0" is not an integer, anything becomes a str where a str goes. A pydantic error
becomes a SettingsError worded as before: the setting, the value, and the valid choices or range. Left as
pydantic has it: digits of other scripts ("٣") are not numbers, and an integer too large for a float is an
invalid value rather than an OverflowError.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, Strict, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

from ghost_agent.settings.table import FIELDS, Spec


class SettingsError(ValueError):
    """A setting has an invalid value; the message names the setting and the valid range."""


_BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _bool_word(value: Any) -> Any:
    """The words a boolean setting accepts (any case, spaces around); anything else is left to fail."""
    if isinstance(value, bool):
        return value
    return _BOOL_WORDS.get(str(value).strip().lower(), value)


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("bool_not_number", "a boolean is not a number")
    return value


def _integer(value: Any) -> Any:
    if isinstance(value, str) and "." in value:  # pydantic would read "8000.0" as 8000
        raise PydanticCustomError("int_parsing", "not an integer")
    return _number(value)


def _text(value: Any) -> str:
    return str(value)


def _not_nan(value: float) -> float:
    if value != value:
        raise PydanticCustomError("nan", "NaN is not a valid value")
    return value


# What a value is read as, by its declared type.
_READ: dict[type, Any] = {
    bool: Annotated[bool, Strict(), BeforeValidator(_bool_word)],
    int: Annotated[int, BeforeValidator(_integer)],
    float: Annotated[float, BeforeValidator(_number)],
    str: Annotated[str, BeforeValidator(_text)],
    Path: Annotated[Path, BeforeValidator(_text), AfterValidator(Path.expanduser)],
}


@functools.cache
def _reader(base: type) -> TypeAdapter[Any]:
    return TypeAdapter(_READ[base])


def _checker(name: str) -> TypeAdapter[Any] | None:
    """The choices or range of a key as a TypeAdapter (None: nothing to check beyond the type)."""
    spec = FIELDS[name]
    if spec.choices is not None:
        return _bounds(spec.annotation, None, None)
    if spec.base is float or (spec.base is int and (spec.lo is not None or spec.hi is not None)):
        return _bounds(spec.base, spec.lo, spec.hi)
    return None


@functools.cache
def _bounds(annotation: Any, lo: float | None, hi: float | None) -> TypeAdapter[Any]:
    """One adapter per distinct check (many keys share a range)."""
    if annotation is float:
        return TypeAdapter(Annotated[float, Field(ge=lo, le=hi), AfterValidator(_not_nan)])
    if annotation is int:
        return TypeAdapter(Annotated[int, Field(ge=lo, le=hi)])
    return TypeAdapter(annotation)


def coerce(name: str, raw: Any) -> Any:
    """Turn a raw value (str from env/CLI, or a TOML scalar) into the field's type, validating it."""
    spec = FIELDS.get(name)
    if spec is None:
        raise SettingsError(f"unknown setting {name!r}")
    value: Any
    if raw is None or (raw == "" and spec.optional):
        value = None
    else:
        try:
            value = _reader(spec.base).validate_python(raw)
        except ValidationError as exc:
            reason = _reason(exc.errors()[0], raw, spec.base)
            raise SettingsError(f"{name}: invalid value {raw!r} ({reason})") from None
    check_value(name, value)
    return value


def _reason(error: ErrorDetails, raw: Any, base: type) -> str:
    """Why `raw` is not a value of type `base`, in the words the settings always used."""
    kind = error["type"]
    if kind in ("bool_type", "bool_parsing"):
        return "expected true/false"
    if kind in ("int_from_float", "finite_number") or (kind == "bool_not_number" and base is int):
        return "expected an integer"
    if kind == "bool_not_number":
        return "expected a number"
    if kind == "int_parsing":
        return f"invalid literal for int() with base 10: {raw!r}"
    if kind == "float_parsing":
        return f"could not convert string to float: {raw!r}"
    if kind == "int_type":
        return f"int() argument must be a string, a bytes-like object or a real number, not {_type_name(raw)!r}"
    if kind == "float_type":
        return f"float() argument must be a string or a real number, not {_type_name(raw)!r}"
    return error["msg"]


def _type_name(value: Any) -> str:
    """A type's name as Python's own messages give it: `list`, `datetime.date`."""
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def check_value(name: str, value: Any) -> None:
    """Raise SettingsError if `value` is outside the field's choices or range."""
    spec, checker = FIELDS[name], _checker(name)
    if value is None or checker is None:
        return
    if spec.choices is None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return  # a range bounds numbers only
    try:
        checker.validate_python(value)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "literal_error":
            raise SettingsError(
                f"{name}: invalid choice {value!r}; valid choices are {', '.join(spec.choices or ())}"
            ) from None
        if value != value:
            raise SettingsError(f"{name}: NaN is not a valid value") from None
        raise SettingsError(f"{name}: {value} is out of range; valid range is {range_text(spec)}") from None


def range_text(spec: Spec) -> str:
    """A key's range as the docs and messages write it: [lo, hi], >= lo or <= hi."""
    if spec.lo is not None and spec.hi is not None:
        return f"[{spec.lo}, {spec.hi}]"
    if spec.lo is not None:
        return f">= {spec.lo}"
    return f"<= {spec.hi}"


def field_type(name: str) -> type:
    """The scalar type (int, float, bool, str, Path) of a setting."""
    return FIELDS[name].base


def arg_type(name: str) -> Callable[[str], Any]:
    """An argparse `type=` for a setting: coerces and validates, failing as a usage error that names the range."""

    def convert(raw: str) -> Any:
        try:
            return coerce(name, raw)
        except SettingsError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None

    convert.__name__ = name  # argparse names the type in its messages
    return convert
