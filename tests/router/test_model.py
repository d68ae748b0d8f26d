"""RouterModel: the shared core bound to the router's kind and layout; checkpoints that refuse to cross over."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import orjson
import pytest

from ghost_agent.learned.linear import CheckpointError, LogisticModel
from ghost_agent.prm.features import PRM_FEATURE_NAMES
from ghost_agent.prm.model import StepValueModel
from ghost_agent.router.features import ROUTER_FEATURE_NAMES, router_features
from ghost_agent.router.model import SCHEMA, RouterModel, is_router_model

TOOLISH = ("run this python: print(2+2)", "list files in /tmp/work", "compute the sha256 of data.csv")
CHATTY = ("hi", "what is a monad?", "thanks, that was helpful")


def fitted_router() -> RouterModel:
    rows = [router_features(t, 1) for t in TOOLISH + CHATTY] * 3
    labels = [1.0] * 3 + [0.0] * 3
    model = RouterModel(metadata={"samples": len(rows)})
    model.fit_rows(rows, labels * 3)
    return model


def test_binds_kind_layout_and_schema() -> None:
    model = RouterModel()
    assert model.kind == "router"
    assert model.feature_names == ROUTER_FEATURE_NAMES
    assert model.schema == SCHEMA == "ghost.router.logreg.v1"
    assert not model.is_fitted
    assert model.predict_text("anything") == 0.5  # unfitted: neutral


def test_fit_separates_tool_requests_from_chat() -> None:
    model = fitted_router()
    tool_p = [model.predict_text(t) for t in TOOLISH]
    chat_p = [model.predict_text(t) for t in CHATTY]
    assert min(tool_p) > 0.5 > max(chat_p)
    assert model.predict_text(TOOLISH[0], 3) == model.predict_one(router_features(TOOLISH[0], 3))


def test_save_load_round_trip(tmp_path: Path) -> None:
    model = fitted_router()
    path = model.save(tmp_path / "router" / "checkpoint.json")
    loaded = RouterModel.load(path)
    assert isinstance(loaded, RouterModel)
    assert loaded.model_id == model.model_id
    assert loaded.metadata == {"samples": 18}
    for text in TOOLISH + CHATTY:
        assert loaded.predict_text(text, 2) == model.predict_text(text, 2)
    assert orjson.loads(path.read_bytes())["schema"] == "ghost.router.logreg.v1"


def test_prm_checkpoint_does_not_load_as_router(tmp_path: Path) -> None:
    prm = StepValueModel(weights=np.full(len(PRM_FEATURE_NAMES), 0.1), bias=0.2)
    path = prm.save(tmp_path / "prm.json")
    with pytest.raises(CheckpointError, match="ghost.prm.logreg.v1.*is not 'ghost.router.logreg.v1'"):
        RouterModel.load(path)


def test_router_checkpoint_does_not_load_as_prm(tmp_path: Path) -> None:
    path = fitted_router().save(tmp_path / "router.json")
    with pytest.raises(CheckpointError, match="ghost.router.logreg.v1"):
        StepValueModel.load(path)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (list(reversed(ROUTER_FEATURE_NAMES)), "different order"),
        (list(ROUTER_FEATURE_NAMES[:-1]) + ["conv_turns_log"], "missing conv_messages_log"),
        (list(ROUTER_FEATURE_NAMES) + ["req_new_feature"], "unexpected req_new_feature"),
    ],
)
def test_feature_drift_is_refused(tmp_path: Path, names: list[str], expected: str) -> None:
    data = fitted_router().to_dict()
    data["feature_names"] = names
    data["weights"] = [0.1] * len(names)
    path = tmp_path / "drifted.json"
    path.write_bytes(orjson.dumps(data))
    with pytest.raises(CheckpointError, match=expected):
        RouterModel.load(path)


@pytest.mark.parametrize("content", [b"", b"{not json", b"[1, 2]", b'{"schema": "ghost.router.logreg.v1"}'])
def test_unusable_files_raise_checkpoint_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=str(path)):
        RouterModel.load(path)


def test_missing_file_raises_checkpoint_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="cannot read"):
        RouterModel.load(tmp_path / "nope.json")


def test_from_linear_rejects_other_kinds() -> None:
    other = LogisticModel(kind="prm", feature_names=ROUTER_FEATURE_NAMES, weights=np.zeros(len(ROUTER_FEATURE_NAMES)))
    with pytest.raises(CheckpointError, match="not a router model"):
        RouterModel.from_linear(other)
    same = LogisticModel(kind="router", feature_names=ROUTER_FEATURE_NAMES, weights=np.ones(len(ROUTER_FEATURE_NAMES)))
    assert RouterModel.from_linear(same).model_id == same.model_id


def test_is_router_model() -> None:
    assert is_router_model(fitted_router())
    assert not is_router_model(RouterModel())  # unfitted
    assert not is_router_model(StepValueModel(weights=np.zeros(len(PRM_FEATURE_NAMES))))
    assert not is_router_model("a string")


def test_non_finite_request_inputs_still_predict() -> None:
    model = fitted_router()
    for n_messages in (math.nan, math.inf, -3, "seven", None):
        p = model.predict_text("list files in /tmp", n_messages)
        assert 0.0 < p < 1.0
