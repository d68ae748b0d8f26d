"""The daemon attaches the PRM and router at startup and reports them on /v1/ghost/health."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.prm.features import N_FEATURES
from ghost_agent.prm.model import StepValueModel
from ghost_agent.router.features import ROUTER_FEATURE_NAMES
from ghost_agent.router.model import RouterModel
from tests.conftest import app_client, make_settings


def prm_model(seed: int = 0) -> StepValueModel:
    rng = np.random.default_rng(seed)
    return StepValueModel(weights=rng.normal(size=N_FEATURES), bias=0.1)


def router_model() -> RouterModel:
    return RouterModel(weights=np.linspace(-1, 1, len(ROUTER_FEATURE_NAMES)), bias=-0.2)


def log_events(home: Path) -> list[dict[str, object]]:
    path = GhostHome(home).log_file
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


async def test_neutral_models_without_checkpoints(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    async with app_client(settings, ScriptedBackend()) as client:
        learned = (await client.get("/v1/ghost/health")).json()["learned"]
    assert learned == {
        "prm": {"loaded": False, "model_id": None, "source": None},
        "router": {"loaded": False, "model_id": None, "source": None},
    }


async def test_self_trained_checkpoints_in_the_home_are_picked_up(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    home = GhostHome(settings.home)
    prm, router = prm_model(), router_model()
    prm.save(home.prm_checkpoint)
    router.save(home.router_checkpoint)
    async with app_client(settings, ScriptedBackend()) as client:
        learned = (await client.get("/v1/ghost/health")).json()["learned"]
    assert learned["prm"] == {"loaded": True, "model_id": prm.model_id, "source": str(home.prm_checkpoint)}
    assert learned["router"] == {"loaded": True, "model_id": router.model_id, "source": str(home.router_checkpoint)}


async def test_configured_paths_win_over_the_home(tmp_path: Path) -> None:
    chosen = prm_model(seed=1)
    chosen_path = chosen.save(tmp_path / "chosen-prm.json")
    settings = make_settings(tmp_path, prm_model=chosen_path)
    prm_model(seed=2).save(GhostHome(settings.home).prm_checkpoint)
    async with app_client(settings, ScriptedBackend()) as client:
        learned = (await client.get("/v1/ghost/health")).json()["learned"]
    assert learned["prm"]["model_id"] == chosen.model_id
    assert learned["prm"]["source"] == str(chosen_path)


async def test_missing_or_corrupt_checkpoints_start_neutral_with_a_warning(tmp_path: Path) -> None:
    broken = tmp_path / "router.json"
    broken.write_text("{not json")
    settings = make_settings(tmp_path, prm_model=tmp_path / "absent.json", router_model=broken)
    async with app_client(settings, ScriptedBackend()) as client:
        response = await client.get("/v1/ghost/health")
        chat = await client.post(
            "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        )
    assert response.status_code == 200 and chat.status_code == 200
    learned = response.json()["learned"]
    assert learned["prm"]["loaded"] is False and learned["router"]["loaded"] is False
    events = {e["event"]: e for e in log_events(settings.home)}
    assert events["prm_model_missing"]["path"] == str(tmp_path / "absent.json")
    assert "not valid JSON" in str(events["router_model_unusable"]["error"])
    assert events["learned_models"]["prm"] is None
