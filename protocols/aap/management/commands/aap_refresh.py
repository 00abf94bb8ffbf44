from django.core.management.base import BaseCommand

from protocols.aap.statuses.services import aap_statuses_refresh


class Command(BaseCommand):
    help = "Recompute every stored AAP status from the agents' cards (after the rules change)."

    def handle(self, *args, **options):
        count = aap_statuses_refresh()
        self.stdout.write(f"Rechecked the AAP status of {count} agents.")
