"""The MCP app's jobs: imports from the MCP Registries that are due (scheduled, as
``manage.py mcp_registry_import``)."""

from celery import shared_task
from celery.utils.log import get_task_logger

from protocols.mcp.imports.services import sources_import

logger = get_task_logger(__name__)


@shared_task(name="mcp_face.tasks.mcp_registry_import")
def mcp_registry_import_task() -> int:
    """Import from the MCP Registries that are due (as `manage.py mcp_registry_import`)."""
    done = sources_import()
    logger.info("Imported from %d MCP Registries.", len(done))
    return len(done)
