"""Log formats: plain lines for people, or one JSON object per line (LOG_FORMAT=json) for
log collectors."""

import json
import logging
from datetime import UTC, datetime

# LogRecord attributes that are not extra fields given by the caller.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class PlainFormatter(logging.Formatter):
    """``LEVEL logger: message``; inside a request or a job ``LEVEL logger [id]: message``."""

    def __init__(self):
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self.with_id = logging.Formatter("%(levelname)s %(name)s [%(request_id)s]: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "request_id", ""):
            return self.with_id.format(record)
        return super().format(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the exception if any,
    and the caller's extra fields (those JSON can hold; others as text)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        for key, value in vars(record).items():
            if key == "request_id" and not value:  # written outside any request or job
                continue
            if key not in _STANDARD and not key.startswith("_") and key not in entry:
                entry[key] = value if isinstance(value, str | int | float | bool) else str(value)
        return json.dumps(entry, ensure_ascii=False)


def logging_config(log_format: str, level: str) -> dict:
    """Django's LOGGING: one handler, on the root logger, so every record is written once.
    Django's and Celery's own loggers (which, by default, also print in DEBUG) hand their
    records to the root."""
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
                for name in ("django", "django.server", "django.request", "celery")
            },
            "a2a.server.events": {"level": "WARNING"},
            "mcp.server.streamable_http_manager": {"level": "WARNING"},
        },
    }
