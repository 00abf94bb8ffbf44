"""Every problem type the code answers with is registered, so /problems/<type> documents it
and the reference lists it: the types are read from the code's calls, not listed here."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MAKERS = {"ProblemError", "problem_body", "problem_response", "problem"}


def used_types() -> dict[str, str]:
    """Each constant type given to a problem maker (its second argument or ``slug=``), with
    where it is first used."""
    found: dict[str, str] = {}
    for folder in ("registry", "protocols", "web"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name not in MAKERS:
                    continue
                given = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "slug")]
                for arg in given:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        where = f"{path.relative_to(ROOT)}:{node.lineno}"
                        found.setdefault(arg.value, where)
    return found


def test_the_walk_finds_the_types_of_the_core_and_of_the_apps():
    used = used_types()
    assert {"validation-error", "not-found", "conflict", "precondition-failed"} <= set(used)


@pytest.mark.apps("a2a", "aap", "entities", "ard")
def test_every_problem_type_the_code_answers_with_is_registered(anon):
    from registry import extensions
    from registry.http.problems import PROBLEM_TYPES

    known = {*PROBLEM_TYPES, *extensions.problem_types}
    unregistered = {slug: where for slug, where in used_types().items() if slug not in known}
    assert unregistered == {}
    for slug in ("conflict", "precondition-failed"):
        assert anon.get(f"/problems/{slug}").status_code == 200
