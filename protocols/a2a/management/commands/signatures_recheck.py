from django.core.management.base import BaseCommand

from protocols.a2a.registration.provenance import signatures_recheck


class Command(BaseCommand):
    help = "Verify every signed card again against its publisher's current keys."

    def handle(self, *args, **options):
        counts = signatures_recheck()
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none"
        self.stdout.write(f"Rechecked the signatures of {sum(counts.values())} cards: {summary}.")
