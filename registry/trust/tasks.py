"""The trust scores' daily job: every agent measured again (age, certificate expiry and the
history windows change with time alone)."""

from celery import shared_task
from celery.utils.log import get_task_logger

from registry.trust.services import trust_refresh_all

logger = get_task_logger(__name__)


@shared_task(name="registry.trust.tasks.trust_refresh")
def trust_refresh() -> list[int]:
    """Recompute every agent's trust score (as `manage.py trust_recompute`)."""
    measured, changed = trust_refresh_all()
    logger.info("Measured the trust of %d agents; %d changed.", measured, changed)
    return [measured, changed]
