"""Every request Django answers: its id (``registry.http.request_ids``) and its count and
time in the metrics, by route template (never the path the client sent)."""

import time

from registry.http import metrics
from registry.http.request_ids import ENVIRON_KEY, HEADER, request_id, request_id_of

# A request that matched no route (a 404 of the resolver): one label for all of them.
UNMATCHED = "(unmatched)"


class RequestObservedMiddleware:
    """The outermost middleware: the request's id in the context while it is answered (and
    logged) and in the answer's ``X-Request-Id``; then the request counted."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        rid = request_id_of(request.META)
        request.META[ENVIRON_KEY] = rid
        # Kept until request_finished (request_id_clear): Django logs an error answer
        # ("Not Found: …") after the middleware returned it.
        request_id.set(rid)
        response = self.get_response(request)
        response[HEADER] = rid
        match = request.resolver_match
        metrics.http_observe(
            "/" + match.route if match is not None else UNMATCHED,
            request.method,
            response.status_code,
            "django",
            time.perf_counter() - started,
        )
        return response


def request_id_clear(**kwargs) -> None:
    """Django's request_finished: the thread works for no request any more."""
    request_id.set("")
