"""The entities app's background job: the crawl of known domains."""

from celery import shared_task
from celery.utils.log import get_task_logger

from entities.crawl import entities_crawl

logger = get_task_logger(__name__)


@shared_task(name="entities.tasks.entities_crawl")
def entities_crawl_task() -> int:
    """Re-fetch the entity cards that are due (as `manage.py crawl_entities`)."""
    counts = entities_crawl()
    logger.info(
        "Crawled %d entity cards: %d updated, %d unchanged, %d flagged.",
        counts.checked,
        counts.updated,
        counts.unchanged,
        counts.flagged,
    )
    return counts.checked
