"""The import's settings (docs/reference/configuration.md), read from the environment once
with the project's helpers, which fail loudly on bad values; a Django setting of the same
name wins (the tests set them): read them through ``setting(name)``.

- ``MCP_IMPORT_PAGE_SIZE`` (100): servers asked for per page (``limit``);
- ``MCP_IMPORT_MAX_PAGES`` (500): pages read per run of a source; the next run goes on;
- ``MCP_IMPORT_MAX_PAGE_BYTES`` (4 MiB): the largest page read;
- ``MCP_IMPORT_DEADLINE_SECONDS`` (600): one deadline over a run's fetches;
- ``MCP_IMPORT_INTERVAL_SECONDS`` (3600): how often a source is read again;
- ``MCP_IMPORT_TICK_SECONDS`` (600): how often the job looks for sources that are due.
"""

from django.conf import settings

from registry.settings import env_int

DEFAULTS = {
    "MCP_IMPORT_PAGE_SIZE": env_int("MCP_IMPORT_PAGE_SIZE", 100),
    "MCP_IMPORT_MAX_PAGES": env_int("MCP_IMPORT_MAX_PAGES", 500),
    "MCP_IMPORT_MAX_PAGE_BYTES": env_int("MCP_IMPORT_MAX_PAGE_BYTES", 4 * 1024 * 1024),
    "MCP_IMPORT_DEADLINE_SECONDS": env_int("MCP_IMPORT_DEADLINE_SECONDS", 600),
    "MCP_IMPORT_INTERVAL_SECONDS": env_int("MCP_IMPORT_INTERVAL_SECONDS", 3600),
    "MCP_IMPORT_TICK_SECONDS": env_int("MCP_IMPORT_TICK_SECONDS", 600),
}


def setting(name: str) -> int:
    return getattr(settings, name, DEFAULTS[name])
