import uuid

from django.core.management.base import BaseCommand, CommandError

from registry.access.audit import audit_actor
from registry.agents.models import Agent
from registry.moderation.services import agent_quarantine, agent_release


class Command(BaseCommand):
    help = (
        "Quarantine an agent (hidden from every public read at once, on every process), "
        "or --release it. Audited as cli:agent_quarantine."
    )

    def add_arguments(self, parser):
        parser.add_argument("agent_id", help="The agent's id.")
        parser.add_argument("--reason", default="", help="Why (required to quarantine).")
        parser.add_argument("--release", action="store_true", help="Lift the quarantine.")

    def handle(self, *args, agent_id: str, reason: str, release: bool, **options):
        audit_actor.set(("cli:agent_quarantine", ""))
        try:
            agent = Agent.objects.filter(pk=uuid.UUID(agent_id)).first()
        except ValueError:
            agent = None
        if agent is None:
            raise CommandError(f"There is no agent {agent_id}.")
        if release:
            agent_release(agent=agent)
            self.stdout.write(f"Released {agent.pk}.")
            return
        if not reason.strip():
            raise CommandError("--reason is required to quarantine")
        agent_quarantine(agent=agent, reason=reason)
        self.stdout.write(f"Quarantined {agent.pk}.")
