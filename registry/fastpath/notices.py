"""Change notices between processes, for what a process keeps for itself (the lean lane's
card cache, in a spool: ``registry.fastpath.spool``): PostgreSQL's LISTEN/NOTIFY.

A write names what it changed with ``announce(channel, keys)`` inside its transaction:
PostgreSQL delivers the notice when, and only if, the transaction commits, to every
connection listening on the channel. Each process has a ``Listener`` per channel, on a
connection of its own (Django's are recycled and would miss notices while closed). Before
each use of its cache, ``Listener.current()`` takes the notices that have arrived (a
non-blocking look at the socket: no round trip) and hands their keys to the cache; it
answers False when it cannot vouch for the cache — another database, a lost connection —
and the cache, emptied, is not used until the listener listens again. So a process's cache
is only used while every committed change reaches it, within the moment PostgreSQL takes
to deliver a notice.
"""

import contextlib
import logging
import os
import select
import threading
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from registry.fastpath.replicas import lsn_number, read_alias, replica_position
from registry.fastpath.spool import Spool

logger = logging.getLogger(__name__)

# A notice's payload is at most 8,000 bytes: longer key lists are sent in several.
PAYLOAD_MAX = 7900
# Every key of the channel (a bulk change).
EVERYTHING = "*"


def announce(channel: str, keys: Iterable[str]) -> None:
    """Tell the channel's listeners, once the current transaction commits, that ``keys``
    changed. Nothing to do on other databases (their listeners never vouch)."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql":
        return
    payloads, current = [], ""
    for key in keys:
        if current and len(current) + len(key) + 1 > PAYLOAD_MAX:
            payloads.append(current)
            current = ""
        current = f"{current},{key}" if current else key
    if current:
        payloads.append(current)
    with db.cursor() as cursor:
        for payload in payloads:
            cursor.execute("SELECT pg_notify(%s, %s)", [channel, payload])


def own_connection_params(db) -> dict:
    """The psycopg parameters of a connection of one's own to Django's database ``db``."""
    params = db.get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(name, None)
    return params


class Listener:
    """Listens on ``channel`` for this process; ``on_keys(keys)`` gets each notice's keys,
    ``on_keys(None)`` when everything must be forgotten (the listener (re)connected: what
    changed while it was not listening is unknown)."""

    def __init__(
        self,
        channel: str,
        on_keys: Callable[[list[str] | None], None],
        *,
        retry_seconds: float = 5.0,
    ):
        self.channel = channel
        self.on_keys = on_keys
        self.retry_seconds = retry_seconds
        self.lock = threading.Lock()
        self.connection = None
        self.pid = os.getpid()
        self.retry_at = 0.0
        # With read replicas: the primary's WAL position when notices last arrived (past
        # the commits they announce). A value loaded from a replica that has not replayed
        # it may be older than the change, and is not kept (NoticedCache.get).
        self.replicas = any(alias.startswith("replica") for alias in settings.DATABASES)
        self.noticed_position = 0

    def _position_note(self, connection=None) -> None:
        """The primary's WAL position now, by libpq itself: psycopg's own ``execute`` would
        take notices that arrive meanwhile away from ``pgconn.notifies()``, where
        ``current`` looks for them."""
        from psycopg import pq

        pgconn = (connection or self.connection).pgconn
        result = pgconn.exec_(b"SELECT pg_current_wal_lsn()::text")
        if result.status != pq.ExecStatus.TUPLES_OK:
            raise ConnectionError(result.get_error_message())
        self.noticed_position = lsn_number(result.get_value(0, 0).decode()) or 0

    def _notices_take(self, pgconn) -> None:
        """Hand the keys of the notices that arrived to the cache; with replicas, note the
        WAL position after them, and again while more arrive during the look."""
        while True:
            noticed = False
            while (notice := pgconn.notifies()) is not None:
                payload = notice.extra.decode()
                self.on_keys(None if payload == EVERYTHING else payload.split(","))
                noticed = True
            if not (noticed and self.replicas):
                return
            self._position_note()

    def current(self) -> bool:
        """Take the notices that arrived; whether the cache may be used now."""
        with self.lock:
            if self.pid != os.getpid():  # a forked child: the parent's socket is not ours
                self.connection, self.pid, self.retry_at = None, os.getpid(), 0.0
            if self.connection is None and not self._connect():
                return False
            try:
                pgconn = self.connection.pgconn
                readable, _, _ = select.select([pgconn.socket], [], [], 0)
                if readable:
                    pgconn.consume_input()
                    self._notices_take(pgconn)
                if self.connection.broken or self.connection.closed:
                    raise ConnectionError("the listening connection closed")
            except Exception as exc:
                logger.warning("Stopped listening on %s: %s", self.channel, exc)
                self._drop()
                return False
            return True

    def _connect(self) -> bool:
        if time.monotonic() < self.retry_at:
            return False
        db = connections[DEFAULT_DB_ALIAS]
        if db.vendor != "postgresql":
            self.retry_at = float("inf")
            return False
        import psycopg

        connection = None
        try:
            connection = psycopg.connect(
                autocommit=True, connect_timeout=3, **own_connection_params(db)
            )
            connection.execute(f'LISTEN "{self.channel}"')
            if self.replicas:
                self._position_note(connection)
        except Exception as exc:
            if connection is not None:
                connection.close()
            logger.warning("Cannot listen on %s: %s", self.channel, exc)
            self.retry_at = time.monotonic() + self.retry_seconds
            return False
        self.connection = connection
        self.on_keys(None)  # what changed before listening is unknown: forget it all
        return True

    def _drop(self) -> None:
        with contextlib.suppress(Exception):  # closing a broken connection may fail too
            self.connection.close()
        self.connection = None
        self.retry_at = time.monotonic() + self.retry_seconds
        self.on_keys(None)

    def close(self) -> None:
        with self.lock:
            if self.connection is not None:
                self._drop()
            self.retry_at = 0.0


class NoticedCache:
    """A per-process cache of at most ``max_bytes`` of values (bytes), in a spool
    (``registry.fastpath.spool``: files in the page cache, an index in memory), kept exact by the
    notices of ``channel``: used only while its listener vouches for it."""

    def __init__(self, channel: str, max_bytes: int, directory: str | None = None):
        self.max_bytes = max_bytes
        self.spool = Spool(max_bytes, directory)
        self.listener = Listener(channel, self.forget)
        self.forgotten = 0  # how many times notices were taken: a load they overtook

    def get(self, key: str, load: Callable[[], bytes | None]) -> bytes | None:
        """The value of ``key``: cached, or ``load()``'s, kept (None: nothing to keep)."""
        if self.max_bytes <= 0 or not self.listener.current():
            return load()
        value = self.spool.get(key)
        if value is None:
            forgotten = self.forgotten
            behind = self._replica_behind()
            value = load()
            # Kept unless another thread took notices meanwhile: one of them may be about
            # this very value, read before its change committed; nor when read from a
            # replica that had not replayed the changes noticed.
            if value is not None and self.forgotten == forgotten and not behind:
                self.spool.put(key, value)
        return value

    def _replica_behind(self) -> bool:
        """Whether this read goes to a replica that may not have replayed every change
        noticed so far (its replay position as last seen, never ahead of the truth)."""
        if not self.listener.replicas:
            return False
        alias = read_alias()
        if alias == DEFAULT_DB_ALIAS:
            return False
        return replica_position(alias) < self.listener.noticed_position

    def forget(self, keys: list[str] | None) -> None:
        """Drop ``keys`` (None: everything)."""
        self.forgotten += 1
        self.spool.forget(keys)
