"""Removing an agent: the hard delete (the admin pages, the apps' own removals, the
liveness sweep) and the rule both it and retirement (``lifecycle.agent_retire``) obey: a
protocol app may refuse to let an agent go (``agent_deleting``), sent from here alone."""

from django.db import transaction

from registry.access.audit import audit_record
from registry.agents.concurrency import Precondition, agent_lock, checked
from registry.agents.listing import tombstone_record
from registry.agents.models import Agent
from registry.agents.services import agent_summary
from registry.signals import agent_deleting, agents_written_send


def agent_removal_check(*, agent: Agent, admin: bool) -> None:
    """Ask the protocol apps whether the agent may go (deleted or retired); a receiver
    refuses with a ProblemError, and the caller's transaction then changes nothing.
    ``admin``: an admin asks (an admin key, the Django admin, a command)."""
    agent_deleting.send(sender=Agent, agent=agent, admin=admin)


@transaction.atomic
def agent_delete(*, agent: Agent, precondition: Precondition | None = None, admin=True) -> None:
    agent = checked(agent_lock(agent), precondition)
    agent_removal_check(agent=agent, admin=admin)
    before, agent_id, public = agent_summary(agent), agent.id, agent.listed
    agent.delete()
    tombstone_record(agent_id, before["owner"], public=public)
    audit_record("agent.delete", agent_id=agent_id, object_repr=before["name"], before=before)
    agents_written_send([agent_id])  # gone: what discovery finds changed
