import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from a2a.services import agent_register_card
from registry.audit import audit_actor
from registry.demo import CARD_AGENTS, DEMO_OWNER, NATIVE_AGENTS
from registry.models import Agent
from registry.serializers import AgentInputSerializer
from registry.services import agent_create, api_key_create


class Command(BaseCommand):
    help = (
        "Load the demo agents (once), make a Django admin login if there is none, and "
        "print a new local admin API key alone on the last line."
    )

    @transaction.atomic
    def handle(self, *args, **options):
        audit_actor.set(("cli:load_demo", ""))
        base_url = settings.REGISTRY_BASE_URL or "http://127.0.0.1:8000"
        existing = set(Agent.objects.filter(owner=DEMO_OWNER).values_list("name", flat=True))
        added = 0
        for payload in NATIVE_AGENTS:
            if payload["name"] in existing:
                continue
            serializer = AgentInputSerializer(data=payload)
            serializer.is_valid(raise_exception=True)
            agent_create(owner=DEMO_OWNER, data=serializer.to_input(), base_url=base_url)
            added += 1
        for card in CARD_AGENTS:
            if card["name"] in existing:
                continue
            agent_register_card(owner=DEMO_OWNER, card=card, base_url=base_url)
            added += 1
        self.stdout.write(f"Demo agents: {added} added, {len(existing)} already there.")

        User = get_user_model()
        if not User.objects.filter(is_superuser=True).exists():
            password = secrets.token_urlsafe(12)
            User.objects.create_superuser("admin", "", password)
            self.stdout.write(
                f"Django admin at {base_url}/admin/: user 'admin', password '{password}'"
            )
        _, raw = api_key_create(owner="local-admin", admin=True, label="make run")
        self.stdout.write("Local admin API key (use as 'Authorization: Bearer <key>'):")
        self.stdout.write(raw)
