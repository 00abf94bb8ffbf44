"""The events' jobs: the webhook deliverer (queued on each commit that wrote events, and
by the sweep for retries), a receiver's verification, the sweep, and the outbox's pruning."""

import uuid

from celery import shared_task
from celery.utils.log import get_task_logger

from registry.events.delivery import webhooks_deliver
from registry.events.liveness import liveness_changes_write
from registry.events.models import Subscription
from registry.events.outbox import events_prune as events_prune_now
from registry.events.subscriptions import subscription_verify as verify

logger = get_task_logger(__name__)


@shared_task(name="registry.events.tasks.webhooks_dispatch")
def webhooks_dispatch() -> int:
    """Send what is due to every subscription (as `manage.py webhooks_deliver`)."""
    return webhooks_deliver()


@shared_task(name="registry.events.tasks.subscription_verify")
def subscription_verify(subscription_id: str) -> bool:
    subscription = Subscription.objects.filter(pk=uuid.UUID(subscription_id)).first()
    if subscription is None or subscription.status != Subscription.Status.PENDING:
        return False
    verified = verify(subscription)
    if verified:
        webhooks_deliver()
    return verified


@shared_task(name="registry.events.tasks.events_sweep")
def events_sweep() -> list[int]:
    """Write the liveness status changes, then send what is due: retries (as
    `manage.py events_sweep`)."""
    changes = liveness_changes_write()
    delivered = webhooks_deliver()
    logger.info("%d liveness changes; %d webhook deliveries.", changes, delivered)
    return [changes, delivered]


@shared_task(name="registry.events.tasks.events_prune")
def events_prune() -> int:
    """Remove the events past their retention (as `manage.py events_prune`)."""
    removed = events_prune_now()
    logger.info("Removed %d events past their retention.", removed)
    return removed
