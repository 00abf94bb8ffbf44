from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from protocols.aap.checks.checker import aap_check
from protocols.aap.checks.report import report_as_text
from protocols.aap.statuses.services import aap_check_domain
from protocols.aap.views.forms import json_document
from registry.outbound.hosts import InvalidHost


def _read(path: Path, what: str) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CommandError(f"Cannot read the {what} file {path}: {exc.strerror}.") from None
    try:
        return json_document(data, what)
    except ValueError as exc:
        raise CommandError(f"{path}: {exc}") from None


class Command(BaseCommand):
    help = (
        "Check a dealer agent against AAP v0.1: a domain (its card and manifest are fetched) "
        "or a card file with an optional manifest file. Prints the checklist; exits 1 when "
        "not compliant."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "target", help="dealer.example[:port], or card.json (a file ending .json or existing)"
        )
        parser.add_argument("manifest", nargs="?", help="manifest.json, with a card file")

    def handle(self, *args, target: str, manifest: str | None, **options):
        if target.endswith(".json") or Path(target).exists():
            card = _read(Path(target), "card")
            document = _read(Path(manifest), "manifest") if manifest else None
            report = aap_check(card, document)
        else:
            if manifest:
                raise CommandError("A manifest file goes with a card file, not with a domain.")
            try:
                report = aap_check_domain(target)
            except InvalidHost as exc:
                raise CommandError(f"The domain {exc}.") from None
        self.stdout.write(report_as_text(report))
        if not report.compliant:
            raise SystemExit(1)
