from django.core.management.base import BaseCommand, CommandError

from protocols.entities.enrichment.crawl import entities_crawl
from protocols.entities.enrichment.enrich import domain_enrich
from registry.outbound.hosts import InvalidHost, domain_parse


class Command(BaseCommand):
    help = (
        "Re-fetch the entity cards that are due now (or, with --domain, that domain's card): "
        "changed cards are stored, missing or invalid ones flagged; then their websites and "
        "MCP server cards are read. --enrich --domain D reads only those, now."
    )

    def add_arguments(self, parser):
        parser.add_argument("--domain", help="crawl this known domain now, due or not")
        parser.add_argument(
            "--enrich",
            action="store_true",
            help="with --domain: read its websites and MCP server cards now (their caches "
            "ignored), not its card",
        )

    def handle(self, *args, domain: str | None = None, enrich: bool = False, **options):
        if enrich:
            if not domain:
                raise CommandError("--enrich needs --domain.")
            try:
                counts = domain_enrich(domain_parse(domain).host, force=True)
            except InvalidHost as exc:
                raise CommandError(f"The domain {exc}.") from None
            self.stdout.write(f"Enriched {counts.entities} entities: {counts.changed} changed.")
            return
        try:
            counts = entities_crawl(domain=domain)
        except InvalidHost as exc:
            raise CommandError(f"The domain {exc}.") from None
        self.stdout.write(
            f"Crawled {counts.checked} entity cards: {counts.updated} updated, "
            f"{counts.unchanged} unchanged, {counts.flagged} flagged; "
            f"{counts.enriched} changed by their websites or server cards."
        )
