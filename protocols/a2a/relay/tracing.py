"""What a relayed request carries besides the call, so it can be followed: the id of the
request that made it (``x-request-id``) and its trace context (``traceparent``, when
tracing is on), as AMQP message headers; an agent that echoes them in its reply (the demo's
queue agent does) puts the consumer's work on the reply under the same id and trace."""

from contextlib import contextmanager

from registry.http.request_ids import WELL_FORMED, request_id
from registry.http.tracing import span_continued, trace_inject

REQUEST_ID_HEADER = "x-request-id"
# The trace context headers (W3C Trace Context) an agent echoes back.
TRACE_HEADERS = ("traceparent", "tracestate")


def context_headers() -> dict[str, str]:
    """The current request's id and trace context, as message headers."""
    headers: dict[str, str] = {}
    rid = request_id.get()
    if rid:
        headers[REQUEST_ID_HEADER] = rid
    trace_inject(headers)
    return headers


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def echoed(headers: dict | None) -> dict[str, str]:
    """Of a message's headers, the request id and trace context to send back with a reply."""
    names = (REQUEST_ID_HEADER, *TRACE_HEADERS)
    return {name: _text(headers[name])[:512] for name in names if name in (headers or {})}


@contextmanager
def reply_context(headers: dict | None):
    """The consumer's work on one reply: under the request id the reply echoes (when
    well-formed) and in a span continuing its trace."""
    carried = echoed(headers)
    rid = carried.get(REQUEST_ID_HEADER, "")
    token = request_id.set(rid if WELL_FORMED.fullmatch(rid) else "")
    try:
        with span_continued("relay reply", carried):
            yield
    finally:
        request_id.reset(token)
