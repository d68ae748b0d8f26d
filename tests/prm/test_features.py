"""PRM feature extraction: the frozen 25-name contract, every group, odd inputs, the fast args path."""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ghost_agent.learned.linear import LogisticModel
from ghost_agent.prm.features import (
    ACTION_FEATURE_NAMES,
    ARGS_MAX_NODES,
    ARGS_SCAN_CHARS,
    COUNT_MAX,
    CROSS_FEATURE_NAMES,
    EXTERNAL,
    HEAVYWEIGHT,
    LIGHTWEIGHT,
    MEMORY,
    N_FEATURES,
    PLAN_FEATURE_NAMES,
    PRM_FEATURE_NAMES,
    TOOL_BUCKET_NAMES,
    ActionCandidate,
    FeatureContractError,
    PlanState,
    args_shape,
    check_vector,
    extract_step_features,
    feature_dict,
    tool_bucket,
)
from ghost_agent.router.features import REQUEST_FEATURE_NAMES, request_features

IDX = {name: i for i, name in enumerate(PRM_FEATURE_NAMES)}
BUCKET_START = IDX["tool_is_heavyweight"]


class Wrapped(Mapping[Any, Any]):
    """A Mapping that is not a dict: forces args_shape onto the general walk."""

    def __init__(self, data: dict[Any, Any]) -> None:
        self._data = data

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def fv(state: Any = None, action: Any = None) -> dict[str, float]:
    return feature_dict(extract_step_features(state if state is not None else {}, action or {}))


# ------------------------------------------------------------------------------------------ the contract


def test_names_are_frozen() -> None:
    # The frozen contract itself: checkpoints store these names; appending is the only allowed change.
    assert PRM_FEATURE_NAMES == (
        "req_length_log", "req_has_code_fence", "req_has_url", "req_imperative_count", "req_jargon_count",
        "req_question_word_ratio", "req_has_question_mark", "req_line_count_log",
        "plan_steps_so_far", "plan_failures_so_far", "plan_pending_count", "plan_depth", "plan_has_any_failure",
        "act_description_length_log", "act_args_count", "act_args_total_length_log", "act_args_has_url",
        "act_args_has_filepath",
        "tool_is_heavyweight", "tool_is_lightweight", "tool_is_external", "tool_is_memory", "tool_is_unknown",
        "cross_tool_already_used_this_turn", "cross_tool_failed_this_turn",
    )  # fmt: skip


def test_groups_concatenate_to_the_names() -> None:
    assert N_FEATURES == 25 == len(set(PRM_FEATURE_NAMES))
    groups = (REQUEST_FEATURE_NAMES, PLAN_FEATURE_NAMES, ACTION_FEATURE_NAMES, TOOL_BUCKET_NAMES,
              CROSS_FEATURE_NAMES)
    assert [len(g) for g in groups] == [8, 5, 5, 5, 2]
    assert sum(groups, ()) == PRM_FEATURE_NAMES


def test_vector_is_25_python_floats_in_a_tuple() -> None:
    v = extract_step_features(PlanState(user_request="list files"), ActionCandidate("ls", "bash", {"cmd": "ls"}))
    assert isinstance(v, tuple) and len(v) == 25
    assert all(type(x) is float and math.isfinite(x) for x in v)


def test_vector_is_immutable() -> None:
    v = extract_step_features(PlanState(), ActionCandidate())
    with pytest.raises(TypeError):
        v[0] = 1.0  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        PlanState().steps_so_far = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ActionCandidate().tool_name = "bash"  # type: ignore[misc]


def test_extraction_is_deterministic() -> None:
    state = PlanState(user_request="Write a python script to parse data.csv?", steps_so_far=2,
                      tools_used=frozenset({"bash"}), tools_failed=frozenset({"bash"}))
    action = ActionCandidate("run it", "bash", {"cmd": "python parse.py", "n": 3})
    first = extract_step_features(state, action)
    assert all(extract_step_features(state, action) == first for _ in range(5))
    rebuilt = extract_step_features(PlanState.from_dict(state.to_dict()), ActionCandidate.from_dict(action.to_dict()))
    assert rebuilt == first


def test_feature_dict_maps_names_and_is_strict() -> None:
    v = extract_step_features(PlanState(steps_so_far=4), ActionCandidate())
    d = feature_dict(v)
    assert list(d) == list(PRM_FEATURE_NAMES) and d["plan_steps_so_far"] == 4.0
    with pytest.raises(ValueError):
        feature_dict(v[:-1])


def test_check_vector_raises_on_a_length_mismatch() -> None:
    v = extract_step_features(PlanState(), ActionCandidate())
    assert check_vector(v) is v
    with pytest.raises(FeatureContractError, match="24 values for 25"):
        check_vector(v[:-1])
    with pytest.raises(FeatureContractError, match="26 values for 25"):
        check_vector((*v, 0.0))
    assert issubclass(FeatureContractError, RuntimeError)  # a bug, never a data error callers should catch


def test_extraction_runs_the_contract_check() -> None:
    # The check cannot fail with the code as written, so instead of breaking the code (monkeypatching the
    # names is off limits) we observe, with a profiler hook, that every extraction passes through it.
    calls: list[Any] = []
    previous = sys.getprofile()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code)

    sys.setprofile(profile)
    try:
        extract_step_features({"user_request": "x"}, {"tool_name": "bash"})
    finally:
        sys.setprofile(previous)
    assert check_vector.__code__ in calls


# ------------------------------------------------------------------------------------------- the groups


def test_request_group_is_the_shared_request_features() -> None:
    text = "Please write a Python script to fetch https://example.com and save it?\nThen test it."
    v = extract_step_features(PlanState(user_request=text), ActionCandidate())
    assert v[:8] == request_features(text)
    assert v[:8] != request_features("")
    baseline = extract_step_features(PlanState(), ActionCandidate())
    assert v[8:] == baseline[8:]  # the request moves only its own group


@pytest.mark.parametrize(
    ("field", "value", "name"),
    [
        ("steps_so_far", 3, "plan_steps_so_far"),
        ("failures_so_far", 2, "plan_failures_so_far"),
        ("pending_count", 4, "plan_pending_count"),
        ("plan_depth", 5, "plan_depth"),
    ],
)
def test_plan_counts(field: str, value: int, name: str) -> None:
    d = fv(PlanState(**{field: value}), ActionCandidate())
    assert d[name] == float(value)
    moved = {k for k, v in d.items() if v != fv(PlanState(), ActionCandidate())[k]}
    expected = {name, "plan_has_any_failure"} if field == "failures_so_far" else {name}
    assert moved == expected


def test_has_any_failure_from_counts_or_failed_tools() -> None:
    assert fv(PlanState(), ActionCandidate())["plan_has_any_failure"] == 0.0
    assert fv(PlanState(failures_so_far=1), ActionCandidate())["plan_has_any_failure"] == 1.0
    assert fv(PlanState(tools_failed=frozenset({"bash"})), ActionCandidate())["plan_has_any_failure"] == 1.0


def test_action_description_length() -> None:
    assert fv(None, ActionCandidate("abc"))["act_description_length_log"] == pytest.approx(math.log1p(3))
    assert fv(None, ActionCandidate(""))["act_description_length_log"] == 0.0


@pytest.mark.parametrize(
    ("args", "count", "total"),
    [
        ({}, 0, 0),
        ({"a": 1, "b": 2}, 2, 4),
        ({"ab": "cde"}, 1, 5),
        ({"flag": True, "none": None}, 2, 16),
        ({"x": 1.5}, 1, 4),
        ({"nested": {"k": "vv"}}, 1, 9),
        ([1, "ab"], 2, 3),
        ("bare string", 1, 11),
        (None, 0, 0),
    ],
)
def test_action_args_count_and_length(args: Any, count: int, total: int) -> None:
    d = fv(None, ActionCandidate("d", "bash", args))
    assert d["act_args_count"] == float(count)
    assert d["act_args_total_length_log"] == pytest.approx(math.log1p(total))


@pytest.mark.parametrize(
    ("args", "url", "path"),
    [
        ({"url": "https://example.com/x"}, 1.0, 0.0),  # a URL is not also a file path
        ({"q": "visit www.example.org"}, 1.0, 0.0),
        ({"path": "/etc/hosts"}, 0.0, 1.0),
        ({"file": "report.csv"}, 0.0, 1.0),
        ({"file": "./run.sh"}, 0.0, 1.0),
        ({"text": "hello world"}, 0.0, 0.0),
        ({"n": 3.5}, 0.0, 0.0),
        ({"deep": [{"x": ["see http://a.b"]}]}, 1.0, 0.0),
        ({"/etc/passwd": 1}, 0.0, 1.0),  # keys are argument text too
    ],
)
def test_action_args_url_and_path(args: Any, url: float, path: float) -> None:
    d = fv(None, ActionCandidate("d", "fetch", args))
    assert (d["act_args_has_url"], d["act_args_has_filepath"]) == (url, path)


@pytest.mark.parametrize(
    ("tool", "bucket"),
    [
        *[(name, 0) for name in sorted(HEAVYWEIGHT)],
        *[(name, 1) for name in sorted(LIGHTWEIGHT)],
        *[(name, 2) for name in sorted(EXTERNAL)],
        *[(name, 3) for name in sorted(MEMORY)],
        ("memory_forget", 3),
        ("browser_click", 2),
        ("web_fetch_page", 2),
        ("http_post", 2),
        ("file_stat", 1),
        ("fs_walk", 1),
        ("python_repl", 0),
        ("bash_exec", 0),
        ("shell_run", 0),
        ("  PYTHON  ", 0),
        ("Web_Search", 2),
        ("frobnicate", 4),
        ("memoryless", 4),  # prefixes need their underscore
        ("pythonic", 4),
    ],
)
def test_tool_buckets(tool: str, bucket: int) -> None:
    assert tool_bucket(tool) == bucket
    onehot = extract_step_features(PlanState(), ActionCandidate("d", tool))[BUCKET_START:BUCKET_START + 5]
    assert onehot == tuple(1.0 if i == bucket else 0.0 for i in range(5))


def test_bucket_sets_do_not_overlap() -> None:
    sets = [HEAVYWEIGHT, LIGHTWEIGHT, EXTERNAL, MEMORY]
    assert sum(len(s) for s in sets) == len(frozenset().union(*sets))


@pytest.mark.parametrize("tool", [None, "", "   ", 42, ["bash"]])
def test_no_tool_is_in_no_bucket(tool: Any) -> None:
    assert tool_bucket(tool) is None
    d = fv(PlanState(tools_used=frozenset({"bash"})), {"description": "answer", "tool_name": tool})
    assert [d[n] for n in TOOL_BUCKET_NAMES] == [0.0] * 5
    assert d["cross_tool_already_used_this_turn"] == 0.0


def test_cross_features() -> None:
    used = PlanState(tools_used=frozenset({"bash", "grep"}))
    failed = PlanState(tools_used=frozenset({"bash"}), tools_failed=frozenset({"bash"}))
    bash = ActionCandidate("again", "bash")
    assert (fv(used, bash)["cross_tool_already_used_this_turn"], fv(used, bash)["cross_tool_failed_this_turn"]) \
        == (1.0, 0.0)
    assert (fv(failed, bash)["cross_tool_already_used_this_turn"], fv(failed, bash)["cross_tool_failed_this_turn"]) \
        == (1.0, 1.0)
    assert fv(failed, ActionCandidate("other", "python"))["cross_tool_failed_this_turn"] == 0.0
    assert fv(failed, ActionCandidate("padded", "  bash "))["cross_tool_failed_this_turn"] == 1.0  # stripped


# -------------------------------------------------------------------------------------- input shapes


def test_dataclass_mapping_and_duck_typed_inputs_agree() -> None:
    state = PlanState(user_request="fix the bug in main.py", steps_so_far=2, failures_so_far=1, pending_count=3,
                      plan_depth=2, tools_used=frozenset({"bash", "read_file"}), tools_failed=frozenset({"bash"}))
    action = ActionCandidate("run the tests", "bash", {"cmd": "pytest -x tests/", "timeout": 30})
    expected = extract_step_features(state, action)
    as_dict = state.to_dict()
    duck_state = SimpleNamespace(**as_dict)
    duck_action = SimpleNamespace(**action.to_dict())
    aliases = {"description": "run the tests", "tool": "bash", "args": {"cmd": "pytest -x tests/", "timeout": 30}}
    for s in (state, as_dict, duck_state, Wrapped(as_dict)):
        for a in (action, action.to_dict(), duck_action, aliases, ActionCandidate.from_dict(aliases)):
            assert extract_step_features(s, a) == expected


def test_missing_keys_take_defaults() -> None:
    neutral = extract_step_features(PlanState(), ActionCandidate())
    assert extract_step_features({}, {}) == neutral
    assert extract_step_features(None, None) == neutral
    assert extract_step_features(object(), object()) == neutral
    assert extract_step_features({"steps_so_far": 2}, {"tool_name": "bash"})[IDX["plan_steps_so_far"]] == 2.0
    assert neutral == (0.0,) * 25


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, 3),
        ("3", 3),
        ("2.9", 2),
        (2.7, 2),
        (True, 1),
        (None, 0),
        ("abc", 0),
        (-5, 0),
        (-0.5, 0),
        (math.nan, 0),
        (math.inf, 0),
        (-math.inf, 0),
        ([3], 0),
        ({"n": 3}, 0),
        (10**400, COUNT_MAX),
        ("1e308", COUNT_MAX),
        (np.int64(4), 4),
        (np.float64(math.nan), 0),
    ],
)
def test_malformed_counts_are_coerced(value: Any, expected: int) -> None:
    state = PlanState.from_dict({"steps_so_far": value, "failures_so_far": value})
    assert state.steps_so_far == expected == state.failures_so_far
    v = extract_step_features({"steps_so_far": value, "pending_count": value}, {})
    assert v[IDX["plan_steps_so_far"]] == float(expected) == v[IDX["plan_pending_count"]]
    assert all(math.isfinite(x) for x in v)


def test_hostile_float_in_a_count_is_zero() -> None:
    class Hostile:
        def __float__(self) -> float:
            raise ZeroDivisionError

    assert PlanState(steps_so_far=Hostile()).steps_so_far == 0  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["bash", "grep"], {"bash", "grep"}),
        ("bash", {"bash"}),
        ("", set()),
        (None, set()),
        (5, set()),
        (["bash", 3, None, b"x"], {"bash"}),
        ({"bash": 1}, {"bash"}),
    ],
)
def test_tool_sets_are_coerced(value: Any, expected: set[str]) -> None:
    assert PlanState.from_dict({"tools_used": value}).tools_used == frozenset(expected)


def test_tool_set_iterator_failing_part_way_is_empty() -> None:
    def broken() -> Iterator[str]:
        yield "bash"
        raise ValueError("mid-iteration")

    assert PlanState.from_dict({"tools_failed": broken()}).tools_failed == frozenset()


def test_a_state_whose_own_accessor_raises_propagates() -> None:
    # The contract: bad *data* never raises; a caller object that raises on attribute access is a bug in
    # the caller and surfaces (PRMScorer.uncertainty and MCTS turn it into "no opinion").
    class Broken:
        @property
        def user_request(self) -> str:
            raise RuntimeError("broken state object")

    with pytest.raises(RuntimeError, match="broken state object"):
        extract_step_features(Broken(), {})
    assert extract_step_features(SimpleNamespace(), {}) == extract_step_features({}, {})  # missing is fine


def test_plan_state_from_dict_of_a_non_mapping() -> None:
    assert PlanState.from_dict(["not", "a", "mapping"]) == PlanState()  # type: ignore[arg-type]
    assert ActionCandidate.from_dict("nope") == ActionCandidate()  # type: ignore[arg-type]
    assert ActionCandidate.from_dict({"tool_name": 5}).tool_name is None
    assert ActionCandidate.from_dict({"description": None}).description == ""


def test_plan_state_after() -> None:
    s = PlanState(user_request="r", steps_so_far=1, pending_count=1, plan_depth=1)
    ok = s.after(ActionCandidate("x", "bash"))
    assert (ok.steps_so_far, ok.failures_so_far, ok.pending_count, ok.plan_depth) == (2, 0, 0, 2)
    assert ok.tools_used == {"bash"} and ok.tools_failed == frozenset()
    bad = ok.after(ActionCandidate("y", "grep"), ok=False)
    assert (bad.failures_so_far, bad.pending_count) == (1, 0)
    assert bad.tools_used == {"bash", "grep"} and bad.tools_failed == {"grep"}
    answer = bad.after(ActionCandidate("answer"))
    assert answer.tools_used == bad.tools_used and answer.user_request == "r"


def test_plan_state_to_dict_is_sorted_json() -> None:
    d = PlanState(tools_used=frozenset({"b", "a"})).to_dict()
    assert d["tools_used"] == ["a", "b"] and d["tools_failed"] == []


# -------------------------------------------------------------------------------------------- huge inputs


def test_one_megabyte_request() -> None:
    text = "x" * 1_000_000
    started = time.perf_counter()
    v = extract_step_features({"user_request": text}, {})
    assert time.perf_counter() - started < 2.0
    assert v[IDX["req_length_log"]] == pytest.approx(math.log1p(1_000_000))
    assert all(math.isfinite(x) for x in v)


def test_100k_key_args_are_bounded() -> None:
    args = {f"key{i}": i for i in range(100_000)}
    started = time.perf_counter()
    v = extract_step_features({}, {"tool_name": "python", "tool_args": args})
    assert time.perf_counter() - started < 2.0
    assert v[IDX["act_args_count"]] == 100_000.0
    count, total, _, _ = args_shape(args)
    assert count == 100_000
    assert 0 < total < ARGS_MAX_NODES * 12  # the walk stopped at its node budget


def test_one_megabyte_string_arg_scans_a_prefix() -> None:
    args = {"data": "a" * 1_000_000 + " https://late.example.com"}
    count, total, has_url, _ = args_shape(args)
    assert (count, total, has_url) == (1, 4 + len(args["data"]), False)
    early = {"data": "https://early.example.com " + "a" * 1_000_000}
    assert args_shape(early)[2] is True


def test_deep_nesting_does_not_recurse() -> None:
    deep: Any = "leaf"
    for _ in range(10_000):
        deep = [deep]
    count, total, _, _ = args_shape({"x": deep})
    assert count == 1 and total == 1  # only the key: the leaf is far below the depth limit


# ------------------------------------------------------------------------------------------- args_shape


def test_args_shape_scalars() -> None:
    assert args_shape(None) == (0, 0, False, False)
    assert args_shape(5) == (1, 1, False, False)
    assert args_shape(True) == (1, 4, False, False)
    assert args_shape(b"abc") == (1, 3, False, False)
    assert args_shape(10**30) == (1, 20, False, False)
    assert args_shape({1: "a", (2, 3): "b"}) == (2, 1 + 1 + len("(2, 3)") + 1, False, False)
    assert args_shape({"s": {1, 2}}) == (1, 3, False, False)


def test_fast_path_boundaries_agree_with_the_walk() -> None:
    fits = {"k": "a" * (ARGS_SCAN_CHARS - 1)}
    over = {"k": "a" * ARGS_SCAN_CHARS}
    for d in (fits, over):
        assert args_shape(d) == args_shape(Wrapped(d))
    # exactly at and just past the walk's node budget (root + key + value per entry)
    half = (ARGS_MAX_NODES - 1) // 2
    for n in (half, half + 1):
        d = {chr(0x4E00 + i): "" for i in range(n)}
        assert args_shape(d) == args_shape(Wrapped(d))
    big = {"n": 10**18, "m": -(10**19)}
    assert args_shape(big) == args_shape(Wrapped(big))


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["https://example.com/a", "www.site.org", "/etc/hosts", "notes.md", "./x.py", "a/b", ""]),
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=20), scalars, max_size=12))
def test_fast_flat_dict_path_agrees_with_the_walk(args: dict[str, Any]) -> None:
    assert args_shape(args) == args_shape(Wrapped(args))
    assert args_shape(args) == args_shape(dict(Wrapped(args)))


# ----------------------------------------------------------------------------------------- dtype parity


def test_feature_vector_ndarray_list_and_tuple_predict_the_same() -> None:
    rng = np.random.default_rng(0)
    m = LogisticModel(kind="prm", feature_names=PRM_FEATURE_NAMES, weights=rng.normal(size=25), bias=-0.2)
    v = extract_step_features(
        PlanState(user_request="Write a script to count lines in /var/log/syslog?", steps_so_far=3,
                  tools_failed=frozenset({"bash"})),
        ActionCandidate("count", "bash", {"cmd": "wc -l /var/log/syslog"}),
    )
    expected = m.predict_one(v)
    assert m.predict_one(list(v)) == expected
    assert m.predict_one(np.asarray(v)) == expected
    assert m.predict_proba(np.asarray(v)) == expected
    assert m.predict_proba(np.asarray([v]))[0] == pytest.approx(expected, rel=1e-12)


def test_batch_extraction_equals_one_at_a_time() -> None:
    from ghost_agent.prm.features import extract_batch_features

    state = PlanState(user_request="run the tests in tests/ and fix what fails", steps_so_far=2,
                      failures_so_far=1, tools_used={"bash"}, tools_failed={"bash"})
    actions = [
        ActionCandidate("retry", "bash", {"cmd": "pytest -x"}),
        ActionCandidate("read", "file_system", {"action": "read", "path": "tests/test_a.py"}),
        {"description": "answer", "tool": None},
        ActionCandidate("look up", "web_search", {"url": "https://docs.python.org"}),
    ]
    assert extract_batch_features(state, actions) == [extract_step_features(state, a) for a in actions]
    assert extract_batch_features(state.to_dict(), []) == []
