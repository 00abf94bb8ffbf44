"""The PostgreSQL pair the replica tests, the benchmark and make cluster start
(bench/pgpair.py): a primary and a streaming replica that follows it."""

import psycopg
import pytest

pytestmark = pytest.mark.database_independent


def test_the_replica_replays_the_primarys_writes_and_refuses_its_own(postgres_pair):
    postgres_pair.database_create("pair_check")
    with psycopg.connect(postgres_pair.url("pair_check"), autocommit=True) as primary:
        primary.execute("CREATE TABLE t (n int)")
        primary.execute("INSERT INTO t VALUES (1), (2)")
    postgres_pair.replica_caught_up()
    with psycopg.connect(postgres_pair.url("pair_check", replica=True), autocommit=True) as r:
        assert r.execute("SELECT pg_is_in_recovery(), sum(n) FROM t").fetchone() == (True, 3)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            r.execute("INSERT INTO t VALUES (3)")


def test_a_stopped_replica_catches_up_when_started_again(postgres_pair):
    postgres_pair.replica_stop()
    with psycopg.connect(postgres_pair.url("pair_check"), autocommit=True) as primary:
        primary.execute("INSERT INTO t VALUES (10)")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(postgres_pair.url("pair_check", replica=True), connect_timeout=2)
    postgres_pair.replica_start()
    postgres_pair.replica_caught_up()
    with psycopg.connect(postgres_pair.url("pair_check", replica=True)) as replica:
        assert replica.execute("SELECT sum(n) FROM t").fetchone() == (13,)
