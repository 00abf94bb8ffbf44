"""Discovery reads: sort, page, what facet counts sample, and the change feed for mirrors
(filters: registry/discovery/filters.py; facet counts: registry/discovery/facets.py)."""

from collections.abc import Callable
from datetime import UTC, datetime

from django.db.models import DateTimeField, Max, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from registry.agents.liveness_state import live_agents
from registry.agents.models import Agent, Tombstone
from registry.discovery import hybrid
from registry.discovery.filters import agent_filterset
from registry.discovery.pagination import SORTS, Page, keyset_page, tiered_keys, tiered_page
from registry.discovery.search import KEY_FILTERS, TIERS, filter_keys, text_filter, text_matches
from registry.http.jsonutil import Problem
from registry.http.params import bad_parameter, limit_parse
from registry.http.problems import ProblemError

# The query parameters of discovery besides its filters.
DISCOVERY_PARAMS = frozenset({"sort", "facets", "updated_since", "limit", "cursor", "mode"})


def filter_problems(filterset) -> ProblemError:
    """A filterset's errors as one 400; a choice's error lists the allowed values."""
    problems = []
    for name, messages in filterset.errors.items():
        choices = (
            filterset.filters[name].extra.get("choices") if name in filterset.filters else None
        )
        if choices:
            allowed = ", ".join(str(value) for value, _ in choices)
            given = filterset.data.get(name)
            problems.append(Problem(name, f"must be one of {allowed}, not '{given}'"))
        else:
            problems.extend(Problem(name, str(message)) for message in messages)
    detail = "; ".join(f"{p.path} {p.message}" for p in problems[:3])
    return ProblemError(400, "validation-error", f"{detail}.", problems)


def agents_filter(params, queryset: QuerySet, filterset_class=None) -> QuerySet:
    """The agents matching the discovery filters in ``params`` (a QueryDict or a dict of
    strings): the one filtering of every way to discover (HTTP, A2A, MCP). Bad values are
    one 400 problem naming each parameter (filter_problems)."""
    filterset = (filterset_class or agent_filterset())(data=params, queryset=queryset)
    if not filterset.is_valid():
        raise filter_problems(filterset)
    return filterset.qs


def sort_choose(params, *, has_text: bool, syncing: bool) -> str:
    if syncing:
        return "updated"
    sort = params.get("sort") or ("relevance" if has_text else "recent")
    if sort not in SORTS or sort == "updated":
        raise bad_parameter("sort", f"must be one of relevance, recent, name, not '{sort}'")
    if sort == "relevance" and not has_text:
        raise bad_parameter("sort", "relevance needs a text query (q)")
    return sort


def since_parse(raw: str | None) -> datetime | None:
    if not raw:
        return None
    message = "must be an RFC 3339 time with a zone, like 2026-01-31T12:00:00Z"
    try:
        value = parse_datetime(raw.replace(" ", "+"))
        if value is None or value.tzinfo is None:
            raise ValueError(raw)
        # Databases take UTC offsets up to about ±16 h only; the instant is what counts.
        return value.astimezone(UTC)
    except (ValueError, OverflowError):
        raise bad_parameter("updated_since", message) from None


def deleted_between(start: datetime, end: datetime | None) -> list[dict]:
    rows = Tombstone.objects.filter(deleted_at__gte=start)
    if end is not None:
        rows = rows.filter(deleted_at__lt=end)
    return [
        {"id": str(t.agent_id), "deletedAt": t.deleted_at.isoformat().replace("+00:00", "Z")}
        for t in rows.order_by("deleted_at", "agent_id")[:1000]
    ]


def registry_last_change() -> datetime | None:
    """When any agent last changed or was deleted: the Last-Modified of every listing."""
    deleted = RawSQL(
        f"SELECT MAX(deleted_at) FROM {Tombstone._meta.db_table}",
        [],
        output_field=DateTimeField(),
    )
    row = Agent.objects.aggregate(changed=Max("updated_at"), deleted=Max(deleted))
    times = [t for t in (row["changed"], row["deleted"]) if t is not None]
    return max(times) if times else None


# Parameters that only shape the answer; any other one filters the agents.
NOT_FILTERS = {"q", "sort", "limit", "cursor", "facets", "mode"}


def _text_scope(
    queryset: QuerySet, params, prefiltered: bool
) -> tuple[QuerySet | None, list, bool]:
    """How the full-text index narrows a text query: the filtered agents to restrict its
    rows to (None when no filter needs it), the filter keys it matches itself, and whether
    its rows keep only live agents.

    The capability and tag filters are keys of the index; ``liveOnly`` is checked on each
    search row (an index probe of its endpoints, as the rows are read newest first, so a
    page stops early instead of listing every live agent); other filters (or a value too
    long to be a key) restrict the rows to the filtered agents.
    """
    keys = filter_keys(params)
    live = params.get("liveOnly") == "true"
    shaping = (
        NOT_FILTERS
        | (set(KEY_FILTERS) if keys is not None else set())
        | ({"liveOnly"} if live else set())
    )
    filtered = prefiltered or any(v for k, v in params.items() if k not in shaping)
    return (queryset if filtered else None), (keys or []), live


def _matches(params, agents: QuerySet | None, keys: list, live: bool, tier=None):
    rows = text_matches(params.get("q") or "", agents, keys, tier)
    if rows is not None and live:
        rows = rows.filter(live_agents(timezone.now()))  # the search row's pk: the agent's
    return rows


def facet_source(queryset: QuerySet, params, *, prefiltered: bool = False) -> QuerySet:
    """What facet_counts samples: with a text query on PostgreSQL, the search rows of the
    matching agents, so that an id slice of them is one bitmap AND of the text and id
    indexes; otherwise the filtered agents. Both have the agent's id as pk."""
    text = (params.get("q") or "").strip()
    if text and _fused_order(params):
        # The agents of the fused order (registry/discovery/hybrid.py), which a text query
        # lists in this mode whatever its sort.
        return fused_source(queryset, [pk for pk, _ in _fused(queryset, params, prefiltered)])
    rows = _matches(params, *_text_scope(queryset, params, prefiltered))
    return queryset if rows is None else rows


def fused_source(queryset: QuerySet, ids: list) -> QuerySet:
    """What facet counts sample for a text query in a fused mode: the agents of the fused
    order (``ids``) among ``queryset``."""
    if not ids:  # (an empty pk__in compiles to no SQL, which facet counts need)
        return queryset.filter(pk__isnull=True)
    return queryset.filter(pk__in=ids)


def _fused_order(params) -> bool:
    return hybrid.mode_parse(params) != "keyword"


def _keyword_ranked(queryset: QuerySet, params, prefiltered: bool) -> Callable[[], list]:
    """The first ids of the keyword relevance order of ``params`` (mode=keyword)."""
    plain = {name: params.get(name) for name in params if name not in {"cursor", "sort"}}
    plain.update(mode="keyword", limit=str(hybrid.DEPTH), sort="relevance")
    # What the filters keep in keyword mode: the agents whose words match, ranked.
    matching = text_filter(queryset, plain["q"])
    return lambda: discover(matching, plain, None, prefiltered=prefiltered)[0].rows


def _fused(queryset: QuerySet, params, prefiltered: bool) -> list[tuple]:
    return hybrid.fused(
        queryset,
        params.get("q").strip(),
        hybrid.mode_parse(params),
        _keyword_ranked(queryset, params, prefiltered),
        filtered=_filtered(params, prefiltered),
    )


def _filtered(params, prefiltered: bool) -> bool:
    return prefiltered or any(params.get(k) for k in params if k not in NOT_FILTERS)


def _relevance_tiers(
    queryset: QuerySet, params, prefiltered: bool
) -> list[tuple[int, QuerySet]] | None:
    """PostgreSQL: the search rows of each relevance tier's agents (search.TIERS), best
    first, each found by one GIN index query; None elsewhere (SQLite sorts by bm25)."""
    scope = _text_scope(queryset, params, prefiltered)
    tiers = []
    for tier in TIERS:
        rows = _matches(params, *scope, tier=tier)
        if rows is None:
            return None
        tiers.append((tier, rows))
    return tiers


def live_candidates(
    queryset: QuerySet, params, count: int, *, prefiltered: bool = False
) -> tuple[list, int | None] | None:
    """For a ``liveOnly`` text query sorted by relevance on PostgreSQL: the first ``count``
    + 1 keys of its relevance order as if ``liveOnly`` were not set (the tiers' matches,
    whatever their liveness), and the data generation they were found at; the live page is
    these keys' live agents, in this order (``discovery_cache``). None for any other query.
    """
    if params.get("cursor") or params.get("updated_since"):
        return None
    sort = sort_choose(params, has_text=bool((params.get("q") or "").strip()), syncing=False)
    agents, keys, live = _text_scope(queryset, params, prefiltered)
    if sort != "relevance" or not live or _fused_order(params):
        return None
    tiers = []
    for tier in TIERS:
        rows = _matches(params, agents, keys, False, tier=tier)
        if rows is None:
            return None
        tiers.append((tier, rows))
    return tiered_keys(tiers, limit=count)


def discover(
    queryset: QuerySet, params, full_rows: QuerySet | None, *, prefiltered: bool = False
) -> tuple[Page, str, datetime | None]:
    """Sort and page an already filtered queryset; returns the page, sort and since time.

    ``full_rows``: where the page's agents are read from; None: the page holds their ids
    (for ``registry.discovery.listings.listings_read``).
    ``prefiltered``: the view's base queryset is itself a selection (e.g. dealers only).
    """
    since = since_parse(params.get("updated_since"))
    sort = sort_choose(params, has_text=bool((params.get("q") or "").strip()), syncing=bool(since))
    if since is not None:
        queryset = queryset.filter(Q(updated_at__gte=since))
    limit = limit_parse(params.get("limit"))
    fused_order = _fused_order(params)  # and a 400 naming mode when it is none
    if fused_order and sort != "relevance" and (params.get("q") or "").strip():
        # Another order of the same agents as the fused relevance order.
        queryset = queryset.filter(pk__in=[pk for pk, _ in _fused(queryset, params, prefiltered)])
    elif sort == "relevance" and fused_order:
        page = hybrid.fused_page(
            queryset,
            params.get("q").strip(),
            hybrid.mode_parse(params),
            _keyword_ranked(queryset, params, prefiltered),
            limit=limit,
            cursor=params.get("cursor"),
            filtered=_filtered(params, prefiltered),
        )
        if full_rows is not None:
            by_pk = {row.pk: row for row in full_rows.filter(pk__in=page.rows)}
            page.rows = [by_pk[pk] for pk in page.rows if pk in by_pk]
        return page, sort, since
    if sort == "relevance":
        tiers = _relevance_tiers(queryset, params, prefiltered)
        if tiers is not None:
            page = tiered_page(tiers, limit=limit, cursor=params.get("cursor"), full_rows=full_rows)
            return page, sort, since
    page = keyset_page(
        queryset,
        sort=sort,
        limit=limit,
        cursor=params.get("cursor"),
        full_rows=full_rows,
    )
    return page, sort, since
