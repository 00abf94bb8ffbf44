"""Who talks to a subscription's receiver now: a lease on its row (``leased_until``).

One request in flight per receiver, a handshake (the subscription ``pending``) or its
deliveries (``active``); and an owner has at most ``per_owner`` subscriptions in one status
leased at once (``WEBHOOK_VERIFY_IN_FLIGHT_PER_OWNER``, ``WEBHOOK_DELIVER_IN_FLIGHT_PER_OWNER``),
so an owner's slow receivers hold a few of the webhook jobs, not all. The owner's rows are
locked while the lease is counted and taken, so two jobs for one owner count in turn. The
lease's end is its holder's token: it renews and releases only its own.
"""

import uuid
from datetime import datetime, timedelta
from enum import Enum

from django.db import transaction

from registry.events.models import Subscription
from registry.fastpath.replicas import database_now


class Lease(Enum):
    TAKEN = "taken"
    BUSY = "busy"  # the row's lease is held (a request in flight to this receiver)
    CAPPED = "capped"  # the owner has per_owner subscriptions in this status leased
    GONE = "gone"  # no such subscription, or not in the status asked


def lease_take(
    subscription_id: uuid.UUID, *, status: str, seconds: float, per_owner: int
) -> tuple[Lease, datetime | None]:
    """Lease the subscription for ``seconds`` if it is in ``status``, its lease free and its
    owner under ``per_owner`` leases in that status (0: no limit); with the lease's end."""
    now = database_now()  # every node's leases by one clock: the primary's
    with transaction.atomic():
        owner = Subscription.objects.filter(pk=subscription_id).values_list("owner", flat=True)
        owner = owner.first()
        if owner is None:
            return Lease.GONE, None
        rows = list(
            Subscription.objects.select_for_update()
            .filter(owner=owner)
            .order_by("pk")
            .values_list("pk", "status", "leased_until")
        )
        mine = next((row for row in rows if row[0] == subscription_id), None)
        if mine is None or mine[1] != status:
            return Lease.GONE, None
        if mine[2] is not None and mine[2] > now:
            return Lease.BUSY, None
        held = sum(1 for _, other, until in rows if other == status and until and until > now)
        if per_owner > 0 and held >= per_owner:
            return Lease.CAPPED, None
        until = now + timedelta(seconds=seconds)
        Subscription.objects.filter(pk=subscription_id).update(leased_until=until)
    return Lease.TAKEN, until


def lease_renew(subscription_id: uuid.UUID, until: datetime, seconds: float) -> datetime | None:
    """Extend a lease still held (its end ``until``): the new end, or None if it was lost."""
    later = database_now() + timedelta(seconds=seconds)
    renewed = Subscription.objects.filter(pk=subscription_id, leased_until=until).update(
        leased_until=later
    )
    return later if renewed else None


def lease_release(subscription_id: uuid.UUID, until: datetime) -> None:
    """Free the lease that ends at ``until`` (not one another job took since it ran out)."""
    Subscription.objects.filter(pk=subscription_id, leased_until=until).update(leased_until=None)
