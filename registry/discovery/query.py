"""A discovery request parsed once: ``query_parse`` turns the parameters of
``GET /discover/agents`` (a QueryDict, or a dict of strings from the A2A skill, the MCP tool
or ARD search) into a ``DiscoveryQuery``, checked as the view checks them, and every path
of discovery (registry/discovery/planner.py) takes that object instead of the parameters.

The checks run in the order the view always ran them, so that a request with several bad
parameters is refused for the same one: unknown parameters (``strict``), the filters (each
cleaned by its form field, as the discovery FilterSet's form cleans it: one 400 naming
every bad filter, ``filter_problems``), ``updated_since``, ``sort``, ``limit``, ``mode``,
``facets``. A cursor is decoded by the path that pages (it belongs to a sort or a mode).
"""

import functools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.dateparse import parse_datetime

from registry.agents.selectors import agent_discoverable_queryset
from registry.discovery.facets import facets_parse
from registry.discovery.filters import agent_filterset
from registry.discovery.hybrid import DEFAULT_MODE, MODES
from registry.discovery.pagination import SORTS
from registry.discovery.search import filter_keys
from registry.http.jsonutil import Problem
from registry.http.params import bad_parameter, limit_parse, params_check
from registry.http.problems import ProblemError

# The query parameters of discovery besides its filters.
DISCOVERY_PARAMS = frozenset(
    {"sort", "facets", "updated_since", "limit", "cursor", "mode", "collapse"}
)
# Parameters that only shape the answer; any other one filters the agents.
NOT_FILTERS = frozenset({"q", "sort", "limit", "cursor", "facets", "mode", "collapse"})


@dataclass(frozen=True)
class DiscoveryQuery:
    """One discovery request, parsed and checked."""

    text: str  # q, cleaned ("" for none)
    mode: str  # hybrid (the default), semantic or keyword
    # Each filter given besides q, with its value cleaned by its form field, in the
    # FilterSet's order (a blank one too: it keeps every agent).
    filters: tuple[tuple[str, Any], ...]
    sort: str  # relevance, recent, name, trust, or updated for the change feed
    limit: int
    cursor: str | None
    live_only: bool  # liveOnly=true
    facets: tuple[str, ...]
    since: datetime | None = None  # updated_since: the change feed
    # The parameters that filter and were given a value (a blank tag too): the query is
    # filtered as the view has always counted it (updated_since and unknown names too).
    named: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()  # every parameter given
    repeated: bool = False  # a parameter given twice or more (the last one counts)
    # The parameters as given: the page cache's key and the next link are made of them.
    params: Any = field(default=None, compare=False, repr=False)
    # collapse (true unless collapse=false): the canonical copy of each duplicate group only
    # (registry.trust.duplicates).
    collapse: bool = True

    @property
    def filtered(self) -> bool:
        """Any filter parameter with a value, a blank one too (as the view counts them)."""
        return bool(self.named)

    @functools.cached_property
    def filter_values(self) -> dict[str, Any]:
        return dict(self.filters)

    @functools.cached_property
    def keys(self) -> list[str] | None:
        """The index keys of the tag and capability filters (``search.filter_keys``);
        None when one is too long to be a key."""
        return filter_keys(self.filter_values)

    @property
    def fused(self) -> bool:
        """The words order the filtered agents by the fused order (hybrid, semantic)."""
        return self.mode != "keyword"


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


@functools.cache
def discovery_filters(without: frozenset[str] = frozenset()) -> dict:
    """The discovery FilterSet's filters (less ``without``), bound to one FilterSet made
    once (their methods are its methods: they keep no state of a request)."""
    filterset = agent_filterset(without)(queryset=agent_discoverable_queryset().none())
    return filterset.filters


def sort_choose(sort: str | None, *, has_text: bool, syncing: bool) -> str:
    if syncing:
        return "updated"
    sort = sort or ("relevance" if has_text else "recent")
    if sort not in SORTS or sort == "updated":
        raise bad_parameter("sort", f"must be one of relevance, recent, name, trust, not '{sort}'")
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


def collapse_parse(raw: str | None) -> bool:
    if raw in (None, "", "true"):
        return True
    if raw == "false":
        return False
    raise bad_parameter("collapse", f"must be one of true, false, not '{raw}'")


def mode_parse(raw: str | None) -> str:
    mode = (raw or DEFAULT_MODE).strip()
    if mode not in MODES:
        raise bad_parameter("mode", f"must be one of {', '.join(MODES)}, not '{mode}'")
    return mode


def _filters_clean(last: dict, filters: dict, without: frozenset[str], params) -> tuple:
    """q's cleaned text and every other filter given with its cleaned value (``last``:
    each parameter's last value); a value a field refuses is the FilterSet's own 400 (all
    its errors, as the view reports them, from ``params``)."""
    text, cleaned, bad = "", [], False
    for name, found in filters.items():
        if name not in last:
            continue
        form_field = found.field
        try:
            value = form_field.clean(form_field.widget.value_from_datadict(last, {}, name))
        except ValidationError:
            bad = True
            continue
        if name == "q":
            text = value or ""
        else:
            cleaned.append((name, value))
    if bad:  # rare: the FilterSet's form says it, word for word as the view always has
        queryset = agent_discoverable_queryset().none()
        filterset = agent_filterset(without)(data=params, queryset=queryset)
        filterset.is_valid()  # (False: a field refused its value above)
        raise filter_problems(filterset)
    return text, cleaned


def query_parse(
    params, *, without: frozenset[str] = frozenset(), strict: bool = True
) -> DiscoveryQuery:
    """``params`` (a QueryDict, or a dict of strings) as a checked ``DiscoveryQuery``; a bad
    value is a 400 problem naming its parameter (``registry.http.params.bad_parameter``).
    ``without``: filters that mean nothing to the caller (its FilterSet lacks them);
    ``strict``: refuse parameters discovery does not know (the HTTP API does; a skill's data
    part may carry others, which filter nothing)."""
    filters = discovery_filters(without)
    # Each parameter's last value (as QueryDict.get reads it), in one pass over the lists.
    last, repeated = {}, False
    lists = params.lists() if hasattr(params, "lists") else ((k, [v]) for k, v in params.items())
    for name, values in lists:
        if values:
            last[name] = values[-1]
        repeated = repeated or len(values) != 1
    if strict:
        params_check(last, DISCOVERY_PARAMS | set(filters))
    text, cleaned = _filters_clean(last, filters, without, params)
    since = since_parse(last.get("updated_since"))
    raw_text = last.get("q") or ""
    sort = sort_choose(last.get("sort"), has_text=bool(raw_text.strip()), syncing=bool(since))
    limit = limit_parse(last.get("limit"))
    mode = mode_parse(last.get("mode"))
    facets = tuple(facets_parse(last["facets"])) if last.get("facets") else ()
    collapse = collapse_parse(last.get("collapse"))
    return DiscoveryQuery(
        text=text.strip(),
        mode=mode,
        filters=tuple(cleaned),
        sort=sort,
        limit=limit,
        cursor=last.get("cursor") or None,
        live_only=last.get("liveOnly") == "true",
        facets=facets,
        since=since,
        named=frozenset(n for n, v in last.items() if v and n not in NOT_FILTERS),
        names=frozenset(last),
        repeated=repeated,
        params=params,
        collapse=collapse,
    )


def query_or_none(params, **kwargs) -> DiscoveryQuery | None:
    """``query_parse``, or None where it would refuse (the lean lane: the view answers)."""
    try:
        return query_parse(params, **kwargs)
    except ProblemError:
        return None
