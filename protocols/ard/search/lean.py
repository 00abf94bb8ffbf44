"""POST /ard/search on the lean lane (registry.fastpath.lean), for a search that the view has
answered before: its page's keys cached at the current data generation
(``protocols.ard.search.selectors.search_peek``), so its request was checked then. One statement,
the page's entries (which reads the generation). Anything else goes on to ``SearchView``, with the
body it was sent: a new or uncached search, a change since, a request the view would refuse or
answer otherwise (another media type or Accept, a body that does not parse or check, a
search that asks the peers, credentials, a client over its read limit)."""

from django.conf import settings

from protocols.ard.catalog.query import search_parse
from protocols.ard.search import selectors
from protocols.ard.search.search import answer_body, asks_peers
from registry.access.throttles import READ_COUNTED, read_wait
from registry.fastpath.lean import LeanAnswer, json_body
from registry.http.jsonutil import strict_loads
from registry.http.problems import ProblemError

# What DRF adds to the view's answer (tests/protocols/ard/search/test_lean.py compares).
SEARCH_HEADERS = (("Content-Type", "application/json"), ("Allow", "POST, OPTIONS"))
_ACCEPTS = {None, "*/*", "application/json"}
# A search request is small; a larger body is the view's to refuse or answer.
MAX_BODY = 16 * 1024


def search_lean(rest: str, environ) -> LeanAnswer | None:
    if environ.get("HTTP_ACCEPT") not in _ACCEPTS:
        return None
    raw = json_body(environ, MAX_BODY, charsets=("", "charset=utf-8"))
    if raw is None:
        return None
    try:
        # The view's parser's reading (registry.http.parsers): duplicate keys, NaN, invalid
        # UTF-8 and deep nesting are its 400s.
        body = strict_loads(raw, max_depth=settings.REGISTRY_MAX_JSON_DEPTH)
        wanted = search_parse(body)
    except (ValueError, ProblemError):
        return None
    if asks_peers(wanted):
        return None
    # Counted here, once: the view reads this count (a client over its limit gets its 429).
    environ[READ_COUNTED] = wait = read_wait(environ)
    if wait is not None:
        return None
    found = selectors.search_peek(wanted.query, wanted.page_size, wanted.page_token)
    if found is None:
        return None
    return LeanAnswer(answer_body(wanted, body["query"], *found), list(SEARCH_HEADERS))
