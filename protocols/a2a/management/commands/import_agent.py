from django.core.management.base import BaseCommand, CommandError

from protocols.a2a.registration.services import agent_register_from_domain
from registry.access.audit import audit_actor
from registry.http.problems import ProblemError


class Command(BaseCommand):
    help = (
        "Register an agent from its domain (DNS TXT hint, then the well-known card paths) "
        "or from a card URL, as POST /a2a/agents {domain|url} does."
    )

    def add_arguments(self, parser):
        parser.add_argument("target", help="A domain (agent.example) or an https card URL.")
        parser.add_argument("--owner", required=True, help="Who the agent belongs to.")

    def handle(self, *args, target: str, owner: str, **options):
        audit_actor.set(("cli:import_agent", ""))
        is_url = target.startswith(("https://", "http://"))
        try:
            registration = agent_register_from_domain(
                owner=owner,
                domain=None if is_url else target,
                url=target if is_url else None,
            )
        except ProblemError as exc:
            lines = [exc.problem_detail] + [f"  {p.path}: {p.message}" for p in exc.errors]
            raise CommandError("\n".join(lines)) from None
        agent, source = registration.agent, registration.source
        for attempt in source.attempts:
            self.stdout.write(f"  {attempt.outcome:<16} {attempt.url}")
        for problem in source.origin_problems:
            self.stdout.write(f"  origin: {problem.path}: {problem.message}")
        self.stdout.write(
            f"{'Registered' if registration.created else 'Updated'} {agent.name} ({agent.id}) "
            f"from {source.source_url} via {source.discovery_path}; "
            f"signature {registration.signature.status}."
        )
