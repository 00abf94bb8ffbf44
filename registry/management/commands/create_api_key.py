from django.core.management.base import BaseCommand, CommandError

from registry.audit import audit_actor
from registry.keys import api_key_create


class Command(BaseCommand):
    help = "Create an API key. The key is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("--owner", required=True, help="Who the key acts for.")
        parser.add_argument("--admin", action="store_true", help="An admin key (any agent).")
        parser.add_argument("--label", default="", help="A note about the key.")

    def handle(self, *args, owner: str, admin: bool, label: str, **options):
        audit_actor.set(("cli:create_api_key", ""))
        if not owner.strip():
            raise CommandError("--owner must not be empty")
        key, raw = api_key_create(owner=owner.strip(), admin=admin, label=label)
        self.stderr.write(f"Created {key.scope} key {key.prefix}… for owner '{key.owner}'.")
        self.stdout.write(raw)
