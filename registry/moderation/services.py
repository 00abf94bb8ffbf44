"""The moderators' writes, each atomic and audited, each setting the agent's public listing
(``registry.agents.listing``) from its decisions and telling the admin event feeds
(``agent_moderated``)."""

from django.db import transaction
from django.utils import timezone

from registry.access.audit import audit_actor, audit_record
from registry.agents.concurrency import agent_lock
from registry.agents.listing import agent_admitted_set
from registry.agents.models import Agent
from registry.moderation.changes import change_apply, change_reject
from registry.moderation.models import Moderation
from registry.signals import agent_moderated


def moderation_of(agent: Agent, *, lock: bool = False) -> Moderation:
    """The agent's decisions (a row made on first need; ``lock``: held until the end of
    the transaction)."""
    rows = Moderation.objects.select_for_update() if lock else Moderation.objects
    moderation = rows.filter(agent=agent).first()
    if moderation is None:
        moderation, _ = Moderation.objects.get_or_create(agent=agent)
    return moderation


def _state(moderation: Moderation) -> dict:
    return {
        "admission": moderation.admission,
        "quarantined": moderation.quarantined_at is not None,
        "listed": moderation.listed,
    }


def _decided(agent: Agent, moderation: Moderation, action: str, reason: str, before: dict):
    actor = audit_actor.get()
    moderation.decided_by = actor[0] if actor else "system"
    moderation.save()
    agent_admitted_set(agent=agent, admitted=moderation.listed)
    audit_record(
        f"agent.{action}",
        agent_id=agent.pk,
        object_repr=agent.name,
        before=before,
        after={**_state(moderation), "reason": reason[:500]},
    )
    agent_moderated.send(sender=Moderation, agent=agent, action=action, reason=reason)
    return moderation


@transaction.atomic
def agent_quarantine(*, agent: Agent, reason: str) -> Moderation:
    """Hide the agent from every public read at once (kept for its owner and admins);
    quarantined again, the reason is replaced."""
    agent = agent_lock(agent)
    moderation = moderation_of(agent, lock=True)
    before = _state(moderation)
    moderation.quarantined_at = moderation.quarantined_at or timezone.now()
    moderation.quarantine_reason = reason
    return _decided(agent, moderation, "quarantined", reason, before)


@transaction.atomic
def agent_release(*, agent: Agent) -> Moderation:
    """Lift the quarantine: the agent is listed again if its admission allows."""
    agent = agent_lock(agent)
    moderation = moderation_of(agent, lock=True)
    if moderation.quarantined_at is None:
        return moderation
    before = _state(moderation)
    moderation.quarantined_at = None
    reason, moderation.quarantine_reason = moderation.quarantine_reason, ""
    return _decided(agent, moderation, "released", reason, before)


@transaction.atomic
def agent_approve(*, agent: Agent, reason: str = "") -> Moderation:
    """Admit the agent (or its change: made now, with its events): listed, unless
    quarantined."""
    agent = agent_lock(agent)
    moderation = moderation_of(agent, lock=True)
    before = _state(moderation)
    if change_apply(agent, moderation):
        agent = agent_lock(agent)
    moderation.admission = Moderation.Admission.APPROVED
    moderation.admission_reason = reason
    moderation.approved_once = True
    return _decided(agent, moderation, "approved", reason, before)


@transaction.atomic
def agent_reject(*, agent: Agent, reason: str) -> Moderation:
    """Refuse the agent: not listed; its owner reads the reason, and its next change goes
    to the queue again. A waiting change of an approved agent is refused alone."""
    agent = agent_lock(agent)
    moderation = moderation_of(agent, lock=True)
    before = _state(moderation)
    # A change of an approved agent is rejected alone: the agent stays as approved.
    if not change_reject(agent, moderation, reason):
        moderation.admission = Moderation.Admission.REJECTED
        moderation.admission_reason = reason
    return _decided(agent, moderation, "rejected", reason, before)
