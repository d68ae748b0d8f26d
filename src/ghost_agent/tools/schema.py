"""A small JSON-schema validator for the subset our tool schemas use, with messages a model can act on.

Why not the `jsonschema` library: our schemas use a dozen keywords, and what matters here is the wording of
the error a 1.5B model reads next turn ("'action' must be one of list, read, write, find (got 'delete')"),
not the full draft-2020 semantics. A maintained library would still need a message rewriter on top, plus a
dependency in the daemon. `check_schema` refuses any keyword outside the subset, so a tool author cannot
write a constraint that is silently not enforced.

Supported: type (string, integer, number, boolean, object, array, null; or a list of them), properties,
required, additionalProperties (false or a schema), enum, minimum, maximum, minLength, maxLength, items,
minItems, maxItems; description, title, default and examples are accepted and ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

_CHECKED = frozenset(
    {"type", "properties", "required", "additionalProperties", "enum", "minimum", "maximum", "minLength",
     "maxLength", "items", "minItems", "maxItems"}
)
_ANNOTATIONS = frozenset({"description", "title", "default", "examples"})
_TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")
_ARTICLE = {"integer": "an integer", "object": "an object", "array": "an array", "null": "null"}
MAX_ERRORS = 5  # beyond this, more messages only bury the first one


class SchemaDefinitionError(ValueError):
    """A tool's schema uses something this validator does not enforce (a programming error, found at
    registration)."""


def type_of(value: Any) -> str:
    """The JSON type name of a parsed JSON value ("integer" for ints, never for bools)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, Sequence):
        return "array"
    return type(value).__name__


def _is_type(value: Any, expected: str) -> bool:
    actual = type_of(value)
    if expected == "number":
        return actual in ("integer", "number") and math.isfinite(value)
    if expected == "integer":
        # JSON has one number type: 3.0 is an integer, as in the JSON-schema spec.
        return actual == "integer" or (actual == "number" and math.isfinite(value) and float(value).is_integer())
    return actual == expected


def _show(value: Any, limit: int = 40) -> str:
    """A short rendering of a value for a message: strings quoted, numbers as is, containers by size."""
    kind = type_of(value)
    if kind in ("object", "array"):
        return f"{kind} of {len(value)}"
    if kind == "string":
        text = repr(value)
    elif kind == "boolean":
        text = f"boolean {str(value).lower()}"
    elif kind in ("integer", "number", "null"):
        text = "null" if value is None else str(value)
    else:
        text = kind
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _in_enum(value: Any, options: Sequence[Any]) -> bool:
    # Python says True == 1; JSON does not, so booleans only match booleans.
    is_bool = isinstance(value, bool)
    return any(value == option and isinstance(option, bool) == is_bool for option in options)


def _name(path: str) -> str:
    return f"'{path}'" if path else "arguments"


def _describe_types(types: Sequence[str]) -> str:
    return " or ".join(_ARTICLE.get(t, f"a {t}") for t in types)


def validate(instance: Any, schema: Mapping[str, Any], path: str = "") -> list[str]:
    """Every way `instance` breaks `schema`, as short messages naming the argument ("'k' must be >= 1
    (got 0)"); an empty list when it is valid. At most MAX_ERRORS messages, the outermost first."""
    errors: list[str] = []
    _validate(instance, schema, path, errors)
    return errors[:MAX_ERRORS]


def _validate(value: Any, schema: Mapping[str, Any], path: str, errors: list[str]) -> None:
    if len(errors) >= MAX_ERRORS:
        return
    name = _name(path)
    declared = schema.get("type")
    if declared is not None:
        types = [declared] if isinstance(declared, str) else list(declared)
        if not any(_is_type(value, t) for t in types):
            errors.append(f"{name} must be {_describe_types(types)} (got {_show(value)})")
            return  # the other keywords assume the right type
    if "enum" in schema and not _in_enum(value, schema["enum"]):
        options = ", ".join(str(v) for v in schema["enum"])
        errors.append(f"{name} must be one of {options} (got {_show(value)})")
        return
    kind = type_of(value)
    if kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{name} must be >= {schema['minimum']} (got {_show(value)})")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{name} must be <= {schema['maximum']} (got {_show(value)})")
    elif kind == "string":
        if "minLength" in schema and len(value) < schema["minLength"]:
            if schema["minLength"] == 1:
                errors.append(f"{name} must not be empty")
            else:
                errors.append(f"{name} is too short ({len(value)} chars; min {schema['minLength']})")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{name} is too long ({len(value)} chars; max {schema['maxLength']})")
    elif kind == "array":
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{name} needs at least {schema['minItems']} items (got {len(value)})")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{name} takes at most {schema['maxItems']} items (got {len(value)})")
        item_schema = schema.get("items")
        if isinstance(item_schema, Mapping):
            for i, item in enumerate(value):
                _validate(item, item_schema, f"{path}[{i}]" if path else f"[{i}]", errors)
    elif kind == "object":
        _validate_object(value, schema, path, errors)


def _validate_object(value: Mapping[str, Any], schema: Mapping[str, Any], path: str, errors: list[str]) -> None:
    props: Mapping[str, Any] = schema.get("properties") or {}
    prefix = f"{path}." if path else ""
    for key in schema.get("required") or ():
        if key not in value:
            where = f" in {_name(path)}" if path else ""
            errors.append(f"missing required argument '{prefix}{key}'{where}")
    extra = schema.get("additionalProperties", True)
    for key in value:
        if key in props:
            _validate(value[key], props[key], f"{prefix}{key}", errors)
        elif extra is False:
            allowed = ", ".join(props) or "none"
            errors.append(f"unexpected argument '{prefix}{key}' (allowed: {allowed})")
        elif isinstance(extra, Mapping):
            _validate(value[key], extra, f"{prefix}{key}", errors)


def check_schema(schema: Any, where: str = "parameters") -> None:
    """Raise SchemaDefinitionError if `schema` uses a keyword or type this validator does not enforce, or a
    `required` name it does not declare; otherwise return None. Run once per tool at registration."""
    if not isinstance(schema, Mapping):
        raise SchemaDefinitionError(f"{where}: a schema must be an object, got {type_of(schema)}")
    unknown = set(schema) - _CHECKED - _ANNOTATIONS
    if unknown:
        raise SchemaDefinitionError(f"{where}: unsupported keyword(s) {', '.join(sorted(unknown))}")
    declared = schema.get("type")
    if declared is not None:
        for t in [declared] if isinstance(declared, str) else declared:
            if t not in _TYPES:
                raise SchemaDefinitionError(f"{where}: unknown type {t!r}")
    props = schema.get("properties") or {}
    for key, sub in props.items():
        check_schema(sub, f"{where}.{key}")
    for key in schema.get("required") or ():
        if key not in props:
            raise SchemaDefinitionError(f"{where}: required {key!r} is not among the properties")
    extra = schema.get("additionalProperties", True)
    if isinstance(extra, Mapping):
        check_schema(extra, f"{where}.additionalProperties")
    elif not isinstance(extra, bool):
        raise SchemaDefinitionError(f"{where}: additionalProperties must be a boolean or a schema")
    if "items" in schema:
        check_schema(schema["items"], f"{where}[]")


def signature(schema: Mapping[str, Any]) -> str:
    """A one-line argument summary for prompts and hints: `action: list|read, path?: string`.

    Optional arguments carry a `?`; an enum shows its values; arrays show their item type (`string[]`).
    """
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    parts = []
    for key, sub in props.items():
        parts.append(f"{key}{'' if key in required else '?'}: {_type_text(sub)}")
    return ", ".join(parts)


def _type_text(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return "|".join(str(v) for v in schema["enum"])
    declared = schema.get("type", "any")
    if declared == "array" and isinstance(schema.get("items"), Mapping):
        return f"{_type_text(schema['items'])}[]"
    return declared if isinstance(declared, str) else "|".join(declared)


__all__ = ["MAX_ERRORS", "SchemaDefinitionError", "check_schema", "signature", "type_of", "validate"]
