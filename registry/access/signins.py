"""Sign-ins with tokens from identity providers, in the audit log: one ``token.sign-in``
entry per token (its issuer, subject, the owner and scope it acts as), however many
requests it makes. Which tokens were recorded is kept in the shared cache until they expire
(and in the process, so a missing cache costs one entry per token and process)."""

import time
from collections import OrderedDict
from datetime import UTC, datetime

from django.core.cache import cache

from registry.access.audit import audit_entry
from registry.access.tokens import TokenIdentity

SEEN_MAX = 10_000
_seen: OrderedDict[str, None] = OrderedDict()


def _first_sight(identity: TokenIdentity) -> bool:
    if identity.token_hash in _seen:
        return False
    _seen[identity.token_hash] = None
    if len(_seen) > SEEN_MAX:
        _seen.popitem(last=False)
    timeout = max(1, identity.expires_at - int(time.time()))
    available = getattr(cache, "available", None)
    if available is not None and not available():
        return True  # the shared cache is out: this process's memory decides
    return bool(cache.add(f"token-signin:{identity.token_hash}", 1, timeout=timeout))


def token_signin_record(identity: TokenIdentity) -> None:
    """Audit a token's first use."""
    if not _first_sight(identity):
        return
    entry = audit_entry(
        "token.sign-in",
        object_repr=f"{identity.subject} ({identity.issuer})",
        after={
            "issuer": identity.issuer,
            "subject": identity.subject,
            "owner": identity.owner,
            "scope": "admin" if identity.admin else "agent",
            "groups": list(identity.groups),
            "expiresAt": datetime.fromtimestamp(identity.expires_at, UTC).isoformat(),
        },
    )
    entry.save()
