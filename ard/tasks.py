"""The ARD app's background jobs: a new source's first crawl, the re-crawl of the sources
that are due, and the assembly of a large catalog gone stale (``ard.catalog.catalog_page``)."""

from celery import shared_task
from celery.utils.log import get_task_logger

from ard.catalog import catalog_rebuild_if_stale
from ard.ingest import source_crawl, sources_crawl
from ard.models import CatalogSource

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


@shared_task(name="ard.tasks.ard_catalog_build")
def ard_catalog_build_task() -> bool:
    """Assemble the catalog again, unless another build made it current meanwhile."""
    return catalog_rebuild_if_stale()
