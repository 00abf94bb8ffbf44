"""Between A2A cards and the protocol-agnostic model.

``card_to_agent_input``: a submitted card becomes an agent (skills become
capabilities, interfaces become A2A endpoints, card-level A2A members go to
the preferred endpoint's protocol metadata). ``card_generate``: the A2A 1.0
card of a natively registered agent, built from the model.
"""

import re
from typing import Any

from django.conf import settings

from protocols.a2a.cards.formats import card_classify, card_get
from protocols.a2a.cards.validation import card_index_view
from registry.agents.models import Agent, Endpoint
from registry.agents.services import AgentInput, CapabilityInput, EndpointInput
from registry.http.jsonutil import Problem

# Card-level A2A members kept in the preferred endpoint's protocol metadata,
# and overlaid from there when a native agent's card is generated.
CARD_LEVEL_MEMBERS = (
    "provider",
    "documentationUrl",
    "iconUrl",
    "capabilities",
    "securitySchemes",
    "securityRequirements",
    "defaultInputModes",
    "defaultOutputModes",
)
INTERFACE_MEMBERS = ("protocolBinding", "protocolVersion", "tenant")
DEFAULT_MODES = ["text/plain", "application/json"]
# The bindings the queue relay answers an AMQP endpoint's URL in (JSON-RPC at it,
# HTTP+JSON under it).
RELAY_BINDINGS = ["JSONRPC", "HTTP+JSON"]
QUEUE_BINDINGS = {
    Endpoint.Transport.AMQP: "AMQP",
    Endpoint.Transport.AZURE_SERVICE_BUS: "AzureServiceBus",
}


def _endpoint_name(binding: str, taken: set[str]) -> str:
    # A binding is a short word, but a card may say anything: the name must fit its column.
    base = re.sub(r"[^a-z0-9+]+", "-", binding.lower())[:100].strip("-") or "a2a"
    name, counter = base, 2
    while name in taken:
        name, counter = f"{base}-{counter}", counter + 1
    taken.add(name)
    return name


def card_to_agent_input(doc: dict, view: dict | None = None) -> AgentInput:
    """Map a validated card (any accepted version or spelling) to the registry model."""
    view = view if view is not None else card_index_view(doc)
    capabilities = [
        CapabilityInput(
            name=skill.get("name", ""),
            description=skill.get("description", ""),
            tags=[t for t in skill.get("tags", []) if isinstance(t, str) and t.strip()],
            external_id=skill.get("id", ""),
        )
        for skill in view.get("skills", [])
    ]
    card_level = {k: view[k] for k in CARD_LEVEL_MEMBERS if k in view}
    endpoints: list[EndpointInput] = []
    taken: set[str] = set()
    seen: set[tuple[str, str]] = set()
    for index, iface in enumerate(view.get("supportedInterfaces", [])):
        # 0.3 cards often repeat their main interface in additionalInterfaces.
        identity = (iface.get("url", ""), iface.get("protocolBinding", ""))
        if identity in seen:
            continue
        seen.add(identity)
        metadata: dict[str, Any] = {k: iface[k] for k in INTERFACE_MEMBERS if k in iface}
        if index == 0:
            metadata.update(card_level)
        endpoints.append(
            EndpointInput(
                name=_endpoint_name(iface.get("protocolBinding", "a2a"), taken),
                transport=Endpoint.Transport.HTTP,
                protocol=Endpoint.Protocol.A2A,
                address=iface.get("url", ""),
                liveness_model=Endpoint.Liveness.PERSISTENT,
                # A card names no interval: the registry's one default applies.
                heartbeat_interval_seconds=None,
                protocol_metadata=metadata,
            )
        )
    return AgentInput(
        name=view.get("name", ""),
        description=view.get("description", ""),
        version=view.get("version", ""),
        capabilities=capabilities,
        endpoints=endpoints,
    )


def a2a_endpoints(agent: Agent) -> list[Endpoint]:
    return [e for e in agent.endpoints.all() if e.protocol == Endpoint.Protocol.A2A]


def overlay_problems(agent: Agent) -> list[Problem]:
    """What card_generate cannot use of the A2A endpoints' protocolMetadata: skill
    overlays must be a list of objects (other members are checked in the card built)."""
    problems = []
    for index, endpoint in enumerate(agent.endpoints.all()):
        meta = endpoint.protocol_metadata or {}
        if endpoint.protocol != Endpoint.Protocol.A2A or "skills" not in meta:
            continue
        skills = meta["skills"]
        if not isinstance(skills, list) or not all(isinstance(s, dict) for s in skills):
            path = f"endpoints[{index}].protocolMetadata.skills"
            problems.append(Problem(path, "must be a list of skill objects"))
    return problems


def _queue_url(base_url: str, endpoint: Endpoint) -> str:
    return f"{base_url}/a2a/queue/{endpoint.id}"


def _capabilities(overlay: dict, endpoints: list[Endpoint], base_url: str) -> dict:
    """The card's capabilities; with a queue endpoint, no streaming (the relay answers
    each request whole), and for Azure Service Bus a note that it is not relayed."""
    capabilities = overlay.get("capabilities") or {"streaming": False}
    if not isinstance(capabilities, dict):
        return capabilities  # the card's validation names the problem
    capabilities = dict(capabilities)
    if any(endpoint.is_queue for endpoint in endpoints):
        capabilities["streaming"] = False
    if any(e.transport == Endpoint.Transport.AZURE_SERVICE_BUS for e in endpoints):
        listed = capabilities.get("extensions")
        capabilities["extensions"] = [
            *(listed if isinstance(listed, list) else []),
            {
                "uri": f"{base_url}/a2a/queue/details-only",
                "description": "Azure Service Bus interfaces are not relayed: GET their URL "
                "for the queue's connection details and talk to the queue directly.",
                "required": False,
            },
        ]
    return capabilities


def card_generate(agent: Agent, base_url: str) -> dict[str, Any] | None:
    """The A2A 1.0 card of a native agent; None when it has no A2A endpoint."""
    endpoints = a2a_endpoints(agent)
    if not endpoints:
        return None
    overlay = endpoints[0].protocol_metadata or {}
    interfaces = []
    for endpoint in endpoints:
        meta = endpoint.protocol_metadata or {}
        if endpoint.transport == Endpoint.Transport.AMQP:
            # The registry relays A2A to the queue (protocols.a2a.relay.service), in its two
            # bindings.
            url = _queue_url(base_url, endpoint)
            bindings = RELAY_BINDINGS
        elif endpoint.is_queue:
            url = _queue_url(base_url, endpoint)
            bindings = [meta.get("protocolBinding") or QUEUE_BINDINGS[endpoint.transport]]
        else:
            url = endpoint.address
            bindings = [meta.get("protocolBinding") or "JSONRPC"]
        for binding in bindings:
            interface = {
                "url": url,
                "protocolBinding": binding,
                "protocolVersion": "1.0"
                if endpoint.is_queue
                else meta.get("protocolVersion") or "1.0",
            }
            if meta.get("tenant"):
                interface["tenant"] = meta["tenant"]
            interfaces.append(interface)
    listed = overlay.get("skills")
    stored_skills = {
        s.get("id"): s for s in (listed if isinstance(listed, list) else []) if isinstance(s, dict)
    }
    skills = []
    for cap in agent.capabilities.all():
        skill_id = str(cap.id)
        skill = {
            "id": skill_id,
            "name": cap.name,
            "description": cap.description or cap.name,
            "tags": list(cap.tags) or [cap.name.lower()],
        }
        for key, value in stored_skills.get(skill_id, {}).items():
            skill.setdefault(key, value)
        skills.append(skill)
    if not skills:
        # A2A requires at least one skill: the agent as a whole is its one skill.
        skills.append(
            {
                "id": str(agent.id),
                "name": agent.name,
                "description": agent.description or agent.name,
                "tags": ["general"],
            }
        )
    card: dict[str, Any] = {
        "name": agent.name,
        "description": agent.description
        or f"{agent.name}, registered in {settings.REGISTRY_NAME}.",
        "supportedInterfaces": interfaces,
        "version": agent.version or "1.0",
        "capabilities": _capabilities(overlay, endpoints, base_url),
        "defaultInputModes": overlay.get("defaultInputModes") or DEFAULT_MODES,
        "defaultOutputModes": overlay.get("defaultOutputModes") or DEFAULT_MODES,
        "skills": skills,
    }
    for key in (
        "provider",
        "documentationUrl",
        "iconUrl",
        "securitySchemes",
        "securityRequirements",
    ):
        if overlay.get(key):
            card[key] = overlay[key]
    return card


# 1.0 security scheme wrappers and the scheme types they stand for (0.3 ``type`` values).
SCHEME_TYPES = {
    "apiKeySecurityScheme": "apiKey",
    "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2",
    "openIdConnectSecurityScheme": "openIdConnect",
    "mtlsSecurityScheme": "mutualTLS",
}


def card_facts(card: dict, view: dict | None = None) -> set[tuple[str, str]]:
    """The indexed facts of a card (kinds: CARD_FACT_KINDS) that discovery filters and
    counts by."""
    view = view if view is not None else card_index_view(card)
    facts: set[tuple[str, str]] = {("specVersion", card_classify(card) or "")}
    for iface in view.get("supportedInterfaces", []):
        facts.add(("protocolBinding", iface.get("protocolBinding", "")))
        facts.add(("protocolVersion", iface.get("protocolVersion", "")))
    organization = (view.get("provider") or {}).get("organization")
    if organization:
        facts.add(("provider", organization))
    capabilities = view.get("capabilities") or {}
    facts.add(("streaming", "true" if capabilities.get("streaming") else "false"))
    facts.add(("pushNotifications", "true" if capabilities.get("pushNotifications") else "false"))
    for extension in capabilities.get("extensions", []):
        if extension.get("uri"):
            facts.add(("extension", extension["uri"]))
    raw_schemes = card_get(card, "securitySchemes") or {}
    for name, scheme in (view.get("securitySchemes") or {}).items():
        kinds = [SCHEME_TYPES[k] for k in scheme if k in SCHEME_TYPES]
        raw = raw_schemes.get(name) if isinstance(raw_schemes, dict) else None
        if not kinds and isinstance(raw, dict) and isinstance(raw.get("type"), str):
            kinds = [raw["type"]]
        facts.update(("securityScheme", kind) for kind in kinds)
    return {(kind, value) for kind, value in facts if value}
