from django.core.management.base import BaseCommand, CommandError

from entities.crawl import entities_crawl
from registry.outbound.hosts import InvalidHost


class Command(BaseCommand):
    help = (
        "Re-fetch the entity cards that are due now (or, with --domain, that domain's card): "
        "changed cards are stored, missing or invalid ones flagged."
    )

    def add_arguments(self, parser):
        parser.add_argument("--domain", help="crawl this known domain now, due or not")

    def handle(self, *args, domain: str | None = None, **options):
        try:
            counts = entities_crawl(domain=domain)
        except InvalidHost as exc:
            raise CommandError(f"The domain {exc}.") from None
        self.stdout.write(
            f"Crawled {counts.checked} entity cards: {counts.updated} updated, "
            f"{counts.unchanged} unchanged, {counts.flagged} flagged."
        )
