"""The schema validator: the subset our tools use, and messages a model can act on."""

from __future__ import annotations

from typing import Any

import pytest

from ghost_agent.tools.schema import MAX_ERRORS, SchemaDefinitionError, check_schema, signature, validate

FS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["list", "read", "write", "find"]},
        "path": {"type": "string", "maxLength": 10},
        "max_bytes": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "required": ["action"],
    "additionalProperties": False,
}


def test_valid_arguments_give_no_errors() -> None:
    assert validate({"action": "read", "path": "a.txt", "max_bytes": 5}, FS) == []
    assert validate({"action": "list"}, FS) == []


def test_enum_message_lists_the_choices_and_what_came() -> None:
    assert validate({"action": "delete"}, FS) == ["'action' must be one of list, read, write, find (got 'delete')"]


def test_missing_required_and_unexpected_argument() -> None:
    assert validate({}, FS) == ["missing required argument 'action'"]
    assert validate({"action": "list", "mode": "x"}, FS) == [
        "unexpected argument 'mode' (allowed: action, path, max_bytes)"
    ]


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        ({"type": "string"}, 5, "'v' must be a string (got 5)"),
        ({"type": "integer"}, "5", "'v' must be an integer (got '5')"),
        ({"type": "integer"}, True, "'v' must be an integer (got boolean true)"),
        ({"type": "integer"}, 2.5, "'v' must be an integer (got 2.5)"),
        ({"type": "number"}, "x", "'v' must be a number (got 'x')"),
        ({"type": "number"}, float("nan"), "'v' must be a number (got nan)"),
        ({"type": "boolean"}, 1, "'v' must be a boolean (got 1)"),
        ({"type": "object"}, [1, 2], "'v' must be an object (got array of 2)"),
        ({"type": "array"}, {"a": 1}, "'v' must be an array (got object of 1)"),
        ({"type": ["string", "null"]}, 3, "'v' must be a string or null (got 3)"),
    ],
)
def test_type_messages(schema: dict[str, Any], value: Any, message: str) -> None:
    wrapped = {"type": "object", "properties": {"v": schema}}
    assert validate({"v": value}, wrapped) == [message]


def test_integer_accepts_integral_floats_and_number_accepts_ints() -> None:
    wrapped = {"type": "object", "properties": {"i": {"type": "integer"}, "n": {"type": "number"}}}
    assert validate({"i": 3.0, "n": 3}, wrapped) == []


def test_bounds() -> None:
    assert validate({"action": "read", "max_bytes": 0}, FS) == ["'max_bytes' must be >= 1 (got 0)"]
    assert validate({"action": "read", "max_bytes": 101}, FS) == ["'max_bytes' must be <= 100 (got 101)"]
    assert validate({"action": "read", "path": "x" * 11}, FS) == ["'path' is too long (11 chars; max 10)"]
    assert validate("", {"type": "string", "minLength": 1}) == ["arguments must not be empty"]
    assert validate("ab", {"type": "string", "minLength": 3}) == ["arguments is too short (2 chars; min 3)"]


def test_enum_does_not_confuse_booleans_with_numbers() -> None:
    assert validate(True, {"enum": [1, 2]}) == ["arguments must be one of 1, 2 (got boolean true)"]
    assert validate(1, {"enum": [True]}) != []
    assert validate(1.0, {"enum": [1]}) == []


def test_nested_objects_and_arrays_name_the_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "opts": {
                "type": "object",
                "properties": {"depth": {"type": "integer", "minimum": 0}},
                "required": ["depth"],
                "additionalProperties": False,
            },
            "files": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        },
    }
    assert validate({"opts": {"depth": -1}}, schema) == ["'opts.depth' must be >= 0 (got -1)"]
    assert validate({"opts": {}}, schema) == ["missing required argument 'opts.depth' in 'opts'"]
    assert validate({"opts": {"depth": 1, "x": 1}}, schema) == ["unexpected argument 'opts.x' (allowed: depth)"]
    assert validate({"files": ["a", 2]}, schema) == ["'files[1]' must be a string (got 2)"]
    assert validate({"files": ["a"] * 4}, schema) == ["'files' takes at most 3 items (got 4)"]


def test_additional_properties_schema_is_applied() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert validate({"a": 1, "b": "x"}, schema) == ["'b' must be an integer (got 'x')"]


def test_not_an_object_at_the_root() -> None:
    assert validate([1], FS) == ["arguments must be an object (got array of 1)"]


def test_errors_are_bounded() -> None:
    schema = {"type": "object", "additionalProperties": False}
    assert len(validate({str(i): i for i in range(50)}, schema)) == MAX_ERRORS


def test_long_values_are_shortened_in_messages() -> None:
    (message,) = validate({"action": "x" * 500}, FS)
    assert len(message) < 120 and message.endswith("...)")


def test_check_schema_refuses_what_is_not_enforced() -> None:
    check_schema(FS)  # ours pass
    with pytest.raises(SchemaDefinitionError, match="unsupported keyword.*pattern"):
        check_schema({"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}})
    with pytest.raises(SchemaDefinitionError, match="unknown type 'int'"):
        check_schema({"type": "int"})
    with pytest.raises(SchemaDefinitionError, match="required 'x' is not among the properties"):
        check_schema({"type": "object", "properties": {}, "required": ["x"]})
    with pytest.raises(SchemaDefinitionError, match="additionalProperties"):
        check_schema({"type": "object", "additionalProperties": "no"})


def test_signature_is_compact() -> None:
    assert signature(FS) == "action: list|read|write|find, path?: string, max_bytes?: integer"
    assert signature({"properties": {"xs": {"type": "array", "items": {"type": "number"}}}}) == "xs?: number[]"
