"""Moderation's jobs: a new blocklist entry's retroactive quarantine."""

from celery import shared_task

from registry.moderation.blocklist import block_apply, entries_in_force
from registry.moderation.models import BlockEntry


@shared_task
def blocklist_apply(entry_id: str | None = None) -> int:
    """Quarantine what an entry (or, with none, every entry in force) matches; how many."""
    entries = [e for e in entries_in_force() if entry_id is None or str(e.pk) == entry_id]
    if entry_id is not None and not entries:  # read afresh: added a moment ago
        entries = list(BlockEntry.objects.filter(pk=entry_id))
    return sum(block_apply(entry) for entry in entries)
