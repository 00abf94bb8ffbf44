import json
import os

from django.core.management.base import BaseCommand, CommandError

from protocols.a2a.registration.bulk import cards_import_processes
from registry.access.audit import audit_actor

# Processes by default: one per core, up to this many (each holds a database connection).
PROCESSES_MAX = 4


class Command(BaseCommand):
    help = (
        "Bulk-register A2A cards from a JSON Lines file (one card per line), e.g. a crawl. "
        "Cards an agent of the owner already has (same preferred interface URL) are skipped. "
        "Batches are imported in several processes at once."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="A .jsonl file: one A2A card per line.")
        parser.add_argument("--owner", required=True)
        parser.add_argument("--batch", type=int, default=2000, help="Cards per transaction.")
        parser.add_argument(
            "--processes",
            type=int,
            default=min(os.cpu_count() or 1, PROCESSES_MAX),
            help="Processes importing batches at once (default: one per core, at most "
            f"{PROCESSES_MAX}); 1 imports them one after another here.",
        )

    def handle(self, *args, path: str, owner: str, batch: int, processes: int, **options):
        if batch < 1 or processes < 1:
            raise CommandError("--batch and --processes must be at least 1.")
        audit_actor.set(("cli:import_cards", ""))
        try:
            outcome = cards_import_processes(
                owner=owner, cards=self._cards(path), batch=batch, processes=processes
            )
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
        if outcome.failure is not None:
            lines = [outcome.failure.detail]
            lines += [f"  {where}: {message}" for where, message in outcome.failure.errors[:20]]
            lines.append(f"Imported {outcome.created} agents from other batches before it.")
            raise CommandError("\n".join(lines))
        self.stdout.write(
            f"Imported {outcome.created} agents from {outcome.seen} cards "
            f"({outcome.seen - outcome.created} skipped)."
        )

    @staticmethod
    def _cards(path: str):
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CommandError(f"{path}:{number}: not JSON: {exc.msg}") from None
