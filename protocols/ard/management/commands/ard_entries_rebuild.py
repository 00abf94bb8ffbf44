"""Build every agent's catalog entry again (after an upgrade that changed the entries, or a
change of REGISTRY_BASE_URL)."""

from django.core.management.base import BaseCommand

from protocols.ard.catalog.services import entries_rebuild


class Command(BaseCommand):
    help = "Build every agent's AI Catalog entry again."

    def handle(self, *args, **options):
        self.stdout.write(f"Rebuilt the catalog entries of {entries_rebuild()} agents.")
