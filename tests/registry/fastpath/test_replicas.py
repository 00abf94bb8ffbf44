"""registry.fastpath.replicas: where a read goes (the router, the replica chosen, a recent
writer's WAL position), and what the card cache keeps of a replica's reads. The replicas
themselves, live, are tests/test_cluster.py's."""

import time

import psycopg
import pytest
from django.db import DEFAULT_DB_ALIAS, connection

from registry.agents.models import Agent
from registry.celery import SchedulerLead
from registry.fastpath import replicas
from registry.fastpath.notices import Listener, NoticedCache, own_connection_params
from registry.fastpath.replicas import (
    ReplicaRouter,
    ReplicaState,
    lsn_number,
    read_alias,
    reads_from,
)


@pytest.mark.database_independent
def test_a_wal_position_reads_as_a_number_that_orders_as_positions_do():
    assert lsn_number("0/16B3748") == 0x16B3748
    assert lsn_number("1/0") == 1 << 32
    assert lsn_number("1/0") > lsn_number("0/FFFFFFFF")
    assert lsn_number(None) is None


@pytest.mark.database_independent
def test_the_router_reads_where_the_request_was_sent_and_writes_on_the_primary():
    router = ReplicaRouter()
    assert router.db_for_read(Agent) is None  # no request routed: the primary
    with reads_from("replica2"):
        assert read_alias() == "replica2"
        assert router.db_for_read(Agent) == "replica2"
        assert router.db_for_write(Agent) == DEFAULT_DB_ALIAS
    assert read_alias() == DEFAULT_DB_ALIAS
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "registry")
    assert not router.allow_migrate("replica1", "registry")


def test_inside_a_transaction_every_read_is_the_primarys(db):
    # (The test runs inside one: what it wrote is on the primary only.)
    with reads_from("replica1"):
        assert read_alias() == DEFAULT_DB_ALIAS
        assert ReplicaRouter().db_for_read(Agent) is None


def states(monkeypatch, *seen: ReplicaState):
    monkeypatch.setattr(replicas, "replica_states", lambda: list(seen))


@pytest.mark.database_independent
def test_a_replica_too_far_behind_or_down_is_skipped(monkeypatch, settings):
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 5
    behind = ReplicaState("replica1", up=True, lag_seconds=6.0, replay_lsn=900)
    down = ReplicaState("replica2", up=False)
    states(monkeypatch, behind, down)
    assert replicas.replica_choose() == DEFAULT_DB_ALIAS
    current = ReplicaState("replica2", up=True, lag_seconds=0.2, replay_lsn=800)
    states(monkeypatch, behind, current)
    assert {replicas.replica_choose() for _ in range(4)} == {"replica2"}


@pytest.mark.database_independent
def test_a_recent_writer_reads_only_a_replica_that_replayed_its_write(monkeypatch):
    early = ReplicaState("replica1", up=True, lag_seconds=0.0, replay_lsn=100)
    later = ReplicaState("replica2", up=True, lag_seconds=0.1, replay_lsn=300)
    states(monkeypatch, early, later)
    assert {replicas.replica_choose(200) for _ in range(4)} == {"replica2"}
    assert replicas.replica_choose(301) == DEFAULT_DB_ALIAS
    assert {replicas.replica_choose(None) for _ in range(4)} == {"replica1", "replica2"}


@pytest.mark.database_independent
def test_only_a_public_read_goes_to_a_replica(monkeypatch):
    states(monkeypatch, ReplicaState("replica1", up=True, lag_seconds=0.0, replay_lsn=10))
    monkeypatch.setattr(replicas, "written_position", lambda meta: None)
    read = {"REQUEST_METHOD": "GET", "REMOTE_ADDR": "10.0.0.1"}
    assert replicas.read_alias_for(read, "/agents") == "replica1"
    assert replicas.read_alias_for({**read, "REQUEST_METHOD": "HEAD"}, "/a2a/agents/x") == (
        "replica1"
    )
    assert replicas.read_alias_for({**read, "REQUEST_METHOD": "POST"}, "/agents") == "default"
    assert replicas.read_alias_for(read, "/admin/registry/agent/") == "default"


@pytest.mark.postgres
def test_a_writes_wal_position_is_kept_for_its_key_and_its_address_only(db, settings):
    settings.DATABASE_READ_YOUR_WRITES_SECONDS = 30
    writer = {"REMOTE_ADDR": "10.0.0.1", "HTTP_AUTHORIZATION": "Bearer secret-of-alice"}
    replicas.written_record(writer)
    position = replicas.written_position(writer)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        assert 0 < position <= lsn_number(cursor.fetchone()[0])
    # The same key from another address, or the same address without it: still the writer.
    assert replicas.written_position({"REMOTE_ADDR": "10.0.0.9", **writer}) == position
    assert replicas.written_position({"REMOTE_ADDR": "10.0.0.1"}) == position
    assert replicas.written_position({"REMOTE_ADDR": "10.0.0.2"}) is None


@pytest.mark.database_independent
def test_the_card_cache_keeps_no_value_a_replica_read_before_replaying_a_notice(
    monkeypatch, tmp_path
):
    cache = NoticedCache("test_channel", max_bytes=1000, directory=str(tmp_path))
    monkeypatch.setattr(cache.listener, "current", lambda: True)
    cache.listener.replicas = True
    cache.listener.noticed_position = 500
    calls = []

    def load():
        calls.append(1)
        return b"card"

    monkeypatch.setattr(replicas, "_states", {})
    replicas._state("replica1").replay_lsn = 400  # behind the change noticed
    with reads_from("replica1"):
        assert cache.get("a", load) == b"card"
        assert cache.get("a", load) == b"card"
    assert len(calls) == 2 and len(cache.spool) == 0
    replicas._state("replica1").replay_lsn = 500  # replayed it
    with reads_from("replica1"):
        cache.get("a", load)
        cache.get("a", load)
    assert len(calls) == 3 and len(cache.spool) == 1


def test_one_scheduler_leads_and_another_takes_over_when_it_stops(db):
    first, second = SchedulerLead(), SchedulerLead()
    try:
        assert first.held()
        assert not second.held()
        assert first.held()  # still held, looked at again
        first.release()
        assert second.held()
        assert not first.held()
    finally:
        first.release()
        second.release()


@pytest.mark.postgres
def test_the_listener_notes_the_primarys_wal_position_past_the_notices_it_takes(db):
    taken = []
    listener = Listener("test_replicas_channel", taken.append)
    listener.replicas = True
    try:
        assert listener.current()
        assert taken == [None] and listener.noticed_position > 0
        with psycopg.connect(autocommit=True, **own_connection_params(connection)) as other:
            other.execute("SELECT pg_notify('test_replicas_channel', 'a,b')")
            (sent,) = other.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        deadline = time.monotonic() + 5
        while taken[-1] != ["a", "b"] and time.monotonic() < deadline:
            assert listener.current()
            time.sleep(0.01)
        assert taken[-1] == ["a", "b"]
        assert listener.noticed_position >= lsn_number(sent)
    finally:
        listener.close()
