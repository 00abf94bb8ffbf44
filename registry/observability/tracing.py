"""OpenTelemetry traces, on when the standard variables ask for them: an OTLP endpoint
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), unless
``OTEL_TRACES_EXPORTER=none`` or ``OTEL_SDK_DISABLED=true``. Then, in every process at
start-up (``registry.apps``): the SDK's tracer provider with a batching OTLP/HTTP exporter
(every other ``OTEL_*`` variable as the SDK reads it: headers, sampler, resource
attributes, ``OTEL_SERVICE_NAME``), Django's, Celery's and Redis's instrumentations, a span
per database statement (Django's execute wrappers), and the registry's own spans
(``registry.http.tracing``: outbound fetches with their ``traceparent``, the relay's AMQP
messages). Celery's instrumentation carries the context from a request into the jobs it
queues.

Off, nothing here is imported or run per request: the default costs nothing.

The exporter sends to the collector the operator configured, not to an address any
client gave: it is not an outbound fetch (``registry.outbound``), like the database's and
the brokers' connections."""

import os

from registry.http.tracing import tracing_enable, tracing_on

DEFAULT_SERVICE = "a2a-registry"
STATEMENT_CHARS = 2000


def tracing_configured(environ=os.environ) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() in ("none", ""):
        return False
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def tracing_start() -> bool:
    """Set up tracing in this process when the environment asks for it (once); whether it
    is on."""
    if tracing_on() or not tracing_configured():
        return tracing_on()
    from django.db.backends.signals import connection_created
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: DEFAULT_SERVICE}
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument()
    CeleryInstrumentor().instrument()
    RedisInstrumentor().instrument()
    connection_created.connect(_statements_traced, dispatch_uid="tracing-statements")
    tracing_enable()
    return True


def tracing_flush(timeout_millis: int = 5000) -> None:
    """Send the spans still batched (a process about to end, a test)."""
    if tracing_on():
        from opentelemetry import trace

        trace.get_tracer_provider().force_flush(timeout_millis)


def _statements_traced(sender, connection, **kwargs) -> None:
    if _statement_span not in connection.execute_wrappers:
        connection.execute_wrappers.append(_statement_span)


def _statement_span(execute, sql, params, many, context):
    from opentelemetry import trace

    if not trace.get_current_span().get_span_context().is_valid:
        # A statement of no traced request or job (the lean lane answers before Django and
        # its instrumentation): no span of its own, which would be a trace alone.
        return execute(sql, params, many, context)
    connection = context["connection"]
    words = sql.lstrip().split(None, 1)
    name = words[0].upper() if words else "SQL"
    # The statement's text, never its parameters (a user's values).
    with trace.get_tracer("registry.db").start_as_current_span(
        name,
        kind=trace.SpanKind.CLIENT,
        attributes={
            "db.system.name": connection.vendor,
            "db.query.text": sql[:STATEMENT_CHARS],
        },
    ):
        return execute(sql, params, many, context)
