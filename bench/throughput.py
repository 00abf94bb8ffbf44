"""The throughput runs of python -m bench: the generator over a URL list (at random, or each
URL once in order), and make serve as shipped beside the bench's server."""

import argparse
from pathlib import Path
from typing import Any

from bench import discover, loadgen
from bench.database import BenchError
from bench.server import WORKERS, Server, port_free

# Each worker keeps the cards it fetched: warmed until each has had three fetches per card.
CARD_WARM_FETCHES = 3


def say(message: str) -> None:
    import sys

    print(message, file=sys.stderr, flush=True)


def throughput(
    name: str,
    paths: list[str],
    args: argparse.Namespace,
    port: int,
    generator: str,
    tmp: Path,
    headers: dict[str, str] | None = None,
    warm_requests: int = 0,
    addresses: tuple[str, ...] = (),
) -> loadgen.Throughput:
    run = _runner(name, paths, args, port, generator, tmp, headers, addresses=addresses)

    # A warm-up as long as the run (100,000 cards outgrow PostgreSQL's default shared
    # buffers, and a short one left the card fetch measuring a cold cache), repeated until
    # it has sent ``warm_requests``.
    warmed = run(args.duration).requests
    while warmed < warm_requests:
        warmed += run(args.duration).requests
    result = run(args.duration)
    # An answer that is not a 2xx (a 404, a 429) measures something else: stop.
    if result.errors > result.requests * 0.01:
        raise BenchError(f"{name}: {result.errors} of {result.requests} requests failed")
    return result


def _runner(
    name: str,
    paths: list[str],
    args: argparse.Namespace,
    port: int,
    generator: str,
    tmp: Path,
    headers: dict[str, str] | None = None,
    in_order: bool = False,
    addresses: tuple[str, ...] = (),
):
    """A function of seconds: one run of the generator over ``paths`` (``in_order``: each
    once while they last, else at random; ``addresses``: the built-in generator's client
    addresses)."""
    paths_file = tmp / f"{name}-paths.txt"
    paths_file.write_text("\n".join(paths) + "\n")

    def run(seconds: float) -> loadgen.Throughput:
        if generator == "wrk":
            return loadgen.throughput_wrk(
                port=port,
                paths_file=paths_file,
                duration=seconds,
                connections=args.connections,
                workdir=tmp,
                headers=headers,
                in_order=in_order,
            )
        return loadgen.throughput_python(
            port=port,
            paths=paths,
            duration=seconds,
            connections=args.connections,
            seed=args.seed,
            headers=headers,
            in_order=in_order,
            addresses=addresses,
        )

    return run


# Distinct-query throughput: a warm-up of this many URLs (worker start-up, the database's
# buffers), a third of the run long, before the run; neither repeats a URL.
DISTINCT_WARM_URLS = 2000


def throughput_distinct(
    name: str,
    pool: discover.DistinctQueries,
    share: int,
    args: argparse.Namespace,
    port: int,
    generator: str,
    tmp: Path,
    addresses: tuple[str, ...] = (),
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Throughput of queries that are each a first query: ``share`` URLs of ``pool`` never
    sent before in this run, in order; ``repeated`` counts the requests past their end (the
    generator starts them over), which then were not first queries. ``addresses``: the
    built-in generator's client addresses; ``headers``: sent with each request (a key)."""
    warm = _runner(
        f"{name}-warm",
        pool.take(DISTINCT_WARM_URLS),
        args,
        port,
        generator,
        tmp,
        headers,
        in_order=True,
        addresses=addresses,
    )
    warm(max(1.0, args.duration / 3))
    paths = pool.take(share)
    run = _runner(
        name, paths, args, port, generator, tmp, headers, in_order=True, addresses=addresses
    )
    result = run(args.duration)
    if result.errors > result.requests * 0.01:
        raise BenchError(f"{name}: {result.errors} of {result.requests} requests failed")
    return {
        **result.as_dict(),
        "urls": len(paths),
        "repeated": max(0, result.requests - len(paths)),
    }


def shipped_block(
    agents: int, card_paths: list[str], args: argparse.Namespace, port: int, tmp: Path
) -> dict[str, Any]:
    """``make serve`` exactly as shipped (bench.shipped) against the bench's own server and
    the bare application, all three driven by the built-in generator from 256 client
    addresses (wrk connects from one, which the shipped read limit would refuse)."""
    from bench.shipped import CLIENT_ADDRESSES, ShippedServer

    addresses = tuple(CLIENT_ADDRESSES)
    say(f"make serve as shipped at N={agents}: the built-in generator, {len(addresses)} clients")
    warm = CARD_WARM_FETCHES * WORKERS * len(card_paths)
    rows = {}
    bare = Server(
        port=port_free(),
        database_url=args.database_url,
        redis_url=args.redis_url,
        log_path=tmp / "bare-shipped.log",
        app="bench.bare",
    )
    bare.start()
    try:
        rows["bare"] = throughput(
            "bare-many", ["/"], args, bare.port, "python", tmp, addresses=addresses
        )
    finally:
        bare.stop()
    rows["card"] = throughput(
        "card-many", card_paths, args, port, "python", tmp, addresses=addresses
    )
    shipped = ShippedServer(
        port=port_free(),
        database_url=args.database_url,
        redis_url=args.redis_url,
        log_path=tmp / "shipped.log",
    )
    shipped.start()
    try:
        rows["served as shipped"] = throughput(
            "card-shipped",
            card_paths,
            args,
            shipped.port,
            "python",
            tmp,
            warm_requests=warm,
            addresses=addresses,
        )
    except BaseException:
        say(shipped.log())
        raise
    finally:
        shipped.stop()
    for name, figures in rows.items():
        say(f"  {name}: {figures.requests_per_second:.0f} req/s")
    return {
        "agents": agents,
        "clients": len(addresses),
        "rows": {name: figures.as_dict() for name, figures in rows.items()},
    }
