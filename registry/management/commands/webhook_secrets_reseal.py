from django.core.management.base import BaseCommand
from django.db import transaction

from registry.events.models import Subscription
from registry.events.sealing import secret_reseal


class Command(BaseCommand):
    help = (
        "Seal every webhook secret again with the current key (the first of "
        "WEBHOOK_SECRET_KEY, else the one derived from SECRET_KEY): after a key rotation, "
        "before the old key leaves the settings."
    )

    def handle(self, *args, **options):
        count = 0
        with transaction.atomic():
            for row in Subscription.objects.select_for_update().only("pk", "secret_sealed"):
                row.secret_sealed = secret_reseal(row.secret_sealed)
                row.save(update_fields=["secret_sealed"])
                count += 1
        self.stdout.write(f"Sealed {count} webhook secrets again.")
