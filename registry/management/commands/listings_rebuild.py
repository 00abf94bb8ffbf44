from django.core.management.base import BaseCommand
from django.db import transaction

from registry.discovery.listings import listings_rebuild


class Command(BaseCommand):
    help = "Build every agent's stored discovery listing again (after an upgrade changed it)."

    def handle(self, *args, **options):
        with transaction.atomic():
            count = listings_rebuild()
        self.stdout.write(f"Rebuilt the listings of {count} agents.")
