"""Trace context, for the rooms that send or receive work: a span around an outbound call,
the ``traceparent`` it carries, a span that continues a context received in a message.

Off (the default: no ``OTEL_*`` exporter configured) every function here is a flag test and
nothing more: OpenTelemetry is not even imported. ``registry.observability.tracing`` turns
it on at start-up when the environment asks for traces."""

from contextlib import AbstractContextManager, nullcontext

_on = [False]
TRACER = "registry"


def tracing_on() -> bool:
    return _on[0]


def tracing_enable() -> None:
    """Called once the SDK's tracer provider is in place (registry.observability.tracing)."""
    _on[0] = True


def trace_inject(carrier: dict) -> None:
    """Add the current trace context (``traceparent``, ``tracestate``) to ``carrier``, the
    headers of an outgoing request or message; nothing when tracing is off."""
    if _on[0]:
        from opentelemetry import propagate

        propagate.inject(carrier)


def span(name: str, kind: str = "internal", **attributes) -> AbstractContextManager:
    """A span around some work, child of the current one (``kind``: internal, client,
    producer, consumer, server); a context that does nothing when tracing is off."""
    if not _on[0]:
        return nullcontext()
    from opentelemetry import trace

    return trace.get_tracer(TRACER).start_as_current_span(
        name, kind=getattr(trace.SpanKind, kind.upper()), attributes=attributes or None
    )


def span_continued(name: str, carrier: dict, kind: str = "consumer") -> AbstractContextManager:
    """A span continuing the trace whose context ``carrier`` (a message's headers) brought."""
    if not _on[0]:
        return nullcontext()
    from opentelemetry import propagate, trace

    return trace.get_tracer(TRACER).start_as_current_span(
        name, context=propagate.extract(carrier), kind=getattr(trace.SpanKind, kind.upper())
    )
