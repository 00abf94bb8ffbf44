"""registry.fastpath.notices: the bounded per-process cache and what it may cache, and its
listener's notices on PostgreSQL."""

import psycopg
import pytest
from django.db import connection

from registry.fastpath.notices import EVERYTHING, NoticedCache, announce, own_connection_params

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="LISTEN/NOTIFY is PostgreSQL's"
)


@pytest.fixture
def vouched(monkeypatch, tmp_path):
    """A cache whose listener vouches for it (no database)."""
    cache = NoticedCache("test_channel", max_bytes=1000, directory=str(tmp_path))
    monkeypatch.setattr(cache.listener, "current", lambda: True)
    return cache


def loader(value, calls):
    def load():
        calls.append(value)
        return value

    return load


def test_values_are_loaded_once_and_kept(vouched):
    calls = []
    assert vouched.get("a", loader(b"A", calls)) == b"A"
    assert vouched.get("a", loader(b"A2", calls)) == b"A"
    assert calls == [b"A"] and len(vouched.spool) == 1


def test_what_is_not_found_is_not_kept(vouched):
    calls = []
    assert vouched.get("a", loader(None, calls)) is None
    assert vouched.get("a", loader(None, calls)) is None
    assert calls == [None, None] and len(vouched.spool) == 0


def test_forget_drops_keys_or_everything(vouched):
    calls = []
    for key in "abc":
        vouched.get(key, loader(key.encode(), calls))
    vouched.forget(["b", "unknown"])
    assert vouched.get("b", loader(b"B", calls)) == b"B"
    assert calls == [b"a", b"b", b"c", b"B"]
    vouched.forget(None)
    assert len(vouched.spool) == 0


def test_a_cache_without_a_listener_reads_through(db):
    cache = NoticedCache("test_channel", max_bytes=1000)
    calls = []
    if connection.vendor == "postgresql":
        cache.listener.retry_at = float("inf")  # as if it could not connect
    assert cache.get("a", loader(b"A", calls)) == b"A"
    assert cache.get("a", loader(b"A", calls)) == b"A"
    assert calls == [b"A", b"A"] and len(cache.spool) == 0


def test_a_cache_of_no_size_never_listens(db):
    cache = NoticedCache("test_channel", max_bytes=0)
    assert cache.get("a", loader(b"A", [])) == b"A"
    assert cache.listener.connection is None


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_committed_notices_reach_the_listener_and_rolled_back_ones_do_not():
    cache = NoticedCache("test_channel", max_bytes=1000)
    try:
        calls = []
        for key in ("a", "b", "c"):
            cache.get(key, loader(key.encode(), calls))
        assert kept(cache) == ["a", "b", "c"]
        with psycopg.connect(
            **own_connection_params(connection)
        ) as other:  # another process's write
            other.execute("SELECT pg_notify('test_channel', 'a')")
            other.rollback()
            assert cache.listener.current() and kept(cache) == ["a", "b", "c"]
            other.execute("SELECT pg_notify('test_channel', 'a,b')")
            other.commit()
        assert eventually(lambda: cache.listener.current() and kept(cache) == ["c"])
        announce("test_channel", [EVERYTHING])  # autocommit: sent at once
        assert eventually(lambda: cache.listener.current() and kept(cache) == [])
    finally:
        cache.listener.close()


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_lost_listening_connection_empties_the_cache_until_it_listens_again():
    cache = NoticedCache("test_channel", max_bytes=1000)
    cache.listener.retry_seconds = 0
    try:
        cache.get("a", loader(b"A", []))
        assert kept(cache) == ["a"]
        pid = cache.listener.connection.info.backend_pid
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert eventually(lambda: not cache.listener.current())
        assert kept(cache) == []  # what changed meanwhile is unknown
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


def kept(cache, keys=("a", "b", "c")) -> list[str]:
    """Which of ``keys`` the cache's spool holds."""
    return [key for key in keys if cache.spool.get(key) is not None]


def eventually(check, attempts: int = 50) -> bool:
    import time

    for _ in range(attempts):
        if check():
            return True
        time.sleep(0.02)
    return False


def test_a_load_overtaken_by_notices_is_not_kept(vouched):
    def load():  # another thread takes a notice while this one reads the database
        vouched.forget(["a"])
        return b"read before the change committed"

    assert vouched.get("a", load) == b"read before the change committed"
    assert len(vouched.spool) == 0
    assert vouched.get("a", loader(b"A", [])) == b"A" and len(vouched.spool) == 1
