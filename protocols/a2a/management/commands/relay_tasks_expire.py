from django.core.management.base import BaseCommand

from protocols.a2a.relay.store import relay_tasks_expire


class Command(BaseCommand):
    help = "Remove the relayed A2A tasks older than QUEUE_RELAY_TASK_RETENTION_SECONDS."

    def handle(self, *args, **options):
        self.stdout.write(f"Removed {relay_tasks_expire()} relayed tasks.")
