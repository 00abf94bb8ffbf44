from django.core.management.base import BaseCommand

from protocols.a2a.registration.refresh import agents_refresh


class Command(BaseCommand):
    help = "Fetch again every card registered by domain or URL and store those that changed."

    def add_arguments(self, parser):
        parser.add_argument("--due", action="store_true", help="Only the agents due now.")

    def handle(self, *args, due=False, **options):
        counts = agents_refresh(due_only=due, limit=10**9)
        self.stdout.write(", ".join(f"{name}: {n}" for name, n in counts.items()))
