from django.core.management.base import BaseCommand

from protocols.a2a.face.task_store import agent_tasks_expire


class Command(BaseCommand):
    help = "Remove the registry agent's A2A tasks older than A2A_TASK_RETENTION_SECONDS."

    def handle(self, *args, **options):
        self.stdout.write(f"Removed {agent_tasks_expire()} tasks of the registry agent.")
