"""The data generation: a counter that every write changing what discovery finds or
counts bumps inside its transaction, so that a count cached with the generation it was
taken at is exact for as long as that generation is the current one.

Writes bump it through ``registry.discovery.listings`` (every write that changes an agent's JSON or
facts rebuilds its listing) and ``services.agent_delete``. A heartbeat or a probe does not:
what depends on them (``liveOnly``, ``conformant``, the ``live`` facet) is never cached.
The bump is the write's last statement, so its row lock is held only until the commit.
"""

from django.db.models import F

from registry.discovery.models import DataGeneration


def generation_bump() -> None:
    if not DataGeneration.objects.filter(pk=1).update(value=F("value") + 1):
        DataGeneration.objects.get_or_create(pk=1, defaults={"value": 1})  # (after a flush)


def generation_read() -> int:
    return DataGeneration.objects.filter(pk=1).values_list("value", flat=True).first() or 0
