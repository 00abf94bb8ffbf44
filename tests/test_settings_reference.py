"""Every variable the registry reads from its environment is in the configuration
reference (docs/reference/configuration.md) with a default and a meaning.

The names are found in the code, not listed here: an AST walk over the project's Python
files finds each read of the environment (``os.environ.get``, ``os.getenv``,
``os.environ[...]``, ``setdefault``, and the settings' helpers of ``registry/settings/env.py``,
found there as the functions that read the environment by their first argument), and the
Procfiles' and Makefile's ``${NAME:-…}`` and ``NAME ?=`` give the processes' own. The
benchmark program (bench/) and the tests are left out: their switches are in
bench/README.md and CONTRIBUTING.md."""

import ast
import re
from pathlib import Path

import pytest

# Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference" / "configuration.md"
HELPERS = ROOT / "registry" / "settings" / "env.py"
LEFT_OUT = {".venv", ".git", "tests", "bench", "site", "node_modules", "var", "staticfiles"}
# A row of the reference: | `NAME`, `OTHER` | default | meaning |
ROW = re.compile(r"^\|(?P<names>[^|]*)\|(?P<default>[^|]*)\|(?P<meaning>[^|]*)\|\s*$")


def is_environ(node: ast.AST) -> bool:
    """``os.environ`` (a WSGI ``environ`` is a request's, not the process's)."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def reads_environment_by_argument(function: ast.FunctionDef) -> bool:
    """Whether a function reads the environment with its first parameter as the name."""
    if not function.args.args:
        return False
    parameter = function.args.args[0].arg
    return any(
        isinstance(node, ast.Call)
        and reads(node)
        and node.args
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == parameter
        for node in ast.walk(function)
    )


def reads(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in {"get", "setdefault", "pop"}:
        return is_environ(func.value)
    return isinstance(func, ast.Attribute) and func.attr == "getenv"


def environment_read(node: ast.AST, helpers: set[str]) -> str | None:
    """The variable a node reads from the environment, when it names it as a literal."""
    if isinstance(node, ast.Call):
        func = node.func
        named = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if (reads(node) or named in helpers) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return first.value
    if (
        isinstance(node, ast.Subscript)
        and is_environ(node.value)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.slice.value
    if (
        isinstance(node, ast.Compare)
        and len(node.comparators) == 1
        and is_environ(node.comparators[0])
        and isinstance(node.left, ast.Constant)
        and isinstance(node.left.value, str)
    ):
        return node.left.value
    return None


def helper_names() -> set[str]:
    tree = ast.parse(HELPERS.read_text(), str(HELPERS))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and reads_environment_by_argument(node)
    }


def project_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not LEFT_OUT.intersection(path.relative_to(ROOT).parts)
    )


def variables_read() -> dict[str, str]:
    """Each variable read, with the first place that reads it."""
    helpers = helper_names()
    found: dict[str, str] = {}
    for path in project_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (name := environment_read(node, helpers)) is not None:
                found.setdefault(name, f"{path.relative_to(ROOT)}:{node.lineno}")
    for name in ("Procfile", "Procfile.serve", "Makefile"):
        for number, line in enumerate((ROOT / name).read_text().splitlines(), 1):
            # ${NAME:-default} of a shell line; NAME ?= default, which make takes from the
            # environment.
            variables = re.findall(r"\$\{(\w+)", line.replace("$$", "$"))
            variables += re.findall(r"^([A-Z][A-Z0-9_]*) \?=", line)
            for variable in variables:
                found.setdefault(variable, f"{name}:{number}")
    return found


def documented(text: str) -> dict[str, tuple[str, str]]:
    """The variables of the reference's table rows, with the row's default and meaning."""
    rows = {}
    for line in text.splitlines():
        if (match := ROW.match(line)) is None:
            continue
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", match.group("names")):
            rows[name] = (match.group("default").strip(), match.group("meaning").strip())
    return rows


def missing(read: dict[str, str], text: str) -> list[str]:
    rows = documented(text)
    return sorted(
        f"{name} (read at {where})"
        for name, where in read.items()
        if name not in rows or not rows[name][0] or not rows[name][1]
    )


def test_the_helpers_are_found_in_the_settings_module():
    assert {"env_bool", "env_int", "env_float", "env_list"} <= helper_names()


def test_the_walk_finds_the_settings_read_in_every_way():
    read = variables_read()
    for name in ("SECRET_KEY", "DEBUG", "FETCH_ALLOWED_HOSTS", "ARD_PEERS", "WORKERS"):
        assert name in read, name


def test_every_variable_read_from_the_environment_is_in_the_reference():
    assert missing(variables_read(), REFERENCE.read_text()) == []


def test_a_variable_taken_out_of_the_reference_is_caught():
    text = REFERENCE.read_text()
    read = variables_read()
    name = "FETCH_ALLOW_HTTP_HOSTS"
    kept = "\n".join(line for line in text.splitlines() if f"`{name}`" not in line)
    assert [entry.split()[0] for entry in missing(read, kept)] == [name]
    # A row without its default is caught too.
    emptied = re.sub(r"^(\| `REDIS_URL` \|)[^|]*\|", r"\1 |", text, flags=re.M)
    assert [entry.split()[0] for entry in missing(read, emptied)] == ["REDIS_URL"]
