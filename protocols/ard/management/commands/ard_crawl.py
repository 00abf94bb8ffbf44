"""Crawl catalog sources now and print each report: the sources that are due, or with
--url / --domain that source (added first when it is new, owned by --owner)."""

import json

from django.core.management.base import BaseCommand, CommandError

from protocols.ard.catalog.services import source_add
from protocols.ard.crawl.fetch import source_target
from protocols.ard.crawl.ingest import sources_crawl
from registry.http.problems import ProblemError


class Command(BaseCommand):
    help = "Crawl AI Catalog sources now (due ones, or --url / --domain) and print the reports."

    def add_arguments(self, parser):
        parser.add_argument("--url", help="A catalog URL (https).")
        parser.add_argument(
            "--domain", help="A domain: its /.well-known/ard.json or ai-catalog.json."
        )
        parser.add_argument(
            "--owner", default="ard-crawler", help="Owner of a new source's agents."
        )

    def handle(self, *args, url=None, domain=None, owner="ard-crawler", **options):
        if url and domain:
            raise CommandError("Give --url or --domain, not both.")
        if url or domain:
            try:
                url, domain = source_target({"url": url} if url else {"domain": domain})
            except ProblemError as exc:
                raise CommandError(exc.problem_detail) from None
            source_add(owner=owner, url=url, domain=domain)
        for source, report in sources_crawl(url=url or "", domain=domain or ""):
            self.stdout.write(f"{source}: " + json.dumps(report, indent=2, ensure_ascii=False))
