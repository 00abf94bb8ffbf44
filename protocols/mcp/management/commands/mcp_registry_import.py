"""Import from MCP Registries now and print each report: the sources that are due, or with
--url the registry at that base URL (added first when it is new, owned by --owner)."""

import json

from django.core.management.base import BaseCommand, CommandError

from protocols.mcp.imports.services import source_add, sources_import


class Command(BaseCommand):
    help = "Import MCP servers from MCP Registries now (due ones, or --url) and print reports."

    def add_arguments(self, parser):
        parser.add_argument("--url", help="An MCP Registry's base URL (https), before /v0.1.")
        parser.add_argument(
            "--owner", default="mcp-registry-import", help="Owner of a new source's agents."
        )

    def handle(self, *args, url=None, owner="mcp-registry-import", **options):
        if url:
            try:
                url = source_add(url=url, owner=owner).url
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        for source, report in sources_import(url=url or ""):
            self.stdout.write(f"{source}: " + json.dumps(report, indent=2, ensure_ascii=False))
