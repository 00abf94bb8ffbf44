import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from registry import extensions
from registry.access.audit import audit_actor
from registry.access.keys import api_key_create
from registry.agents.demo import DEMO_OWNER
from registry.agents.models import Agent

# What `make run` points a new user at, printed with the URL the registry serves at.
SHOW = [
    ("/api/docs", "interactive API docs"),
    ("/discover/agents", "the demo agents"),
    ("/.well-known/agent-card.json", "the registry's own card"),
    ("/admin/", "browse and moderate"),
    ("/readyz", "database, cache and job broker reachable"),
]


class Command(BaseCommand):
    help = (
        "Load the demo agents (once), make a Django admin login if there is none, and "
        "print a new local admin API key alone on the last line."
    )

    @transaction.atomic
    def handle(self, *args, **options):
        audit_actor.set(("cli:load_demo", ""))
        existing = set(Agent.objects.filter(owner=DEMO_OWNER).values_list("name", flat=True))
        # Each app adds its demo agents (registry.extensions), the core's first.
        added = sum(loader.load(DEMO_OWNER, existing) for loader in extensions.demo_loaders.read())
        self.stdout.write(f"Demo agents: {added} added, {len(existing)} already there.")

        base_url = settings.REGISTRY_BASE_URL
        User = get_user_model()
        if not User.objects.filter(is_superuser=True).exists():
            password = secrets.token_urlsafe(12)
            User.objects.create_superuser("admin", "", password)
            self.stdout.write(
                f"Django admin at {base_url}/admin/: user 'admin', password '{password}'"
            )
        self.stdout.write(f"Serving at {base_url}/ (REGISTRY_BASE_URL):")
        for path, what in SHOW:
            self.stdout.write(f"  {base_url}{path:<32} {what}")
        _, raw = api_key_create(owner="local-admin", admin=True, label="make run")
        self.stdout.write("Local admin API key (use as 'Authorization: Bearer <key>'):")
        self.stdout.write(raw)
