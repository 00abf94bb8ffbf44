import json

from django.core.management.base import BaseCommand, CommandError

from a2a.bulk import cards_bulk_import
from registry.access.audit import audit_actor
from registry.http.problems import ProblemError


class Command(BaseCommand):
    help = (
        "Bulk-register A2A cards from a JSON Lines file (one card per line), e.g. a crawl. "
        "Cards an agent of the owner already has (same preferred interface URL) are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="A .jsonl file: one A2A card per line.")
        parser.add_argument("--owner", required=True)
        parser.add_argument("--batch", type=int, default=2000, help="Cards per transaction.")

    def handle(self, *args, path: str, owner: str, batch: int, **options):
        audit_actor.set(("cli:import_cards", ""))
        created = seen = 0
        cards: list[dict] = []
        try:
            with open(path, encoding="utf-8") as lines:
                for number, line in enumerate(lines, 1):
                    if not line.strip():
                        continue
                    try:
                        cards.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise CommandError(f"{path}:{number}: not JSON: {exc.msg}") from None
                    if len(cards) == batch:
                        created += self._import(owner, cards)
                        seen += len(cards)
                        cards = []
            if cards:
                created += self._import(owner, cards)
                seen += len(cards)
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
        self.stdout.write(
            f"Imported {created} agents from {seen} cards ({seen - created} skipped)."
        )

    def _import(self, owner: str, cards: list[dict]) -> int:
        try:
            return cards_bulk_import(
                owner=owner,
                cards=cards,
            )
        except ProblemError as exc:
            lines = [exc.problem_detail] + [f"  {p.path}: {p.message}" for p in exc.errors[:20]]
            raise CommandError("\n".join(lines)) from None
