"""An agent's lifecycle (active, deprecated, retired) and its compatibility setting: the
writes, each atomic and audited, each telling the apps through ``agent_status_changed``
(registry.signals) so that a protocol app serves what the status means (a2a: a
deprecated card's headers, a retired card's 410).

A retired agent stays: its row, its history (an app's versions) and its audit trail. It
leaves discovery (its searchable text goes; discovery's queries leave retired agents
out), the change feed shows it as deleted (a tombstone), and it takes no more writes.
"""

import uuid
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from registry.access.audit import audit_record
from registry.agents.concurrency import Precondition, agent_lock, agent_writable, checked
from registry.agents.listing import search_text_drop, tombstone_record
from registry.agents.models import Agent
from registry.agents.removal import agent_removal_check
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.signals import agent_status_changed, agents_written_send

_ACTIONS = {
    Agent.Status.ACTIVE: "agent.undeprecate",
    Agent.Status.DEPRECATED: "agent.deprecate",
    Agent.Status.RETIRED: "agent.retire",
}


def _status_set(
    agent: Agent,
    status: str,
    *,
    reason: str = "",
    successor: uuid.UUID | None = None,
    sunset_at: datetime | None = None,
) -> Agent:
    previous = agent.status
    agent.status = status
    agent.status_reason = reason
    agent.successor = successor
    agent.sunset_at = sunset_at
    agent.status_changed_at = timezone.now()
    agent.save(
        update_fields=[
            "status",
            "status_reason",
            "successor",
            "sunset_at",
            "status_changed_at",
            "updated_at",
        ]
    )
    agent_status_changed.send(
        sender=Agent,
        agent=agent,
        status=status,
        previous=previous,
        reason=reason,
        successor=successor,
        sunset_at=sunset_at,
    )
    audit_record(
        _ACTIONS[status],
        agent_id=agent.id,
        object_repr=agent.name,
        before={"status": previous},
        after={
            "status": status,
            "reason": reason[:200],
            "successor": str(successor) if successor else None,
            "sunsetAt": sunset_at.isoformat() if sunset_at else None,
        },
    )
    agents_written_send([agent.pk])
    return agent


@transaction.atomic
def agent_deprecate(
    *,
    agent: Agent,
    reason: str,
    successor: uuid.UUID | None = None,
    sunset_at: datetime | None = None,
) -> Agent:
    """Mark the agent deprecated (again: the reason, successor and sunset are replaced)."""
    agent = agent_lock(agent)
    agent_writable(agent)
    if successor is not None:
        if successor == agent.pk:
            raise ProblemError(
                400,
                "validation-error",
                "An agent cannot be its own successor.",
                [Problem("successor", "is this agent")],
            )
        found = Agent.objects.filter(pk=successor).values_list("status", flat=True).first()
        if found is None or found == Agent.Status.RETIRED:
            raise ProblemError(
                400,
                "validation-error",
                f"successor {successor} is no agent of the registry, or is retired.",
                [Problem("successor", "must be an agent that is not retired")],
            )
    return _status_set(
        agent, Agent.Status.DEPRECATED, reason=reason, successor=successor, sunset_at=sunset_at
    )


@transaction.atomic
def agent_undeprecate(*, agent: Agent) -> Agent:
    agent = agent_lock(agent)
    agent_writable(agent)
    if agent.status == Agent.Status.ACTIVE:
        return agent
    return _status_set(agent, Agent.Status.ACTIVE)


@transaction.atomic
def agent_retire(
    *, agent: Agent, precondition: Precondition | None = None, admin: bool = True
) -> Agent:
    """DELETE /agents/<id>: the agent is retired (idempotent), a tombstone in the feed.
    ``admin``: an admin key asks (a protocol app may refuse others: ``agent_deleting``)."""
    agent = agent_lock(agent)
    if agent.status == Agent.Status.RETIRED:
        return agent
    checked(agent, precondition)
    agent_removal_check(agent=agent, admin=admin)
    search_text_drop(agent)  # text search finds it no more
    tombstone_record(agent.pk, agent.owner, public=agent.listed)
    return _status_set(agent, Agent.Status.RETIRED, reason=agent.status_reason)


@transaction.atomic
def agent_compatibility_set(*, agent: Agent, compatibility: str) -> Agent:
    """``none`` or ``backward`` (a setting: no version, no lifecycle change)."""
    agent = agent_lock(agent)
    if agent.compatibility != compatibility:
        before = agent.compatibility
        agent.compatibility = compatibility
        agent.save(update_fields=["compatibility", "updated_at"])
        audit_record(
            "agent.compatibility",
            agent_id=agent.id,
            object_repr=agent.name,
            before={"compatibility": before},
            after={"compatibility": compatibility},
        )
        agents_written_send([agent.pk])
    return agent


def agent_task_probe_set(*, agent: Agent, task_probe: bool) -> Agent:
    """The owner's consent to the task probe (a real request to the agent; a setting: no
    version, no lifecycle change)."""
    agent = agent_lock(agent)
    if agent.task_probe != task_probe:
        agent.task_probe = task_probe
        agent.save(update_fields=["task_probe", "updated_at"])
        audit_record(
            "agent.task_probe",
            agent_id=agent.id,
            object_repr=agent.name,
            before={"taskProbe": not task_probe},
            after={"taskProbe": task_probe},
        )
        agents_written_send([agent.pk])
    return agent
