"""The data generation: a counter that every write changing what discovery finds or
counts bumps inside its transaction, so that a count cached with the generation it was
taken at is exact for as long as that generation is the current one.

Writes bump it through ``registry.discovery.listings`` (every write that changes an agent's JSON or
facts rebuilds its listing) and ``services.agent_delete``. A heartbeat or a probe does not:
what depends on them (``liveOnly``, ``conformant``, the ``live`` facet) is never cached.
The bump is the write's last statement, so its row lock is held only until the commit: a
write whose receivers run after the listings are built (a bulk import: catalog entries,
vectors, events) defers it to its end with ``generation_bump_at_end()``, so that imports
running side by side wait on each other only for their commits.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db.models import F

from registry.discovery.models import DataGeneration

# Inside generation_bump_at_end(): whether a bump was asked for (None outside).
_deferred: ContextVar[list[bool] | None] = ContextVar("generation_deferred", default=None)


def generation_bump() -> None:
    deferred = _deferred.get()
    if deferred is not None:
        deferred[0] = True
        return
    if not DataGeneration.objects.filter(pk=1).update(value=F("value") + 1):
        DataGeneration.objects.get_or_create(pk=1, defaults={"value": 1})  # (after a flush)


@contextmanager
def generation_bump_at_end() -> Iterator[None]:
    """Bumps asked for inside are one bump at the end (nested: the outermost's); nothing
    when a step raises. Use it inside the write's transaction, around all of its steps."""
    if _deferred.get() is not None:
        yield
        return
    asked = [False]
    token = _deferred.set(asked)
    try:
        yield
    finally:
        _deferred.reset(token)
    if asked[0]:
        generation_bump()


def generation_read() -> int:
    return DataGeneration.objects.filter(pk=1).values_list("value", flat=True).first() or 0
