"""Fixtures shared by the trajectory-store tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ghost_agent.trajectories.collector import TrajectoryCollector


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "trajectories"


@pytest.fixture
def collector(root: Path) -> Iterator[TrajectoryCollector]:
    with TrajectoryCollector(root) as c:
        yield c
