"""The public rows with part of the registry withheld from the public: the card fetch and
first discovery queries, on a database already loaded (``python -m bench.firstquery
setup``), through the production server (bench.server) with its embedding service, in
three phases on one machine in one run:

1. ``before``: every agent listed, the server as ``make serve`` ships it;
2. ``withheld``: a share of the agents (``--share``, a tenth by default, chosen by
   ``--seed``) withheld (``--how``: ``quarantine``, moderation's decision, through
   ``registry.moderation.services``, the server with ``REGISTRY_ADMISSION=review``; or
   ``private``, the owner's visibility, through ``registry.agents.visibility``);
3. ``after``: the same agents restored, the server as in 1.

Each phase starts the server afresh, warms the card fetch over the cards that stay public
in every phase (so the three phases fetch the same cards), then runs ``--rounds`` rounds of
the card fetch and each ``--kinds`` row (URLs no round sent before). The last line has each
row's median in each phase and the withheld phase's ratio to the mean of the other two.

    python -m bench.withheld --database-url postgres://…/registry_bench5k --rounds 2

``--alternate`` (PostgreSQL) measures the two states side by side instead, so that the
machine's drift over the run falls on both alike: the database is copied
(``CREATE DATABASE … TEMPLATE``, as ``<name>_withheld``), the share withheld in the copy,
and each round starts the server on one database, then on the other (the public one first
in odd rounds, the copy first in even ones), each warmed and measured as a phase's round
is. The last line has each row's median in both states, each round's withheld / public
ratio (``rounds_ratio``) and their median (``ratio``).

``--readers`` (with ``--alternate``) measures the withheld state's discovery rows again as
two keyed callers: ``[key]``, a key whose owner reads nothing withheld, and ``[admin]``, an
admin key, who reads every withheld agent (its text queries match their words too, row by
row: registry.discovery.search). ``callers_ratio``: each against the same round's
anonymous row.
"""

import argparse
import contextlib
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench import discover
from bench.throughput import say, throughput, throughput_distinct


def _withheld_ids(share: float, seed: int) -> list:
    from registry.agents.models import Agent

    ids = sorted(Agent.objects.values_list("pk", flat=True))
    return sorted(random.Random(seed).sample(ids, round(len(ids) * share)), key=str)


def _quarantine(ids: list, withheld: bool) -> None:
    from registry.agents.models import Agent
    from registry.moderation.services import agent_quarantine, agent_release

    for number, agent in enumerate(Agent.objects.filter(pk__in=ids).order_by("pk"), 1):
        if withheld:
            agent_quarantine(agent=agent, reason="benchmark: withheld")
        else:
            agent_release(agent=agent)
        if number % 1000 == 0:
            say(f"  {'withheld' if withheld else 'restored'} {number}/{len(ids)}")


def _private(ids: list, withheld: bool) -> None:
    from django.db import transaction

    from registry.agents.models import Agent
    from registry.agents.visibility import agent_visibility_change

    visibility = Agent.Visibility.PRIVATE if withheld else Agent.Visibility.PUBLIC
    for start in range(0, len(ids), 500):
        with transaction.atomic():
            for agent in Agent.objects.filter(pk__in=ids[start : start + 500]):
                agent_visibility_change(agent=agent, asked=(visibility, []))


# How a phase withholds (True) or restores (False) the agents, and the server's variables
# while they are withheld.
HOW = {
    "quarantine": (_quarantine, {"REGISTRY_ADMISSION": "review"}),
    "private": (_private, {}),
}


def _phase(
    name: str,
    args,
    port: int,
    generator: str,
    cards: list,
    pools: dict,
    database_url=None,
    callers: dict | None = None,
) -> list:
    """``callers``: each discovery row again as each of these callers (a name: the headers
    it sends), as the row ``distinct <kind> [<name>]``."""
    from bench.server import Server

    rounds = []
    with tempfile.TemporaryDirectory(prefix="registry-bench-withheld-") as tmp_name:
        tmp = Path(tmp_name)
        server = Server(
            port=port,
            database_url=database_url or args.database_url,
            redis_url="",
            log_path=tmp / "g.log",
        )
        server.start(timeout=args.start_timeout)
        try:
            say(f"{name}: warming the card fetch")
            from bench.server import WORKERS
            from bench.throughput import CARD_WARM_FETCHES

            throughput(
                "card",
                cards,
                args,
                port,
                generator,
                tmp,
                warm_requests=CARD_WARM_FETCHES * WORKERS * len(cards),
            )
            for number in range(args.rounds):
                rates = {"card": throughput("card", cards, args, port, generator, tmp)}
                rates["card"] = rates["card"].requests_per_second
                for kind, pool in pools.items():
                    # Anonymous first, then each keyed caller: the URLs each row takes are new.
                    for caller, headers in {"": None, **(callers or {})}.items():
                        row = throughput_distinct(
                            f"distinct-{kind.replace('+', '-')}" + (f"-{caller}" if caller else ""),
                            pool,
                            args.share_urls,
                            args,
                            port,
                            generator,
                            tmp,
                            headers=headers,
                        )
                        label = f"distinct {kind}" + (f" [{caller}]" if caller else "")
                        rates[label] = row["requests_per_second"]
                rounds.append(rates)
                line = {k: round(v) for k, v in rates.items()}
                say(json.dumps({"phase": name, "round": number + 1, **line}))
        finally:
            server.stop()
    return rounds


@contextlib.contextmanager
def _environment(variables: dict) -> Iterator[None]:
    """The process's environment with ``variables`` set (the server started inside reads
    them), as it was again after."""
    saved = {key: os.environ.get(key) for key in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _database_copy(database_url: str) -> str:
    """A copy of the database (PostgreSQL's ``TEMPLATE``), as ``<name>_withheld``; its URL."""
    import psycopg

    base, _, name = database_url.rpartition("/")
    copy = f"{name}_withheld"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{copy}"')
        admin.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{name}"')
    return f"{base}/{copy}"


def alternate(args, generator: str) -> dict:
    """The public and the withheld database measured round by round, alternating."""
    from bench import load
    from bench.server import port_free

    copy_url = _database_copy(args.database_url)
    load.django_start(copy_url)  # (the rows the copy withholds, as the original holds them)
    withhold, variables = HOW[args.how]
    ids = _withheld_ids(args.share, args.seed)
    hidden = {f"/a2a/agents/{pk}" for pk in ids}
    cards = [path for path in load.card_paths() if path not in hidden]
    started = time.monotonic()
    withhold(ids, True)
    say(f"the copy: {len(ids)} agents withheld ({args.how}) in {time.monotonic() - started:.0f} s")
    callers = _callers() if args.readers else {}
    pools = {kind: discover.DistinctQueries(kind, args.seed) for kind in args.kinds.split(",")}
    states = {"public": (args.database_url, {}), "withheld": (copy_url, variables)}
    measured = {"public": [], "withheld": []}
    rounds = args.rounds
    args.rounds = 1  # (each state's server measures one round at a time)
    for number in range(rounds):
        order = ["public", "withheld"] if number % 2 == 0 else ["withheld", "public"]
        for state in order:
            url, extra = states[state]
            with _environment(extra):
                measured[state] += _phase(
                    state,
                    args,
                    port_free(),
                    generator,
                    cards,
                    pools,
                    url,
                    callers if state == "withheld" else None,
                )
    return alternate_summary(measured)


def _callers() -> dict[str, dict[str, str]]:
    """Two keyed callers of the withheld database: ``key``, whose owner has no agent and
    no group (it reads what the public reads, as a keyed caller), and ``admin``, who may
    read every withheld agent (its text queries match their words too)."""
    from registry.access.keys import api_key_create

    _, plain = api_key_create(owner="bench-reader", label="bench: a keyed caller")
    _, admin = api_key_create(owner="bench-admin", admin=True, label="bench: an admin")
    return {
        "key": {"Authorization": f"Bearer {plain}"},
        "admin": {"Authorization": f"Bearer {admin}"},
    }


def alternate_summary(measured: dict[str, list[dict]]) -> dict:
    """Each state's median per row, each round's withheld / public ratio (the two servers
    of one round paired) and the ratios' median."""
    median = {
        state: {row: round(statistics.median(r[row] for r in found)) for row in found[0]}
        for state, found in measured.items()
    }
    per_round = {
        row: [
            round(w[row] / p[row], 3)
            for p, w in zip(measured["public"], measured["withheld"], strict=True)
        ]
        for row in median["public"]
    }
    ratio = {row: round(statistics.median(values), 3) for row, values in per_round.items()}
    # The keyed callers' rows (withheld only): each against the same round's anonymous row.
    callers = {
        row: [round(w[row] / w[row.partition(" [")[0]], 3) for w in measured["withheld"]]
        for row in median["withheld"]
        if row not in median["public"]
    }
    callers_ratio = {row: round(statistics.median(v), 3) for row, v in callers.items()}
    found = {"median": median, "rounds_ratio": per_round, "ratio": ratio}
    return {**found, "callers_ratio": callers_ratio} if callers else found


def main(argv: list[str] | None = None) -> int:
    from bench import load
    from bench.loadgen import generator_choice
    from bench.server import port_free

    parser = argparse.ArgumentParser(prog="python -m bench.withheld", description=__doc__)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--how", choices=sorted(HOW), default="quarantine")
    parser.add_argument("--share", type=float, default=0.1, help="of the listed agents")
    parser.add_argument("--kinds", default="text,filter,text+filter", help="comma-separated")
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--share-urls", type=int, default=4000, help="URLs a row may send")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--start-timeout", type=float, default=180, help="seconds")
    parser.add_argument("--generator", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument(
        "--alternate", action="store_true", help="the two states round by round (PostgreSQL)"
    )
    parser.add_argument(
        "--readers",
        action="store_true",
        help="with --alternate: the withheld state's discovery rows again with a key, and "
        "with an admin key (who reads the withheld agents)",
    )
    args = parser.parse_args(argv)
    if args.readers and not args.alternate:
        parser.error("--readers needs --alternate")
    generator = generator_choice(args.generator)
    if args.alternate:
        found = alternate(args, generator)
        say(json.dumps({"how": args.how, "share": args.share, "alternate": True, **found}))
        return 0
    load.django_start(args.database_url)
    withhold, variables = HOW[args.how]
    ids = _withheld_ids(args.share, args.seed)
    hidden = {f"/a2a/agents/{pk}" for pk in ids}
    cards = [path for path in load.card_paths() if path not in hidden]
    say(f"{len(ids)} agents to withhold ({args.how}); {len(cards)} public cards fetched")
    pools = {kind: discover.DistinctQueries(kind, args.seed) for kind in args.kinds.split(",")}
    port = port_free()
    phases = {}
    withhold(ids, False)  # as a run stopped in its second phase may have left them
    for name in ("before", "withheld", "after"):
        if name != "before":
            started = time.monotonic()
            try:
                withhold(ids, name == "withheld")
            except BaseException:
                withhold(ids, False)
                raise
            say(f"{name}: {len(ids)} agents in {time.monotonic() - started:.0f} s")
        try:
            with _environment(variables if name == "withheld" else {}):
                phases[name] = _phase(name, args, port, generator, cards, pools)
        except BaseException:
            withhold(ids, False)
            raise
    medians = {
        name: {row: round(statistics.median(r[row] for r in rounds)) for row in rounds[0]}
        for name, rounds in phases.items()
    }
    ratios = {}
    for row in medians["before"]:
        around = statistics.mean([medians["before"][row], medians["after"][row]])
        ratios[row] = round(medians["withheld"][row] / around, 3)
    say(json.dumps({"how": args.how, "share": args.share, "median": medians, "ratio": ratios}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
