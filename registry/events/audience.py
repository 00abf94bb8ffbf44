"""Who reads which event: the public ones anyone, the admins' (the moderators' decisions)
an admin, a restricted agent's (registry.agents.visibility) one who may read it when the
event is sent: the webhooks' deliveries and the event streams ask the same."""

from registry.agents.visibility import readable_ids
from registry.events import envelope


def audience_kept(events: list, reader_of) -> list:
    """The events their reader may read: the public ones, the admins' for an admin, and a
    restricted agent's (``READERS_AUDIENCE``) for one who may read it now (``reader_of``:
    the reader, asked for once, only when an event is not public; None: no one)."""
    if not any(e.audience for e in events):
        return events
    reader = reader_of()
    admin = reader is not None and reader.is_admin
    wanted = {e.subject for e in events if e.audience == envelope.READERS_AUDIENCE}
    readable = readable_ids(reader, wanted) if wanted else set()
    return [
        e
        for e in events
        if not e.audience
        or (e.audience == envelope.ADMIN_AUDIENCE and admin)
        or (e.audience == envelope.READERS_AUDIENCE and e.subject in readable)
    ]
