"""The documentation site builds with ``mkdocs build --strict`` (no broken link or anchor, no
page missing from the navigation or the checkout), and what it builds loads nothing from
elsewhere: no CDN, no web fonts, the search index in the site. Every problem type the
installed apps answer is in the problem types reference."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        pytest.skip(
            "mkdocs and mkdocs-material are not installed (pip install -r requirements-dev.txt)"
        )
    site = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return site


def test_the_site_builds_strictly(built):
    assert (built / "index.html").is_file()
    assert (built / "reference" / "configuration.html").is_file()
    # The files outside docs/ are included, not linked.
    architecture = (built / "internals" / "architecture.html").read_text()
    assert (ROOT / "ARCHITECTURE.md").read_text().splitlines()[0].lstrip("# ") in architecture


def test_the_site_loads_nothing_from_elsewhere(built):
    external = re.compile(r"""(?:src|href)=["']https?://""")
    for page in built.rglob("*.html"):
        text = page.read_text()
        loads = [
            tag
            for tag in re.findall(r"<(?:script|link)\b[^>]*>", text)
            if external.search(tag) and 'rel="canonical"' not in tag
        ]
        assert loads == [], page
        assert "fonts.googleapis" not in text, page


def test_search_works_without_a_server(built):
    assert (built / "search" / "search_index.js").read_text().startswith("var __index =")
    assert "iframe-worker-shim.js" in (built / "index.html").read_text()


def test_every_problem_type_is_in_the_reference():
    from registry import extensions
    from registry.http.problems import PROBLEM_TYPES

    text = (ROOT / "docs" / "reference" / "problems.md").read_text()
    slugs = [*PROBLEM_TYPES, *extensions.problem_types]
    assert [slug for slug in slugs if f"| `{slug}` |" not in text] == []
