"""The access room's background job: idempotency records past their time."""

from celery import shared_task
from celery.utils.log import get_task_logger

from registry.access.idempotency import idempotency_prune as idempotency_prune_now

logger = get_task_logger(__name__)


@shared_task(name="registry.access.tasks.idempotency_prune")
def idempotency_prune() -> int:
    """Remove idempotency records past IDEMPOTENCY_TTL_SECONDS (as `manage.py
    idempotency_prune`)."""
    count = idempotency_prune_now()
    logger.info("Removed %d idempotency records.", count)
    return count
