"""The core's rooms (registry/<room>/) import only the rooms below them, no module imports
itself back through others (no import circle anywhere in the project), and code imports a
model from the room that owns it, not from Django's entry ``registry.models``."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["registry", "web", "a2a", "aap", "entities", "mcp_face", "bench"]
# Each room, lowest first, with the rooms it may import (besides the contract at the top of
# registry/: extensions and signals). ARCHITECTURE.md "The core's rooms" shows the same.
ROOMS = {
    "http": set(),
    "outbound": {"http"},
    "access": {"http"},
    "fastpath": {"http", "access"},
    "agents": {"http", "outbound", "access", "fastpath"},
    "liveness": {"http", "outbound", "access", "fastpath", "agents"},
    "semantic": {"http", "outbound", "access", "fastpath", "agents"},
    "discovery": {"http", "outbound", "access", "fastpath", "agents", "semantic"},
    "events": {
        "http",
        "outbound",
        "access",
        "fastpath",
        "agents",
        "liveness",
        "semantic",
        "discovery",
    },
}
CONTRACT = {"registry.extensions", "registry.signals"}
REGISTRY_MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    }


def imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules a file imports, anywhere in it (functions too): ``from p import
    m`` counts as importing the module ``p.m`` when there is one."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [
                f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}" in modules
                else node.module
                for alias in node.names
            ]
        else:
            continue
        found.update(name for name in names if name in modules)
    return found


def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports(path, modules) - {name} for name, path in modules.items()}


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "registry" and len(parts) > 2 and parts[1] in ROOMS:
        return parts[1]
    return None


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_anywhere():
    assert cycles(graph()) == []


def test_the_check_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_a_room_imports_only_the_rooms_below_it(room):
    wrong = []
    for module, imported in graph().items():
        if room_of(module) != room:
            continue
        for name in sorted(imported):
            if not name.startswith("registry.") or name in CONTRACT:
                continue
            other = room_of(name)
            if other == room or other in ROOMS[room]:
                continue
            wrong.append(f"{module} imports {name}")
    assert wrong == []


def test_the_contract_imports_no_room():
    edges = graph()
    assert {name: edges[name] for name in CONTRACT if edges[name]} == {}


def test_every_room_says_what_it_owns_and_may_import():
    for room in ROOMS:
        doc = ast.get_docstring(ast.parse((ROOT / "registry" / room / "__init__.py").read_text()))
        assert doc and "May import" in doc, room


def test_models_are_imported_from_their_room():
    # registry/models.py is Django's entry to the app's models, not an import path.
    users = sorted(name for name, imported in graph().items() if "registry.models" in imported)
    assert users == []


def test_no_module_of_the_core_is_longer_than_400_lines():
    long = [
        f"{path.relative_to(ROOT)}: {lines}"
        for path in (ROOT / "registry").rglob("*.py")
        if "migrations" not in path.parts
        and (lines := len(path.read_text().splitlines())) > REGISTRY_MAX_LINES
    ]
    assert long == []
