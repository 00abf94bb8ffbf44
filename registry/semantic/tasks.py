"""Search by meaning's job: the vectors a write could not get (the embedding service was
down or starting) are made later, as ``manage.py embeddings_rebuild --missing`` does."""

from celery import shared_task
from celery.utils.log import get_task_logger

from registry.semantic.vectors import vectors_rebuild

logger = get_task_logger(__name__)


@shared_task(name="registry.semantic.tasks.vectors_fill")
def vectors_fill() -> int:
    count = vectors_rebuild(missing_only=True)
    if count:
        logger.info("Embedded %d agents that had no vector.", count)
    return count
