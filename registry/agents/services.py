"""Every write to the registry goes through these functions (API, admin, commands); removing
an agent is in ``removal``, its lifecycle in ``lifecycle``."""

import uuid
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from django.db import transaction

from registry.access.audit import audit_entry, audit_record
from registry.agents.concurrency import Precondition, agent_lock, checked
from registry.agents.holds import write_holdable
from registry.agents.inputs import AgentInput, CapabilityInput, EndpointInput, asdict_parts
from registry.agents.listing import search_text, search_text_refresh, unlisted_text
from registry.agents.models import (
    NATIVE_SOURCE,
    Agent,
    Capability,
    CapabilityTag,
    Endpoint,
    liveness_grace,
)
from registry.fastpath.copy import objects_insert, rows_insert
from registry.http.jsonutil import json_stored_order
from registry.signals import (
    NATIVE_WRITER,
    agent_changed,
    agents_offer,
    agents_written_send,
    writes_batched,
)


def agent_summary(agent: Agent) -> dict[str, Any]:
    """What the audit log keeps of an agent before and after a write."""
    return {
        "name": agent.name,
        "description": agent.description[:200],
        "version": agent.version,
        "owner": agent.owner,
        "source": agent.source,
        "capabilities": [c.name for c in agent.capabilities.all()],
        "endpoints": [
            f"{e.name} {e.protocol}/{e.transport} {e.address}" for e in agent.endpoints.all()
        ],
    }


def _notify(agent: Agent, changed: set[str], *, writer: str, created: bool = False) -> None:
    """Tell the apps (agent_changed), then what reads derive from the agent (agents_written:
    discovery's listing, built once, shows what the apps' receivers wrote too)."""
    with writes_batched():
        agent_changed.send(
            sender=Agent, agent=agent, changed=changed, writer=writer, created=created
        )
        agents_written_send([agent.pk])


def _capability_rows(
    agent: Agent, capabilities: list[CapabilityInput], ids: list | None = None
) -> tuple[list[Capability], list[tuple]]:
    """Unsaved capability rows (of ``ids``, else new ids) and their tag rows as tuples of
    ``TAG_FIELDS`` (bulk writes save them at once)."""
    caps = [
        Capability(
            id=ids[position] if ids else uuid.uuid4(),
            agent=agent,
            name=c.name,
            description=c.description,
            tags=list(c.tags),
            external_id=c.external_id,
            position=position,
        )
        for position, c in enumerate(capabilities)
    ]
    return caps, _tag_values(agent, caps)


# The fields of the tag rows' tuples (no instance per tag: an agent has a dozen).
TAG_FIELDS = ("capability_id", "agent_id", "value")


def _tag_values(agent: Agent, capabilities: list[Capability]) -> list[tuple]:
    return [
        (cap.pk, agent.pk, tag.lower()) for cap in capabilities for tag in dict.fromkeys(cap.tags)
    ]


def _capabilities_set(agent: Agent, capabilities: list[CapabilityInput]) -> None:
    """Replace the agent's capabilities, keeping the ids of those that stay (by id or name).

    In bulk, whatever their number: one statement deletes the tags, one the capabilities,
    one inserts these (the kept ones with their ids), one their tags (a save each made a
    card of 500 skills 500 statements, each refreshing PostgreSQL's keys of all 500)."""
    by_key: dict[tuple[str, str], list[Capability]] = {}
    for cap in agent.capabilities.all():
        by_key.setdefault(_capability_key(cap.external_id, cap.name), []).append(cap)
    ids = []
    for data in capabilities:
        matches = by_key.get(_capability_key(data.external_id, data.name))
        ids.append(matches.pop(0).pk if matches else uuid.uuid4())
    kept, tags = _capability_rows(agent, capabilities, ids)
    if by_key:  # a new agent has none to delete
        CapabilityTag.objects.filter(agent=agent).delete()
        # Its tags are gone and nothing else refers to a capability: no cascade to collect.
        gone = Capability.objects.filter(agent=agent)
        gone._raw_delete(gone.db)
    objects_insert(kept)
    rows_insert(CapabilityTag, TAG_FIELDS, tags)


def _capability_key(external_id: str, name: str) -> tuple[str, str]:
    # A protocol id (A2A skill id) identifies a capability; without one, its name does.
    return (external_id, "" if external_id else name)


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
    endpoint.liveness_grace = liveness_grace(
        data.liveness_model, data.heartbeat_interval_seconds, data.ttl_seconds
    )
    endpoint.protocol_metadata = json_stored_order(data.protocol_metadata)


def _endpoints_set(agent: Agent, endpoints: list[EndpointInput]) -> set[str]:
    """Replace the agent's endpoints (ids kept by name); the protocols whose endpoints
    changed, as "endpoints:<protocol>" change names."""
    existing = {e.name: e for e in agent.endpoints.all()}
    before = {e.name: _endpoint_state(e) for e in existing.values()}
    kept = []
    for position, data in enumerate(endpoints):
        endpoint = existing.pop(data.name, None) or Endpoint(agent=agent)
        _endpoint_fill(endpoint, data)
        endpoint.position = position
        kept.append(endpoint)
    Endpoint.objects.filter(pk__in=[e.pk for e in existing.values()]).delete()
    for endpoint in kept:
        endpoint.save()
    after = {e.name: _endpoint_state(e) for e in kept}
    return {
        f"endpoints:{state[0]}"
        for name in before.keys() | after.keys()
        if before.get(name) != after.get(name)
        for state in (before.get(name), after.get(name))
        if state is not None
    }


def _endpoint_state(e: Endpoint) -> tuple:
    return (e.protocol, e.position, e.transport, e.address, e.protocol_metadata)


def _agent_new(owner: str, data: AgentInput, source: str) -> Agent:
    return Agent(
        name=data.name,
        description=data.description,
        version=data.version,
        owner=owner,
        source=source,
    )


# What a new agent's agent_changed names as changed (besides its endpoints' protocols).
CREATED = frozenset({"name", "description", "version", "owner", "capabilities", "endpoints"})
# The agent's own columns that a write may change (the rest are rows of other tables).
AGENT_COLUMNS = frozenset({"name", "description", "version", "owner"})


@transaction.atomic
def agent_create(
    *,
    owner: str,
    data: AgentInput,
    source: str = NATIVE_SOURCE,
    writer: str = NATIVE_WRITER,
    agent_id: uuid.UUID | None = None,
) -> Agent:
    agent = _agent_new(owner, data, source)
    if agent_id is not None:
        agent.id = agent_id
    agent.save()
    _capabilities_set(agent, data.capabilities)
    protocols = _endpoints_set(agent, data.endpoints)
    search_text_refresh(agent)
    _notify(agent, CREATED | protocols, writer=writer, created=True)
    audit_record(
        "agent.create", agent_id=agent.id, object_repr=agent.name, after=agent_summary(agent)
    )
    return agent


def agent_update(
    *,
    agent: Agent,
    name: str | None = None,
    description: str | None = None,
    version: str | None = None,
    owner: str | None = None,
    capabilities: list[CapabilityInput] | None = None,
    endpoints: list[EndpointInput] | None = None,
    **options: Any,
) -> Agent:
    """Change the given parts of an agent (``_agent_update``); a change of its content may
    wait for review instead (registry.agents.holds): the agent is then returned as it still
    is. A native write waits as ``native``; an app's (an entity card's, an import's, a
    crawl's: another ``writer``) as ``update``, made again with its writer, source and audit
    action once approved. A transfer of ownership never waits."""
    parts = {"name": name, "description": description, "version": version}
    parts.update(capabilities=capabilities, endpoints=endpoints)
    if owner is not None:
        return _agent_update(agent=agent, owner=owner, **parts, **options)
    writer = options.get("writer", NATIVE_WRITER)

    def payload() -> dict:
        made = {k: v for k, v in asdict_parts(parts).items() if v is not None}
        if writer != NATIVE_WRITER:
            made["writer"] = writer
            made.update((k, options[k]) for k in ("source", "audit_action") if options.get(k))
        return made

    updated, held = write_holdable(
        "native" if writer == NATIVE_WRITER else "update",
        agent,
        payload,
        lambda: _agent_update(agent=agent, **parts, **options),
    )
    return held.agent if held is not None else updated


@transaction.atomic
def _agent_update(
    *,
    agent: Agent,
    name: str | None = None,
    description: str | None = None,
    version: str | None = None,
    owner: str | None = None,
    capabilities: list[CapabilityInput] | None = None,
    endpoints: list[EndpointInput] | None = None,
    source: str | None = None,
    writer: str = NATIVE_WRITER,
    audit_action: str = "agent.update",
    precondition: Precondition | None = None,
) -> Agent:
    """Change the given parts of an agent; parts left as None stay as they are.

    ``writer`` and ``audit_action`` say who writes (see registry.signals) and how the
    audit log names the write. The agent's row is locked first (registry.agents.concurrency);
    ``precondition`` (If-Match) is checked on it as it is then.
    """
    agent = checked(agent_lock(agent), precondition)
    before = agent_summary(agent)
    changed: set[str] = set()
    for attr, value in (("name", name), ("description", description), ("version", version)):
        if value is not None and getattr(agent, attr) != value:
            setattr(agent, attr, value)
            changed.add(attr)
    if owner is not None and owner != agent.owner:
        agent.owner = owner
        changed.add("owner")
    if source is not None:
        agent.source = source
    # Only what changed: a concurrent write's other columns are never written back.
    agent.save(update_fields=[*sorted(changed & AGENT_COLUMNS), "source", "updated_at"])
    if capabilities is not None:
        current = [(c.name, c.description, c.tags, c.external_id) for c in agent.capabilities.all()]
        wanted = [(c.name, c.description, list(c.tags), c.external_id) for c in capabilities]
        if current != wanted:
            _capabilities_set(agent, capabilities)
            changed.add("capabilities")
    if endpoints is not None:
        changed.add("endpoints")
        changed |= _endpoints_set(agent, endpoints)
    if changed & {"name", "description", "capabilities"}:
        search_text_refresh(agent)
    _notify(agent, changed, writer=writer)
    fresh = Agent.objects.prefetch_related("capabilities", "endpoints").get(pk=agent.pk)
    audit_record(
        audit_action,
        agent_id=agent.id,
        object_repr=agent.name,
        before=before,
        after=agent_summary(fresh),
    )
    return agent


def endpoint_add(*, agent: Agent, data: EndpointInput) -> Endpoint | None:
    """Add an endpoint; None when the change waits for review (registry.agents.holds)."""
    added, _ = write_holdable(
        "native-endpoint", agent, lambda: asdict(data), lambda: _endpoint_add(agent, data)
    )
    return added


@transaction.atomic
def _endpoint_add(agent: Agent, data: EndpointInput) -> Endpoint:
    agent = agent_lock(agent)
    endpoint = Endpoint(agent=agent)
    _endpoint_fill(endpoint, data)
    last = agent.endpoints.order_by("-position").values_list("position", flat=True).first()
    endpoint.position = 0 if last is None else last + 1
    endpoint.save()
    agent.save(update_fields=["updated_at"])
    _notify(agent, {"endpoints", f"endpoints:{endpoint.protocol}"}, writer=NATIVE_WRITER)
    audit_record(
        "endpoint.add",
        agent_id=agent.id,
        object_repr=f"{agent.name}: {endpoint.name}",
        after={"endpoint": _endpoint_line(endpoint)},
    )
    return endpoint


@transaction.atomic
def endpoint_remove(*, endpoint: Endpoint) -> None:
    agent = agent_lock(endpoint.agent)
    line = _endpoint_line(endpoint)
    endpoint.delete()
    agent.save(update_fields=["updated_at"])
    _notify(agent, {"endpoints", f"endpoints:{endpoint.protocol}"}, writer=NATIVE_WRITER)
    audit_record(
        "endpoint.remove",
        agent_id=agent.id,
        object_repr=f"{agent.name}: {endpoint.name}",
        before={"endpoint": line},
    )


def _endpoint_line(endpoint: Endpoint) -> str:
    return f"{endpoint.name} {endpoint.protocol}/{endpoint.transport} {endpoint.address}"


def tags_clean(tags: Iterable[str]) -> list[str]:
    return [t.strip() for t in tags if t and t.strip()]


@transaction.atomic
def agents_bulk_create(
    *,
    owner: str,
    items: list[AgentInput],
    source: str = NATIVE_SOURCE,
    writer: str = NATIVE_WRITER,
) -> list[Agent]:
    """Create many agents with bulk inserts (imports, crawls, benchmarks): the same rows,
    change signals (one per agent, after every row is in) and audit entries as
    ``agent_create`` would write one by one."""
    agents, capabilities, tags, endpoints, texts, unlisted = [], [], [], [], [], []
    for data in items:
        agent = _agent_new(owner, data, source)
        caps, cap_tags = _capability_rows(agent, data.capabilities)
        ends = [endpoint_build(agent, e, position) for position, e in enumerate(data.endpoints)]
        agent._prefetched_objects_cache = {"capabilities": caps, "endpoints": ends}
        agents.append(agent)
        capabilities += caps
        tags += cap_tags
        endpoints += ends
        if agent.listed:  # an agent created unlisted: its words, for its readers
            texts.append(search_text(agent, caps))
        else:
            unlisted.append(unlisted_text(agent, caps))
    for rows in (agents, capabilities, endpoints, texts, unlisted):
        objects_insert(rows)
    rows_insert(CapabilityTag, TAG_FIELDS, tags)
    entries = []
    with writes_batched():  # listings built in bulk after every receiver ran
        # As the receivers of agents_written would read them (the callers change no agent,
        # capability or endpoint row after this).
        agents_offer(agents)
        for agent in agents:
            protocols = {f"endpoints:{e.protocol}" for e in agent.endpoints.all()}
            _notify(agent, CREATED | protocols, writer=writer, created=True)
            entries.append(
                audit_entry(
                    "agent.create",
                    agent_id=agent.id,
                    object_repr=agent.name,
                    after=agent_summary(agent),
                )
            )
        objects_insert(entries)
    return agents
