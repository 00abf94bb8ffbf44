"""The audit log: who changed what, when, with a before/after summary."""

from contextvars import ContextVar
from typing import Any

from registry.access.models import AuditEntry

# Who the current write acts for: set by API-key authentication (or a command), reset per
# request by the middleware so one request's actor never leaks into the next.
audit_actor: ContextVar[tuple[str, str] | None] = ContextVar("audit_actor", default=None)


class AuditActorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = audit_actor.set(None)
        try:
            return self.get_response(request)
        finally:
            audit_actor.reset(token)


def audit_record(action: str, **fields: Any) -> AuditEntry:
    """Record a write (the fields of ``audit_entry``) for the current actor."""
    entry = audit_entry(action, **fields)
    entry.save()
    return entry


def audit_entry(
    action: str,
    *,
    agent_id: Any = None,
    object_repr: str = "",
    before: dict | None = None,
    after: dict | None = None,
) -> AuditEntry:
    """An unsaved entry for the current actor (bulk writes save many at once)."""
    actor, key_prefix = audit_actor.get() or ("system", "")
    return AuditEntry(
        actor=actor,
        key_prefix=key_prefix,
        action=action,
        agent_id=agent_id,
        object_repr=object_repr[:200],
        before=before,
        after=after,
    )
