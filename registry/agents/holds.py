"""Writes that wait: a change to an agent that may not be served yet (moderation's admission
under review: a flagged change of an approved agent) is made as usual inside a savepoint,
read as it would be served (``agent_document``), then undone; whoever held it keeps what
it was, to apply it later. Until then every read serves the agent as it was.

A write that may wait runs through ``write_holdable(kind, agent, payload, write)``:
``kind`` names how to make it again (``registry.extensions.held_changes``), ``payload()``
is what that needs (JSON). Inside it, a receiver of ``agent_changed`` asks
``hold_request(agent, keep)``; a write nested in another (a card write's core update) is
part of the outer one. Outside any (bulk imports, the apps' own writes), or while a held
change is applied (``holds_bypassed``), ``hold_request`` answers False and the receiver
decides otherwise."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from registry import extensions
from registry.agents.models import Agent


@dataclass
class HeldWrite:
    """A write undone to wait: the agent as it still is, how to make the write again, and
    the agent's document before (as served) and after it (as it would be served)."""

    agent: Agent
    kind: str
    payload: dict
    before: dict
    after: dict


@dataclass
class _Hold:
    kind: str
    agent_id: Any
    keep: Callable[[HeldWrite], None] | None = None
    after: dict | None = None


_scope: ContextVar[_Hold | None] = ContextVar("agents_hold", default=None)
_bypassed: ContextVar[bool] = ContextVar("agents_hold_bypassed", default=False)

# Who shows a waiting change of an agent to its owner and the admins ({...} or None): set
# by registry.moderation, read by the agent's JSON (``pending_shown``).
pending_readers: list[Callable[[Agent], dict | None]] = []


class _Undo(Exception):
    """Rolls the held write's savepoint back."""


def agent_document(agent_id) -> dict:
    """What the agent serves as JSON: an app's document of it (its A2A card), else the
    core's own summary of it."""
    for change in extensions.held_changes.read():
        if change.document is not None:
            document = change.document(agent_id)
            if document is not None:
                return document
    agent = Agent.objects.prefetch_related("capabilities", "endpoints").get(pk=agent_id)
    return {
        "name": agent.name,
        "description": agent.description,
        "version": agent.version,
        "capabilities": [
            {"name": c.name, "description": c.description, "tags": list(c.tags)}
            for c in agent.capabilities.all()
        ],
        "endpoints": [
            {"name": e.name, "protocol": e.protocol, "transport": e.transport, "address": e.address}
            for e in agent.endpoints.all()
        ],
    }


def hold_request(agent: Agent, keep: Callable[[HeldWrite], None]) -> bool:
    """Inside a write: undo it once it is made and hand it to ``keep``; False when this
    write cannot wait (no holdable write of this agent runs, or a held one is applied)."""
    hold = _scope.get()
    if hold is None or _bypassed.get():
        return False
    if hold.agent_id is not None and hold.agent_id != agent.pk:
        return False
    hold.agent_id, hold.keep = agent.pk, keep
    return True


def write_holdable(
    kind: str, agent: Agent | None, payload: Callable[[], dict], write: Callable[[], Any]
) -> tuple[Any, HeldWrite | None]:
    """Run ``write`` (``agent``: the agent it changes, None: not known before it runs);
    (its result, None), or, when it was held, (None, what was held)."""
    if _scope.get() is not None or _bypassed.get():
        return write(), None
    hold = _Hold(kind, agent.pk if agent is not None else None)
    token = _scope.set(hold)
    try:
        with transaction.atomic():
            result = write()
            if hold.keep is None:
                return result, None
            hold.after = agent_document(hold.agent_id)
            raise _Undo
    except _Undo:
        pass
    finally:
        _scope.reset(token)
    with transaction.atomic():
        current = Agent.objects.select_for_update().get(pk=hold.agent_id)
        held = HeldWrite(current, kind, payload(), agent_document(current.pk), hold.after)
        hold.keep(held)
    return None, held


@contextmanager
def holds_bypassed() -> Iterator[None]:
    """Writes inside are made, never held (a moderator applies an approved change)."""
    token = _bypassed.set(True)
    try:
        yield
    finally:
        _bypassed.reset(token)


def holds_bypassed_now() -> bool:
    """Inside ``holds_bypassed()``: a moderator's approved change is being made."""
    return _bypassed.get()


def pending_shown(agent: Agent) -> dict | None:
    """The agent's waiting change as its owner and the admins see it, or None."""
    for read in pending_readers:
        shown = read(agent)
        if shown is not None:
            return shown
    return None
