from django.core.management.base import BaseCommand

from registry.liveness.services import endpoints_expire


class Command(BaseCommand):
    help = "Remove the Ephemeral endpoints whose TTL ran out longer ago than the retention."

    def handle(self, *args, **options):
        endpoints, agents = endpoints_expire()
        self.stdout.write(
            f"Removed {endpoints} expired endpoints and {agents} agents left without one."
        )
