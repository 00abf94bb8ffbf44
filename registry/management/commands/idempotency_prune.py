from django.core.management.base import BaseCommand

from registry.access.idempotency import idempotency_prune


class Command(BaseCommand):
    help = "Remove the Idempotency-Key records past IDEMPOTENCY_TTL_SECONDS now."

    def handle(self, *args, **options):
        self.stdout.write(f"Removed {idempotency_prune()} idempotency records.")
