import uuid

from django.core.management.base import BaseCommand, CommandError

from registry.agents.models import Agent, Endpoint
from registry.liveness.probes import endpoints_probe, probeable


class Command(BaseCommand):
    help = "Probe every Persistent http(s) endpoint (or one agent's) now; a line per endpoint."

    def add_arguments(self, parser):
        parser.add_argument("--agent", help="Only this agent's endpoints (its id).")

    def handle(self, *args, agent: str | None = None, **options):
        endpoints = Endpoint.objects.filter(probeable()).order_by("agent_id", "position")
        if agent:
            try:
                found = Agent.objects.filter(pk=uuid.UUID(agent)).exists()
            except ValueError:
                found = False
            if not found:
                raise CommandError(f"There is no agent {agent}.")
            endpoints = endpoints.filter(agent_id=agent)
        for endpoint, result in endpoints_probe(endpoints):
            state = "up" if result.ok else "down"
            status = f" HTTP {result.status_code}" if result.status_code else ""
            self.stdout.write(
                f"{endpoint.agent_id} {endpoint.name} {endpoint.address}: {state}, "
                f"{result.category}{status}, {result.latency_ms} ms ({result.detail})"
            )
