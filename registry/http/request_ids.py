"""Request ids: every HTTP request has one, the client's ``X-Request-Id`` when it is
well-formed, else a new one. It is echoed in the answer's ``X-Request-Id``, put in every
problem document (``requestId``), held in a context variable for the log lines the request
writes (``RequestIdFilter``) and carried in the headers of the jobs it queues
(``registry.observability.jobs``).

The lean lane (``registry.fastpath.lean``) sets it for its own answers and leaves it in the
environ (``ENVIRON_KEY``) for Django's middleware (``registry.observability.requests``),
so a request the lane passes on keeps its id."""

import logging
import os
import re
from contextvars import ContextVar

HEADER = "X-Request-Id"
META_KEY = "HTTP_X_REQUEST_ID"
ENVIRON_KEY = "registry.request_id"
# What a client may send: short, and nothing a log line or a header could be split on.
WELL_FORMED = re.compile(r"[A-Za-z0-9._:-]{1,128}")

# A registry API key (registry.access.auth: "rk_" and its random part) where a message
# would show one: a path or a value a client sent that held it.
API_KEY_IN_TEXT = re.compile(r"rk_[A-Za-z0-9_-]{8,}")
KEY_SHOWN = "rk_…"

# The id of the request (or the job) this context works for; "" outside any.
request_id: ContextVar[str] = ContextVar("request_id", default="")
# The prefix of the API key the request authenticated with (never the key): "" without.
key_prefix: ContextVar[str] = ContextVar("key_prefix", default="")


def request_id_of(meta) -> str:
    """The id of a request from its META (or WSGI environ): the one the lean lane gave it,
    the client's when well-formed, else a new one."""
    given = meta.get(ENVIRON_KEY)
    if given:
        return given
    sent = meta.get(META_KEY)
    if sent and WELL_FORMED.fullmatch(sent):
        return sent
    return request_id_new()


def request_id_new() -> str:
    """32 random hex digits: as unique as a UUID4's, in a third of its time."""
    return os.urandom(16).hex()


class RequestIdFilter(logging.Filter):
    """Gives each record the id of the request (or job) that wrote it, ``request_id`` (""
    outside any): the JSON lines carry it, the plain lines show it (``registry.logs``); and
    the prefix of the API key it authenticated with, ``api_key_prefix``. Drops the request
    object Django's loggers attach (its text is the path as sent, query included): the
    route and the id say which request it was; and masks an API key a message would show
    (Django's "Not Found: <path>" of a path a client put its key in)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id.get()
        prefix = key_prefix.get()
        if prefix and not hasattr(record, "api_key_prefix"):
            record.api_key_prefix = prefix
        if hasattr(record, "request"):
            del record.request
        message = record.getMessage()
        if "rk_" in message:
            record.msg, record.args = API_KEY_IN_TEXT.sub(KEY_SHOWN, message), ()
        return True
