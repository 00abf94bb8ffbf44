"""Reads on a streaming replica, measured beside the primary-only rows, and what each agent
costs: ``python -m bench.replica [--agents 5000]``.

On a PostgreSQL primary and its streaming replica of their own (``bench.pgpair``): the
generated cards bulk-loaded as ``python -m bench`` loads them, the replica's lag sampled
every 20 ms meanwhile, and the WAL the load wrote; the write-ahead log of single
registrations through the API; every table's and index's bytes and rows per agent; then
the card fetch's throughput and distinct first discovery queries through gunicorn, once
with every read on the primary and once with ``DATABASE_REPLICA_URLS`` (the same queries,
each first for the server that answers it: each keeps its page cache in its own memory).
Both servers, the primary and the replica share this machine's cores: the rows compare
the two paths, not two machines.
"""

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

from bench import discover, load, loadgen
from bench.database import BenchError
from bench.pgpair import PostgresPair
from bench.server import Server, port_free
from bench.throughput import throughput

DATABASE = "registry_bench_replica"


def lsn(text: str) -> int:
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


class LagSampler(threading.Thread):
    """The replica's replay lag, every 20 ms until stopped: how far its replay is behind the
    primary's WAL (bytes), and how long each WAL position the primary had reached took to
    be replayed (seconds)."""

    def __init__(self, pair: PostgresPair):
        super().__init__(daemon=True)
        self.primary = psycopg.connect(pair.url(DATABASE), autocommit=True)
        self.replica = psycopg.connect(pair.url(DATABASE, replica=True), autocommit=True)
        self.bytes: list[int] = []
        self.seconds: list[float] = []
        self.stopping = threading.Event()

    def run(self):
        pending: list[tuple[int, float]] = []  # (a position the primary had written, when)
        while not self.stopping.wait(0.02):
            (written,) = self.primary.execute("SELECT pg_current_wal_lsn()::text").fetchone()
            pending.append((lsn(written), time.monotonic()))
            (replayed,) = self.replica.execute("SELECT pg_last_wal_replay_lsn()::text").fetchone()
            replayed = lsn(replayed)
            now = time.monotonic()
            self.bytes.append(max(0, lsn(written) - replayed))
            while pending and pending[0][0] <= replayed:
                self.seconds.append(now - pending.pop(0)[1])

    def report(self) -> dict[str, Any]:
        self.stopping.set()
        self.join()
        self.primary.close()
        self.replica.close()
        ordered = sorted(self.seconds) or [0.0]
        return {
            "samples": len(self.bytes),
            "max_bytes_behind": max(self.bytes, default=0),
            "p95_seconds_to_replay": round(loadgen.percentile(ordered, 95), 3),
            "max_seconds_to_replay": round(ordered[-1], 3),
        }


def wal_position(pair: PostgresPair) -> int:
    with psycopg.connect(pair.url(DATABASE), autocommit=True) as primary:
        return lsn(primary.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0])


SIZES_SQL = """
SELECT t.relname, t.reltuples::bigint, pg_relation_size(t.oid),
       pg_indexes_size(t.oid), coalesce(pg_total_relation_size(t.reltoastrelid), 0)
FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = 'public' AND t.relkind = 'r'
ORDER BY pg_total_relation_size(t.oid) DESC
"""


def sizes(pair: PostgresPair, agents: int) -> dict[str, Any]:
    """Rows, table bytes, index bytes and TOAST bytes per agent, by table (those of 16
    bytes an agent or more), and the sum of every table."""
    with psycopg.connect(pair.url(DATABASE), autocommit=True) as primary:
        rows = primary.execute(SIZES_SQL).fetchall()
    tables = {
        name: {
            "rows_per_agent": round(count / agents, 2),
            "table_bytes_per_agent": round(table / agents),
            "index_bytes_per_agent": round(indexes / agents),
            "toast_bytes_per_agent": round(toast / agents),
        }
        for name, count, table, indexes, toast in rows
        if table + indexes + toast >= 16 * agents
    }
    total = sum(table + indexes + toast for _, _, table, indexes, toast in rows)
    return {"tables": tables, "total_bytes_per_agent": round(total / agents)}


def registrations_wal(pair: PostgresPair, port: int, key: str, count: int, seed: int) -> float:
    """The WAL bytes of one registration through the API (``POST /a2a/agents``), averaged
    over ``count`` new cards."""
    import http.client

    from bench.generate import card_generate

    before = wal_position(pair)
    for index in range(count):
        card = card_generate(seed + 1, 10_000_000 + index)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = json.dumps({"card": card})
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        connection.request("POST", "/a2a/agents", body=body, headers=headers)
        answer = connection.getresponse()
        answer.read()
        connection.close()
        if answer.status != 201:
            raise BenchError(f"a registration answered {answer.status}")
    return round((wal_position(pair) - before) / count)


class ReadServer(Server):
    """The bench's gunicorn, its reads on the replica when given one (no pages measured:
    no static files collected)."""

    def __init__(self, *, replica_url: str = "", **kwargs):
        super().__init__(**kwargs)
        self.replica_url = replica_url

    def environment(self) -> dict[str, str]:
        env = super().environment()
        if self.replica_url:
            env["DATABASE_REPLICA_URLS"] = self.replica_url
        return env

    def collects_static(self) -> bool:
        return False


def reads_measure(server: Server, args, tmp: Path, cards: list[str], kind_seed: int) -> dict:
    server.start()
    try:
        discover.discovery_warm(server.port, args.seed)
        fetch = throughput("card-fetch", cards, args, server.port, "python", tmp)
        paths = discover.query_paths("text", args.requests, kind_seed)
        first = discover.discovery_measure(server.port, "text", paths)
        return {"card_fetch": fetch.as_dict(), "discovery_first_text": first}
    finally:
        server.stop()


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.replica", description=__doc__)
    parser.add_argument("--agents", type=int, default=5000)
    parser.add_argument("--duration", type=float, default=10, help="seconds per card run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--requests", type=int, default=200, help="first queries per server")
    parser.add_argument("--registrations", type=int, default=50, help="for the WAL a write")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--servers",
        choices=["both", "replica"],
        default="both",
        help="replica: the reads on the replica only (a quick check that they run)",
    )
    parser.add_argument("--out", type=Path, default=load.ROOT / "bench" / "replica_results.json")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = options(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-replica-"))
    tmp.chmod(0o755)
    pair = PostgresPair(port_free(), port_free(), str(tmp / "postgres")).start()
    try:
        pair.database_create(DATABASE)
        load.django_start(pair.url(DATABASE))
        load.database_migrate()
        sampler = LagSampler(pair)
        began = wal_position(pair)
        sampler.start()
        phase = load.agents_load(
            phase="all", seed=args.seed, start=0, stop=args.agents, batch_size=2000
        )
        loaded = wal_position(pair)
        lag = sampler.report()
        load.database_analyze()
        pair.replica_caught_up(timeout=120)
        cards, key = load.card_paths(), load.api_key()
        common = {"database_url": pair.url(DATABASE), "redis_url": ""}
        primary_only = ReadServer(port=port_free(), log_path=tmp / "primary.log", **common)
        replica = ReadServer(
            port=port_free(),
            log_path=tmp / "replica.log",
            replica_url=pair.url(DATABASE, replica=True),
            **common,
        )
        result = {
            "agents": args.agents,
            "load": phase.as_dict(),
            "bulk_load_wal_bytes_per_agent": round((loaded - began) / args.agents),
            "replica_lag_during_bulk_load": lag,
        }
        if args.servers == "both":
            result["reads_on_primary"] = reads_measure(primary_only, args, tmp, cards, args.seed)
        result["reads_on_replica"] = reads_measure(replica, args, tmp, cards, args.seed)
        replica.start()
        try:
            result["registration_wal_bytes"] = registrations_wal(
                pair, replica.port, key, args.registrations, args.seed
            )
        finally:
            replica.stop()
        result["sizes"] = sizes(pair, args.agents)
    finally:
        pair.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "sizes"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
