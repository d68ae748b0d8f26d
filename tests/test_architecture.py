"""The floor plan holds: the import contracts (pyproject's [tool.importlinter]) and the tree's shape.

`make lint` runs the same checks; they are here too because CI runs `make test`, and a layering rule nobody
runs is a comment. Static reading only: nothing is imported from the package under test.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scripts import code_shape

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"


def lint_imports() -> str:
    found = Path(sys.executable).with_name("lint-imports")
    return str(found) if found.exists() else (shutil.which("lint-imports") or "")


@pytest.mark.skipif(not lint_imports(), reason="import-linter is not installed (make install-dev)")
def test_the_import_contracts_are_kept() -> None:
    done = subprocess.run([lint_imports(), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_import_circle_and_no_private_name_crosses_a_module() -> None:
    shape = code_shape.measure(SRC)
    assert shape.cycles == []
    assert shape.private_imports == [] and shape.private_module_imports == []


def test_only_what_every_layer_shares_sits_at_the_package_root() -> None:
    shape = code_shape.measure(SRC)
    assert set(shape.root_modules) <= code_shape.SHARED_ROOT, sorted(set(shape.root_modules) - code_shape.SHARED_ROOT)


def test_the_shape_reader_finds_a_circle_and_a_private_name(tmp_path: Path) -> None:
    # The checks above must be able to fail: a two-module circle and a private import are seen.
    pkg = tmp_path / "ghost_agent"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "one.py").write_text("from ghost_agent.a.two import _hidden\n")
    (pkg / "a" / "two.py").write_text("def f():\n    from ghost_agent.a import one\n_hidden = 1\n")
    (pkg / "stray.py").write_text("")
    shape = code_shape.measure(tmp_path)
    assert shape.cycles == [["ghost_agent.a.one", "ghost_agent.a.two"]]
    assert shape.private_module_imports == ["ghost_agent.a.one <- ghost_agent.a.two._hidden"]
    assert shape.root_modules == ["stray"]
