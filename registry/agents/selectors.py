"""Reads: the querysets the API serves, with everything they show fetched up front."""

import uuid
from collections.abc import Iterable

from django.db.models import Prefetch, QuerySet, prefetch_related_objects

from registry import extensions
from registry.agents.models import Agent, Capability, Endpoint
from registry.agents.visibility import may_read, readable_by, withheld_problem
from registry.http.params import parse_uuid
from registry.http.problems import ProblemError
from registry.signals import dispatch_shared


def agent_queryset() -> QuerySet[Agent]:
    # The protocol apps' one-to-one rows that their members of the agent JSON show.
    return Agent.objects.select_related(*extensions.related.read()).prefetch_related(
        Prefetch("capabilities", queryset=Capability.objects.order_by("position")),
        Prefetch("endpoints", queryset=Endpoint.objects.order_by("position")),
    )


def agents_by_id(ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Agent]:
    """The agents of ``ids`` that exist, as ``agent_queryset`` reads them, by id. While
    ``agents_written`` is sent, its receivers share what was read, each agent once; the
    agents a bulk write offered (``registry.signals.agents_offer``) are not read again, only
    their one-to-one rows (``extensions.related``)."""
    ids = list(ids)
    shared = dispatch_shared()
    if shared is None:
        return {agent.pk: agent for agent in agent_queryset().filter(pk__in=ids)}
    read, offered = shared["read"], shared["offered"]
    missing = [pk for pk in dict.fromkeys(ids) if pk not in read]
    made = [offered[pk] for pk in missing if pk in offered]
    if made:
        prefetch_related_objects(made, *extensions.related.read())
        read.update((agent.pk, agent) for agent in made)
    missing = [pk for pk in missing if pk not in read]
    for start in range(0, len(missing), 1000):
        chunk = missing[start : start + 1000]
        read.update(dict.fromkeys(chunk))  # gone: None
        read.update((a.pk, a) for a in agent_queryset().filter(pk__in=chunk))
    return {pk: read[pk] for pk in ids if read[pk] is not None}


def agent_discoverable_queryset() -> QuerySet[Agent]:
    """What discovery finds: every publicly listed agent (registry.agents.listing) but the
    retired (registry.agents.lifecycle)."""
    return agent_queryset().filter(listed=True).exclude(status=Agent.Status.RETIRED)


def agent_readable_queryset(user) -> QuerySet[Agent]:
    """What discovery finds for ``user``, who may read restricted agents
    (registry.agents.visibility): the public agents and those it may read, but the
    retired."""
    readable = readable_by(user, agent_queryset())
    return readable.exclude(status=Agent.Status.RETIRED)


def agent_get(agent_id: str) -> Agent:
    agent = agent_queryset().filter(pk=parse_uuid(agent_id)).first()
    if agent is None:
        raise ProblemError(404, "not-found", f"There is no agent {agent_id}.")
    return agent


def unlisted_problem(agent_id, visibility: str = Agent.Visibility.PUBLIC) -> ProblemError:
    """What a reader who may not read an unlisted agent gets (registry.agents.visibility:
    a restricted agent's is an unknown id's)."""
    return withheld_problem(agent_id, visibility)


def agent_may_see(agent: Agent, user) -> bool:
    """Whether ``user`` (a request's) may read the agent (registry.agents.visibility)."""
    return may_read(user, agent)


def agent_get_shown(agent_id: str, user) -> Agent:
    """``agent_get`` for a reader: 404 when ``user`` may not read it (``unlisted`` while
    moderation holds a public agent; an unknown id's ``not-found`` for a restricted one)."""
    agent = agent_get(agent_id)
    if not may_read(user, agent):
        raise withheld_problem(agent.pk, agent.visibility)
    return agent


def agent_get_writable(agent_id: str, user) -> Agent:
    """``agent_get`` for a write (or an owner's read) by ``user``: a restricted agent that
    ``user`` may not read is an unknown id, so that no refusal (403) tells it exists."""
    agent = agent_get(agent_id)
    if agent.visibility != Agent.Visibility.PUBLIC and not may_read(user, agent):
        raise ProblemError(404, "not-found", f"There is no agent {agent_id}.")
    return agent


def endpoint_get(agent: Agent, endpoint_id: str) -> Endpoint:
    endpoint = Endpoint.objects.filter(agent=agent, pk=parse_uuid(endpoint_id, "endpoint")).first()
    if endpoint is None:
        raise ProblemError(404, "not-found", f"Agent {agent.id} has no endpoint {endpoint_id}.")
    return endpoint
