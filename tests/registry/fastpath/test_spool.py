"""registry.fastpath.spool: a process's key → bytes store in two segment files, with its index."""

import os

import pytest

from registry.fastpath import spool as spool_module
from registry.fastpath.spool import Spool


@pytest.fixture
def spool(tmp_path):
    return Spool(max_bytes=2000, directory=str(tmp_path))


def test_values_are_stored_and_replaced(spool):
    assert spool.get("a") is None
    spool.put("a", b"A")
    spool.put("b", b"")
    assert spool.get("a") == b"A" and spool.get("b") == b""
    spool.put("a", b"A2")
    assert spool.get("a") == b"A2" and len(spool) == 2


def test_the_segment_files_are_unlinked(spool, tmp_path):
    spool.put("a", b"A")
    assert list(tmp_path.iterdir()) == []
    assert all(os.fstat(descriptor).st_nlink == 0 for descriptor in spool.files)


def test_forget_drops_keys_or_everything(spool):
    for key in "abc":
        spool.put(key, key.encode() * 10)
    spool.forget(["b", "unknown"])
    assert [spool.get(key) for key in "abc"] == [b"a" * 10, None, b"c" * 10]
    spool.put("b", b"again")
    assert spool.get("b") == b"again"
    spool.forget(None)
    assert [spool.get(key) for key in "abc"] == [None, None, None] and len(spool) == 0
    assert spool.ends == [0, 0] and all(os.fstat(d).st_size == 0 for d in spool.files)


def test_a_full_segment_turns_over_and_what_was_used_stays(spool):
    # segments of 1,000 bytes; a record is 2 + 2 + 100 bytes: 9 per segment
    keys = [f"{i:02d}" for i in range(9)]
    for key in keys:
        spool.put(key, key.encode() * 50)
    assert spool.active == 0 and spool.ends[0] == 9 * 104
    spool.put("x0", b"x" * 100)  # the first segment is full: the second becomes active
    assert spool.active == 1
    assert spool.get("01") == b"01" * 50  # still there, in the older segment, and used:
    assert spool.get("03") == b"03" * 50  # copied to the active segment
    for i in range(1, 9):
        spool.put(f"y{i}", b"y" * 100)  # the active segment fills again: it turns over
    assert spool.active == 0
    assert spool.get("03") == b"03" * 50 and spool.get("01") == b"01" * 50
    assert spool.get("x0") == b"x" * 100 and spool.get("y8") == b"y" * 100
    assert [spool.get(key) for key in keys if key not in ("01", "03")] == [None] * 7


def test_a_value_larger_than_a_segment_is_not_kept(spool):
    spool.put("a", b"small")
    spool.put("a", b"x" * 1000)
    assert spool.get("a") is None and len(spool) == 0


def test_the_index_grows_and_is_rebuilt_without_what_was_forgotten(tmp_path):
    spool = Spool(max_bytes=10 * 2**20, directory=str(tmp_path))
    keys = [f"key-{i}" for i in range(20_000)]
    for key in keys:
        spool.put(key, key.encode())
    assert spool.mask + 1 > 20_000 / 0.7
    assert all(spool.get(key) == key.encode() for key in keys)
    spool.forget(keys[:19_000])
    spool._rebuild(lambda segment: True)
    assert spool.used == 1000 and spool.mask + 1 < 20_000
    assert [spool.get(key) for key in keys[18_999:19_002]] == [None, b"key-19000", b"key-19001"]


def test_keys_of_one_hash_never_mix(spool, monkeypatch):
    monkeypatch.setattr(spool_module, "_hash", lambda key: 42)
    spool.put("a", b"A")
    spool.put("b", b"B")  # the same slot: "a" is no longer stored
    assert spool.get("b") == b"B" and spool.get("a") is None


def test_a_forked_process_starts_empty_with_files_of_its_own(spool):
    spool.put("a", b"A")
    parents = list(spool.files)
    spool.pid = -1  # as in a child after fork()
    assert spool.get("a") is None
    assert spool.files and set(spool.files).isdisjoint(parents)
    spool.put("a", b"child")
    assert spool.get("a") == b"child"


def test_without_a_directory_to_write_it_keeps_nothing(tmp_path):
    spool = Spool(max_bytes=2000, directory=str(tmp_path / "missing"))
    spool.put("a", b"A")
    assert spool.get("a") is None and spool.files == []


def test_a_failing_file_empties_the_spool(spool, monkeypatch):
    spool.put("a", b"A")

    def broken(*args):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "pread", broken)
    assert spool.get("a") is None
    monkeypatch.undo()
    assert spool.get("a") is None and len(spool) == 0
    spool.put("a", b"A")
    assert spool.get("a") == b"A"
