"""The shape of the source tree, as figures anyone can recompute: `python -m scripts.code_shape [SRC]`.

Prints what the floor plan looks like to a newcomer (issue 19's before/after check):
- modules at the package root (besides `__init__`/`__main__`);
- import circles: strongly connected groups in the module import graph, every `ghost_agent` import counted
  (top-level, function-level and `TYPE_CHECKING` alike: a lazy import is still an arrow);
- private names (`_name`) imported from another top-level package;
- string keys read or written on the turn's loose bags (`<x>.state["k"]`, `<x>.state.get("k")`, `info["k"]`);
- modules over 600 lines.

Static reading only (ast), nothing is imported.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT_PACKAGE = "ghost_agent"
# What may sit at the package root: entry points and what every layer shares (issue 19).
SHARED_ROOT = {"_env", "atomic", "home", "jsonsafe", "logging", "settings"}
LONG_MODULE_LINES = 600
BAG_NAMES = {"state", "info"}
ACCESSORS = {"get", "pop", "setdefault"}


@dataclass
class Shape:
    root_modules: list[str] = field(default_factory=list)
    cycles: list[list[str]] = field(default_factory=list)
    private_imports: list[str] = field(default_factory=list)
    private_module_imports: list[str] = field(default_factory=list)
    bag_keys: dict[str, int] = field(default_factory=dict)
    long_modules: list[tuple[str, int]] = field(default_factory=list)
    modules: int = 0
    lines: int = 0


def module_name(src: Path, path: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str, is_package: bool) -> str:
    """The package a module sits in: `ghost_agent.server.chat.protocol` -> `ghost_agent.server.chat`."""
    return module if is_package else module.rpartition(".")[0]


def resolve(importer: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(tree: ast.AST, importer: str, is_package: bool, known: set[str]) -> list[tuple[str, str | None]]:
    """(module imported, name imported from it or None) for every ghost_agent import in the tree."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(ROOT_PACKAGE):
                    found.append((alias.name, None))
        elif isinstance(node, ast.ImportFrom):
            base = resolve(importer, is_package, node.level, node.module)
            if not base.startswith(ROOT_PACKAGE):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known:  # `from pkg import module`
                    found.append((sub, None))
                else:
                    found.append((base, alias.name))
    return found


def bag_keys(tree: ast.AST) -> list[str]:
    keys: list[str] = []
    for node in ast.walk(tree):
        literal = isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
        if isinstance(node, ast.Subscript) and literal and isinstance(node.slice.value, str):
            owner = node.value
            if isinstance(owner, ast.Attribute) and owner.attr in BAG_NAMES:
                keys.append(f"{owner.attr}[{node.slice.value!r}]")
            elif isinstance(owner, ast.Name) and owner.id == "info":
                keys.append(f"info[{node.slice.value!r}]")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ACCESSORS:
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and owner.attr in BAG_NAMES and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    keys.append(f"{owner.attr}[{first.value!r}]")
    return keys


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; groups of two or more modules (and self-loops) only."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def measure(src: Path) -> Shape:
    shape = Shape()
    files = sorted((src / ROOT_PACKAGE).rglob("*.py"))
    known = {module_name(src, f) for f in files}
    packages = {module_name(src, f) for f in files if f.stem == "__init__"}
    graph: dict[str, set[str]] = defaultdict(set)
    keys: dict[str, int] = defaultdict(int)
    for path in files:
        name = module_name(src, path)
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n") + 1
        shape.modules += 1
        shape.lines += lines
        if path.parent == src / ROOT_PACKAGE and path.stem not in {"__init__", "__main__"}:
            shape.root_modules.append(path.stem)
        if lines > LONG_MODULE_LINES:
            shape.long_modules.append((name, lines))
        tree = ast.parse(text, filename=str(path))
        graph.setdefault(name, set())
        for target, imported in imports_of(tree, name, path.stem == "__init__", known):
            module = target if target in known else None
            if module is None:
                continue
            if module != name:
                graph[name].add(module)
            if imported and imported.startswith("_") and not imported.startswith("__") and module != name:
                finding = f"{name} <- {module}.{imported}"
                if package_of(module, module in packages) != package_of(name, name in packages):
                    shape.private_imports.append(finding)
                else:
                    shape.private_module_imports.append(finding)
        for key in bag_keys(tree):
            keys[key] += 1
    # A package's __init__ importing its own submodules is how packages re-export, not a circle between
    # responsibilities: leave those arrows out.
    for name in list(graph):
        if name in known and (src / ROOT_PACKAGE / Path(*name.split(".")[1:]) / "__init__.py").exists():
            graph[name] = {m for m in graph[name] if not m.startswith(name + ".")}
    shape.cycles = strongly_connected(graph)
    shape.bag_keys = dict(sorted(keys.items()))
    return shape


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.code_shape", description=__doc__.splitlines()[0])
    parser.add_argument("src", nargs="?", default="src", help="the folder holding the ghost_agent package")
    parser.add_argument("-v", "--verbose", action="store_true", help="list each finding, not only counts")
    parser.add_argument(
        "--check", action="store_true",
        help="exit 1 on an import circle, a private name imported from another module, or a root module that "
        "is not shared by every layer (make lint)",
    )
    args = parser.parse_args(argv)
    shape = measure(Path(args.src))
    if args.check:
        stray = sorted(set(shape.root_modules) - SHARED_ROOT)
        problems = [f"import circle: {' <-> '.join(c)}" for c in shape.cycles]
        problems += [f"private name imported: {p}" for p in shape.private_imports + shape.private_module_imports]
        problems += [f"module at the package root: {m} (only {', '.join(sorted(SHARED_ROOT))})" for m in stray]
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    rows = [
        ("modules (lines)", f"{shape.modules} ({shape.lines:,})"),
        ("modules at the package root", str(len(shape.root_modules))),
        ("import circles (modules in them)", f"{len(shape.cycles)} ({sum(len(c) for c in shape.cycles)})"),
        ("private names imported across packages", str(len(shape.private_imports))),
        ("private names imported across modules of one package", str(len(shape.private_module_imports))),
        ("string keys on the turn (distinct / uses)", f"{len(shape.bag_keys)} / {sum(shape.bag_keys.values())}"),
        (f"modules over {LONG_MODULE_LINES} lines", str(len(shape.long_modules))),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    if args.verbose:
        print("\nroot modules:", ", ".join(shape.root_modules) or "-")
        for cycle in shape.cycles:
            print("circle:", " <-> ".join(m.removeprefix(ROOT_PACKAGE + ".") for m in cycle))
        for line in shape.private_imports:
            print("private across packages:", line)
        for line in shape.private_module_imports:
            print("private across modules:", line)
        for key, uses in shape.bag_keys.items():
            print(f"turn key: {key} x{uses}")
        for name, lines in shape.long_modules:
            print(f"long: {name} {lines}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
