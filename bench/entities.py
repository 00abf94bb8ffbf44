"""Entities in the benchmark: generated entity cards (A2E and EDP, around real cities),
bulk-stored with the entities app's bulk service, and /v1/nearby and /v1/resolve measured
sequentially at two sizes."""

import random
import sys
import time
from typing import Any
from urllib.parse import urlencode

from bench.discover import discovery_measure
from bench.generate import ORG_FIRST, query_words

# Populated areas: (city, country, lat, lng); entities lie within ~5 km of a centre.
CITIES = [
    ("Paris", "FR", 48.8566, 2.3522),
    ("Lyon", "FR", 45.7640, 4.8357),
    ("Berlin", "DE", 52.5200, 13.4050),
    ("Madrid", "ES", 40.4168, -3.7038),
    ("Rome", "IT", 41.9028, 12.4964),
    ("London", "GB", 51.5074, -0.1278),
    ("New York", "US", 40.7128, -74.0060),
    ("Tokyo", "JP", 35.6762, 139.6503),
    ("Sydney", "AU", -33.8688, 151.2093),
    ("Sao Paulo", "BR", -23.5505, -46.6333),
]
SPREAD_DEGREES = 0.045
CATEGORIES = ["restaurant", "beauty", "health", "hotel", "fitness", "retail", "services"]
CAPABILITIES = ["reservations", "availability", "menu", "ordering", "payments", "contact"]
KINDS = {"nearby": "/v1/nearby?lat=&lng= (1 km)", "resolve": "/v1/resolve?query=<word>"}
BATCH_SIZE = 2000


def _words() -> list[str]:
    words = [w for w in query_words() if w.isalpha()]
    words += [o.lower() for o in ORG_FIRST if o.isalpha()]
    return list(dict.fromkeys(words))


def entity_card(seed: int, index: int, words: list[str]) -> tuple[str, dict[str, Any]]:
    """The index-th generated card: (its domain, the card); every third is EDP 0.1."""
    rng = random.Random(f"{seed}-entity-{index}")
    city, country, lat, lng = rng.choice(CITIES)
    name = f"{rng.choice(words).title()} {rng.choice(words).title()} {index}"
    domain = f"e{index}.{rng.choice(words)}.example"
    capabilities = rng.sample(CAPABILITIES, 3)
    location = {
        "city": city,
        "country": country,
        "lat": round(lat + rng.uniform(-SPREAD_DEGREES, SPREAD_DEGREES), 6),
        "lng": round(lng + rng.uniform(-SPREAD_DEGREES, SPREAD_DEGREES), 6),
    }
    endpoint = f"https://mcp.{rng.choice(words)}-bookings.example/{index}"
    if index % 3 == 2:
        card = {
            "schema_version": "0.2.0",
            "domain": domain,
            "entities": [
                {
                    "name": name,
                    "path": "/main",
                    "location": {
                        "city": city,
                        "country": country,
                        "coordinates": {"lat": location["lat"], "lng": location["lng"]},
                    },
                    "mcps": [
                        {
                            "provider": "bench-bookings",
                            "endpoint": endpoint,
                            "entity_id": f"b-{index}",
                            "capabilities": capabilities,
                            "priority": rng.randint(0, 100),
                        }
                    ],
                }
            ],
        }
        return domain, card
    card = {
        "a2e": "0.1",
        "entity": {
            "domain": domain,
            "name": name,
            "category": rng.choice(CATEGORIES),
            "description": " ".join(rng.sample(words, 6)),
            "location": location,
        },
        "mcps": [{"endpoint": endpoint, "capabilities": capabilities, "priority": 1}],
    }
    return domain, card


def entities_load(*, seed: int, start: int, stop: int) -> dict[str, Any]:
    """Store generated entities start..stop-1 in batches; the phase's figures."""
    from protocols.entities.registration.bulk import cards_bulk_store

    words = _words()
    began = time.perf_counter()
    stored = 0
    for low in range(start, stop, BATCH_SIZE):
        cards = [entity_card(seed, i, words) for i in range(low, min(low + BATCH_SIZE, stop))]
        stored += cards_bulk_store(owner="bench", cards=cards)
    seconds = time.perf_counter() - began
    return {
        "phase": f"entities {start}..{stop - 1}",
        "entities": stored,
        "seconds": round(seconds, 2),
        "entities_per_second": round(stored / seconds, 1) if seconds else 0.0,
    }


def entity_paths(kind: str, count: int, seed: int) -> list[str]:
    """``count`` URLs of one kind, the same list at every size: points near the cities'
    centres (nearby) or words of the generated names (resolve)."""
    rng = random.Random(f"{seed}-entities-{kind}")
    words = _words()
    paths = []
    for _ in range(count):
        if kind == "nearby":
            _, _, lat, lng = rng.choice(CITIES)
            params = {
                "lat": round(lat + rng.uniform(-SPREAD_DEGREES, SPREAD_DEGREES), 5),
                "lng": round(lng + rng.uniform(-SPREAD_DEGREES, SPREAD_DEGREES), 5),
                "radius": 1000,
            }
            paths.append(f"/v1/nearby?{urlencode(params)}")
        else:
            paths.append(f"/v1/resolve?{urlencode({'query': rng.choice(words)})}")
    return paths


def entities_measure(port: int, entities: int, requests: int, seed: int) -> dict[str, Any]:
    queries = {}
    for kind in KINDS:
        paths = entity_paths(kind, requests, seed)
        discovery_measure(port, kind, paths[:5])  # warm the workers
        queries[kind] = discovery_measure(port, kind, paths)
    return {"entities": entities, "queries": queries}


def entities_phases(args, port: int) -> dict[str, Any]:
    """Entities at --small-entities, then at --entities: the load rate, and /v1/nearby and
    /v1/resolve measured at each size (the server keeps running)."""
    from bench.load import database_analyze

    load = []
    say(f"loading {args.small_entities} entities")
    load.append(entities_load(seed=args.seed, start=0, stop=args.small_entities))
    database_analyze()
    say(f"  /v1/nearby and /v1/resolve at {args.small_entities} entities")
    small = entities_measure(port, args.small_entities, args.requests, args.seed)
    say(f"loading entities {args.small_entities}..{args.entities - 1}")
    load.append(entities_load(seed=args.seed, start=args.small_entities, stop=args.entities))
    database_analyze()
    say(f"  /v1/nearby and /v1/resolve at {args.entities} entities")
    full = entities_measure(port, args.entities, args.requests, args.seed)
    return {"load": load, "small": small, "full": full}


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
