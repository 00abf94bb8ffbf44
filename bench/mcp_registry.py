"""The MCP Registry API in the benchmark: ``/v0.1/servers`` pages measured sequentially (the
first page, the pages after it by cursor, the latest versions, a search by name), and the
rate of an import of generated official-shaped servers, written as a run writes a page
(``protocols.mcp.imports.services.servers_apply``: validation, bulk agents, lifecycle),
then read again unchanged (a run that converged). The import writes in this process, with
no network: its rate is the registry's side of an import.

``python -m bench.mcp_registry --database-url …`` runs these rows alone on a database
already loaded (``python -m bench.firstquery setup --agents 100000``): the import of
``--servers`` servers first (its rate), then the pages through the production server
(bench.server), among the loaded agents and the servers just imported."""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.loadgen import percentile, requests_sequential

PAGE = "/v0.1/servers?limit=30"
OFFICIAL = "io.modelcontextprotocol.registry/official"
IMPORT_PAGE = 100


def _figures(seconds: list[float]) -> dict[str, Any]:
    ordered = sorted(seconds)
    return {
        "requests": len(ordered),
        "p50_ms": round(percentile(ordered, 50) * 1000, 3),
        "p95_ms": round(percentile(ordered, 95) * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
    }


def _checked(answers) -> list[dict]:
    failed = [a for a in answers if a.status != 200]
    if failed:
        from bench.database import BenchError

        raise BenchError(f"/v0.1/servers answered {failed[0].status}: {failed[0].body[:300]!r}")
    return [json.loads(a.body) for a in answers]


def _walk(port: int, requests: int) -> tuple[list[float], int]:
    """``requests`` pages in cursor order (from the first again after the last)."""
    seconds, servers, path = [], 0, PAGE
    for _ in range(requests):
        [answer] = requests_sequential(port, [path])
        [page] = _checked([answer])
        seconds.append(answer.seconds)
        servers += len(page["servers"])
        cursor = page.get("metadata", {}).get("nextCursor")
        path = f"{PAGE}&cursor={cursor}" if cursor else PAGE
    return seconds, servers


def servers_pages_measure(port: int, requests: int) -> dict[str, Any]:
    requests_sequential(port, [PAGE] * 5)  # warm the workers
    first = requests_sequential(port, [PAGE] * requests)
    _checked(first[:1])
    walked, seen = _walk(port, requests)
    latest = requests_sequential(port, [f"{PAGE}&version=latest"] * requests)
    search = requests_sequential(port, [f"{PAGE}&search=io.github"] * requests)
    _checked(latest[:1] + search[:1])
    return {
        "servers_seen": seen,
        "queries": {
            "first page": _figures([a.seconds for a in first]),
            "next pages": _figures(walked),
            "latest": _figures([a.seconds for a in latest]),
            "search": _figures([a.seconds for a in search]),
        },
    }


def _server(seed: int, number: int) -> dict:
    name = f"server-{seed}-{number}"
    return {
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
            "name": f"io.github.bench/{name}",
            "description": f"Benchmark MCP server {number}: tools for shops and bookings.",
            "version": "1.0.0",
            "remotes": [
                {
                    "type": "streamable-http",
                    "url": f"https://{name}.bench.example/mcp",
                    "headers": [{"name": "X-API-Key", "isRequired": True}],
                }
            ],
        },
        "_meta": {
            OFFICIAL: {
                "status": "active",
                "publishedAt": "2026-01-01T00:00:00Z",
                "updatedAt": "2026-01-01T00:00:00Z",
                "isLatest": True,
            }
        },
    }


def import_measure(count: int, seed: int) -> dict[str, Any]:
    """Import ``count`` servers a page at a time, then read them all again unchanged."""
    from protocols.mcp.imports.services import import_report, servers_apply
    from protocols.mcp.models import RegistrySource

    source, _ = RegistrySource.objects.get_or_create(
        url="https://registry.bench.example", defaults={"owner": "bench-import"}
    )
    items = [_server(seed, n) for n in range(count)]
    rates = {}
    for run in ("first", "again"):
        report = import_report()
        began = time.perf_counter()
        for start in range(0, count, IMPORT_PAGE):
            servers_apply(source, items[start : start + IMPORT_PAGE], report)
        seconds = time.perf_counter() - began
        rates[run] = {
            "seconds": round(seconds, 3),
            "servers_per_second": round(count / seconds, 1),
            "added": report["added"],
            "unchanged": report["unchanged"],
        }
    return {"servers": count, "page": IMPORT_PAGE, **rates}


def mcp_rows(port: int, args) -> dict[str, Any]:
    """The pages (every MCP endpoint is a server: the entities' here), then the import."""
    agents, requests, servers, seed = args.agents, args.requests, args.mcp_servers, args.seed
    say(f"/v0.1/servers pages at N={agents}: {requests} requests each")
    pages = servers_pages_measure(port, requests)
    imported = None
    if servers:
        say(f"importing {servers} MCP servers, then reading them again")
        imported = import_measure(servers, seed)
    return {"agents": agents, "pages": pages, "import": imported}


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    from bench import load
    from bench.server import Server, port_free

    parser = argparse.ArgumentParser(prog="python -m bench.mcp_registry", description=__doc__)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--servers", type=int, default=10_000, help="servers imported first")
    parser.add_argument("--requests", type=int, default=300, help="requests a page row")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="JSON results")
    args = parser.parse_args(argv)
    if "bench" not in args.database_url.rsplit("/", 1)[-1]:
        raise SystemExit("--database-url: the database's name must contain 'bench'")
    load.django_start(args.database_url)
    from registry.agents.models import Agent

    agents = Agent.objects.count()
    say(f"importing {args.servers} MCP servers among {agents} agents, then reading them again")
    imported = import_measure(args.servers, args.seed) if args.servers else None
    say(json.dumps({"import": imported}))
    load.database_analyze()
    port = port_free()
    with tempfile.TemporaryDirectory(prefix="registry-bench-mcp-") as tmp_name:
        server = Server(
            port=port,
            database_url=args.database_url,
            redis_url="",
            log_path=Path(tmp_name) / "g.log",
        )
        server.start()
        try:
            say(f"/v0.1/servers pages: {args.requests} requests each")
            pages = servers_pages_measure(port, args.requests)
        except BaseException:
            say(server.log())
            raise
        finally:
            server.stop()
    result = {"agents": agents, "pages": pages, "import": imported}
    print(json.dumps(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
