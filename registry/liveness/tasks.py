"""The core's background jobs."""

from celery import shared_task
from celery.utils.log import get_task_logger

from registry.liveness.probes import endpoints_probe_due
from registry.liveness.services import endpoints_expire as endpoints_expire_now

logger = get_task_logger(__name__)


@shared_task(name="registry.liveness.tasks.endpoints_expire")
def endpoints_expire() -> list[int]:
    """Remove expired Ephemeral endpoints (as `manage.py endpoints_expire`)."""
    endpoints, agents = endpoints_expire_now()
    logger.info("Removed %d expired endpoints and %d agents left without one.", endpoints, agents)
    return [endpoints, agents]


@shared_task(name="registry.liveness.tasks.endpoints_probe")
def endpoints_probe() -> int:
    """Probe the endpoints whose probe is due (as `manage.py probe_endpoints`, for all)."""
    count = endpoints_probe_due()
    logger.info("Probed %d endpoints.", count)
    return count
