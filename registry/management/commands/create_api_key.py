from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from registry.access.audit import audit_actor
from registry.access.keys import api_key_create


class Command(BaseCommand):
    help = "Create an API key. The key is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("--owner", required=True, help="Who the key acts for.")
        parser.add_argument("--admin", action="store_true", help="An admin key (any agent).")
        parser.add_argument("--label", default="", help="A note about the key.")
        parser.add_argument(
            "--expires-in-days", type=int, default=None, help="Refused after this many days."
        )

    def handle(self, *args, owner: str, admin: bool, label: str, expires_in_days, **options):
        audit_actor.set(("cli:create_api_key", ""))
        if not owner.strip():
            raise CommandError("--owner must not be empty")
        expires_at = None
        if expires_in_days is not None:
            if not 1 <= expires_in_days <= 3650:
                raise CommandError("--expires-in-days must be from 1 to 3650")
            expires_at = timezone.now() + timedelta(days=expires_in_days)
        key, raw = api_key_create(
            owner=owner.strip(), admin=admin, label=label, expires_at=expires_at
        )
        until = f", expiring {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""
        self.stderr.write(f"Created {key.scope} key {key.prefix}… for owner '{key.owner}'{until}.")
        self.stdout.write(raw)
