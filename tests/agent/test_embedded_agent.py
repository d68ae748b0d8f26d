"""One real tool-using turn on the embedded Qwen2.5-Coder-1.5B (slow: loads the model, runs the sandbox)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from ghost_agent.home import GhostHome
from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.conftest import daemon_on_port, make_settings
from tests.server.test_embedded_daemon import MODEL_CACHE, wait_ready

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("mcts", [False, True], ids=["single-shot", "mcts-llm-simulation"])
def test_embedded_model_uses_python_to_answer(tmp_path: Path, mcts: bool) -> None:
    settings = make_settings(
        tmp_path, model_cache_dir=MODEL_CACHE, n_ctx=4096, router="auto", mcts=mcts, mcts_simulate=mcts,
        agent_max_tokens=512,
    )
    with daemon_on_port(settings) as url:
        assert wait_ready(url)["status"] == "ok"
        response = httpx.post(
            f"{url}/v1/chat/completions",
            json={
                "model": "qwen2.5-coder-1.5b",
                "messages": [{"role": "user", "content": "use python to compute the sum of the squares of 1..100"}],
                "temperature": 0,
            },
            timeout=600,
        )
    assert response.status_code == 200, response.text
    reply = response.json()["choices"][0]["message"]["content"]
    assert "338350" in reply.replace(",", ""), reply
    trajectory_id = response.headers["x-ghost-trajectory-id"]
    with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
        traj = collector.get(trajectory_id)
    assert traj is not None and traj.router is not None and traj.router["decision"] == "agent"
    assert any(step.tool_name == "python" and step.ok for step in traj.steps), traj.steps
