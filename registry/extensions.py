"""Extension points: what a protocol app may add to the protocol-agnostic core.

The core never names a protocol app. Each app (``a2a``, ``aap`` …) registers what it adds
from its ``AppConfig.ready()`` through the ``register_*`` functions below, and the core
reads the stores when it builds filters, facets, agent JSON and demo data. Once Django's
app registry is ready, the stores are closed: registering later raises, so what a
running registry serves cannot change under it.

- fact kinds (``AgentFacet`` kinds as filters and facets); agent and endpoint members (of
  their JSON, with their schema); related (one-to-one rows read with every agent);
- sources (``Agent.source`` values); problem types (``problems``); demo loaders
  (``load_demo``); URLs (an app's URLconf); schedules (Celery beat jobs); probers
  (``registry.liveness.probes``); agent panels and badges (the agent's HTML page);
- lean routes: the hottest paths, answered before Django (``registry.fastpath.lean``);
- tools: what an app answers model clients (listed by the MCP face, ``resolve_entity``);
- trust signals and duplicate keys (``registry.trust``); scanners: rules every agent write
  meets, each finding with a verdict (``registry.moderation.scanning``);
- held changes: writes that may wait for a moderator (``registry.agents.holds``): how to
  make each again once approved, and what an agent serves as JSON (the diff's two sides);
- ASGI routes: paths answered by the async server (``registry.events.asgi``);
- served cards: the document served for each endpoint of a protocol (an MCP server card);
- origin cards: documents an app read at an endpoint's origin (SEP-1649 server cards, the
  entities app's), which the app serving that protocol's cards serves as read;
- verified domains: the domain an app's own proof shows an agent speaks for (an entity's
  card at its domain): its MCP servers are named in that domain's namespace.

Apps send and receive change signals (``registry.signals``) for what happens at write
time; the arrows point inward.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

# How a fact kind filters: "exact" / "iexact" match the value; "flag" takes true/false and
# matches the stored "true"/"false"; "present" takes true/false and asks whether the
# agent has the fact with value "true" (false: it has none, whatever else it has).
FactFilter = Literal["exact", "iexact", "flag", "present"]


@dataclass(frozen=True)
class FactKind:
    """A kind of ``AgentFacet(kind, value)`` fact: a discovery filter named ``name``,
    and, with ``facet``, a facet whose counts are taken over the facts of this kind."""

    name: str
    help_text: str
    filter: FactFilter | None = "exact"
    facet: bool = True


@dataclass(frozen=True)
class Member:
    """A member of the agent (or endpoint) JSON: ``value`` reads it from a model instance
    (only from what the selectors fetched: no query per row), ``schema`` documents it."""

    name: str
    value: Callable[[Any], Any]
    schema: dict[str, Any]
    help_text: str


@dataclass(frozen=True)
class DemoLoader:
    """Adds an app's demo agents for ``owner``, skipping the names in ``existing``;
    returns how many it added."""

    load: Callable[[str, set[str]], int]


@dataclass(frozen=True)
class Routes:
    """An app's URLconf module; ``first``: resolved before the core's routes (the most
    frequent requests, such as card reads, should not walk the others first)."""

    module: str
    first: bool = False


@dataclass(frozen=True)
class Schedule:
    """A periodic job: the Celery task named ``task``, every ``seconds``."""

    name: str
    task: str
    seconds: float


@dataclass(frozen=True)
class AgentPanel:
    """A section of an agent's HTML page: ``context(agent)`` gives the context of
    ``template`` (None: the section is left out). ``order`` sorts the sections."""

    name: str
    template: str
    context: Callable[[Any], dict | None]
    order: int = 50


@dataclass(frozen=True)
class Badge:
    """A label the pages show with an agent: ``label(agent)`` is its text, or None for no
    badge (only from what the selectors fetched: no query per agent); ``href(agent)``, when
    given, the path of the app's own page about it (a business's page), which the label links."""

    name: str
    label: Callable[[Any], str | None]
    order: int = 50
    href: Callable[[Any], str | None] | None = None


@dataclass(frozen=True)
class LeanRoute:
    """A path answered by the lean lane (``registry.fastpath.lean``): ``handler(rest,
    environ)`` gets what follows ``prefix`` in the path (``exact``: nothing may follow) and
    the WSGI environ (the query string, the credentials of a write), for ``method`` GET (and
    HEAD) or POST. It returns a ``registry.fastpath.lean.LeanAnswer``, or None to let Django
    answer (any case but the ordinary one). ``read_limited``: the per-client read limit
    applies, as in the Django view (GET only); ``database``: the handler uses the database
    (its connection is looked after); ``anonymous``: only requests without an API key (a
    keyed request goes to Django uncounted: its view counts it per key)."""

    prefix: str
    handler: Callable[..., Any]
    exact: bool = False
    read_limited: bool = True
    database: bool = True
    anonymous: bool = False
    method: str = "GET"

    def __post_init__(self):
        if self.method not in ("GET", "POST"):
            raise ImproperlyConfigured(
                f"lean route {self.prefix!r}: GET or POST, not {self.method}."
            )
        if self.method == "POST" and self.read_limited:
            raise ImproperlyConfigured(f"lean route {self.prefix!r}: the read limit is for GETs.")


@dataclass(frozen=True)
class AsgiRoute:
    """Requests whose path starts with ``prefix``, answered in the async server
    (``registry.events.asgi``) by ``app``: an ASGI application (HTTP scopes only), or its
    dotted path (``"module.name"``), imported there at the first such request so that the
    web process never loads it."""

    prefix: str
    app: Any

    def __post_init__(self):
        if not self.prefix.startswith("/") or not self.prefix.endswith("/"):
            raise ImproperlyConfigured(f"ASGI route {self.prefix!r}: a path from / to /.")


@dataclass(frozen=True)
class Tool:
    """A tool for model clients. ``answer`` is a plain (sync) function: its keyword
    parameters, typed and described (``Annotated[T, pydantic.Field(description=…)]``), are
    the tool's arguments; it returns ``(text, data)``, the answer in a sentence and as JSON
    (whose shape ``output``, a pydantic model, declares), or raises
    ``registry.http.problems.ProblemError`` (a refusal naming the argument). ``description``
    is written for a model choosing among tools, with an example call."""

    name: str
    answer: Callable[..., tuple[str, dict[str, Any]]]
    description: str
    output: Any
    read_only: bool = True


@dataclass(frozen=True)
class ServedCard:
    """The card the registry serves for each endpoint of ``protocol`` (``media_type``).
    ``read(agents)`` answers, for those agents' endpoints of the protocol (fetched with them,
    ``registry.agents.selectors``), ``{endpoint id: (url, bytes)}``: where the card is served
    and its bytes as served, in bulk (a query or two for them all)."""

    protocol: str
    media_type: str
    read: Callable[[list], dict]


@dataclass(frozen=True)
class TrustSignal:
    """A signal of the trust score (registry/trust/): ``values(agent_ids)`` reads it for
    many agents at once (a few statements, whatever their number) and returns {agent id:
    (value, detail)}: ``value`` from 0 to 1, or None where the signal says nothing of that
    agent (left out of its score: an entity's level for an agent that is no entity);
    ``detail``, a small dict of what was seen (shown beside the value). An agent missing
    from the answer has the value ``missing``: 0 (what was not seen is not proved), or None
    (the signal says nothing of it). Its weight is ``TRUST_WEIGHTS[name]``."""

    name: str
    values: Callable[[list], dict]
    help_text: str
    missing: float | None = 0.0


Verdict = Literal["block", "review", "note"]


@dataclass(frozen=True)
class Scanner:
    """A rule of admission (``registry.moderation.scanning``): ``scan(subject)`` returns
    ``(path, message)`` for each thing it finds in an agent being written (the subject's
    ``owner``, ``name``, ``texts``: [(path, text)] and ``addresses``: [(path, URL)]). Its
    ``verdict`` applies unless the ``SCAN_VERDICTS`` setting names the rule."""

    name: str
    scan: Callable[[Any], list[tuple[str, str]]]
    verdict: Verdict = "review"
    severity: Literal["high", "medium", "low"] = "medium"


@dataclass(frozen=True)
class HeldChange:
    """A kind of write that may wait for review (``registry.agents.holds``): ``apply(agent,
    payload)`` makes it once approved; ``document(agent_id)``, if given, is what the agent
    serves as JSON (its card), or None where it serves none."""

    name: str
    apply: Callable[[Any, dict], Any]
    document: Callable[[Any], dict | None] | None = None


class ExtensionsClosed(ImproperlyConfigured):
    """Something registered after start-up, when the extension points are closed."""


class _Store(dict):
    """A store of one extension point: names are unique, and registering ends at start-up."""

    def __init__(self, label: str):
        super().__init__()
        self.label = label

    def add(self, name: str, value: Any) -> None:
        if apps.ready:
            raise ExtensionsClosed(
                f"{self.label} {name!r} registered after start-up: register from AppConfig.ready()."
            )
        if name in self:
            raise ImproperlyConfigured(f"{self.label} {name!r} is registered twice.")
        self[name] = value

    def read(self) -> list:
        if not apps.ready:
            raise ImproperlyConfigured(
                f"{self.label}s read before start-up ended: some apps have not registered yet."
            )
        return list(self.values())


fact_kinds = _Store("fact kind")
agent_members = _Store("agent member")
endpoint_members = _Store("endpoint member")
related = _Store("related name")
sources = _Store("agent source")
# Sources whose agents are businesses listed for their MCP servers, not agents of their own:
# the home page's "Recently registered" shows them after the agents.
business_sources = _Store("business source")
problem_types = _Store("problem type")
demo_loaders = _Store("demo loader")
routes = _Store("URLconf")
schedules = _Store("schedule")
probers = _Store("prober")
agent_panels = _Store("agent panel")
badges = _Store("badge")
lean_routes = _Store("lean route")
asgi_routes = _Store("ASGI route")
meaning_texts = _Store("meaning text")
tools = _Store("tool")
served_cards = _Store("served card")
origin_cards = _Store("origin card")
verified_domains = _Store("verified domain")
scrape_gauges = _Store("scrape gauge")
trust_signals = _Store("trust signal")
duplicate_keys = _Store("duplicate key")
scanners = _Store("scanner")
held_changes = _Store("held change")


def register_fact_kind(kind: FactKind) -> None:
    fact_kinds.add(kind.name, kind)


def register_agent_member(member: Member) -> None:
    agent_members.add(member.name, member)


def register_endpoint_member(member: Member) -> None:
    endpoint_members.add(member.name, member)


def register_related(name: str) -> None:
    """A one-to-one relation of ``Agent`` (its related name) that every agent read joins."""
    related.add(name, name)


def register_source(value: str, label: str, *, business: bool = False) -> None:
    """An ``Agent.source`` value; ``business``: its agents stand for businesses (entities),
    which the home page shows after the agents of their own."""
    sources.add(value, (value, label))
    if business:
        business_sources.add(value, value)


def register_problem_type(slug: str, description: str) -> None:
    problem_types.add(slug, description)


def register_demo_loader(name: str, load: Callable[[str, set[str]], int]) -> None:
    demo_loaders.add(name, DemoLoader(load))


def register_urls(module: str, *, first: bool = False) -> None:
    routes.add(module, Routes(module, first))


def register_schedule(name: str, task: str, seconds: float) -> None:
    schedules.add(name, Schedule(name, task, seconds))


def register_prober(protocol: str, probe: Callable[[Any], Any]) -> None:
    """``probe(endpoint) -> registry.liveness.probes.ProbeOutcome`` for endpoints of
    ``protocol``."""
    probers.add(protocol, probe)


def register_agent_panel(panel: AgentPanel) -> None:
    agent_panels.add(panel.name, panel)


def register_badge(badge: Badge) -> None:
    badges.add(badge.name, badge)


def register_lean_route(route: LeanRoute) -> None:
    lean_routes.add(f"{route.method} {route.prefix}", route)


def register_asgi_route(prefix: str, app: Any) -> None:
    """Serve the paths under ``prefix`` from the async server with ``app`` (AsgiRoute)."""
    asgi_routes.add(prefix, AsgiRoute(prefix, app))


def register_meaning_text(name: str, texts: Callable[[list], dict]) -> None:
    """``texts(agent_ids) -> {agent_id: text}``: what an app knows of what agents do (skill
    examples, an entity's category), added to the text semantic search embeds."""
    meaning_texts.add(name, texts)


def register_tool(tool: Tool) -> None:
    tools.add(tool.name, tool)


def register_served_card(card: ServedCard) -> None:
    served_cards.add(card.protocol, card)


def register_origin_card(name: str, read: Callable[[list[str]], dict[str, bytes]]) -> None:
    """``read(addresses) -> {address: bytes}``: the card an app read at the origin of each
    of these endpoint addresses that has one, byte for byte as read."""
    origin_cards.add(name, read)


def register_verified_domains(name: str, read: Callable[[list], dict]) -> None:
    """``read(agents) -> {agent id: domain}``, from what the selectors fetched with them."""
    verified_domains.add(name, read)


def register_scrape_gauges(name: str, collect: Callable[[], Iterable]) -> None:
    """``collect()`` yields prometheus-client metric families (``GaugeMetricFamily``) read
    when ``/metrics`` is scraped: what an app holds now (one cheap query). Their names are
    made with ``registry.http.metrics.PREFIX`` and documented with the core's series."""
    scrape_gauges.add(name, collect)


def register_trust_signal(signal: TrustSignal) -> None:
    trust_signals.add(signal.name, signal)


def register_duplicate_keys(name: str, keys: Callable[[list], dict]) -> None:
    """``keys(agent_ids) -> {agent id: [key, …]}``: what makes a listing the same agent as
    another (two agents with a key in common are copies of one): a card's digest
    (``"card-digest:<sha256>"``), an entity's domain. Keys are at most 300 characters."""
    duplicate_keys.add(name, keys)


def register_scanner(scanner: Scanner) -> None:
    scanners.add(scanner.name, scanner)


def register_held_change(change: HeldChange) -> None:
    held_changes.add(change.name, change)
