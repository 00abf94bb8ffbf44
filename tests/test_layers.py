"""The layers hold: the core and its pages import no protocol app, A2A imports no extension
of it, the protocol apps share their module names, and no module grows past ~400 lines."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_APPS = ["a2a", "aap", "entities", "ard"]
# The MCP face: a thin protocol app over A2A's skills, with only the roles it needs.
FACES = ["mcp_face"]
# Module roles every protocol app has, so a reader finds each in the same place.
SHARED_MODULES = [
    "apps",
    "models",
    "services",
    "selectors",
    "api",
    "urls",
    "extensions",
    "receivers",
    "demo",
]
MAX_LINES = 450


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def imports_of(package: str) -> dict[str, set[str]]:
    return {
        str(path.relative_to(ROOT)): imported_modules(path)
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def offending(package: str, forbidden: list[str]) -> list[str]:
    return [
        f"{path} imports {name}"
        for path, names in imports_of(package).items()
        for name in sorted(names)
        if name.split(".")[0] in forbidden
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


def test_the_mcp_face_has_the_shared_roles_it_needs():
    present = {path.stem for path in (ROOT / "mcp_face").glob("*.py")}
    assert {"apps", "api", "urls", "extensions"} <= present
    # Its own: the tools, and the SDK's transport (imported with the first MCP request).
    assert present - set(SHARED_MODULES) - {"__init__"} == {"tools", "transport"}


def test_the_check_sees_imports_in_functions_too(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from aap.models import AAPStatus\n    import a2a.services\n")
    assert imported_modules(module) == {"aap.models", "a2a.services"}


@pytest.mark.parametrize("app", PROTOCOL_APPS)
def test_protocol_apps_use_the_same_module_names(app):
    missing = [
        name
        for name in SHARED_MODULES
        if not (ROOT / app / f"{name}.py").exists() and not (ROOT / app / name).is_dir()
    ]
    assert missing == []


def test_no_module_is_longer_than_about_400_lines():
    long = []
    for package in ["registry", "web", *PROTOCOL_APPS, *FACES, "bench"]:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            lines = len(path.read_text().splitlines())
            if lines > MAX_LINES:
                long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert long == []
