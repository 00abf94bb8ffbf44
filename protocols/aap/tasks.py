"""The AAP app's background jobs."""

from celery import shared_task
from celery.utils.log import get_task_logger

from protocols.aap.statuses.services import aap_statuses_refresh

logger = get_task_logger(__name__)


@shared_task(name="aap.tasks.aap_refresh")
def aap_refresh() -> int:
    """Recompute every stored AAP status from the agents' cards (as `manage.py aap_refresh`)."""
    count = aap_statuses_refresh()
    logger.info("Rechecked the AAP status of %d agents.", count)
    return count
