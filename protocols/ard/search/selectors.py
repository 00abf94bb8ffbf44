"""Reads of the ARD app: the listed agents an ARD filter matches, ranked through discovery's
own search (the filter set and sorts of ``GET /discover/agents``), facet counts, the browse
list, exact lookups, and the stored entries of a page with the liveness of the moment."""

import base64
import binascii
import json
import uuid
from collections import Counter

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, NullIf
from django.utils import timezone

from protocols.a2a.models import CardProvenance
from protocols.ard.catalog.entries import live_filled, liveness_read
from protocols.ard.catalog.query import FacetRequest, ListFilter, Query, invalid
from protocols.ard.catalog.reads import EntriesRead, entries_at
from protocols.ard.models import CatalogEntry
from registry.agents.liveness_state import live_agents
from registry.agents.models import Agent, Capability, CapabilityTag
from registry.agents.selectors import agent_queryset
from registry.discovery import cache as discovery_cache
from registry.discovery import discover as discovery
from registry.discovery import planner
from registry.discovery.pagination import Page
from registry.discovery.query import query_parse
from registry.http.problems import ProblemError


def entries_read(agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, bytes]:
    """The listed entries of these agents, each with its liveness of the moment."""
    rows = CatalogEntry.objects.filter(agent_uuid__in=agent_ids, listed=True).values_list(
        "agent_uuid", "body"
    )
    stored = {pk: bytes(body) for pk, body in rows}
    liveness = liveness_read(stored)
    return {pk: live_filled(body, liveness.get(pk)) for pk, body in stored.items()}


def entry_by_identifier(identifier: str) -> bytes | None:
    row = CatalogEntry.objects.filter(identifier=identifier, listed=True).first()
    if row is None:
        return None
    return live_filled(bytes(row.body), liveness_read([row.agent_uuid]).get(row.agent_uuid))


def _signature(values: list[str]) -> Q:
    match = Q(Exists(CardProvenance.objects.filter(agent=OuterRef("pk"), signature__in=values)))
    if "unsigned" in values:  # no provenance: shown as unsigned
        match |= ~Q(Exists(CardProvenance.objects.filter(agent=OuterRef("pk"))))
    return match


def agents_matching(filters: dict[str, list[str]]) -> QuerySet[Agent]:
    """The listed agents whose entries match every filter key (OR within a key)."""
    entry = {"agent_uuid": OuterRef("pk"), "listed": True}
    for key, column in (("publisher", "publisher"), ("identifier", "identifier")):
        if key in filters:
            values = filters[key] if key != "publisher" else [v.lower() for v in filters[key]]
            entry[f"{column}__in"] = values
    entries = CatalogEntry.objects.filter(**entry)
    if "type" in filters:  # the entry's own type, or one nested in it (an agent's servers)
        typed = Q(type__in=filters["type"])
        for value in filters["type"]:
            typed |= Q(types__contains=f" {value} ")
        entries = entries.filter(typed)
    queryset = agent_queryset().filter(Exists(entries))
    if "tags" in filters:
        tags = [v.strip().lower() for v in filters["tags"]]
        queryset = queryset.filter(
            Exists(CapabilityTag.objects.filter(agent=OuterRef("pk"), value__in=tags))
        )
    if "capabilities" in filters:
        names = filters["capabilities"]
        caps = Capability.objects.filter(
            Q(external_id__in=names) | Q(external_id="", name__in=names), agent=OuterRef("pk")
        )
        queryset = queryset.filter(Exists(caps))
    if "metadata.verifiedDomain" in filters:
        domains = [v.lower() for v in filters["metadata.verifiedDomain"]]
        queryset = queryset.filter(
            Exists(CardProvenance.objects.filter(agent=OuterRef("pk"), verified_domain__in=domains))
        )
    if "metadata.cardSignature" in filters:
        queryset = queryset.filter(_signature(filters["metadata.cardSignature"]))
    if "metadata.live" in filters:
        wanted = {v.lower() for v in filters["metadata.live"]}
        if not wanted <= {"true", "false"}:
            raise invalid("query.filter.metadata.live", "takes true or false")
        if wanted == {"true"}:
            queryset = queryset.filter(live_agents(timezone.now()))
        elif wanted == {"false"}:
            queryset = queryset.exclude(live_agents(timezone.now()))
    return queryset


def _search_token(offset: int, cursor: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}|{cursor}".encode()).decode().rstrip("=")


def _search_token_parse(token: str | None) -> tuple[int, str | None]:
    if not token:
        return 0, None
    try:
        offset, cursor = (
            base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().split("|", 1)
        )
        return int(offset), cursor
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise invalid("pageToken", "must be a token from a previous answer") from None


# The discovery cache's scope of ARD searches (registry.discovery.cache): their page keys are
# kept by the data generation they were found at, as GET /discover/agents keeps its own.
SEARCH_SCOPE = "ArdSearch"
# Filters on what changes without a write (heartbeats): never cached.
UNCACHED_FILTERS = frozenset({"metadata.live"})


def _search_params(query: Query, page_size: int, token: str | None) -> dict[str, str]:
    """The search's cache key: everything that decides its page."""
    filters = json.dumps(query.filters, sort_keys=True, separators=(",", ":"))
    return {
        "q": query.text,
        "mode": query.mode,
        "limit": str(page_size),
        "token": token or "",
        "filter": filters,
        "minTrust": "" if query.min_trust is None else str(query.min_trust),
    }


def _scored(
    page: Page, read: EntriesRead, offset: int
) -> tuple[list[tuple[bytes, int]], str | None]:
    # A fused order's own score (registry/discovery/hybrid.py); the keyword order's place.
    scores = page.scores or [max(1, 100 - offset - place) for place in range(len(page.rows))]
    results = [
        (read.bodies[pk], round(score))
        for pk, score in zip(page.rows, scores, strict=True)
        if pk in read.bodies
    ]
    following = (
        _search_token(offset + len(page.rows), page.next_cursor) if page.next_cursor else None
    )
    return results, following


def search(
    query: Query, page_size: int, token: str | None
) -> tuple[list[tuple[bytes, int]], str | None]:
    """The page's entries with their scores, best first, and the next page's token.

    Ranked as ``GET /discover/agents?q=<text>&sort=relevance&mode=<query.mode>`` ranks; in
    mode hybrid or semantic the score is the fused score (0 to 100); in keyword it falls by one
    per place from 100 (a rank, not a measure of trust). The page's keys come from the
    discovery cache when they were found at the current data generation (the statement
    that reads the entries reads it too)."""
    offset, cursor = _search_token_parse(token)
    params = {"q": query.text, "sort": "relevance", "limit": str(page_size), "mode": query.mode}
    if query.min_trust is not None:
        params["minTrust"] = str(query.min_trust)
    if cursor:
        params["cursor"] = cursor

    try:
        parsed = query_parse(params, strict=False)  # discovery's query, parsed once
    except ProblemError:
        agents_matching(query.filters)  # an ARD filter's own problem first, as ever
        raise

    def find() -> tuple[Page, str]:
        agents = discovery.query_agents(parsed, agents_matching(query.filters))
        plan = planner.plan(parsed, lambda: agents, prefiltered=True)
        try:
            return plan.find()
        except ProblemError as exc:
            if any(p.path == "cursor" for p in exc.errors):
                raise invalid("pageToken", "must be a token from a previous answer") from None
            raise

    if UNCACHED_FILTERS & set(query.filters):
        page, _ = find()
        read = entries_at(page.rows)
    else:
        key = _search_params(query, page_size, token)
        page, _, read = discovery_cache.page_cached(
            SEARCH_SCOPE, parsed, find, entries_at, params=key
        )
    return _scored(page, read, offset)


def search_peek(
    query: Query, page_size: int, token: str | None
) -> tuple[list[tuple[bytes, int]], str | None] | None:
    """``search``'s answer when its page's keys are cached at the current generation;
    None otherwise (nothing is found or kept here: ``search`` does that)."""
    if UNCACHED_FILTERS & set(query.filters):
        return None
    try:
        offset, _ = _search_token_parse(token)
    except ProblemError:
        return None
    key = _search_params(query, page_size, token)
    found = discovery_cache.page_peek(SEARCH_SCOPE, key, entries_at)
    return None if found is None else _scored(found[0], found[2], offset)


def _matched(query: Query) -> QuerySet[Agent]:
    agents = agents_matching(query.filters)
    if query.text:
        parsed = query_parse({"q": query.text, "mode": query.mode}, strict=False)
        agents = discovery.query_agents(parsed, agents)
        if parsed.fused:  # the agents of the fused order
            agents = discovery.facet_source(agents, parsed, prefiltered=True)
    return agents.values("pk")


def _nested_type_counts(matched) -> Counter:
    """How many matched entries nest each type (an agent's MCP servers) other than their own."""
    counted: Counter = Counter()
    rows = CatalogEntry.objects.filter(listed=True, agent_uuid__in=Subquery(matched)).exclude(
        types=""
    )
    for own, nested in rows.values_list("type", "types").iterator(chunk_size=2000):
        counted.update(t for t in nested.split() if t != own)
    return counted


def _counts(field: str, matched) -> list[tuple[str, int]]:
    if field == "type":
        counted = Counter(
            dict(
                CatalogEntry.objects.filter(listed=True, agent_uuid__in=Subquery(matched))
                .exclude(type="")
                .values_list("type")
                .annotate(n=Count("id"))
            )
        )
        counted.update(_nested_type_counts(matched))
        rows = list(counted.items())
    elif field == "publisher":
        rows = (
            CatalogEntry.objects.filter(listed=True, agent_uuid__in=Subquery(matched))
            .exclude(**{field: ""})
            .values_list(field)
            .annotate(n=Count("id"))
        )
    elif field == "tags":
        rows = (
            CapabilityTag.objects.filter(agent__in=Subquery(matched))
            .values_list("value")
            .annotate(n=Count("agent", distinct=True))
        )
    elif field == "capabilities":
        rows = (
            Capability.objects.filter(agent__in=Subquery(matched))
            .annotate(token=Coalesce(NullIf(F("external_id"), Value("")), F("name")))
            .values_list("token")
            .annotate(n=Count("agent", distinct=True))
        )
    elif field == "metadata.verifiedDomain":
        rows = (
            CardProvenance.objects.filter(agent__in=Subquery(matched))
            .exclude(verified_domain="")
            .values_list("verified_domain")
            .annotate(n=Count("agent"))
        )
    else:  # metadata.cardSignature; an agent without provenance shows as unsigned
        counted = dict(
            CardProvenance.objects.filter(agent__in=Subquery(matched))
            .values_list("signature")
            .annotate(n=Count("agent"))
        )
        missing = Agent.objects.filter(pk__in=Subquery(matched)).count() - sum(counted.values())
        counted["unsigned"] = counted.get("unsigned", 0) + missing
        rows = [(value, n) for value, n in counted.items() if n]
    return sorted(((str(v), n) for v, n in rows), key=lambda row: (-row[1], row[0]))


def explore(query: Query, facets: list[FacetRequest]) -> dict:
    matched = _matched(query)
    answer = {}
    for facet in facets:
        counts = [(v, n) for v, n in _counts(facet.field, matched) if n >= facet.min_count]
        shown, rest = counts[: facet.limit], counts[facet.limit :]
        answer[facet.field] = {
            "buckets": [{"value": v, "count": n} for v, n in shown],
            "otherCount": sum(n for _, n in rest),
        }
    return answer


def browse(
    wanted: ListFilter, order: str, offset: int, page_size: int
) -> tuple[list[bytes], int, bool]:
    """GET /ard/agents: a page of entries in ``order``, the total and whether more follow."""
    filters = {}
    if wanted.type:
        filters["type"] = [wanted.type]
    if wanted.publishers:
        filters["publisher"] = wanted.publishers
    agents = agents_matching(filters)
    if wanted.display_name:
        agents = agents.filter(name__iexact=wanted.display_name)
    if wanted.created_after:
        agents = agents.filter(created_at__gt=wanted.created_after)
    if wanted.updated_after:
        agents = agents.filter(updated_at__gt=wanted.updated_after)
    total = agents.count()
    ids = list(
        agents.select_related(None)
        .prefetch_related(None)
        .order_by(order, "pk")
        .values_list("pk", flat=True)[offset : offset + page_size]
    )
    bodies = entries_read(ids)
    return [bodies[pk] for pk in ids if pk in bodies], total, offset + len(ids) < total
