"""Log formats: plain lines for people, or one JSON object per line (LOG_FORMAT=json) for
log collectors."""

import json
import logging
from datetime import UTC, datetime

# LogRecord attributes that are not extra fields given by the caller.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


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
            if key not in _STANDARD and not key.startswith("_") and key not in entry:
                entry[key] = value if isinstance(value, str | int | float | bool) else str(value)
        return json.dumps(entry, ensure_ascii=False)
