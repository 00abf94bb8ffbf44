from django.core.management.base import BaseCommand

from registry.agents.claims import claims_expire
from registry.agents.ownership import transfers_expire


class Command(BaseCommand):
    help = "Expire pending ownership transfers and unverified domain claims past their time."

    def handle(self, *args, **options):
        transfers, claims = transfers_expire(), claims_expire()
        self.stdout.write(f"Expired {transfers} transfers and {claims} domain claims.")
