"""What a process keeps of the moderators' small tables (the blocklist, the verified
publishers), kept exact through a stamp in the shared cache: each change sets a new stamp
once it commits, and a process reads its table again when the stamp it read differs (one
cache read per write instead of a query). Without the shared cache (down, or none) the
stamp reads as None and the table is read every time; so it does with a cache of this
process alone (``LocMemCache``: other processes would never see the stamp change)."""

import uuid

from django.core.cache import cache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.db import transaction

from registry.signals import write_batch

PREFIX = "moderation-stamp:"


def stamp_read(name: str) -> str | None:
    if isinstance(caches["default"], LocMemCache):
        return None
    try:
        return cache.get(PREFIX + name)
    except Exception:  # the cache is an optimisation: read the table instead
        return None


def stamp_renew(name: str) -> None:
    """A new stamp once the current transaction commits (every process reads again)."""

    def renew():
        try:
            cache.set(PREFIX + name, uuid.uuid4().hex, None)
        except Exception:
            cache.delete(PREFIX + name)

    transaction.on_commit(renew, robust=True)


class Kept:
    """A value loaded by ``load()``, kept while the stamp of ``name`` stays the same, and
    for the rest of one batched write (``registry.signals.writes_batched``: a bulk import's
    thousands of agents read it once, not once each; what changes meanwhile in another
    process is seen by the next write, as the stamp's change after commit is)."""

    def __init__(self, name: str, load):
        self.name, self.load = name, load
        self.stamp, self.value = None, None
        self.batch: object | None = None  # the batched write it was loaded in

    def get(self):
        batch = write_batch()
        if batch is not None and batch is self.batch and self.value is not None:
            return self.value
        stamp = stamp_read(self.name)
        if stamp is None or stamp != self.stamp or self.value is None:
            self.value = self.load()
            self.stamp = stamp
        self.batch = batch
        return self.value

    def forget(self) -> None:
        self.value = None
