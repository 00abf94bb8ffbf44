from django.core.management.base import BaseCommand

from registry.events.outbox import events_prune


class Command(BaseCommand):
    help = "Remove the events older than EVENTS_RETENTION_DAYS, with their deliveries."

    def handle(self, *args, **options):
        self.stdout.write(f"Removed {events_prune()} events.")
