"""The agents' background jobs: pending ownership transfers and unverified domain claims
expire."""

from celery import shared_task
from celery.utils.log import get_task_logger

from registry.agents.claims import claims_expire
from registry.agents.ownership import transfers_expire

logger = get_task_logger(__name__)


@shared_task(name="registry.agents.tasks.ownership_expire")
def ownership_expire() -> list[int]:
    """Expire old transfers and claims (as `manage.py ownership_expire`)."""
    transfers, claims = transfers_expire(), claims_expire()
    logger.info("Expired %d transfers and %d domain claims.", transfers, claims)
    return [transfers, claims]
