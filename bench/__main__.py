"""python -m bench: load N generated agents, start gunicorn, measure, report.

The order matters: discovery is measured at --small agents; more are loaded (the server
keeps running) up to --middle, where the throughput rows are driven by the load generator
(the bare WSGI application, /healthz, card fetch, discovery); the rest are loaded up to
--agents, where discovery, the pages and the throughput rows are measured again, with
heartbeats and A2A discovery messages."""

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import discover, entities, loadgen, mcp_registry, modes, pages, report, targets
from bench.database import BenchError, database_config, database_reset
from bench.load import ROOT
from bench.loadgen import generator_choice
from bench.server import WORKER_CLASS, WORKERS, Server, port_free
from bench.throughput import (
    CARD_WARM_FETCHES,
    _runner,
    shipped_block,
    throughput,
    throughput_distinct,
)

BATCH_SIZE = 2000


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--agents", type=int, default=100_000, help="agents at the end")
    parser.add_argument("--small", type=int, default=1000, help="agents at the first point")
    parser.add_argument(
        "--middle", type=int, default=5000, help="agents at the first throughput point"
    )
    parser.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/registry_bench",
        help="dropped and created by the run; its name must contain 'bench' "
        "(or sqlite:///path/bench.sqlite3, deleted first)",
    )
    parser.add_argument("--duration", type=float, default=15, help="seconds per throughput run")
    parser.add_argument("--connections", type=int, default=32, help="concurrent clients")
    parser.add_argument("--requests", type=int, default=300, help="requests per discovery query")
    parser.add_argument(
        "--entities", type=int, default=100_000, help="entities at the end (0: no entity rows)"
    )
    parser.add_argument(
        "--small-entities", type=int, default=1000, help="entities at the first point"
    )
    parser.add_argument("--mcp-servers", type=int, default=10_000, help="MCP servers imported")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results.json")
    parser.add_argument("--port", type=int, default=0, help="server port (default: a free one)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated agents")
    parser.add_argument(
        "--redis-url", default="", help="REDIS_URL for the server (default: per-process cache)"
    )
    parser.add_argument(
        "--private-share",
        type=float,
        default=0.0,
        help="share of the agents made private (0.1: a tenth); the public rows measure the rest",
    )
    parser.add_argument(
        "--generator",
        choices=["auto", "wrk", "python"],
        default="auto",
        help="load generator (auto: wrk when installed)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.small < args.middle < args.agents:
        parser.error("need 1 <= --small < --middle < --agents")
    if args.entities and not 1 <= args.small_entities < args.entities:
        parser.error("need 1 <= --small-entities < --entities (or --entities 0)")
    if args.duration <= 0 or args.connections < 1 or args.requests < 1:
        parser.error("--duration, --connections and --requests must be positive")
    if not 0 <= args.private_share < 1:
        parser.error("need 0 <= --private-share < 1")
    return args


def _command_output(command: list[str]) -> str:
    try:
        run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    except OSError:
        return ""
    return run.stdout


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def commit() -> dict[str, Any]:
    """The code measured: HEAD and the tracked files changed in the working tree."""
    head = _command_output(["git", "rev-parse", "--short", "HEAD"]).strip() or "unknown"
    status = _command_output(["git", "status", "--porcelain", "--untracked-files=no"])
    return {"head": head, "changed_files": [line[3:] for line in status.splitlines()]}


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def discovery(port: int, agents: int, paths: dict[str, list[str]]) -> dict[str, Any]:
    queries = {}
    for kind, kind_paths in paths.items():
        say(f"  discovery '{kind}' at N={agents}: {len(kind_paths)} requests")
        queries[kind] = discover.discovery_measure(port, kind, kind_paths)
    return {"agents": agents, "queries": queries}


def discovery_distinct(
    port: int, agents: int, pools: dict[str, discover.DistinctQueries], count: int
) -> dict[str, Any]:
    """One client, ``count`` queries of each distinct kind, none asked before in the run."""
    queries = {}
    for kind, pool in pools.items():
        say(f"  distinct '{kind}' at N={agents}: {count} requests")
        queries[kind] = discover.discovery_measure(port, kind, pool.take(count))
    say(f"  distinct 'text' in modes hybrid and keyword at N={agents}: {count} requests each")
    queries.update(modes.modes_single(port, pools["text"], count))
    return {"agents": agents, "queries": queries}


def bare_measure(args: argparse.Namespace, generator: str, tmp: Path) -> loadgen.Throughput:
    """The limit: the bare WSGI application (bench.bare), served by the same gunicorn with
    the same workers, while the registry's server idles."""
    server = Server(
        port=port_free(),
        database_url=args.database_url,
        redis_url=args.redis_url,
        log_path=tmp / "bare.log",
        app="bench.bare",
    )
    server.start()
    try:
        return throughput("bare", ["/"], args, server.port, generator, tmp)
    finally:
        server.stop()


# The discovery kinds measured for throughput, as in bench.discover.QUERY_KINDS.
THROUGHPUT_DISCOVERY = ("text", "filter", "facets")


def throughput_block(
    agents: int,
    card_paths: list[str],
    args: argparse.Namespace,
    port: int,
    generator: str,
    tmp: Path,
    pools: dict[str, discover.DistinctQueries] | None = None,
    shares_left: int = 1,
) -> dict[str, Any]:
    """At one size: the bare application, /healthz, card fetches and discovery (repeated
    URL lists, then ``pools``' distinct queries: ``1/shares_left`` of what they have left),
    each driven by the same generator, connections and duration."""
    say(f"throughput at N={agents} with {generator}, {args.duration:g} s each")
    rows = {"bare": bare_measure(args, generator, tmp)}
    rows["healthz"] = throughput("healthz", ["/healthz"], args, port, generator, tmp)
    # Each worker keeps the cards it fetched (registry.fastpath.spool): warmed until the
    # workers have had three fetches per card each, so each holds some 95% of them
    # (1 - e^-3), as a server that has run a while does; the run then measures that steady
    # state.
    warm = CARD_WARM_FETCHES * WORKERS * len(card_paths)
    rows["card"] = throughput("card", card_paths, args, port, generator, tmp, warm_requests=warm)
    # The same cards pinned to their first version (protocols.a2a.serving.cards: immutable,
    # cached as the latest are), warmed the same way.
    pinned = [f"{path}?version=1" for path in card_paths]
    rows["card pinned"] = throughput(
        "card-pinned", pinned, args, port, generator, tmp, warm_requests=warm
    )
    for kind in THROUGHPUT_DISCOVERY:
        paths = discover.query_paths(kind, args.requests, args.seed)
        rows[f"discover {kind}"] = throughput(f"discover-{kind}", paths, args, port, generator, tmp)
    for name, figures in rows.items():
        say(f"  {name}: {figures.requests_per_second:.0f} req/s")
    block = {name: figures.as_dict() for name, figures in rows.items()}
    # Queries never asked before in the run: the same text queries in modes hybrid and
    # keyword, then half of what is left of each kind's URLs here, the rest at the next size.
    if pools:
        share = pools["text"].left() // (2 * shares_left)
        block.update(modes.modes_throughput(pools["text"], share, args, port, generator, tmp))
    for kind, pool in (pools or {}).items():
        share = pool.left() // shares_left
        name = f"distinct {kind}"
        block[name] = throughput_distinct(
            name.replace(" ", "-"), pool, share, args, port, generator, tmp
        )
        say(f"  {name}: {block[name]['requests_per_second']:.0f} req/s")
    return {"agents": agents, "rows": block}


def bench(args: argparse.Namespace) -> dict[str, Any]:
    from bench import load  # Django is configured by django_start, before any model import

    database_config(args.database_url)
    generator = generator_choice(args.generator)
    started_at = datetime.now(UTC).replace(microsecond=0).isoformat()
    code = commit()  # before anything is imported: the code that runs is the code recorded
    say(f"resetting {args.database_url}")
    database_reset(args.database_url)
    load.django_start(args.database_url)
    load.database_migrate()
    checked = load.cards_check(args.seed, args.agents)
    say(f"{checked} generated cards checked with card_validate: all valid")

    phases = []

    def load_to(phase: str, start: int, stop: int) -> None:
        say(f"loading agents {start}..{stop - 1}")
        phases.append(
            load.agents_load(
                phase=phase, seed=args.seed, start=start, stop=stop, batch_size=BATCH_SIZE
            )
        )
        if args.private_share:
            private = load.agents_make_private(args.seed, args.private_share)
            say(f"{private} agents made private (--private-share {args.private_share:g})")
        live = load.endpoints_make_live(args.seed)
        say(f"{live} endpoints given a recent heartbeat (liveOnly keeps their agents)")
        say(f"{load.trust_spread(args.seed)} agents given trust scores (minTrust, sort=trust)")
        load.database_analyze()

    load_to("first", 0, args.small)
    query_paths = {
        kind: discover.query_paths(kind, args.requests, args.seed) for kind in discover.QUERY_KINDS
    }
    # Distinct queries: every URL sent once in the run, whatever row sends it.
    pools = discover.distinct_pools(args.seed)
    port = args.port or port_free()
    with tempfile.TemporaryDirectory(prefix="registry-bench-") as tmp_name:
        tmp = Path(tmp_name)
        server = Server(
            port=port,
            database_url=args.database_url,
            redis_url=args.redis_url,
            log_path=tmp / "gunicorn.log",
        )
        say(f"starting gunicorn ({WORKERS} workers) on 127.0.0.1:{port}")
        server.start()
        try:
            discover.discovery_warm(port, args.seed)
            small = discovery(port, args.small, query_paths)
            load_to("middle", args.small, args.middle)
            distinct = {"middle": discovery_distinct(port, args.middle, pools, args.requests)}
            middle = throughput_block(
                args.middle, load.card_paths(), args, port, generator, tmp, pools, 2
            )
            load_to("rest", args.middle, args.agents)
            full = discovery(port, args.agents, query_paths)
            distinct["full"] = discovery_distinct(port, args.agents, pools, args.requests)

            card_paths = load.card_paths()
            ids = [path.rsplit("/", 1)[1] for path in card_paths]
            page_paths = {
                kind: pages.page_paths(kind, args.requests, args.seed, ids)
                for kind in pages.PAGE_KINDS
            }
            say(f"pages at N={args.agents}: {args.requests} requests each")
            page_figures = pages.pages_measure(port, page_paths)
            at_full = throughput_block(
                args.agents, card_paths, args, port, generator, tmp, pools, 1
            )
            shipped = shipped_block(args.agents, card_paths, args, port, tmp)
            beats = load.heartbeat_paths(args.seed)
            say(f"heartbeats of {len(beats)} live endpoints, {generator}, {args.duration:g} s")
            key = {"Authorization": f"Bearer {load.api_key()}"}
            heartbeat = throughput("heartbeat", beats, args, port, generator, tmp, key)
            revives = load.heartbeat_paths(args.seed, live=False)
            say(f"heartbeats reviving {len(revives)} endpoints not live, each once")
            reviving = _runner(
                "heartbeat-reviving", revives, args, port, generator, tmp, key, in_order=True
            )
            heartbeat_reviving = reviving(args.duration)
            searches, messages = discover.throughput_pairs(args.requests, args.seed)
            say(f"GET /discover/agents?q= and the same queries as A2A messages, {generator}")
            discover.a2a_answer_check(port, searches[0], messages[0])
            discover_get = throughput("discover", searches, args, port, generator, tmp)
            a2a_message = throughput(
                "a2a-discover", messages, args, port, generator, tmp, discover.A2A_HEADERS
            )
            ard_search = throughput(
                "ard-search",
                discover.ard_search_lines(searches),
                args,
                port,
                generator,
                tmp,
                discover.ARD_HEADERS,
            )
            say(f"building the AI Catalog at N={args.agents}")
            catalog = discover.catalog_build_measure()
            entity_figures = entities.entities_phases(args, port) if args.entities else None
            mcp = mcp_registry.mcp_rows(port, args)
            rss, semantic_rss = server.workers_rss_mib(), server.semantic_rss_mib()
            say(f"resident memory after the run: workers {rss}, service {semantic_rss} MiB")
        except BaseException:
            say(server.log())
            raise
        finally:
            server.stop()

    import gunicorn

    at_full["rows"]["heartbeat"] = heartbeat.as_dict()
    at_full["rows"]["heartbeat reviving"] = heartbeat_reviving.as_dict()
    results: dict[str, Any] = {
        "meta": {
            "started_at": started_at,
            "commit": code,
            "machine": machine(),
            "database": load.database_info(),
            "server": {
                "program": "gunicorn",
                "version": gunicorn.__version__,
                "workers": WORKERS,
                "worker_class": WORKER_CLASS,
            },
            "generator": {
                "name": generator,
                "version": loadgen.wrk_version() if generator == "wrk" else "built-in",
            },
            "options": {
                "agents": args.agents,
                "small": args.small,
                "middle": args.middle,
                "duration": args.duration,
                "connections": args.connections,
                "requests": args.requests,
                "entities": args.entities,
                "small_entities": args.small_entities,
                "mcp_servers": args.mcp_servers,
                "seed": args.seed,
                "redis": bool(args.redis_url),
                "private_share": args.private_share,
            },
        },
        "load": [phase.as_dict() for phase in phases],
        "discovery": {"small": small, "full": full},
        "distinct": distinct,
        "pages": {"agents": args.agents, "pages": page_figures},
        "throughput": {"middle": middle, "full": at_full},
        "shipped": shipped,
        "pairs": {
            "discover": discover_get.as_dict(),
            "a2a-discover": a2a_message.as_dict(),
            "ard-search": ard_search.as_dict(),
        },
        "catalog": catalog,
        "memory": {"workers_rss_mib": rss, "semantic_service_rss_mib": semantic_rss},
    }
    if entity_figures is not None:
        results["entities"] = entity_figures
    results["mcp_registry"] = mcp
    results["targets"] = targets.targets_evaluate(results)
    return results


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    try:
        results = bench(args)
    except BenchError as exc:
        say(f"bench: {exc}")
        return 2
    summary = report.results_write(results, args.out)
    print(report.table_text(results))
    say(f"\nwrote {args.out} and {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
