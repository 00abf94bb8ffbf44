"""The crawl's jobs: a new source's first crawl (POST /ard/sources) and the re-crawl of the
sources that are due (scheduled, as ``manage.py ard_crawl``)."""

from celery import shared_task
from celery.utils.log import get_task_logger

from protocols.ard.crawl.ingest import source_crawl, sources_crawl
from protocols.ard.models import CatalogSource

logger = get_task_logger(__name__)


@shared_task(name="ard.tasks.ard_source_crawl")
def ard_source_crawl_task(source_id: str) -> dict | None:
    """Crawl one source now (POST /ard/sources)."""
    source = CatalogSource.objects.filter(pk=source_id).first()
    return source_crawl(source) if source is not None else None


@shared_task(name="ard.tasks.ard_crawl")
def ard_crawl_task() -> int:
    """Crawl the sources that are due (as `manage.py ard_crawl`)."""
    done = sources_crawl()
    logger.info("Crawled %d catalog sources.", len(done))
    return len(done)
