from django.core.management.base import BaseCommand

from registry.events.delivery import webhooks_deliver
from registry.events.liveness import liveness_changes_write


class Command(BaseCommand):
    help = "Write the endpoints' liveness status changes as events, then send due webhooks."

    def handle(self, *args, **options):
        changes = liveness_changes_write()
        delivered = webhooks_deliver()
        self.stdout.write(f"{changes} liveness changes; {delivered} webhook deliveries.")
