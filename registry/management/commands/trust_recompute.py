import uuid

from django.core.management.base import BaseCommand, CommandError

from registry.agents.models import Agent
from registry.trust.services import trust_refresh_all, trust_rescore


class Command(BaseCommand):
    help = "Recompute every agent's trust score (or one agent's) now, as the daily job does."

    def add_arguments(self, parser):
        parser.add_argument("--agent", help="Only this agent (its id).")

    def handle(self, *args, agent: str | None = None, **options):
        if agent:
            try:
                found = Agent.objects.filter(pk=uuid.UUID(agent)).first()
            except ValueError:
                found = None
            if found is None:
                raise CommandError(f"There is no agent {agent}.")
            trust_rescore([found.pk])
            found.refresh_from_db()
            self.stdout.write(f"{found.pk}: trust {found.trust_score}")
            return
        measured, changed = trust_refresh_all()
        self.stdout.write(f"Measured the trust of {measured} agents; {changed} changed.")
