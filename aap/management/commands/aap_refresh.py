import json

from django.core.management.base import BaseCommand

from a2a.models import CardDocument
from aap.services import aap_status_refresh
from registry.models import Agent


class Command(BaseCommand):
    help = "Recompute every stored AAP status from the agents' cards (after the rules change)."

    def handle(self, *args, **options):
        count = 0
        documents = CardDocument.objects.only("agent_id", "body").iterator(chunk_size=500)
        for document in documents:
            aap_status_refresh(
                agent=Agent(pk=document.agent_id), card=json.loads(bytes(document.body))
            )
            count += 1
        self.stdout.write(f"Rechecked the AAP status of {count} agents.")
