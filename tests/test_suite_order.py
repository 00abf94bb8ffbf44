"""The parallel workers are handed the longest test files first (tests.conftest)."""

from types import SimpleNamespace

import pytest

from tests.conftest import LONGEST_FIRST, TESTS_DIR, longest_first

# Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
pytestmark = pytest.mark.database_independent


def test_every_file_named_longest_first_exists():
    # A file renamed or split would otherwise fall back to its place among the rest unseen.
    missing = [name for name in LONGEST_FIRST if not (TESTS_DIR.parent / name).is_file()]
    assert missing == []


def test_the_longest_files_come_first_in_their_order_and_each_files_tests_keep_theirs():
    def item(name: str, test: str):
        return SimpleNamespace(path=TESTS_DIR.parent / name, name=test)

    items = [
        item("tests/registry/http/test_a.py", "one"),
        item(LONGEST_FIRST[1], "b1"),
        item("tests/registry/http/test_a.py", "two"),
        item(LONGEST_FIRST[0], "a1"),
        item(LONGEST_FIRST[1], "b2"),
    ]
    longest_first(items)
    assert [i.name for i in items] == ["a1", "b1", "b2", "one", "two"]
