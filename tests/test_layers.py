"""The layers hold: the core and its pages import no protocol app, A2A imports no extension
of it, and the protocol apps keep the same Django files at their top (the rooms below them,
the line cap and the circles: tests/test_rooms.py)."""

import ast
from pathlib import Path

import pytest

# Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parent.parent
# The protocol apps, by folder under protocols/.
PROTOCOL_APPS = ["a2a", "aap", "entities", "ard"]
# The MCP face: a thin protocol app over A2A's skills, with only the roles it needs.
FACES = ["mcp"]
# Django's files at the top of every protocol app, so a reader finds each in the same place
# (the logic lives in rooms below: tests/test_rooms.py).
SHARED_MODULES = ["apps", "models", "urls", "extensions", "receivers", "demo"]
TOP_MODULES = {*SHARED_MODULES, "__init__", "admin", "signals", "tasks"}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def folder(package: str) -> Path:
    """A package's folder: a protocol app's under protocols/, the others' at the top."""
    return ROOT / "protocols" / package if package in PROTOCOL_APPS + FACES else ROOT / package


def imports_of(package: str) -> dict[str, set[str]]:
    return {
        str(path.relative_to(ROOT)): imported_modules(path)
        for path in sorted(folder(package).rglob("*.py"))
    }


def offending(package: str, forbidden: list[str]) -> list[str]:
    """The imports of any of the protocol apps ``forbidden`` in ``package`` (``a2a`` alone is
    the a2a-sdk package, never the app)."""
    prefixes = [f"protocols.{app}" for app in forbidden]
    return [
        f"{path} imports {name}"
        for path, names in imports_of(package).items()
        for name in sorted(names)
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)
        or (name == "protocols" and forbidden)
    ]


def test_the_core_imports_no_protocol_app():
    assert offending("registry", PROTOCOL_APPS + FACES) == []


def test_the_pages_import_no_protocol_app():
    # web/ shows what the apps add through the extension points (members, agent panels).
    assert offending("web", PROTOCOL_APPS) == []


def test_the_entities_app_builds_on_the_core_alone():
    assert offending("entities", ["a2a", "aap", *FACES]) == []


def test_a2a_imports_no_extension_of_it():
    assert offending("a2a", ["aap", "entities", "ard", *FACES]) == []


def test_nothing_imports_the_ard_app():
    importers = [p for p in [*PROTOCOL_APPS, *FACES, "web", "registry"] if p != "ard"]
    assert [o for package in importers for o in offending(package, ["ard"])] == []


def test_the_ard_app_builds_on_the_core_and_a2a_alone():
    assert offending("ard", ["aap", "entities", *FACES]) == []


def test_the_check_finds_an_app_import():
    assert offending("registry", ["ard"]) == []
    found = [o for o in offending("ard", ["a2a"]) if "protocols.a2a." in o]
    assert found, "ard builds on a2a: the check must see those imports"


def test_the_mcp_face_has_the_shared_roles_it_needs():
    present = {path.stem for path in folder("mcp").glob("*.py")}
    assert {"apps", "api", "urls", "extensions"} <= present
    # Its own: the tools, the SDK's transport (imported with the first MCP request), and
    # the jobs of its imports from MCP Registries; its other logic lives in rooms.
    assert present - set(SHARED_MODULES) - {"__init__"} == {"api", "tools", "transport", "tasks"}


def test_the_check_sees_imports_in_functions_too(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "def f():\n"
        "    from protocols.aap.models import AAPStatus\n"
        "    import protocols.a2a.registration.services\n"
    )
    assert imported_modules(module) == {
        "protocols.aap.models",
        "protocols.a2a.registration.services",
    }


@pytest.mark.parametrize("app", PROTOCOL_APPS)
def test_protocol_apps_use_the_same_module_names(app):
    top = {path.stem for path in folder(app).glob("*.py")}
    assert [name for name in SHARED_MODULES if name not in top] == []
    # Nothing else at the top: the logic is in the app's rooms.
    assert sorted(top - TOP_MODULES) == []
