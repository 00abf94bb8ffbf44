"""Writes that race: row locks, and If-Match preconditions.

A write loads the agent, checks who may change it, may do slow work (fetches, signature
checks), then changes it. Between the two the agent may have been deleted, moved to
another owner or changed. So every write takes the agent's row lock first thing in its
transaction (``agent_lock``): a deleted agent is a 404 (never brought back by a save), an
agent moved to another owner is a 409 (the request was authorized against the old one),
and concurrent writes to one agent run one after the other, each on what the last one left.

Clients that want to know their write applies to what they read send ``If-Match`` with
the agent's ETag (``GET /agents/<id>``): ``"<version>.<liveness>"``, where the version
changes with every write and the liveness part with every sign of life. A write checks
the version part only, under the lock, so heartbeats in between do not make a tag stale;
a stale one is a 412 and changes nothing. ``If-Match`` on card writes takes the card's
ETag as served (``GET /a2a/agents/<id>``).
"""

import hashlib
from collections.abc import Callable

from django.db.models import QuerySet

from registry.agents.models import Agent
from registry.http.problems import ProblemError

# A check run on the locked agent before a write changes it (see precondition()).
Precondition = Callable[[Agent], None]


def agent_lock(agent: Agent, queryset: QuerySet | None = None) -> Agent:
    """The agent's row, locked until the transaction ends (call inside one), as it is now.

    404 when it was deleted meanwhile, 409 when it moved to another owner than the one
    ``agent`` (as loaded when the request was authorized) names.
    """
    rows = queryset if queryset is not None else Agent.objects.all()
    locked = rows.select_for_update().filter(pk=agent.pk).first()
    if locked is None:
        raise ProblemError(404, "not-found", f"There is no agent {agent.pk}: it was deleted.")
    if locked.owner != agent.owner:
        raise ProblemError(
            409,
            "conflict",
            f"Agent {agent.pk} moved to another owner while this request was handled; "
            "nothing was changed.",
        )
    return locked


def agent_version(agent: Agent) -> str:
    """Changes with every write of the agent (its updated_at), never with signs of life."""
    return format(int(agent.updated_at.timestamp() * 1_000_000), "x")


def agent_etag(agent: Agent, liveness: list[tuple]) -> str:
    """The ETag of the agent's JSON: its version and a digest of its endpoints' liveness."""
    digest = hashlib.sha256(repr(liveness).encode()).hexdigest()[:12]
    return f'"{agent_version(agent)}.{digest}"'


def _tags(header: str) -> list[str]:
    return [tag.strip() for tag in header.split(",") if tag.strip()]


def if_match_agent(header: str | None) -> Precondition | None:
    """The If-Match precondition of a write to an agent, or None without the header."""
    if not header:
        return None

    def check(agent: Agent) -> None:
        tags = _tags(header)
        if "*" in tags:
            return
        version = agent_version(agent)
        # Strong comparison (RFC 9110 §13.1.1): a weak tag never matches.
        if any(t.startswith('"') and t[1:].split(".")[0].rstrip('"') == version for t in tags):
            return
        raise _stale("agent", "GET /agents/<id>")

    return check


def if_match_document(
    header: str | None, current: Callable[[Agent], str | None]
) -> Precondition | None:
    """The If-Match precondition of a write to a document whose ETag is ``current(agent)``
    (its quoted digest; None when there is none)."""
    if not header:
        return None

    def check(agent: Agent) -> None:
        tags = _tags(header)
        etag = current(agent)
        if "*" in tags and etag is not None:
            return
        if etag is not None and etag in tags:
            return
        raise _stale("card", "GET /a2a/agents/<id>")

    return check


def _stale(what: str, where: str) -> ProblemError:
    return ProblemError(
        412,
        "precondition-failed",
        f"The {what} changed since the ETag in If-Match was read; nothing was changed. "
        f"Read it again ({where}) and retry.",
    )


def agent_writable(agent: Agent) -> None:
    """A retired agent takes no writes (registry.agents.lifecycle): 409 ``retired``."""
    if agent.status == Agent.Status.RETIRED:
        raise ProblemError(
            409,
            "retired",
            f"Agent {agent.id} was retired on {agent.status_changed_at:%Y-%m-%d}: it takes no "
            "more changes. Register a new agent instead.",
        )


def checked(agent: Agent, precondition: Precondition | None) -> Agent:
    """The locked agent, if it takes writes (not retired) and meets ``precondition``."""
    agent_writable(agent)
    if precondition is not None:
        precondition(agent)
    return agent
