"""The house's rules, read from the tree itself (so a new app or room cannot be missed):

- no import circle anywhere in the project (every package found at the top of the tree);
- the core's rooms (``registry/<room>/``) import only the rooms below them, and code imports
  a model from the room that owns it, not from Django's entry ``registry.models``;
- each protocol app (``protocols/<app>/``) keeps Django's files at its top and its logic in
  rooms, each room importing only the core, the app's contract (``models``, ``signals``),
  the rooms its ``__init__`` declares ("May import: … the rooms `a`, `b`.") and the apps its
  app builds on; the contract imports no room; an app imports only the apps it builds on;
- no module longer than 400 lines; no project package named like an installed
  distribution's top-level package, and no package path spliced with pkgutil.
"""

import ast
import functools
import importlib.metadata
import re
from pathlib import Path

import pytest

# Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 400
# Each room of the core, lowest first, with the rooms it may import (besides the contract
# at the top of registry/: extensions and signals). ARCHITECTURE.md "The core's rooms".
ROOMS = {
    "http": set(),
    "outbound": {"http"},
    "access": {"http", "outbound"},
    "fastpath": {"http", "access"},
    "agents": {"http", "outbound", "access", "fastpath"},
    "liveness": {"http", "outbound", "access", "fastpath", "agents"},
    "semantic": {"http", "outbound", "access", "fastpath", "agents"},
    "discovery": {"http", "outbound", "access", "fastpath", "agents", "semantic"},
    "trust": {
        "http",
        "outbound",
        "access",
        "fastpath",
        "agents",
        "liveness",
        "semantic",
        "discovery",
    },
    "moderation": {"http", "outbound", "access", "fastpath", "agents", "semantic", "discovery"},
    "events": {
        "moderation",
        "http",
        "outbound",
        "access",
        "fastpath",
        "agents",
        "liveness",
        "semantic",
        "discovery",
        "trust",
    },
    "observability": {
        "moderation",
        "http",
        "outbound",
        "access",
        "fastpath",
        "agents",
        "liveness",
        "semantic",
        "discovery",
        "trust",
        "events",
    },
}
CONTRACT = {"registry.extensions", "registry.signals"}
# What each protocol app builds on (AAP extends A2A, never the reverse).
BUILDS_ON = {"a2a": set(), "entities": set(), "aap": {"a2a"}, "ard": {"a2a"}, "mcp": {"a2a"}}
APP_CONTRACT = {"models", "signals"}


def packages(root: Path) -> list[str]:
    """The project's top-level packages: every folder at the top with an ``__init__.py``."""
    return sorted(p.parent.name for p in root.glob("*/__init__.py") if p.parent.name != "docs")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    return {
        module_name(path, root): path
        for package in packages(root)
        for path in (root / package).rglob("*.py")
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


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each project module's imports of project modules. Read once per tree (the tests
    read it and do not change it): the tree's thousand files take seconds to parse."""
    return _graph(root)


@functools.cache
def _graph(root: Path) -> dict[str, set[str]]:
    modules = project_modules(root)
    return {name: imports(path, modules) - {name} for name, path in modules.items()}


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


def apps(root: Path = ROOT) -> list[str]:
    return sorted(p.parent.name for p in (root / "protocols").glob("*/apps.py"))


def app_rooms(app: str, root: Path = ROOT) -> dict[str, set[str]]:
    """An app's rooms (its subpackages but ``management`` and ``migrations``), each with the
    rooms its ``__init__`` docstring says it may import."""
    rooms = {}
    for init in sorted((root / "protocols" / app).glob("*/__init__.py")):
        name = init.parent.name
        if name in {"management", "migrations"}:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        said = doc.split("May import:", 1)
        below = said[1].split("the rooms", 1)[1] if len(said) > 1 and "the rooms" in said[1] else ""
        rooms[name] = set(re.findall(r"`(\w+)`", below)) if len(said) > 1 else None
    return rooms


def room_violations(app: str, root: Path = ROOT) -> list[str]:
    """Each import of the app's modules that its rules do not allow."""
    prefix = f"protocols.{app}."
    rooms = app_rooms(app, root)
    wrong = []
    for module, imported in graph(root).items():
        if not module.startswith(prefix):
            continue
        part = module[len(prefix) :].split(".")[0]
        room = part if part in rooms else None
        for name in sorted(imported):
            if name.startswith(prefix):
                other = name[len(prefix) :].split(".")[0]
                if room is not None:
                    if other in APP_CONTRACT or other == room or other in (rooms[room] or ()):
                        continue
                    wrong.append(f"{module} imports {name} (room {room})")
                elif part in APP_CONTRACT and other in rooms:
                    wrong.append(f"{module} imports {name} (the contract imports no room)")
            elif name.startswith("protocols."):
                other_app = name.split(".")[1]
                if other_app not in BUILDS_ON.get(app, set()):
                    wrong.append(f"{module} imports {name} ({app} does not build on {other_app})")
    return sorted(wrong)


def test_every_top_package_is_read():
    assert {"registry", "protocols", "web", "bench", "tests"} <= set(packages(ROOT))
    assert set(apps()) == set(BUILDS_ON)


def test_no_import_circle_anywhere():
    assert cycles(graph()) == []


def test_the_check_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_circle_planted_in_an_app_is_found(tmp_path):
    _plant(
        tmp_path,
        {
            "protocols/__init__.py": "",
            "protocols/shop/__init__.py": "",
            "protocols/shop/apps.py": "",
            "protocols/shop/orders/__init__.py": '"""Orders.\n\nMay import: the core."""',
            "protocols/shop/orders/carts.py": (
                "def f():\n    from protocols.shop.orders import bills\n"
            ),
            "protocols/shop/orders/bills.py": "from protocols.shop.orders.carts import f\n",
            "protocols/shop/tasks.py": "import protocols.shop.orders.bills\n",
        },
    )
    assert cycles(graph(tmp_path)) == [
        ["protocols.shop.orders.bills", "protocols.shop.orders.carts"]
    ]


def test_a_room_that_imports_above_itself_is_found(tmp_path):
    _plant(
        tmp_path,
        {
            "protocols/__init__.py": "",
            "protocols/shop/__init__.py": "",
            "protocols/shop/models.py": "from protocols.shop.carts.x import y\n",
            "protocols/shop/apps.py": "",
            "protocols/shop/carts/__init__.py": '"""Carts.\n\nMay import: the core."""',
            "protocols/shop/carts/x.py": "from protocols.shop.bills.z import y\n",
            "protocols/shop/bills/__init__.py": '"""Bills.\n\nMay import: the rooms `carts`."""',
            "protocols/shop/bills/z.py": (
                "from protocols.shop.carts.x import w\nfrom protocols.a2a import q\n"
            ),
            "protocols/a2a/__init__.py": "",
            "protocols/a2a/q.py": "",
        },
    )
    assert app_rooms("shop", tmp_path) == {"carts": set(), "bills": {"carts"}}
    assert room_violations("shop", tmp_path) == [
        "protocols.shop.bills.z imports protocols.a2a.q (shop does not build on a2a)",
        "protocols.shop.carts.x imports protocols.shop.bills.z (room carts)",
        "protocols.shop.models imports protocols.shop.carts.x (the contract imports no room)",
    ]


@pytest.mark.parametrize("app", sorted(BUILDS_ON))
def test_an_app_room_imports_only_what_it_declares(app):
    assert room_violations(app) == []


@pytest.mark.parametrize("app", sorted(BUILDS_ON))
def test_every_app_room_says_what_it_owns_and_may_import(app):
    rooms = app_rooms(app)
    assert all(declared is not None for declared in rooms.values()), rooms
    for room, declared in rooms.items():
        assert declared <= set(rooms) - {room}, (room, declared)


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "registry" and len(parts) > 2 and parts[1] in ROOMS:
        return parts[1]
    return None


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_a_core_room_imports_only_the_rooms_below_it(room):
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


def test_every_core_room_says_what_it_owns_and_may_import():
    for room in ROOMS:
        doc = ast.get_docstring(ast.parse((ROOT / "registry" / room / "__init__.py").read_text()))
        assert doc and "May import" in doc, room


def test_models_are_imported_from_their_room():
    # registry/models.py is Django's entry to the app's models, not an import path.
    users = sorted(name for name, imported in graph().items() if "registry.models" in imported)
    assert users == []


def test_no_module_is_longer_than_400_lines():
    long = [
        f"{path.relative_to(ROOT)}: {lines}"
        for package in packages(ROOT)
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
        and (lines := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert long == []


def test_no_project_package_is_named_like_a_dependency():
    installed = importlib.metadata.packages_distributions()
    clash = {name: installed[name] for name in packages(ROOT) if name in installed}
    assert clash == {}


# pkgutil's path splicer, named in two parts so this file does not name it whole.
SPLICE = "extend" + "_path"


def test_no_package_extends_its_path():
    users = [
        str(path.relative_to(ROOT))
        for path in project_modules().values()
        if SPLICE in path.read_text()
    ]
    assert users == []
