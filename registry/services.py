"""Every write to the registry goes through these functions (API, admin, commands)."""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from registry.audit import agent_summary, audit_record
from registry.models import (
    Agent,
    AgentSearchText,
    ApiKey,
    Capability,
    CapabilityTag,
    Endpoint,
    Tombstone,
)
from registry.search import search_keys_build, search_text_build
from registry.signals import agent_changed


@dataclass
class CapabilityInput:
    name: str
    description: str = ""
    tags: list[str] = field(default_factory=list)
    external_id: str = ""


@dataclass
class EndpointInput:
    name: str
    transport: str
    protocol: str
    address: str
    liveness_model: str = Endpoint.Liveness.PERSISTENT
    heartbeat_interval_seconds: int | None = None
    ttl_seconds: int | None = None
    protocol_metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class AgentInput:
    name: str
    description: str = ""
    version: str = ""
    capabilities: list[CapabilityInput] = field(default_factory=list)
    endpoints: list[EndpointInput] = field(default_factory=list)


def _notify(agent: Agent, changed: set[str], *, via_card: bool, base_url: str) -> None:
    agent_changed.send(
        sender=Agent, agent=agent, changed=changed, via_card=via_card, base_url=base_url
    )


def _capabilities_set(agent: Agent, capabilities: list[CapabilityInput]) -> None:
    """Replace the agent's capabilities, keeping the ids of those that stay (by id or name)."""
    existing = list(agent.capabilities.all())
    by_key: dict[tuple[str, str], list[Capability]] = {}
    for cap in existing:
        by_key.setdefault(_capability_key(cap.external_id, cap.name), []).append(cap)
    kept: list[Capability] = []
    for position, data in enumerate(capabilities):
        matches = by_key.get(_capability_key(data.external_id, data.name))
        cap = matches.pop(0) if matches else Capability(agent=agent)
        cap.name = data.name
        cap.description = data.description
        cap.tags = list(data.tags)
        cap.external_id = data.external_id
        cap.position = position
        kept.append(cap)
    kept_ids = {cap.pk for cap in kept if not cap._state.adding}
    Capability.objects.filter(agent=agent).exclude(pk__in=kept_ids).delete()
    for cap in kept:
        cap.save()
    CapabilityTag.objects.filter(agent=agent).delete()
    CapabilityTag.objects.bulk_create(
        CapabilityTag(capability=cap, agent=agent, value=tag.lower())
        for cap in kept
        for tag in dict.fromkeys(cap.tags)
    )


def _capability_key(external_id: str, name: str) -> tuple[str, str]:
    # A protocol id (A2A skill id) identifies a capability; without one, its name does.
    return (external_id, "" if external_id else name)


def _search_text_refresh(agent: Agent) -> None:
    # Read afresh: a prefetched agent.capabilities would be the list before this write.
    capabilities = list(Capability.objects.filter(agent=agent).order_by("position"))
    text = search_text_build(agent.name, agent.description, capabilities)
    keys = search_keys_build(agent.name, capabilities)
    AgentSearchText.objects.update_or_create(agent=agent, defaults={"text": text, "keys": keys})


def endpoint_build(agent: Agent, data: EndpointInput, position: int) -> Endpoint:
    """An unsaved endpoint of the agent (bulk inserts build them, then save them at once)."""
    endpoint = Endpoint(agent=agent, position=position)
    _endpoint_fill(endpoint, data)
    return endpoint


def _endpoint_fill(endpoint: Endpoint, data: EndpointInput) -> None:
    endpoint.name = data.name
    endpoint.transport = data.transport
    endpoint.protocol = data.protocol
    endpoint.address = data.address
    endpoint.liveness_model = data.liveness_model
    endpoint.heartbeat_interval_seconds = data.heartbeat_interval_seconds
    endpoint.ttl_seconds = data.ttl_seconds
    endpoint.protocol_metadata = data.protocol_metadata


def _endpoints_set(agent: Agent, endpoints: list[EndpointInput]) -> bool:
    """Replace the agent's endpoints (ids kept by name); True if an A2A endpoint changed."""
    existing = {e.name: e for e in agent.endpoints.all()}
    before = {e.name: _endpoint_state(e) for e in existing.values() if e.protocol == "A2A"}
    kept = []
    for position, data in enumerate(endpoints):
        endpoint = existing.pop(data.name, None) or Endpoint(agent=agent)
        _endpoint_fill(endpoint, data)
        endpoint.position = position
        kept.append(endpoint)
    Endpoint.objects.filter(pk__in=[e.pk for e in existing.values()]).delete()
    for endpoint in kept:
        endpoint.save()
    after = {e.name: _endpoint_state(e) for e in kept if e.protocol == "A2A"}
    return before != after


def _endpoint_state(e: Endpoint) -> tuple:
    return (e.position, e.transport, e.address, e.protocol_metadata)


@transaction.atomic
def agent_create(
    *,
    owner: str,
    data: AgentInput,
    source: str = Agent.Source.NATIVE,
    base_url: str,
    agent_id: uuid.UUID | None = None,
) -> Agent:
    agent = Agent(
        name=data.name,
        description=data.description,
        version=data.version,
        owner=owner,
        source=source,
    )
    if agent_id is not None:
        agent.id = agent_id
    agent.save()
    _capabilities_set(agent, data.capabilities)
    _endpoints_set(agent, data.endpoints)
    _search_text_refresh(agent)
    _notify(
        agent,
        {"name", "description", "version", "capabilities", "endpoints", "a2a-endpoints"},
        via_card=source == Agent.Source.A2A_CARD,
        base_url=base_url,
    )
    audit_record(
        "agent.create", agent_id=agent.id, object_repr=agent.name, after=agent_summary(agent)
    )
    return agent


@transaction.atomic
def agent_update(
    *,
    agent: Agent,
    base_url: str,
    name: str | None = None,
    description: str | None = None,
    version: str | None = None,
    owner: str | None = None,
    capabilities: list[CapabilityInput] | None = None,
    endpoints: list[EndpointInput] | None = None,
    source: str | None = None,
    via_card: bool = False,
) -> Agent:
    """Change the given parts of an agent; parts left as None stay as they are."""
    before = agent_summary(agent)
    changed: set[str] = set()
    for attr, value in (("name", name), ("description", description), ("version", version)):
        if value is not None and getattr(agent, attr) != value:
            setattr(agent, attr, value)
            changed.add(attr)
    if owner is not None:
        agent.owner = owner
    if source is not None:
        agent.source = source
    agent.save()
    if capabilities is not None:
        current = [(c.name, c.description, c.tags, c.external_id) for c in agent.capabilities.all()]
        wanted = [(c.name, c.description, list(c.tags), c.external_id) for c in capabilities]
        if current != wanted:
            _capabilities_set(agent, capabilities)
            changed.add("capabilities")
    if endpoints is not None:
        changed.add("endpoints")
        if _endpoints_set(agent, endpoints):
            changed.add("a2a-endpoints")
    if changed & {"name", "description", "capabilities"}:
        _search_text_refresh(agent)
    _notify(agent, changed, via_card=via_card, base_url=base_url)
    fresh = Agent.objects.prefetch_related("capabilities", "endpoints").get(pk=agent.pk)
    audit_record(
        "agent.replace-card" if via_card else "agent.update",
        agent_id=agent.id,
        object_repr=agent.name,
        before=before,
        after=agent_summary(fresh),
    )
    return agent


@transaction.atomic
def agent_delete(*, agent: Agent) -> None:
    before = agent_summary(agent)
    agent_id = agent.id
    agent.delete()
    Tombstone.objects.update_or_create(
        agent_id=agent_id, defaults={"owner": before["owner"], "deleted_at": timezone.now()}
    )
    audit_record("agent.delete", agent_id=agent_id, object_repr=before["name"], before=before)


@transaction.atomic
def endpoint_add(*, agent: Agent, data: EndpointInput, base_url: str) -> Endpoint:
    endpoint = Endpoint(agent=agent)
    _endpoint_fill(endpoint, data)
    last = agent.endpoints.order_by("-position").values_list("position", flat=True).first()
    endpoint.position = 0 if last is None else last + 1
    endpoint.save()
    agent.save(update_fields=["updated_at"])
    changed = {"endpoints"} | ({"a2a-endpoints"} if endpoint.protocol == "A2A" else set())
    _notify(agent, changed, via_card=False, base_url=base_url)
    audit_record(
        "endpoint.add",
        agent_id=agent.id,
        object_repr=f"{agent.name}: {endpoint.name}",
        after={"endpoint": _endpoint_line(endpoint)},
    )
    return endpoint


@transaction.atomic
def endpoint_remove(*, endpoint: Endpoint, base_url: str) -> None:
    agent = endpoint.agent
    was_a2a = endpoint.protocol == "A2A"
    line = _endpoint_line(endpoint)
    endpoint.delete()
    agent.save(update_fields=["updated_at"])
    changed = {"endpoints"} | ({"a2a-endpoints"} if was_a2a else set())
    _notify(agent, changed, via_card=False, base_url=base_url)
    audit_record(
        "endpoint.remove",
        agent_id=agent.id,
        object_repr=f"{agent.name}: {endpoint.name}",
        before={"endpoint": line},
    )


def _endpoint_line(endpoint: Endpoint) -> str:
    return f"{endpoint.name} {endpoint.protocol}/{endpoint.transport} {endpoint.address}"


def api_key_create(*, owner: str, admin: bool = False, label: str = "") -> tuple[ApiKey, str]:
    """Create a key; the raw key is returned once and never stored."""
    from registry.auth import api_key_generate, api_key_hash

    raw = api_key_generate()
    key = ApiKey.objects.create(
        owner=owner,
        scope=ApiKey.Scope.ADMIN if admin else ApiKey.Scope.AGENT,
        key_hash=api_key_hash(raw),
        prefix=raw[:10],
        label=label,
    )
    audit_record(
        "api-key.create",
        object_repr=f"{key.prefix}… ({owner})",
        after={"owner": owner, "scope": key.scope, "label": label},
    )
    return key, raw


def tags_clean(tags: Iterable[str]) -> list[str]:
    return [t.strip() for t in tags if t and t.strip()]
