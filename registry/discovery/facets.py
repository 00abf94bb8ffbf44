"""Facet counts of discovery: per facet, the most frequent values among the matching
agents. Facets are the core's (tags, endpoint protocols and transports) and the fact
kinds the protocol apps registered (registry.extensions), counted over AgentFacet."""

import uuid

from django.conf import settings
from django.db import connections
from django.db.models import QuerySet
from django.utils import timezone

from registry import extensions
from registry.agents.models import Agent, CapabilityTag, Endpoint
from registry.discovery.models import AgentFacet
from registry.http.params import bad_parameter

FACET_LIMIT = 20
# facet_counts: the probe counts the matches in the first 1/2**6 of the id space.
PROBE_SHIFT = 6
ENDPOINT_FACETS = {"protocol", "transport"}
CORE_FACETS = {"tag", "live", "status"} | ENDPOINT_FACETS


def facet_names() -> set[str]:
    """The core's facets and the fact kinds the protocol apps registered as facets."""
    return CORE_FACETS | {kind.name for kind in extensions.fact_kinds.read() if kind.facet}


def facets_parse(raw: str | None) -> list[str]:
    names = [n.strip() for n in (raw or "").split(",") if n.strip()]
    known = facet_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise bad_parameter("facets", f"knows {', '.join(sorted(known))}; not {', '.join(unknown)}")
    return list(dict.fromkeys(names))


def _id_bound(shift: int) -> uuid.UUID:
    """The id below which lie the first 1/2**shift of all agents' ids."""
    return uuid.UUID(int=1 << (128 - shift))


def facet_counts(queryset: QuerySet, names: list[str]) -> tuple[dict[str, list[dict]], bool]:
    """Per facet, the most frequent values among the matching agents, with agent counts;
    and whether the counts are exact, else estimates from a uniform sample.

    Agent ids are random (uuid4), so the matches whose id lies in a slice of the id space
    are a uniform sample of them. A probe counts the matches in the first 1/64 of it, up
    to k = ``DISCOVERY_FACET_EXACT`` + 1. The sample slice is that one if it holds k; else
    the first 1/2**s, chosen by the probe to hold two to four times k matches (the whole
    space when fewer match). One statement takes the k smallest ids of the matches in the
    slice and counts every facet over them:
    - fewer than k in the whole space: every match, exact counts;
    - k of them: the k smallest ids of all matches, the largest at a fraction u of the id
      space; each count times (k - 1) / (k u) estimates it among all matches (the
      k-minimum-values estimator);
    - fewer than k in a slice (the probe overestimated): each count times 2**s.
    The work is the same whatever the size of the registry, up to some 64 k matches for
    the probed slice to hold (32,000 at the default), beyond which that slice grows.
    """
    k = settings.DISCOVERY_FACET_EXACT + 1
    ids = queryset.order_by().values_list("pk", flat=True)
    probe = ids.filter(pk__lt=_id_bound(PROBE_SHIFT))[:k].count()
    if probe == k:  # the k smallest ids of all matches lie in the probed slice
        shift = PROBE_SHIFT
    else:
        shift = 0
        while (probe << PROBE_SHIFT) >> (shift + 1) >= 2 * k:
            shift += 1
    matches = ids.filter(pk__lt=_id_bound(shift)) if shift else ids
    size, last_id, rows = _facets_count(matches, k, names)
    if size < k:
        return _facets_top(rows, names, scale=float(1 << shift)), shift == 0
    share = uuid.UUID(last_id).int / 2**128
    return _facets_top(rows, names, scale=(k - 1) / (k * share)), False


def _facet_part(name: str) -> tuple[str, list]:
    """The SQL counting one facet's values among the agents of ``facet_sample``: the top
    FACET_LIMIT values with their agent counts, as (facet, value, n) rows. Each agent
    counts once per value (distinct pairs first: hashed, where COUNT(DISTINCT) sorts)."""
    where, params = "", []
    if name == "tag":
        table, value = CapabilityTag._meta.db_table, "t.value"
    elif name in ENDPOINT_FACETS:
        table, value = Endpoint._meta.db_table, f"t.{name}"
    elif name in ("live", "status"):
        table = ""
    else:  # a fact kind
        table, value = AgentFacet._meta.db_table, "t.value"
        where, params = " WHERE t.kind = %s", [name]
    if name == "status":  # the agent's own column: one value per agent
        pairs = (
            f"SELECT s.id AS agent_id, t.status AS v FROM facet_sample s "
            f"JOIN {Agent._meta.db_table} t ON t.id = s.id"
        )
    elif table:
        pairs = (
            f"SELECT DISTINCT t.agent_id, {value} AS v FROM facet_sample s "
            f"JOIN {table} t ON t.agent_id = s.id{where}"
        )
    else:  # live: whether the agent has an endpoint live now (index endpoint_alive)
        pairs = (
            "SELECT s.id AS agent_id, CASE WHEN EXISTS (SELECT 1 FROM "
            f"{Endpoint._meta.db_table} e WHERE e.agent_id = s.id AND e.alive_until > %s) "
            "THEN 'true' ELSE 'false' END AS v FROM facet_sample s"
        )
        params = [timezone.now()]
    counted = (
        f"SELECT v, COUNT(*) AS n FROM ({pairs}) AS d "
        f"GROUP BY v ORDER BY n DESC, v LIMIT {FACET_LIMIT}"
    )
    return f"SELECT %s, v, n FROM ({counted}) AS f", [name, *params]


def _facets_count(
    matches: QuerySet, k: int, names: list[str]
) -> tuple[int, str | None, list[tuple]]:
    """Count every facet of ``names`` over the k matches with the smallest ids, in one
    statement: the sample's size, its largest id, and the (facet, value, n) rows of each
    facet's top values. The matches are materialized first, so that the database finds them
    through the indexes (a bitmap), not by walking the id index in order."""
    matches_sql, matches_params = matches.query.get_compiler(using=matches.db).as_sql()
    parts = [_facet_part(name) for name in names]
    sql = (
        f"WITH facet_matches (id) AS MATERIALIZED ({matches_sql}), "
        f"facet_sample (id) AS (SELECT id FROM facet_matches ORDER BY id LIMIT {int(k)}) "
        + " UNION ALL ".join(part for part, _ in parts)
        # (PostgreSQL 15 has no max(uuid).)
        + " UNION ALL SELECT '', (SELECT CAST(id AS TEXT) FROM facet_sample ORDER BY id DESC"
        " LIMIT 1), COUNT(*) FROM facet_sample"
    )
    params = [*matches_params, *(p for _, part_params in parts for p in part_params)]
    with connections[matches.db].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    _, last_id, size = next(row for row in rows if row[0] == "")
    return size, last_id, [row for row in rows if row[0] != ""]


def _facets_top(rows: list[tuple], names: list[str], *, scale: float) -> dict[str, list[dict]]:
    counted: dict[str, list[tuple]] = {name: [] for name in names}
    for facet, value, n in rows:
        counted[facet].append((value, n))
    return {
        name: [
            {"value": value, "count": round(n * scale)}
            for value, n in sorted(values, key=lambda row: (-row[1], row[0]))
        ]
        for name, values in counted.items()
    }
