"""The entities app's background jobs: the crawl of known domains (with their websites and
MCP server cards), and the enrichment of a domain just registered."""

from celery import shared_task
from celery.utils.log import get_task_logger

from protocols.entities.enrichment.crawl import entities_crawl
from protocols.entities.enrichment.enrich import domain_enrich
from protocols.entities.providers.jobs import PROVIDER_JOB_TASK, provider_job_run

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


@shared_task(name=PROVIDER_JOB_TASK)
def provider_job_task(job_id: str) -> str | None:
    """Run a queued provider registration (POST /v1/provider/register with many entities);
    its state afterwards."""
    job = provider_job_run(job_id)
    return job.state if job is not None else None


@shared_task(name="entities.tasks.entity_enrich")
def entity_enrich_task(domain: str) -> int:
    """Read a domain's websites and MCP server cards (as `manage.py crawl_entities --enrich`);
    the number of entities whose facts or tools changed."""
    return domain_enrich(domain).changed
