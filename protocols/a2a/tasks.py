"""The A2A app's background jobs."""

from celery import shared_task
from celery.utils.log import get_task_logger

from protocols.a2a.face.task_store import agent_tasks_expire
from protocols.a2a.registration.provenance import signatures_recheck as signatures_recheck_all
from protocols.a2a.registration.refresh import agents_refresh
from protocols.a2a.relay.store import relay_tasks_expire as relay_tasks_expire_all
from protocols.a2a.versions.history import versions_prune

logger = get_task_logger(__name__)


@shared_task(name="a2a.tasks.signatures_recheck")
def signatures_recheck() -> dict[str, int]:
    """Verify every signed card again (as `manage.py signatures_recheck`)."""
    counts = signatures_recheck_all()
    logger.info("Rechecked the signatures of %d cards: %s.", sum(counts.values()), counts)
    return counts


@shared_task(name="a2a.tasks.agent_tasks_expire")
def agent_tasks_expire_job() -> int:
    """Remove the registry agent's old tasks (as `manage.py agent_tasks_expire`)."""
    deleted = agent_tasks_expire()
    logger.info("Removed %d tasks of the registry agent.", deleted)
    return deleted


@shared_task(name="a2a.tasks.relay_tasks_expire")
def relay_tasks_expire() -> int:
    """Remove the relayed tasks past their retention (as `manage.py relay_tasks_expire`)."""
    deleted = relay_tasks_expire_all()
    logger.info("Removed %d relayed tasks.", deleted)
    return deleted


@shared_task(name="a2a.tasks.versions_prune")
def versions_prune_job() -> int:
    """Remove card versions beyond CARD_VERSIONS_KEEP (as `manage.py versions_prune`)."""
    deleted = versions_prune()
    logger.info("Removed %d card versions beyond the retention.", deleted)
    return deleted


@shared_task(name="a2a.tasks.agents_refresh")
def agents_refresh_job() -> dict[str, int]:
    """Refresh the due cards registered by domain or URL (as `manage.py agents_refresh --due`)."""
    counts = agents_refresh(due_only=True)
    logger.info("Refreshed the due cards: %s.", counts)
    return counts
