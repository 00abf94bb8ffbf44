"""Server names in the MCP Registry's namespace rules: ``<namespace>/<name>``, the namespace a
reversed domain. An agent whose domain is proved (an A2A card read from its domain, a domain
an app verified for it, ``registry.extensions.verified_domains``: an entity whose own card
at its domain lists its servers, or a domain claim of its owner verified for the endpoint's
host) names its servers in that domain's namespace; every other server is named in the
registry's own, with the agent's id, so that no one can take a name in a domain they have
not proved. Two servers that would have one name: ``protocols.mcp.subregistry.services``."""

import re
import uuid
from urllib.parse import urlsplit

from django.conf import settings

from protocols.mcp.models import ServerVersion
from registry import extensions
from registry.agents.models import Agent, DomainClaim, Endpoint

NAME_MAX = 200
# Agents imported from an MCP Registry (protocols.mcp.imports): the only source whose
# servers keep the names their registry gave them.
IMPORT_SOURCE = "mcp-registry"
_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")
# The official pattern (server.schema.json): one slash between namespace and name.
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")


def reversed_domain(domain: str) -> str:
    return ".".join(reversed(domain.lower().strip(".").split(".")))


def registry_namespace() -> str:
    return reversed_domain(urlsplit(settings.REGISTRY_BASE_URL).hostname or "localhost")


def slug(value: str, most: int = 80) -> str:
    return _UNSAFE.sub("-", value).strip("-._")[:most].strip("-._") or "server"


def _covers(domain: str, host: str) -> bool:
    return host == domain or host.endswith("." + domain)


def _host(domain: str) -> str:
    return domain.lower().split(":")[0]  # a port only in development and tests


def proved_domains(agents: list[Agent]) -> dict[uuid.UUID, str]:
    """Each agent's proved domain, where it has one (one query for the owners' claims)."""
    found: dict[uuid.UUID, str] = {}
    for agent in agents:
        provenance = getattr(agent, "a2a_provenance", None)  # select_related by the a2a app
        if provenance is not None and provenance.verified_domain:
            found[agent.pk] = _host(provenance.verified_domain)
    for read in extensions.verified_domains.read():
        for pk, domain in read([a for a in agents if a.pk not in found]).items():
            if domain and _host(domain):
                found.setdefault(pk, _host(domain))
    rest = [a for a in agents if a.pk not in found]
    if not rest:
        return found  # no query
    claims: dict[str, list[str]] = {}
    rows = DomainClaim.objects.filter(
        owner__in={a.owner for a in rest}, state=DomainClaim.State.VERIFIED
    ).values_list("owner", "domain")
    for owner, domain in rows:
        claims.setdefault(owner, []).append(domain.lower())
    for agent in rest:
        hosts = {
            (urlsplit(e.address).hostname or "").lower()
            for e in agent.endpoints.all()
            if e.protocol == Endpoint.Protocol.MCP
        }
        for domain in sorted(claims.get(agent.owner, []), key=len, reverse=True):
            if hosts and all(_covers(domain, host) for host in hosts):
                found[agent.pk] = domain
                break
    return found


def imported_name(agent: Agent, endpoint: Endpoint) -> str | None:
    """The name an MCP Registry gave a server the registry imported from it (whose
    namespace that registry proved): kept, so that mirrors of both agree."""
    if agent.source != IMPORT_SOURCE or not isinstance(endpoint.protocol_metadata, dict):
        return None
    listed = endpoint.protocol_metadata.get("mcpRegistry")
    name = listed.get("name") if isinstance(listed, dict) else None
    return name if isinstance(name, str) and NAME_PATTERN.match(name) else None


def server_name(agent: Agent, endpoint: Endpoint, mcp_count: int, domain: str | None) -> str:
    """The server's name: the one its MCP Registry gave an imported server; else
    ``<reversed domain>/<agent>[-<endpoint>]`` in a proved domain, else
    ``<registry namespace>/<agent>-<agent id's first 8 hex digits>[-<endpoint>]``."""
    imported = imported_name(agent, endpoint)
    if imported is not None:
        return imported if mcp_count == 1 else f"{imported}-{slug(endpoint.name, 40)}"[:NAME_MAX]
    base = slug(agent.name)
    if domain is None:
        base = f"{base}-{agent.pk.hex[:8]}"
    if mcp_count > 1:
        base = f"{base}-{slug(endpoint.name, 40)}"
    namespace = reversed_domain(domain) if domain else registry_namespace()
    return f"{namespace}/{base}"[:NAME_MAX]


def _suffixed(name: str, endpoint_id: uuid.UUID, digits: int) -> str:
    tail = f"-{endpoint_id.hex[:digits]}"
    return name[: NAME_MAX - len(tail)] + tail


def _holders(names: set[str]) -> dict[str, set[uuid.UUID]]:
    """The servers that have a version under each of these names."""
    found: dict[str, set[uuid.UUID]] = {}
    rows = ServerVersion.objects.filter(name__in=names).values_list("name", "endpoint_uuid")
    for name, endpoint_id in rows.distinct():
        found.setdefault(name, set()).add(endpoint_id)
    return found


def names_settle(wanted: dict[uuid.UUID, str]) -> dict[uuid.UUID, str]:
    """Each server's name (``{endpoint id: name}``), unique and its own for good: a server
    keeps a name that no other server has had a version under; any other server that would
    have it is named ``<name>-<the first 8 hex digits of its endpoint id>`` (all 32 if that
    is taken too). Servers of one write that want a name no server has had yet: the one
    whose endpoint id sorts first takes it. A server left unnamed (its 32 digits another's
    name too: never seen) is left out."""
    settled: dict[uuid.UUID, str] = {}
    taken: dict[str, set[uuid.UUID]] = {}  # the names this write gave
    left = sorted(wanted)
    for digits in (0, 8, 32):
        if not left:
            break
        candidates = {
            pk: _suffixed(wanted[pk], pk, digits) if digits else wanted[pk] for pk in left
        }
        holders = {**_holders(set(candidates.values())), **taken}
        left = []
        for pk, name in candidates.items():
            if holders.setdefault(name, {pk}) <= {pk}:
                settled[pk], taken[name] = name, {pk}
            else:
                left.append(pk)
    return settled
