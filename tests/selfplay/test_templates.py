"""Every template is admitted (its reference passes, every bad reply fails, the verdict repeats) at every
difficulty, in the real sandbox; tasks are deterministic per seed and differ across seeds."""

from __future__ import annotations

import pytest

from ghost_agent.sandbox import SandboxBackend
from ghost_agent.selfplay.admission import admit
from ghost_agent.selfplay.task import CLUSTERS, DIFFICULTIES, generate
from ghost_agent.selfplay.templates import TEMPLATES, by_cluster, find
from tests.conftest import sandbox  # noqa: F401 - the module-scoped fixture

IDS = [f"{t.cluster}/{t.name}" for t in TEMPLATES]


@pytest.mark.parametrize("template", TEMPLATES, ids=IDS)
def test_every_template_is_admitted(template, sandbox: SandboxBackend) -> None:  # noqa: F811
    verdict = admit(template, sandbox, seeds=(0,))
    assert verdict.admitted, "\n".join(verdict.problems)
    assert verdict.tasks == len(DIFFICULTIES)


@pytest.mark.parametrize("template", TEMPLATES, ids=IDS)
def test_tasks_are_deterministic_and_seeds_vary(template) -> None:
    for difficulty in DIFFICULTIES:
        a, b = generate(template, 7, difficulty), generate(template, 7, difficulty)
        assert a == b
        assert a.id == f"{template.cluster}/{template.name}/d{difficulty}/7"
    prompts = {generate(template, seed, 2).prompt for seed in range(5)}
    assert len(prompts) >= 4, "a new seed should give a fresh task"


def test_the_registry_names_templates_uniquely_within_known_clusters() -> None:
    names = [(t.cluster, t.name) for t in TEMPLATES]
    assert len(names) == len(set(names))
    assert set(by_cluster()) <= set(CLUSTERS)
    assert find(*names[0]) is TEMPLATES[0]
    with pytest.raises(KeyError):
        find("algo", "no-such-template")


def test_difficulty_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError):
        generate(TEMPLATES[0], 0, 4)
