"""Webhook subscriptions: every write (create, change, delete) and the verification
handshake that makes one active.

A new subscription, or one whose URL changed or that is switched on again, is ``pending``:
the registry posts it a signed ``webhook.verification`` event whose ``data.challenge`` is a
random string, and only a 2xx answer whose JSON body is ``{"challenge": <the same>}`` makes
it ``active``, from the latest event on (so the registry cannot be aimed at a third party).
Only the URL the challenge was sent to is made active: a URL changed while the handshake ran
leaves the subscription pending, for the new URL's own handshake. A handshake holds the
subscription's lease (``leases``: one request in flight per receiver, a few per owner), and
an owner starts ``WEBHOOK_VERIFY_PER_OWNER_HOUR`` of them an hour at most (then 429).
URLs pass the safe fetcher's checks when given (https only outside ``FETCH_ALLOW_HTTP_HOSTS``,
no private or loopback address outside ``FETCH_ALLOWED_HOSTS``), and again at each request.
"""

import base64
import secrets
import uuid
from datetime import UTC, datetime

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.http import QueryDict
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from registry.access.throttles import window_allows
from registry.agents.models import Agent
from registry.discovery.discover import agents_filter
from registry.discovery.filters import agent_filterset
from registry.discovery.search import unlisted_searched
from registry.events import envelope
from registry.events.leases import Lease, lease_release, lease_take
from registry.events.models import Event, Subscription
from registry.events.sealing import secret_open, secret_seal
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.outbound.fetch import FetchError, fetch, url_check

# Subscriptions an owner may hold (each is a receiver the registry keeps sending to).
MAX_PER_OWNER = 20


def secret_generate() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def signed_headers(secret: str, message_id: str, body: bytes) -> dict[str, str]:
    """The Standard Webhooks headers of ``body`` (the standardwebhooks library signs)."""
    now = datetime.now(UTC)
    signature = Webhook(secret).sign(message_id, now, body.decode())
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }


def url_validate(url: str) -> str:
    try:
        url_check(url)
    except FetchError as exc:
        raise ProblemError(
            400, "validation-error", f"url: {exc.detail}", [Problem("url", exc.detail)]
        ) from None
    return url


def filter_validate(params: dict) -> dict:
    """The discovery filters of a subscription, checked as discovery checks them."""
    known = set(agent_filterset().base_filters)
    unknown = sorted(set(params) - known)
    problems = [Problem(f"filter.{name}", "is not a discovery filter") for name in unknown]
    problems += [
        Problem(f"filter.{name}", "must be a string")
        for name, value in params.items()
        if not isinstance(value, str)
    ]
    if problems:
        detail = "; ".join(f"{p.path} {p.message}" for p in problems[:3])
        raise ProblemError(400, "validation-error", f"{detail}.", problems)
    try:
        agents_filter(_query(params), Agent.objects.none())
    except ProblemError as exc:
        errors = [Problem(f"filter.{e.path}", e.message) for e in exc.errors or []]
        raise ProblemError(
            400, "validation-error", f"filter: {exc.problem_detail}", errors
        ) from None
    return params


def _query(params: dict) -> QueryDict:
    query = QueryDict(mutable=True)
    query.update(params)
    # A subscription's q keeps the agents whose words match it (search by meaning ranks).
    query["mode"] = "keyword"
    return query


def matching_subjects(params: dict, subjects: set) -> set:
    """Which of these agents match the subscription's discovery filters (no filter: all).
    (A restricted agent among them is one its reader may read: its words match too.)"""
    if not params:
        return set(subjects)
    with unlisted_searched():
        queryset = agents_filter(_query(params), Agent.objects.filter(pk__in=subjects))
        return set(queryset.values_list("pk", flat=True))


def events_validate(names: list) -> list:
    wrong = [name for name in names if name not in envelope.EVENT_TYPES]
    if wrong:
        message = f"must be among {', '.join(envelope.EVENT_TYPES)}"
        raise ProblemError(
            400,
            "validation-error",
            f"events: {', '.join(map(str, wrong))} {message}.",
            [Problem(f"events[{names.index(name)}]", message) for name in wrong],
        )
    return sorted(set(names))


def handshake_count(owner: str, field: str) -> None:
    """Count a handshake against the owner's hourly budget, or refuse it (429, naming the
    field that asked for it)."""
    per_hour = settings.WEBHOOK_VERIFY_PER_OWNER_HOUR
    if per_hour <= 0:
        return
    wait = window_allows("webhook-verify", f"owner:{owner}", f"{per_hour}/hour")
    if wait is not None:
        seconds = int(wait + 0.999)
        message = (
            f"needs a verification handshake, and its owner started {per_hour} this hour "
            f"(WEBHOOK_VERIFY_PER_OWNER_HOUR)"
        )
        raise ProblemError(
            429,
            "throttled",
            f"{field} {message}; retry in {seconds} s.",
            [Problem(field, message)],
            retry_after=seconds,
        )


def _verify_later(subscription: Subscription) -> None:
    # By name: the tasks import this module.
    task = current_app.tasks["registry.events.tasks.subscription_verify"]
    transaction.on_commit(lambda: task.delay(str(subscription.pk)), robust=True)


@transaction.atomic
def subscription_create(
    *, owner: str, url: str, events: list, filter: dict, description: str = "", principal=None
) -> tuple[Subscription, str]:
    """The new subscription, pending its verification, and its secret (in clear: stored
    sealed, shown this once). ``principal``: who asks (registry.access.auth): the key
    whose groups it reads with, or the token's groups (registry.events.delivery's
    ``subscription_reader``)."""
    if Subscription.objects.filter(owner=owner).count() >= MAX_PER_OWNER:
        raise ProblemError(
            400,
            "validation-error",
            f"An owner may have {MAX_PER_OWNER} subscriptions at most.",
        )
    secret = secret_generate()
    fields = {
        "url": url_validate(url),
        "events": events_validate(events),
        "filter": filter_validate(filter),
    }
    handshake_count(owner, "url")
    key = getattr(principal, "key", None)
    groups = [] if key is not None or principal is None else sorted(principal.groups)
    subscription = Subscription.objects.create(
        owner=owner,
        description=description,
        secret_sealed=secret_seal(secret),
        key=key,
        groups=groups,
        **fields,
    )
    _verify_later(subscription)
    return subscription, secret


@transaction.atomic
def subscription_secret_rotate(*, subscription: Subscription) -> tuple[Subscription, str]:
    """A new secret for the subscription, from its next delivery on (shown this once)."""
    subscription = Subscription.objects.select_for_update().get(pk=subscription.pk)
    secret = secret_generate()
    subscription.secret_sealed = secret_seal(secret)
    subscription.save(update_fields=["secret_sealed", "updated_at"])
    return subscription, secret


@transaction.atomic
def subscription_update(*, subscription: Subscription, **changes) -> Subscription:
    """Change ``url``, ``events``, ``filter``, ``description`` or ``active``: a new URL, or
    switching a subscription on again, verifies the receiver again first."""
    subscription = Subscription.objects.select_for_update().get(pk=subscription.pk)
    verify = asked_by = False
    if "url" in changes and changes["url"] != subscription.url:
        subscription.url, verify, asked_by = url_validate(changes["url"]), True, "url"
    if "events" in changes:
        subscription.events = events_validate(changes["events"])
    if "filter" in changes:
        subscription.filter = filter_validate(changes["filter"])
    if "description" in changes:
        subscription.description = changes["description"]
    if changes.get("active") is False:
        subscription.status = Subscription.Status.DISABLED
        subscription.status_reason = "Switched off by its owner."
        verify = False
    elif changes.get("active") is True and subscription.status != Subscription.Status.ACTIVE:
        verify = True  # switched on again, or a handshake to try again
        asked_by = asked_by or "active"
    if verify:
        handshake_count(subscription.owner, asked_by)
        subscription.status, subscription.status_reason = Subscription.Status.PENDING, ""
        _verify_later(subscription)
    subscription.save()
    return subscription


def subscription_verify(subscription_id: uuid.UUID) -> bool | None:
    """The handshake of a pending subscription: a signed challenge, answered with the same
    challenge or not. True if it made the subscription active; False if not (refused,
    failed, or the subscription changed meanwhile: not pending, or another URL); None if it
    must wait (its receiver has a request in flight, or its owner
    ``WEBHOOK_VERIFY_IN_FLIGHT_PER_OWNER`` handshakes)."""
    seconds = 2 * settings.WEBHOOK_TIMEOUT_SECONDS + 30
    per_owner = settings.WEBHOOK_VERIFY_IN_FLIGHT_PER_OWNER
    taken, until = lease_take(
        subscription_id, status=Subscription.Status.PENDING, seconds=seconds, per_owner=per_owner
    )
    if taken is Lease.GONE:
        return False
    if taken is not Lease.TAKEN:
        return None
    try:
        # Read under the lease: the URL challenged is the one compared before activating.
        subscription = Subscription.objects.get(pk=subscription_id)
        return _handshake(subscription)
    finally:
        lease_release(subscription_id, until)


def _handshake(subscription: Subscription) -> bool:
    url = subscription.url
    challenge = secrets.token_urlsafe(24)
    body = envelope.cloud_event(
        event_id=0,
        type=envelope.VERIFICATION,
        subject=None,
        time=timezone.now(),
        data=b'{"challenge":"%s"}' % challenge.encode(),
    )
    secret = secret_open(subscription.secret_sealed)
    headers = signed_headers(secret, f"verify_{uuid.uuid4().hex}", body)
    reason = ""
    try:
        result = fetch(
            url,
            json_body=body,
            headers=headers,
            accept_json=True,
            max_bytes=64 * 1024,
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
        )
        answer = result.json()
        if not isinstance(answer, dict) or answer.get("challenge") != challenge:
            reason = "The receiver did not answer the verification with its challenge."
    except FetchError as exc:
        reason = f"The verification failed: {exc.detail}"
    with transaction.atomic():
        current = Subscription.objects.select_for_update().filter(pk=subscription.pk).first()
        if current is None or current.status != Subscription.Status.PENDING:
            return False
        if current.url != url:
            return False  # what this handshake says is about another address
        if reason:
            current.status_reason = reason[:500]
        else:
            latest = Event.objects.aggregate(last=Max("id"))["last"] or 0
            current.status, current.status_reason = Subscription.Status.ACTIVE, ""
            current.cursor, current.verified_at = latest, timezone.now()
        current.save(
            update_fields=["status", "status_reason", "cursor", "verified_at", "updated_at"]
        )
    return not reason
