"""Log formats: plain lines for people, or one JSON object per line (LOG_FORMAT=json) for
log collectors."""

import logging
from datetime import UTC, datetime

import pythonjsonlogger.json


class PlainFormatter(logging.Formatter):
    """``LEVEL logger: message``; inside a request or a job ``LEVEL logger [id]: message``."""

    def __init__(self):
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self.with_id = logging.Formatter("%(levelname)s %(name)s [%(request_id)s]: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "request_id", ""):
            return self.with_id.format(record)
        return super().format(record)


class JsonFormatter(pythonjsonlogger.json.JsonFormatter):
    """One JSON object per record (python-json-logger): ``time`` (ISO 8601, UTC), ``level``,
    ``logger``, ``message``, the exception if any, and the record's other fields: the
    request or job id, a request line's route, status and duration, the API key's prefix,
    the caller's extra fields (those JSON cannot hold as text)."""

    def __init__(self, *args, **kwargs):
        super().__init__(
            "%(levelname)s %(name)s %(message)s",
            rename_fields={"levelname": "level", "name": "logger", "exc_info": "exception"},
            json_ensure_ascii=False,
        )

    def add_fields(self, log_data: dict, record: logging.LogRecord, message_dict: dict) -> None:
        log_data["time"] = datetime.fromtimestamp(record.created, UTC).isoformat(
            timespec="milliseconds"
        )
        super().add_fields(log_data, record, message_dict)
        if not log_data.get("request_id"):  # written outside any request or job
            log_data.pop("request_id", None)
        log_data.pop("color_message", None)  # uvicorn's copy of the message, with escapes


# Loggers that print on their own by default, handed to the root; uvicorn's (the stream
# server's) are added where they are named: its own set-up runs before the app's.
PROPAGATED = ("django", "django.server", "django.request", "celery")


def logging_config(log_format: str, level: str) -> dict:
    """Django's LOGGING: one handler, on the root logger, so every record is written once.
    Django's and Celery's own loggers (which, by default, also print in DEBUG) hand their
    records to the root. With JSON lines, Python's warnings are log records too (py.warnings),
    not text of their own between the lines."""
    logging.captureWarnings(log_format == "json")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": {"()": "registry.logs.PlainFormatter"},
            "json": {"()": "registry.logs.JsonFormatter"},
        },
        # Each record carries the id of the request or job that wrote it (request_id).
        "filters": {"request_id": {"()": "registry.http.request_ids.RequestIdFilter"}},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": log_format,
                "filters": ["request_id"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        # The SDKs' per-request lines (an event queue closed, a stateless MCP session manager
        # started and stopped): one of each for every A2A or MCP request, at INFO.
        "loggers": {
            **{
                name: {"handlers": [], "propagate": True}
                for name in (*PROPAGATED, "uvicorn", "uvicorn.error")
            },
            # The stream server runs with --no-access-log (the Procfiles): configuring
            # "uvicorn" above would turn its access log back on.
            "uvicorn.access": {"handlers": [], "propagate": False},
            "a2a.server.events": {"level": "WARNING"},
            "mcp.server.streamable_http_manager": {"level": "WARNING"},
        },
    }
