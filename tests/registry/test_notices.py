"""registry.notices: the bounded per-process cache and what it may cache, and its
listener's notices on PostgreSQL."""

import psycopg
import pytest
from django.db import connection

from registry.notices import EVERYTHING, NoticedCache, announce, own_connection_params

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="LISTEN/NOTIFY is PostgreSQL's"
)


@pytest.fixture
def vouched(monkeypatch):
    """A cache whose listener vouches for it (no database)."""
    cache = NoticedCache("test_channel", max_bytes=100)
    monkeypatch.setattr(cache.listener, "current", lambda: True)
    return cache


def loader(value, size, calls):
    def load():
        calls.append(value)
        return None if value is None else (value, size)

    return load


def test_values_are_loaded_once_and_kept(vouched):
    calls = []
    assert vouched.get("a", loader("A", 10, calls)) == "A"
    assert vouched.get("a", loader("A2", 10, calls)) == "A"
    assert calls == ["A"] and vouched.size == 10


def test_what_is_not_found_is_not_kept(vouched):
    calls = []
    assert vouched.get("a", loader(None, 0, calls)) is None
    assert vouched.get("a", loader(None, 0, calls)) is None
    assert calls == [None, None] and not vouched.entries


def test_the_least_recently_used_go_first_when_full(vouched):
    calls = []
    for key in "abc":
        vouched.get(key, loader(key.upper(), 40, calls))  # 120 bytes: "a" goes
    assert list(vouched.entries) == ["b", "c"] and vouched.size == 80
    vouched.get("b", loader("B", 40, calls))  # used: "c" is now the oldest
    vouched.get("d", loader("D", 40, calls))
    assert list(vouched.entries) == ["b", "d"]
    vouched.get("big", loader("BIG", 101, calls))  # larger than the whole cache: not kept
    assert list(vouched.entries) == ["b", "d"] and vouched.size == 80


def test_forget_drops_keys_or_everything(vouched):
    calls = []
    for key in "abc":
        vouched.get(key, loader(key, 10, calls))
    vouched.forget(["b", "unknown"])
    assert list(vouched.entries) == ["a", "c"] and vouched.size == 20
    vouched.forget(None)
    assert not vouched.entries and vouched.size == 0


def test_a_cache_without_a_listener_reads_through(db):
    cache = NoticedCache("test_channel", max_bytes=100)
    calls = []
    if connection.vendor == "postgresql":
        cache.listener.retry_at = float("inf")  # as if it could not connect
    assert cache.get("a", loader("A", 10, calls)) == "A"
    assert cache.get("a", loader("A", 10, calls)) == "A"
    assert calls == ["A", "A"] and not cache.entries


def test_a_cache_of_no_size_never_listens(db):
    cache = NoticedCache("test_channel", max_bytes=0)
    assert cache.get("a", loader("A", 10, [])) == "A"
    assert cache.listener.connection is None


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_committed_notices_reach_the_listener_and_rolled_back_ones_do_not():
    cache = NoticedCache("test_channel", max_bytes=1000)
    try:
        calls = []
        for key in ("a", "b", "c"):
            cache.get(key, loader(key, 10, calls))
        assert list(cache.entries) == ["a", "b", "c"]
        with psycopg.connect(
            **own_connection_params(connection)
        ) as other:  # another process's write
            other.execute("SELECT pg_notify('test_channel', 'a')")
            other.rollback()
            assert cache.listener.current() and list(cache.entries) == ["a", "b", "c"]
            other.execute("SELECT pg_notify('test_channel', 'a,b')")
            other.commit()
        assert eventually(lambda: cache.listener.current() and list(cache.entries) == ["c"])
        announce("test_channel", [EVERYTHING])  # autocommit: sent at once
        assert eventually(lambda: cache.listener.current() and not cache.entries)
    finally:
        cache.listener.close()


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_lost_listening_connection_empties_the_cache_until_it_listens_again():
    cache = NoticedCache("test_channel", max_bytes=1000)
    cache.listener.retry_seconds = 0
    try:
        cache.get("a", loader("A", 10, []))
        assert list(cache.entries) == ["a"]
        pid = cache.listener.connection.info.backend_pid
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert eventually(lambda: not cache.listener.current())
        assert not cache.entries  # what changed meanwhile is unknown
        assert cache.listener.current()  # listens again (a new connection)
        assert cache.listener.connection.info.backend_pid != pid
    finally:
        cache.listener.close()


@postgresql_only
def test_long_key_lists_are_announced_in_several_notices(db):
    from django.test.utils import CaptureQueriesContext

    keys = [f"{i:036d}" for i in range(500)]  # 18,500 bytes of keys
    with CaptureQueriesContext(connection) as queries:
        announce("test_channel", keys)
    sent = [q["sql"] for q in queries.captured_queries]
    assert len(sent) == 3 and all("pg_notify" in sql for sql in sent)


def eventually(check, attempts: int = 50) -> bool:
    import time

    for _ in range(attempts):
        if check():
            return True
        time.sleep(0.02)
    return False
