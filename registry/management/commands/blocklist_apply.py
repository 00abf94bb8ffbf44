from django.core.management.base import BaseCommand

from registry.access.audit import audit_actor
from registry.moderation.tasks import blocklist_apply


class Command(BaseCommand):
    help = (
        "Quarantine every listed agent that a blocklist entry in force matches, now (the "
        "job each new entry queues); prints how many."
    )

    def handle(self, *args, **options):
        audit_actor.set(("cli:blocklist_apply", ""))
        self.stdout.write(f"{blocklist_apply()} agents quarantined.")
