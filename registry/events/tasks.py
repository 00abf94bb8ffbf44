"""The events' jobs: the webhook deliverer (queued on each commit that wrote events, and
by the sweep for retries), a receiver's verification, the sweep, and the outbox's pruning.

The webhook jobs (the deliverer, the verification) are routed to the Celery queue
``WEBHOOK_QUEUE`` (``webhooks``; ``CELERY_TASK_ROUTES``), which a worker of its own consumes
(Procfile's ``webhooks``): receivers that are slow to answer hold those jobs, not the
registry's others. No webhook is sent by
another job: the verification and the sweep queue the deliverer."""

import random
import uuid

from celery import shared_task
from celery.utils.log import get_task_logger
from django.conf import settings

from registry.events.delivery import dispatch_later, webhooks_deliver
from registry.events.liveness import liveness_changes_write
from registry.events.outbox import events_prune as events_prune_now
from registry.events.subscriptions import subscription_verify as verify

logger = get_task_logger(__name__)


@shared_task(name="registry.events.tasks.webhooks_dispatch")
def webhooks_dispatch() -> int:
    """Send what is due to every subscription (as `manage.py webhooks_deliver`)."""
    return webhooks_deliver()


@shared_task(name="registry.events.tasks.subscription_verify", bind=True)
def subscription_verify(self, subscription_id: str) -> bool | None:
    """The handshake; once it made the subscription active, the deliverer is queued. One
    that must wait (its receiver or its owner has requests in flight) is queued again for
    later (not when run eagerly: it would wait in this very call)."""
    verified = verify(uuid.UUID(subscription_id))
    if verified is None and not self.request.is_eager:
        later = settings.WEBHOOK_TIMEOUT_SECONDS * random.uniform(1.0, 1.5)  # noqa: S311
        subscription_verify.apply_async((subscription_id,), countdown=later)
    if verified:
        dispatch_later()
    return verified


@shared_task(name="registry.events.tasks.events_sweep")
def events_sweep() -> int:
    """Write the liveness status changes, then queue the deliverer for what is due:
    retries (`manage.py events_sweep` sends them itself)."""
    changes = liveness_changes_write()
    dispatch_later()
    logger.info("%d liveness changes; the webhook deliverer queued.", changes)
    return changes


@shared_task(name="registry.events.tasks.events_prune")
def events_prune() -> int:
    """Remove the events past their retention (as `manage.py events_prune`)."""
    removed = events_prune_now()
    logger.info("Removed %d events past their retention.", removed)
    return removed
