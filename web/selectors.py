"""Reads of the browse pages. The search is discovery's own (registry.discovery.filters,
registry.discovery, registry.discovery.facets), the same code path as GET /discover/agents; this
module only translates the page's query parameters and shapes the results for templates."""

from dataclasses import dataclass, field

from django.http import QueryDict
from django.utils import timezone

from registry import extensions
from registry.agents import selectors
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import AgentSerializer
from registry.discovery import discover as discovery
from registry.discovery import facets
from registry.discovery.filters import agent_filterset
from registry.discovery.models import AgentFacet
from registry.discovery.query import query_parse
from registry.http.problems import ProblemError
from registry.moderation import reports

PAGE_SIZE = 20
# Short names the pages use for discovery parameters (/browse?live=true&binding=GRPC).
ALIASES = {"live": "liveOnly", "binding": "protocolBinding"}
ALIASES_BACK = {v: k for k, v in ALIASES.items()}
# What a page's query keeps besides the filters: the text, the order and the page.
SHAPING = {"q", "sort", "cursor", "mode", "collapse"}
# The facets shown first in the sidebar, in this order; other registered ones follow.
FACET_ORDER = ["tag", "protocolBinding", "provider", "protocol", "live", "aap", "aapCompliant"]
FACET_TITLES = {
    "tag": "Skill tags",
    "protocolBinding": "Bindings",
    "protocolVersion": "Protocol versions",
    "provider": "Providers",
    "protocol": "Protocols",
    "transport": "Transports",
    "live": "Live now",
    "aap": "AAP dealers",
    "aapCompliant": "AAP compliant",
    "securityScheme": "Security schemes",
    "extension": "Extensions",
    "streaming": "Streaming",
    "pushNotifications": "Push notifications",
    "specVersion": "Card versions",
    "entityCategory": "Business types",
    "entityFormat": "Entity card formats",
    "verificationLevel": "Entity verification",
}
# Yes/no filters shown as checkboxes (only those whose fact kind is registered).
FLAGS = [
    ("live", "Live now"),
    ("verified", "Verified domain"),
    ("signed", "Signed card"),
    ("aap", "AAP dealer"),
    ("aapCompliant", "AAP compliant"),
]
SORTS = [
    ("", "Best match / newest"),
    ("recent", "Newest"),
    ("name", "Name"),
    ("trust", "Most trusted"),
]
# How the search text matches (registry.discovery.hybrid); the first is the default.
MODES = [("", "Words and meaning"), ("semantic", "Meaning"), ("keyword", "Words")]


class SearchError(Exception):
    """The query cannot be answered (a bad parameter): the page says why."""


@dataclass
class Search:
    params: dict[str, str]  # the page's parameters, empty ones dropped
    agents: list[dict] = field(default_factory=list)
    next_cursor: str | None = None
    sort: str = ""
    facets: list[dict] = field(default_factory=list)
    exact: bool = True


def page_params(query: QueryDict) -> dict[str, str]:
    """The page's parameters with a value (the last of each), as the page writes them;
    anything that is not a discovery filter, the text, the order or the page is dropped."""
    known = SHAPING | set(agent_filterset().base_filters)
    params = {}
    for key in query:
        name = ALIASES.get(key, key)
        value = query.get(key, "").strip()
        if value and name in known:
            params[ALIASES_BACK.get(name, name)] = value
    return params


def _discovery_params(params: dict[str, str]) -> QueryDict:
    query = QueryDict(mutable=True)
    for key, value in params.items():
        query[ALIASES.get(key, key)] = value
    query["limit"] = str(PAGE_SIZE)
    return query


def facet_list() -> list[str]:
    known = facets.facet_names()
    rest = sorted(known - set(FACET_ORDER))
    return [name for name in FACET_ORDER if name in known] + rest


def flag_list() -> list[tuple[str, str]]:
    kinds = {k.name for k in extensions.fact_kinds.read() if k.filter in ("flag", "present")}
    return [(name, label) for name, label in FLAGS if name == "live" or name in kinds]


def agents_shown(agents: list[Agent], context: dict) -> list[dict]:
    """The agents as their JSON (with the apps' members), their provider fact and the
    badges the apps give them."""
    data = AgentSerializer(agents, many=True, context=context).data
    providers = dict(
        AgentFacet.objects.filter(agent__in=[a.pk for a in agents], kind="provider").values_list(
            "agent_id", "value"
        )
    )
    badges = sorted(extensions.badges.read(), key=lambda b: (b.order, b.name))
    for agent, row in zip(agents, data, strict=True):
        row["provider"] = providers.get(agent.pk)
        row["badges"] = [
            {"name": badge.name, "label": label, "href": badge.href and badge.href(agent)}
            for badge in badges
            if (label := badge.label(agent)) is not None
        ]
        row["created"], row["updated"] = agent.created_at, agent.updated_at
        # What a card without a description can still say: how the agent is reached.
        row["protocols"] = sorted(
            {f"{e['protocol']} ({e['transport']})" for e in row.get("endpoints") or []}
        )
    return data


def search(query: QueryDict, context: dict) -> Search:
    """Discovery over the page's parameters: a page of agents and the facet counts."""
    params = page_params(query)
    result = Search(params=params)
    data = _discovery_params(params)
    filterset = agent_filterset()(data=data, queryset=selectors.agent_discoverable_queryset())
    if not filterset.is_valid():
        errors = [f"{ALIASES_BACK.get(k, k)}: {' '.join(v)}" for k, v in filterset.errors.items()]
        raise SearchError("; ".join(errors))
    try:
        query = query_parse(data, strict=False)
        agents = filterset.qs
        if query.collapse:  # the canonical copies only, as every discovery face shows them
            agents = agents.filter(duplicate_of__isnull=True)
        page, result.sort, _ = discovery.discover(
            agents, query, full_rows=selectors.agent_discoverable_queryset()
        )
        source = discovery.facet_source(agents, query)
        counts, result.exact = facets.facet_counts(source, facet_list())
    except ProblemError as error:
        raise SearchError(str(error.detail)) from None
    result.agents = agents_shown(page.rows, context)
    result.next_cursor = page.next_cursor
    result.facets = [
        {
            "name": name,
            "param": ALIASES_BACK.get(name, name),
            "title": FACET_TITLES.get(name, name),
            "values": values,
        }
        for name, values in counts.items()
        if values
    ]
    return result


def live_count() -> int:
    """Agents with an endpoint live now: from the live endpoints (index endpoint_alive),
    not a probe per agent."""
    live = Endpoint.objects.filter(alive_until__gt=timezone.now())
    return live.order_by().values("agent_id").distinct().count()


def home_counts() -> list[tuple[str, int, str]]:
    """(label, count, browse link) for the home page: agents, live now, and the agents with
    each registered trust fact (verified, signed, AAP dealers)."""
    counts = [
        ("agents", Agent.objects.filter(listed=True).count(), "/browse"),
        ("live now", live_count(), "/browse?live=true"),
    ]
    kinds = {k.name for k in extensions.fact_kinds.read()}
    for kind, label in (
        ("verified", "verified domains"),
        ("signed", "signed cards"),
        ("aap", "AAP dealers"),
        ("aapCompliant", "AAP compliant"),
    ):
        if kind in kinds:
            n = AgentFacet.objects.filter(kind=kind, value="true", agent__listed=True).count()
            counts.append((label, n, f"/browse?{kind}=true"))
    return counts


def recent_agents(context: dict, n: int = 6) -> list[dict]:
    """The newest agents, those that are agents of their own (not businesses listed for
    their MCP servers: the demo's placeholder restaurants) and describe themselves first:
    what a visitor comes for."""
    # Each group newest first, by the creation index: no sort of the whole table.
    agents = selectors.agent_discoverable_queryset()
    own = agents.exclude(source__in=extensions.business_sources.read())
    picked: list[Agent] = []
    for group in (own.exclude(description=""), own.filter(description=""), agents):
        if len(picked) < n:
            group = group.exclude(pk__in=[a.pk for a in picked]).order_by("-created_at", "id")
            picked += list(group[: n - len(picked)])
    return agents_shown(picked, context)


def agent_page(agent_id: str, context: dict) -> tuple[dict, list[dict]] | None:
    """An agent's JSON and the panels the apps add to its page; None when unknown. A
    panel's ``skills`` (a protocol's fuller view of them) replace the core's list."""
    try:
        agent = selectors.agent_get(agent_id)
    except ProblemError:
        return None
    if agent.status == Agent.Status.RETIRED:
        return None  # gone for the public (its API answers 410)
    request = context.get("request")
    if not agent.listed and not (request is not None and request.user.is_staff):
        return None  # not publicly listed (registry.agents.listing): staff only
    row = agents_shown([agent], context)[0]
    row["unlisted"] = not agent.listed
    panels = []
    for panel in sorted(extensions.agent_panels.read(), key=lambda p: (p.order, p.name)):
        panel_context = panel.context(agent)
        if panel_context is not None:
            panels.append({"template": panel.template, **panel_context})
    return row, panels


def agent_report(agent_id: str, reason: str, detail: str, address: str) -> None:
    """A report from the agent's page, as the API files one (anonymous, limited per address)."""
    reports.report_limit(address)
    agent = selectors.agent_get(agent_id)
    reports.report_create(agent=agent, reason=reason, detail=detail, owner="", address=address)
