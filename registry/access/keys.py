"""API keys: their writes (create, revoke, rotate; each audited) and reads.

A key's secret is shown once, when it is created; only its SHA-256 is stored."""

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from registry.access.audit import audit_record
from registry.access.auth import api_key_generate, api_key_hash
from registry.access.models import ApiKey


def _repr(key: ApiKey) -> str:
    return f"{key.prefix}… ({key.owner})"


def _when(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@transaction.atomic
def api_key_create(
    *,
    owner: str,
    admin: bool = False,
    label: str = "",
    expires_at: datetime | None = None,
    groups: list[str] | None = None,
    action: str = "api-key.create",
) -> tuple[ApiKey, str]:
    """Create a key; the raw key is returned once and never stored."""
    raw = api_key_generate()
    key = ApiKey.objects.create(
        owner=owner,
        scope=ApiKey.Scope.ADMIN if admin else ApiKey.Scope.AGENT,
        key_hash=api_key_hash(raw),
        prefix=raw[:10],
        label=label,
        expires_at=expires_at,
        groups=sorted(set(groups or [])),
    )
    audit_record(
        action,
        object_repr=_repr(key),
        after={
            "id": str(key.id),
            "owner": owner,
            "scope": key.scope,
            "label": label,
            "expiresAt": _when(expires_at),
            "groups": key.groups,
        },
    )
    return key, raw


@transaction.atomic
def api_key_revoke(*, key: ApiKey) -> ApiKey:
    """Revoke a key now; revoking a revoked key changes nothing (and records nothing)."""
    key = ApiKey.objects.select_for_update().get(pk=key.pk)
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit_record(
            "api-key.revoke",
            object_repr=_repr(key),
            after={"id": str(key.id), "revokedAt": _when(key.revoked_at)},
        )
    return key


@transaction.atomic
def api_key_rotate(*, key: ApiKey, grace_seconds: int = 0) -> tuple[ApiKey, str]:
    """A new key with the old one's owner, scope, label and expiry, then the old key
    revoked (at once) or set to expire after ``grace_seconds``, so clients can switch."""
    key = ApiKey.objects.select_for_update().get(pk=key.pk)
    new, raw = api_key_create(
        owner=key.owner,
        admin=key.is_admin,
        label=key.label,
        expires_at=key.expires_at,
        groups=key.groups,
        action="api-key.rotate",
    )
    now = timezone.now()
    if grace_seconds:
        ends = now + timedelta(seconds=grace_seconds)
        key.expires_at = min(key.expires_at, ends) if key.expires_at else ends
        key.save(update_fields=["expires_at"])
    else:
        key.revoked_at = now
        key.save(update_fields=["revoked_at"])
    audit_record(
        "api-key.revoke" if not grace_seconds else "api-key.expire",
        object_repr=_repr(key),
        after={
            "id": str(key.id),
            "replacedBy": str(new.id),
            "revokedAt": _when(key.revoked_at),
            "expiresAt": _when(key.expires_at),
        },
    )
    return new, raw


@transaction.atomic
def api_key_groups_set(*, key: ApiKey, groups: list[str]) -> ApiKey:
    """Give a key its groups (an admin's doing), audited with the groups before and after."""
    key = ApiKey.objects.select_for_update().get(pk=key.pk)
    before, key.groups = key.groups, sorted(set(groups))
    if key.groups != before:
        key.save(update_fields=["groups"])
        audit_record(
            "api-key.groups",
            object_repr=_repr(key),
            before={"id": str(key.id), "groups": before},
            after={"id": str(key.id), "groups": key.groups},
        )
    return key


def api_keys_of(owner: str) -> QuerySet[ApiKey]:
    """The keys of an owner, newest first (revoked and expired ones too)."""
    return ApiKey.objects.filter(owner=owner).order_by("-created_at", "-id")
