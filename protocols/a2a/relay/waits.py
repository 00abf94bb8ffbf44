"""The queue relay's waiting places: a relayed call that waits for its agent's reply
(``SendMessage`` without ``returnImmediately``, ``CancelTask``) takes one before anything
is made or published, and gives it back when its wait ends. Past a limit the call is
refused (``WaitRefused``: a problem or a JSON-RPC error naming the limit, with
Retry-After) and nothing is sent.

- ``web_waits``, in the web processes (gunicorn's sync workers: a waiting call holds a
  worker): ``QUEUE_RELAY_WEB_WAITS`` in all and ``QUEUE_RELAY_WEB_WAITS_PER_CLIENT`` per
  client address, counted across the machine's processes by locks on files in
  ``VAR_DIR/relay-waits`` (``flock``: a lock is given back when its process dies, however
  it dies). The web workers are per machine, so the limits are too.
- ``async_waits``, in the async server (``protocols.a2a.relay.asgi``, one event loop):
  ``QUEUE_RELAY_ASYNC_WAITS`` in all and ``QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT`` per client
  address, counted in the process.
"""

import fcntl
import hashlib
import os
from collections import Counter
from collections.abc import Callable
from contextlib import suppress

from django.conf import settings

# The client addresses share this many sets of per-client lock files (by their hash): two
# addresses in one bucket count together, never more than the limit allows.
CLIENT_BUCKETS = 1024


class WaitRefused(Exception):
    """No waiting place: ``status`` 503 (the limit in all) or 429 (the client's). Other
    limits of the relay refuse with their own ``slug`` and ``retry_after`` (seconds)."""

    def __init__(
        self,
        status: int,
        limit: str,
        detail: str,
        *,
        slug: str = "relay-waits-full",
        retry_after: int | None = None,
    ):
        super().__init__(detail)
        self.status, self.limit, self.detail, self.slug = status, limit, detail, slug
        self._retry_after = retry_after

    @property
    def retry_after(self) -> int:
        if self._retry_after is not None:
            return max(1, self._retry_after)
        return max(1, settings.QUEUE_RELAY_WAIT_SECONDS)


def _refused(status: int, limit: str, count: int, where: str) -> WaitRefused:
    whose = "in all" if status == 503 else "for this client"
    return WaitRefused(
        status,
        limit,
        f"{count} relayed call(s) {whose} already wait for their agents' replies {where} "
        f"({limit}={count}): nothing was sent. Retry after Retry-After, or send with "
        "returnImmediately: true and poll GetTask.",
    )


Release = Callable[[], None]


class _Locks:
    """Try-locks on files: a place is a file this process holds locked."""

    def __init__(self):
        self.folder = os.path.join(str(settings.VAR_DIR), "relay-waits")

    def take(self, names: list[str]) -> int | None:
        """The descriptor of the first of ``names`` not locked, locked now; None if all are."""
        os.makedirs(self.folder, exist_ok=True)
        for name in names:
            fd = os.open(os.path.join(self.folder, name), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return fd
        return None


def _give_back(fd: int) -> None:
    with suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


class WebWaits:
    def take(self, client: str) -> Release:
        total = settings.QUEUE_RELAY_WEB_WAITS
        per_client = settings.QUEUE_RELAY_WEB_WAITS_PER_CLIENT
        where = "in the web processes"
        if total <= 0:
            raise _refused(503, "QUEUE_RELAY_WEB_WAITS", 0, where)
        locks = _Locks()
        held = locks.take([f"all-{n}" for n in range(total)])
        if held is None:
            raise _refused(503, "QUEUE_RELAY_WEB_WAITS", total, where)
        bucket = int(hashlib.sha256(client.encode()).hexdigest()[:8], 16) % CLIENT_BUCKETS
        mine = locks.take([f"client-{bucket}-{n}" for n in range(max(0, per_client))])
        if mine is None:
            _give_back(held)
            raise _refused(429, "QUEUE_RELAY_WEB_WAITS_PER_CLIENT", per_client, where)

        def release() -> None:
            _give_back(mine)
            _give_back(held)

        return release


class AsyncWaits:
    def __init__(self):
        self.total = 0
        self.clients: Counter = Counter()

    def take(self, client: str) -> Release:
        total = settings.QUEUE_RELAY_ASYNC_WAITS
        per_client = settings.QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT
        where = "in the async server"
        if self.total >= total:
            raise _refused(503, "QUEUE_RELAY_ASYNC_WAITS", total, where)
        if self.clients[client] >= per_client:
            raise _refused(429, "QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT", per_client, where)
        self.total += 1
        self.clients[client] += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.total -= 1
                self.clients[client] -= 1
                if self.clients[client] <= 0:
                    del self.clients[client]

        return release


web_waits = WebWaits()
async_waits = AsyncWaits()
