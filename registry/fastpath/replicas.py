"""Read replicas (``DATABASE_REPLICA_URLS``): which database a request's reads go to.

A public read (a GET or HEAD outside the admin, on Django's path or the lean lane) reads
one replica, the same for all its statements: the ORM through ``ReplicaRouter``, the raw
and prepared statements through ``read_alias()``. Everything else reads the primary:
writes, every statement inside a transaction, jobs, commands and the stream server.

A replica is used only while it answers and is at most
``DATABASE_REPLICA_MAX_LAG_SECONDS`` behind: each process looks at each replica's replay
position at most every ``DATABASE_REPLICA_CHECK_SECONDS`` (``replica_states``); one that
fails a read is looked at again before its next use, and the read is answered again from
the primary.

Read-your-writes: after a write request the primary's WAL insert position is recorded
for ``DATABASE_READ_YOUR_WRITES_SECONDS`` in the shared cache (Redis, so every node sees
it) under the caller's API key and under its address; a read by that caller goes to a
replica that has replayed that position, else to the primary. Change notices still come
from the primary's ``LISTEN`` (``registry.fastpath.notices``: a replica delivers none).
"""

import contextlib
import hashlib
import logging
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

from registry.access.counters import client_ip_of

logger = logging.getLogger(__name__)

_alias: ContextVar[str] = ContextVar("registry_read_alias", default=DEFAULT_DB_ALIAS)
_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_READ_METHODS = frozenset({"GET", "HEAD"})


def lsn_number(text: str | None) -> int | None:
    """A pg_lsn as PostgreSQL writes it (``16/B374D848``), as a number."""
    if not text:
        return None
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


def database_now() -> datetime:
    """The primary's clock (on PostgreSQL): what times one node writes and another node
    compares are taken from, so that the nodes' own clocks need not agree."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql":
        return timezone.now()
    with db.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        return cursor.fetchone()[0]


def replica_aliases() -> list[str]:
    return [alias for alias in settings.DATABASES if alias.startswith("replica")]


def read_alias() -> str:
    """The database of this request's reads: a replica chosen for it, or the primary
    (always inside a transaction on the primary: what it wrote is there only)."""
    alias = _alias.get()
    if alias != DEFAULT_DB_ALIAS and connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    return alias


@contextlib.contextmanager
def reads_from(alias: str):
    """Route this context's reads to ``alias`` while inside."""
    token = _alias.set(alias)
    try:
        yield alias
    finally:
        _alias.reset(token)


class ReplicaRouter:
    """Django's router: the ORM reads from ``read_alias()``; writes, relations and
    migrations are the primary's."""

    def db_for_read(self, model, **hints):
        alias = read_alias()
        return alias if alias != DEFAULT_DB_ALIAS else None

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == DEFAULT_DB_ALIAS


@dataclass
class ReplicaState:
    """What this process last saw of a replica."""

    alias: str
    checked_at: float = float("-inf")
    up: bool = False
    lag_seconds: float | None = None
    replay_lsn: int = 0
    checking: bool = False

    def usable(self) -> bool:
        return (
            self.up
            and self.lag_seconds is not None
            and self.lag_seconds <= settings.DATABASE_REPLICA_MAX_LAG_SECONDS
        )


_states: dict[str, ReplicaState] = {}
_states_lock = threading.Lock()
_turn = [0]


def _state(alias: str) -> ReplicaState:
    state = _states.get(alias)
    if state is None:
        with _states_lock:
            state = _states.setdefault(alias, ReplicaState(alias))
    return state


def replica_check(alias: str) -> ReplicaState:
    """Look at the replica now: whether it answers, its replay position, and its lag (0
    when it has replayed what the primary has written, else the time since the last
    transaction it replayed)."""
    state = _state(alias)
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()::text")
            (primary_lsn,) = cursor.fetchone()
        with connections[alias].cursor() as cursor:
            cursor.execute(
                "SELECT pg_last_wal_replay_lsn()::text, CASE WHEN pg_last_wal_replay_lsn()"
                " >= %s::pg_lsn THEN 0 ELSE extract(epoch FROM clock_timestamp()"
                " - pg_last_xact_replay_timestamp()) END",
                [primary_lsn],
            )
            replay, lag = cursor.fetchone()
    except Exception as exc:
        if state.up:
            logger.warning("The read replica %s does not answer: %s", alias, exc)
        with contextlib.suppress(Exception):
            connections[alias].close()
        state.up, state.lag_seconds = False, None
    else:
        if not state.up:
            logger.info("The read replica %s answers (lag %s s)", alias, lag)
        state.up = replay is not None
        state.replay_lsn = lsn_number(replay) or 0
        state.lag_seconds = None if lag is None else float(lag)
    state.checked_at = time.monotonic()
    return state


def replica_states() -> list[ReplicaState]:
    """Each replica's state, looked at again when older than the check interval (by one
    thread at a time: the others use what was last seen)."""
    states = []
    now = time.monotonic()
    for alias in replica_aliases():
        state = _state(alias)
        if now - state.checked_at >= settings.DATABASE_REPLICA_CHECK_SECONDS:
            with _states_lock:
                mine = not state.checking
                state.checking = True
            if mine:
                try:
                    replica_check(alias)
                finally:
                    state.checking = False
        states.append(state)
    return states


def replica_position(alias: str) -> int:
    """The replay position of the replica as this process last saw it."""
    return _state(alias).replay_lsn


def replica_failed(alias: str) -> None:
    """A read on the replica failed: look at it again before its next use."""
    if alias != DEFAULT_DB_ALIAS:
        _state(alias).checked_at = float("-inf")
        with contextlib.suppress(Exception):
            connections[alias].close()


def replica_choose(after_lsn: int | None = None) -> str:
    """A usable replica (in turn, for a process's threads and requests) that has replayed
    ``after_lsn``, or the primary."""
    usable = [
        state
        for state in replica_states()
        if state.usable() and (after_lsn is None or state.replay_lsn >= after_lsn)
    ]
    if not usable:
        return DEFAULT_DB_ALIAS
    _turn[0] += 1
    return usable[_turn[0] % len(usable)].alias


def _caller_keys(meta) -> list[str]:
    """The shared cache's keys of a caller's last write: its API key's (hashed), and its
    address's."""
    keys = []
    authorization = meta.get("HTTP_AUTHORIZATION", "")
    scheme, _, token = authorization.partition(" ")
    secret = token.strip() if scheme.lower() == "bearer" else meta.get("HTTP_X_API_KEY", "")
    if secret:
        digest = hashlib.sha256(secret.encode()).hexdigest()[:32]
        keys.append(f"replicas:written:key:{digest}")
    address = client_ip_of(meta)
    if address:
        keys.append(f"replicas:written:ip:{address}")
    return keys


def written_record(meta) -> None:
    """After a write request: the primary's WAL position now (past the commit of what the
    request wrote), kept for the caller."""
    keys = _caller_keys(meta)
    if not keys:
        return
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()::text")
            (position,) = cursor.fetchone()
    except Exception:
        logger.warning("Could not read the primary's WAL position after a write", exc_info=True)
        return
    timeout = settings.DATABASE_READ_YOUR_WRITES_SECONDS
    caches["default"].set_many({key: position for key in keys}, timeout=timeout)


def written_position(meta) -> int | None:
    """The WAL position of the caller's last write within the window, if any."""
    keys = _caller_keys(meta)
    if not keys:
        return None
    found = caches["default"].get_many(keys)
    positions = [lsn_number(value) for value in found.values() if value]
    return max(positions) if positions else None


def read_alias_for(meta, path: str) -> str:
    """Where a request's reads go: a replica for a public read (a GET or HEAD outside the
    admin), one that has replayed the caller's recent write; else the primary."""
    if meta.get("REQUEST_METHOD") not in _READ_METHODS or path.startswith("/admin"):
        return DEFAULT_DB_ALIAS
    states = replica_states()
    if not any(state.usable() for state in states):
        return DEFAULT_DB_ALIAS
    return replica_choose(written_position(meta))


# Statements that write nothing (a request that sends only these wrote nothing).
_NOT_WRITES = ("SELECT", "SAVEPOINT", "RELEASE", "ROLLBACK", "SET ", "SHOW")


def _writes_noted(wrote: list):
    """An execute wrapper that notes a statement that may write."""

    def note(execute, sql, params, many, context):
        if not wrote and not sql.lstrip().upper().startswith(_NOT_WRITES):
            wrote.append(sql)
        return execute(sql, params, many, context)

    return note


class ReplicaReadMiddleware:
    """Routes a public read's statements to a replica (answered again from the primary
    when the replica failed it: a 5xx), and records the WAL position a write request
    reached, for the caller's next reads. Nothing without replicas."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.enabled = bool(replica_aliases())

    def __call__(self, request):
        if not self.enabled:
            return self.get_response(request)
        if request.method in _WRITE_METHODS:
            wrote = []
            with connections[DEFAULT_DB_ALIAS].execute_wrapper(_writes_noted(wrote)):
                response = self.get_response(request)
            if wrote:
                written_record(request.META)
            return response
        alias = read_alias_for(request.META, request.path_info)
        if alias == DEFAULT_DB_ALIAS:
            return self.get_response(request)
        with reads_from(alias):
            response = self.get_response(request)
        if response.status_code >= 500:
            replica_failed(alias)
            response = self.get_response(request)
        return response
