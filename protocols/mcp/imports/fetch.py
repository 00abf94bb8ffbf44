"""Reading an MCP Registry's server list through the safe fetcher, page by page: the
``/v0.1`` API, or ``/v0`` when the registry answers 404 there (an older one), with the
cursor of each page's ``metadata.nextCursor`` (``next_cursor`` in the first drafts), and
``updated_since`` after the first complete read. Bounded in pages, bytes and time."""

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from protocols.mcp.imports.conf import setting
from registry.outbound.fetch import FetchError, fetch

APIS = ("v0.1", "v0")
CURSOR_MAX = 2000


class ImportStopped(Exception):
    """The run stopped before the last page: its bounds, or a page that could not be used."""


@dataclass
class Page:
    items: list[Any]
    cursor: str | None


def page_url(base: str, api: str, *, cursor: str | None, since: str) -> str:
    params: dict[str, Any] = {"limit": setting("MCP_IMPORT_PAGE_SIZE")}
    if since:
        params["updated_since"] = since
    if cursor:
        params["cursor"] = cursor
    return f"{base}/{api}/servers?{urlencode(params)}"


def _page(document: Any) -> Page:
    if not isinstance(document, dict) or not isinstance(document.get("servers"), list):
        raise ImportStopped("the page is not a server list (no servers array)")
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    cursor = metadata.get("nextCursor", metadata.get("next_cursor"))
    if cursor is not None and (not isinstance(cursor, str) or len(cursor) > CURSOR_MAX):
        raise ImportStopped("metadata.nextCursor is no cursor")
    return Page(document["servers"], cursor or None)


def _read(url: str, deadline: float) -> Any:
    left = deadline - time.monotonic()
    if left <= 0:
        raise ImportStopped("the run's deadline passed")
    result = fetch(url, max_bytes=setting("MCP_IMPORT_MAX_PAGE_BYTES"), timeout=min(left, 30))
    return result.json()


def api_find(base: str, since: str, deadline: float) -> tuple[str, Page]:
    """The registry's API version and its first page."""
    for api in APIS:
        try:
            return api, _page(_read(page_url(base, api, cursor=None, since=since), deadline))
        except FetchError as exc:
            if exc.status != 404 or api == APIS[-1]:
                raise ImportStopped(f"{base}: {exc.detail}") from None
    raise AssertionError("unreachable")


def pages(
    base: str, api: str, since: str, *, first: Page | None, cursor: str | None, deadline: float
) -> Iterator[Page]:
    """The pages of one run from ``cursor`` (None: the first page, ``first`` when it was
    read already)."""
    page = first
    seen: set[str] = set()
    for _ in range(setting("MCP_IMPORT_MAX_PAGES")):
        if page is None:
            try:
                page = _page(_read(page_url(base, api, cursor=cursor, since=since), deadline))
            except FetchError as exc:
                raise ImportStopped(exc.detail) from None
        yield page
        if page.cursor is None:
            return
        if page.cursor in seen:  # a registry that pages in a circle
            raise ImportStopped("the registry gave a cursor twice")
        seen.add(page.cursor)
        cursor, page = page.cursor, None
    raise ImportStopped(f"more than MCP_IMPORT_MAX_PAGES ({setting('MCP_IMPORT_MAX_PAGES')}) pages")


def deadline_start() -> float:
    return time.monotonic() + setting("MCP_IMPORT_DEADLINE_SECONDS")
