"""The memory_search slot: an honest error without a store, rendered hits with one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ghost_agent.tools import ToolContext, default_registry


class Store:
    """A searcher that records its queries and answers from a fixed list."""

    def __init__(self, memories: list[dict[str, Any]]) -> None:
        self.memories = memories
        self.queries: list[tuple[str, int]] = []

    async def __call__(self, query: str, k: int) -> list[dict[str, Any]]:
        self.queries.append((query, k))
        return [m for m in self.memories if query.lower() in m["task"].lower()][: k + 5]  # over-delivers


async def test_without_a_store_the_slot_says_so(tmp_path: Path) -> None:
    r = await default_registry().call("memory_search", {"query": "csv"}, ToolContext(workspace=tmp_path))
    assert not r.ok
    assert r.error == "memory_search: no memory store is attached; solve the task without it"
    assert r.to_message().startswith("ERROR: memory_search: no memory store is attached")


async def test_with_a_store(tmp_path: Path) -> None:
    store = Store([
        {"task": "Sum a CSV column", "solution": "pandas.read_csv(p)['x'].sum()", "score": 0.9, "tags": ["csv"]},
        {"task": "Parse a CSV header", "solution": "", "outcome": "failed"},
        {"task": "Reverse a string", "solution": "s[::-1]"},
    ])
    ctx = ToolContext(workspace=tmp_path, memory_searcher=store)
    r = await default_registry().call("memory_search", {"query": " csv ", "k": 1}, ctx)
    assert r.ok and store.queries == [("csv", 1)]
    assert r.output == "1. task: Sum a CSV column\n   solution: pandas.read_csv(p)['x'].sum()\n   score=0.9"
    both = await default_registry().call("memory_search", {"query": "csv"}, ctx)
    assert both.data["hits"] == 2 and "2. task: Parse a CSV header\n   outcome=failed" in both.output
    none = await default_registry().call("memory_search", {"query": "graph"}, ctx)
    assert none.ok and none.output == "No memories match 'graph'."


async def test_arguments_are_checked(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, memory_searcher=Store([]))
    r = await default_registry().call("memory_search", {"query": "x", "k": 0}, ctx)
    assert r.error is not None and r.error.startswith("memory_search: 'k' must be >= 1 (got 0)")
    empty = await default_registry().call("memory_search", '{"query": ""}', ctx)
    assert empty.error is not None and empty.error.startswith("memory_search: 'query' must not be empty")


async def test_a_failing_store_is_an_error_result(tmp_path: Path) -> None:
    async def broken(query: str, k: int) -> list[dict[str, Any]]:
        raise ConnectionError("index not loaded")

    r = await default_registry().call("memory_search", {"query": "x"}, ToolContext(workspace=tmp_path,
                                                                                   memory_searcher=broken))
    assert r.error == "memory_search: internal error: ConnectionError: index not loaded"
