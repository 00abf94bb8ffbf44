"""Server names in the MCP Registry's namespace rules: ``<namespace>/<name>``, the namespace a
reversed domain. An agent whose domain is proved (an A2A card read from its domain, or a
domain claim of its owner verified for the endpoint's host) names its servers in that
domain's namespace; every other server is named in the registry's own, with the agent's id,
so that no one can take a name in a domain they have not proved."""

import re
import uuid
from urllib.parse import urlsplit

from django.conf import settings

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


def proved_domains(agents: list[Agent]) -> dict[uuid.UUID, str]:
    """Each agent's proved domain, where it has one (one query for the owners' claims)."""
    found: dict[uuid.UUID, str] = {}
    for agent in agents:
        provenance = getattr(agent, "a2a_provenance", None)  # select_related by the a2a app
        if provenance is not None and provenance.verified_domain:
            found[agent.pk] = provenance.verified_domain.lower().split(":")[0]
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
