from django.core.management.base import BaseCommand

from protocols.a2a.versions.history import versions_prune


class Command(BaseCommand):
    help = "Remove each agent's card versions beyond the newest CARD_VERSIONS_KEEP (0: keep all)."

    def add_arguments(self, parser):
        parser.add_argument("--keep", type=int, help="Keep this many instead of the setting.")

    def handle(self, *args, keep=None, **options):
        if keep is not None and keep < 1:
            self.stderr.write("--keep must be 1 or more.")
            raise SystemExit(2)
        self.stdout.write(f"Removed {versions_prune(keep)} card versions.")
