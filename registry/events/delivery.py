"""Webhook deliveries: each active subscription's matching events become ``Delivery`` rows
(in event order), sent one at a time per subscription (a lease on its row: one in flight),
signed per Standard Webhooks, through the safe fetcher only.

A 2xx answer delivers; a 410 disables the subscription at once; anything else (another
status, a timeout, a refused connection) is retried after ``WEBHOOK_RETRY_FIRST_SECONDS``,
doubling each time, with jitter, until ``WEBHOOK_RETRY_MAX_SECONDS`` after the first
attempt, when the subscription is disabled with the reason. Later events wait behind a
retried one: the receiver sees them in order. A retry due within ``RETRY_QUEUE_AHEAD`` is
queued as a job for its time; the sweep sends the later ones, and any a broker lost.

An owner has ``WEBHOOK_DELIVER_IN_FLIGHT_PER_OWNER`` subscriptions being sent to at once at
most (``leases``); the others wait for the next job (queued when one of theirs finished,
else the sweep's). A redelivery queues ``WEBHOOK_REDELIVER_MAX`` events at most (400), and
an owner ``WEBHOOK_REDELIVER_PER_OWNER_HOUR`` an hour (429).
"""

import logging
import random
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.db.models import Max, Q
from django.utils import timezone

from registry.access.models import ApiKey
from registry.access.throttles import window_allows
from registry.agents.visibility import Reader
from registry.events import envelope
from registry.events.audience import audience_kept
from registry.events.leases import Lease, lease_release, lease_renew, lease_take
from registry.events.models import Delivery, Event, Subscription
from registry.events.outbox import events_after
from registry.events.sealing import secret_open
from registry.events.subscriptions import matching_subjects, signed_headers
from registry.http.jsonutil import Problem
from registry.http.metrics import webhook_deliveries, webhook_lag
from registry.http.problems import ProblemError
from registry.http.request_ids import HEADER as REQUEST_ID_HEADER
from registry.outbound.fetch import FetchError, fetch

logger = logging.getLogger(__name__)

QUEUE_CHUNK = 500
# A retry due this soon is queued as a job for its time (not left to the sweep's next
# period); later ones, whose sweep delay is small beside theirs, are sent by the sweep.
RETRY_QUEUE_AHEAD = timedelta(minutes=10)


def events_matching(subscription: Subscription, after: int, limit: int) -> tuple[list, int]:
    """The events after cursor ``after`` that the subscription takes (its types, and agents
    that match its filters now; a deletion matches every filter), with the last id looked
    at."""
    rows = events_after(after, limit, with_data=False)
    if not rows:
        return [], after
    if subscription.events:
        wanted = set(subscription.events)
        kept = [e for e in rows if e.type in wanted]
    else:
        kept = rows
    kept = audience_kept(kept, lambda: subscription_reader(subscription))
    subjects = {e.subject for e in kept if e.subject and e.type != envelope.AGENT_DELETED}
    matching = matching_subjects(subscription.filter, subjects)
    kept = [
        e
        for e in kept
        if e.type == envelope.AGENT_DELETED or e.subject is None or e.subject in matching
    ]
    return kept, rows[-1].id


def subscription_admin(subscription: Subscription) -> bool:
    """Whether the subscription's owner holds an admin key now (it takes the events for
    admins: the moderators' decisions)."""
    return ApiKey.objects.filter(
        owner=subscription.owner, scope=ApiKey.Scope.ADMIN, revoked_at__isnull=True
    ).exists()


def subscription_reader(subscription: Subscription) -> Reader:
    """Who the subscription reads as now: its owner (an admin while the owner holds an
    admin key), in the groups of the key that made it while that key is valid, or of the
    token that made it as its group claim was then."""
    groups = tuple(subscription.groups or ())
    if subscription.key_id is not None:
        key = ApiKey.objects.filter(pk=subscription.key_id).first()
        valid = key is not None and key.is_active(timezone.now())
        groups = tuple(key.groups or ()) if valid else ()
    return Reader(subscription.owner, subscription_admin(subscription), groups)


def deliveries_queue(subscription: Subscription) -> int:
    """Queue the subscription's matching events after its cursor; returns how many."""
    queued = 0
    while True:
        events, last = events_matching(subscription, subscription.cursor, QUEUE_CHUNK)
        if last == subscription.cursor:
            return queued
        with transaction.atomic():
            Delivery.objects.bulk_create(
                [Delivery(subscription=subscription, event_id=e.id) for e in events]
            )
            Subscription.objects.filter(pk=subscription.pk).update(cursor=last)
        subscription.cursor, queued = last, queued + len(events)


def redeliver_from(subscription: Subscription, since: int) -> int:
    """Queue again every matching event after cursor ``since`` (behind what is queued):
    ``WEBHOOK_REDELIVER_MAX`` at most (else 400, nothing queued), counted against the
    owner's ``WEBHOOK_REDELIVER_PER_OWNER_HOUR`` (past it 429, nothing queued)."""
    limit = settings.WEBHOOK_REDELIVER_MAX
    events, cursor = [], since
    while cursor < subscription.cursor:
        found, last = events_matching(subscription, cursor, QUEUE_CHUNK)
        events += [e for e in found if e.id <= subscription.cursor]
        if limit > 0 and len(events) > limit:
            message = (
                f"would queue more than {limit} events (WEBHOOK_REDELIVER_MAX): give a later cursor"
            )
            raise ProblemError(
                400, "validation-error", f"since {message}.", [Problem("since", message)]
            )
        if last == cursor:
            break
        cursor = last
    if events:
        _redeliveries_count(subscription.owner, len(events))
    Delivery.objects.bulk_create(
        [Delivery(subscription=subscription, event_id=e.id) for e in events]
    )
    return len(events)


def _redeliveries_count(owner: str, queued: int) -> None:
    per_hour = settings.WEBHOOK_REDELIVER_PER_OWNER_HOUR
    if per_hour <= 0:
        return
    rate = f"{per_hour}/hour"
    wait = window_allows("webhook-redeliver", f"owner:{owner}", rate, amount=queued)
    if wait is not None:
        seconds = int(wait + 0.999)
        message = (
            f"would queue {queued} events, past the {per_hour} its owner may have queued "
            "again this hour (WEBHOOK_REDELIVER_PER_OWNER_HOUR)"
        )
        raise ProblemError(
            429,
            "throttled",
            f"since {message}; retry in {seconds} s.",
            [Problem("since", message)],
            retry_after=seconds,
        )


def _lease_seconds() -> float:
    return 4 * settings.WEBHOOK_TIMEOUT_SECONDS + 60


def _retry_delay(attempts: int) -> float:
    base = settings.WEBHOOK_RETRY_FIRST_SECONDS * 2 ** (attempts - 1)
    return base * random.uniform(0.8, 1.2)  # noqa: S311 (jitter, not a secret)


def _disable(subscription: Subscription, reason: str) -> None:
    Subscription.objects.filter(pk=subscription.pk).update(
        status=Subscription.Status.DISABLED, status_reason=reason[:500]
    )


def _headers(subscription: Subscription, event: Event, body: bytes) -> dict:
    """The Standard Webhooks headers, and the id of the request that made the event (its
    trace context, ``traceparent``, is the delivering job's: the fetcher's client sends it
    when tracing is on)."""
    headers = signed_headers(secret_open(subscription.secret_sealed), str(event.id), body)
    if event.request_id:
        headers[REQUEST_ID_HEADER] = event.request_id
    return headers


def delivery_send(subscription: Subscription, delivery: Delivery) -> bool:
    """One attempt; returns whether the next delivery may follow. A restricted agent's
    event that the subscription may no longer read is withheld, not sent."""
    event = Event.objects.get(pk=delivery.event_id)
    if event.audience and not audience_kept([event], lambda: subscription_reader(subscription)):
        delivery.status, delivery.next_attempt_at = Delivery.Status.WITHHELD, None
        delivery.save(update_fields=["status", "next_attempt_at"])
        return True
    body = envelope.event_bytes(event)
    now = timezone.now()
    status, error = None, ""
    try:
        result = fetch(
            subscription.url,
            json_body=body,
            headers=_headers(subscription, event, body),
            accept_json=False,
            max_bytes=64 * 1024,
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
        )
        status = result.status
    except FetchError as exc:
        status, error = exc.status, exc.detail
    delivery.attempts += 1
    delivery.first_attempt_at = delivery.first_attempt_at or now
    delivery.last_attempt_at, delivery.last_status_code = now, status
    delivery.last_error = error[:500]
    ok = not error
    if ok:
        delivery.status, delivery.next_attempt_at = Delivery.Status.DELIVERED, None
        webhook_lag.observe(max(0.0, (timezone.now() - event.time).total_seconds()))
    elif status == 410:
        delivery.status = Delivery.Status.FAILED
        _disable(subscription, "The receiver answered 410 Gone.")
    else:
        retry_at = now + timedelta(seconds=_retry_delay(delivery.attempts))
        give_up = delivery.first_attempt_at + timedelta(seconds=settings.WEBHOOK_RETRY_MAX_SECONDS)
        if retry_at >= give_up:
            delivery.status = Delivery.Status.FAILED
            _disable(subscription, f"Event {event.id} failed for too long: {error}")
        else:
            delivery.next_attempt_at = retry_at
            if retry_at - now <= RETRY_QUEUE_AHEAD:
                _queue_dispatch(countdown=(retry_at - now).total_seconds())
    outcome = {Delivery.Status.DELIVERED: "delivered", Delivery.Status.FAILED: "failed"}
    webhook_deliveries.labels(outcome.get(delivery.status, "retry")).inc()
    delivery.save()
    return ok


def subscription_deliver(subscription: Subscription) -> int:
    """Queue and send the subscription's due deliveries, in order, while it holds the
    lease; returns how many were delivered."""
    return _serve(subscription)[0]


def _serve(subscription: Subscription) -> tuple[int, Lease]:
    """subscription_deliver, with whether it had the lease."""
    taken, until = lease_take(
        subscription.pk,
        status=Subscription.Status.ACTIVE,
        seconds=_lease_seconds(),
        per_owner=settings.WEBHOOK_DELIVER_IN_FLIGHT_PER_OWNER,
    )
    if taken is not Lease.TAKEN:
        return 0, taken
    delivered = 0
    try:
        deliveries_queue(subscription)
        while True:
            until = lease_renew(subscription.pk, until, _lease_seconds())
            if until is None:
                break  # another job took it after it ran out: that one goes on
            subscription.refresh_from_db(fields=["status", "url", "secret_sealed"])
            if subscription.status != Subscription.Status.ACTIVE:
                break
            delivery = (
                Delivery.objects.filter(subscription=subscription, status=Delivery.Status.PENDING)
                .order_by("id")
                .first()
            )
            if delivery is None or (
                delivery.next_attempt_at and delivery.next_attempt_at > timezone.now()
            ):
                break
            if not delivery_send(subscription, delivery):
                break
            delivered += 1
    finally:
        if until is not None:
            lease_release(subscription.pk, until)
    return delivered, Lease.TAKEN


def _in_thread(subscription: Subscription) -> tuple[int, Lease]:
    try:
        return _serve(subscription)
    except Exception:
        logger.exception("Delivering to subscription %s failed", subscription.pk)
        return 0, Lease.BUSY  # not a reason to queue another job at once
    finally:
        close_old_connections()
        connections.close_all()


def webhooks_deliver() -> int:
    """Serve every active subscription with events to queue or deliveries due,
    ``WEBHOOK_CONCURRENCY`` at a time; returns how many deliveries succeeded. Those whose
    owner had its deliveries in flight wait for another job: queued now if this one freed
    a lease."""
    latest = Event.objects.aggregate(last=Max("id"))["last"] or 0
    due = Delivery.objects.filter(status=Delivery.Status.PENDING).filter(
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=timezone.now())
    )
    subscriptions = list(
        Subscription.objects.filter(status=Subscription.Status.ACTIVE).filter(
            Q(cursor__lt=latest) | Q(pk__in=due.values("subscription_id"))
        )
    )
    if len(subscriptions) <= 1 or settings.WEBHOOK_CONCURRENCY <= 1:
        served = [_serve(s) for s in subscriptions]
    else:
        with ThreadPoolExecutor(settings.WEBHOOK_CONCURRENCY) as pool:
            served = list(pool.map(_in_thread, subscriptions))
    leases = {lease for _, lease in served}
    if Lease.CAPPED in leases and Lease.TAKEN in leases:
        _queue_dispatch()
    return sum(delivered for delivered, _ in served)


def dispatch_later() -> None:
    """Queue the deliverer after the current transaction (now outside one)."""
    transaction.on_commit(lambda: _queue_dispatch(), robust=True)


def _queue_dispatch(countdown: float | None = None) -> None:
    from celery import current_app

    try:
        task = current_app.tasks["registry.events.tasks.webhooks_dispatch"]
        task.apply_async(countdown=countdown)
    except Exception as exc:  # the sweep sends it
        logger.warning("Could not queue the webhook deliverer: %s", exc)
