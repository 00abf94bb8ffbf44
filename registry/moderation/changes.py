"""Changes that wait: under ``REGISTRY_ADMISSION=review`` a change that a scanner flags, to
an agent already approved, is undone as it is written (``registry.agents.holds``) and kept
here as a ``PendingChange``: what it would serve, its JSON Patch from what the agent serves
now, its findings. Every read (the card, discovery, the catalog, the faces, the events)
serves the approved version meanwhile; the owner and the admins see the change. One per
agent: a later change, held or made, replaces it. Approving makes it (``change_apply``:
its events, then ``agent.approved``); rejecting drops it, its reason kept for the owner."""

from collections.abc import Callable

import jsonpatch
from django.conf import settings
from django.utils import timezone

from registry import extensions
from registry.access.audit import audit_actor, audit_record
from registry.agents import services as agents
from registry.agents.holds import HeldWrite, holds_bypassed
from registry.agents.models import Agent
from registry.http.problems import ProblemError
from registry.moderation.models import Moderation, PendingChange

# The kinds of the core's own writes that may wait (registered by RegistryConfig.ready()):
# a native change, a native endpoint added, and an app's change through the core's update
# (an entity card's, an MCP Registry import's, a crawl's; its writer in the payload).
NATIVE = "native"
NATIVE_ENDPOINT = "native-endpoint"
UPDATE = "update"


def _patch(before: dict, after: dict) -> list | None:
    """RFC 6902 from ``before`` to ``after``; None past VERSION_DIFF_MAX_BYTES."""
    patch = jsonpatch.make_patch(before, after).patch
    limit = getattr(settings, "VERSION_DIFF_MAX_BYTES", 262144)
    return patch if len(jsonpatch.JsonPatch(patch).to_string()) <= limit else None


def change_keep(why: str, findings: list[dict]) -> Callable[[HeldWrite], None]:
    """What keeps a held write (``registry.agents.holds.hold_request``'s ``keep``)."""

    def keep(held: HeldWrite) -> None:
        actor = audit_actor.get()
        PendingChange.objects.update_or_create(
            agent=held.agent,
            defaults={
                "state": PendingChange.State.PENDING,
                "kind": held.kind,
                "payload": held.payload,
                "document": held.after,
                "patch": _patch(held.before, held.after),
                "findings": findings,
                "reason": why,
                "submitted_at": timezone.now(),
                "submitted_by": actor[0] if actor else "system",
                "decided_by": "",
            },
        )
        moderation, _ = Moderation.objects.get_or_create(agent=held.agent)
        moderation.change_pending = True
        moderation.save()
        audit_record(
            "agent.change-held",
            agent_id=held.agent.pk,
            object_repr=held.agent.name,
            after={"reason": why, "kind": held.kind},
        )

    return keep


def change_superseded(agent: Agent) -> None:
    """A change was made: a change that waited is replaced by it."""
    if PendingChange.objects.filter(agent=agent, state=PendingChange.State.PENDING).delete()[0]:
        Moderation.objects.filter(agent=agent).update(change_pending=False)


def change_waiting(agent: Agent, *, lock: bool = False) -> PendingChange | None:
    rows = PendingChange.objects.select_for_update() if lock else PendingChange.objects
    return rows.filter(agent=agent, state=PendingChange.State.PENDING).first()


def change_apply(agent: Agent, moderation: Moderation) -> bool:
    """Make the agent's waiting change (inside the moderator's approval); whether there was
    one. A change that can no longer be made (its agent retired, a card another agent now
    has) refuses the approval with the write's own problem."""
    pending = change_waiting(agent, lock=True)
    if pending is None:
        return False
    kind = extensions.held_changes.get(pending.kind)
    if kind is None:
        raise ProblemError(
            409, "conflict", f"The change waiting for agent {agent.id} cannot be made here."
        )
    with holds_bypassed():
        kind.apply(agent, pending.payload)
    pending.delete()
    moderation.refresh_from_db()
    moderation.change_pending = False
    return True


def change_reject(agent: Agent, moderation: Moderation, reason: str) -> bool:
    """Drop the agent's waiting change, keeping why for its owner; whether there was one."""
    pending = change_waiting(agent, lock=True)
    if pending is None:
        return False
    actor = audit_actor.get()
    pending.state = PendingChange.State.REJECTED
    pending.reason = reason
    pending.decided_by = actor[0] if actor else "system"
    pending.save()
    moderation.change_pending = False
    return True


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def change_json(pending: PendingChange | None) -> dict | None:
    """A change as its owner and the admins read it."""
    if pending is None:
        return None
    return {
        "state": pending.state,
        "reason": pending.reason,
        "submittedAt": _iso(pending.submitted_at),
        "submittedBy": pending.submitted_by,
        "decidedBy": pending.decided_by,
        "findings": pending.findings,
        "patch": pending.patch,
        "truncated": pending.patch is None,
        "document": pending.document,
    }


def change_of(agent: Agent) -> dict | None:
    """The agent's change that waits or was rejected last (the agent JSON's
    ``pendingChange``, for its owner and the admins)."""
    try:
        return change_json(agent.pending_change)
    except PendingChange.DoesNotExist:
        return None


def native_apply(agent: Agent, payload: dict) -> Agent:
    """Make a native change, or an app's (``UPDATE``: with its writer, source and audit
    action), that waited."""
    parts = dict(payload)
    if "capabilities" in parts:
        parts["capabilities"] = [agents.CapabilityInput(**c) for c in parts["capabilities"]]
    if "endpoints" in parts:
        parts["endpoints"] = [agents.EndpointInput(**e) for e in parts["endpoints"]]
    return agents.agent_update(agent=agent, **parts)


def native_endpoint_apply(agent: Agent, payload: dict):
    return agents.endpoint_add(agent=agent, data=agents.EndpointInput(**payload))
