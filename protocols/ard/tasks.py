"""The ARD app's background jobs, found here by the job engine's autodiscovery: each lives
in the room that owns its work (a new source's first crawl and the re-crawl of the sources
that are due: ``crawl.tasks``; the assembly of a large catalog gone stale: beside
``catalog.document.catalog_page``, which asks for it)."""

from protocols.ard.catalog.document import ard_catalog_build_task
from protocols.ard.crawl.tasks import ard_crawl_task, ard_source_crawl_task

__all__ = ["ard_catalog_build_task", "ard_crawl_task", "ard_source_crawl_task"]
