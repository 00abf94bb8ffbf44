"""Who may read an agent: its visibility, honoured by every read.

- ``public`` (the default): anyone, while moderation admits it.
- ``private``: its owner's keys and tokens, and admins.
- ``groups``: those too, and callers in one of its groups (an API key's groups, which an
  admin assigns, or a token's group claim: ``Principal.groups``).

A restricted agent is never publicly listed (``registry.agents.listing.listed_of``), so
every public read, the lean lane and the caches among them, leaves it out as it leaves a
quarantined agent out, at no cost to them. The reads that serve a caller who may read it
ask ``may_read`` (one agent) or ``readable_by`` (a selection: the public agents and the
restricted ones the caller may read, found by the owner's index and
``AgentVisibilityGroup``'s). To a caller who may not read it, a restricted agent is an
unknown id (``withheld_problem``: the same 404 ``not-found``).
"""

import re
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q, QuerySet
from rest_framework.exceptions import APIException

from registry.access.audit import audit_record
from registry.access.auth import Principal, principal_for_key, raw_api_key_of
from registry.agents.concurrency import agent_lock
from registry.agents.listing import listing_apply
from registry.agents.models import Agent, AgentVisibilityGroup, Tombstone
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.signals import agents_written_send

Visibility = Agent.Visibility
# A group name as an identity provider's claim carries one ("engineering",
# "org:team/payments"), bounded; an agent names at most VISIBILITY_GROUPS_MAX.
# A write's visibility, checked (``visibility_input``); None: the write leaves it as it is.
Asked = tuple[str, list[str]] | None
GROUP_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,99}")
VISIBILITY_GROUPS_MAX = 20
# The columns ``may_read`` reads (a read that loads few columns loads these).
VISIBILITY_FIELDS = ("owner", "listed", "admitted", "visibility", "visibility_groups")


def visibility_problems(visibility: str, groups: list | None) -> list[Problem]:
    """Every problem of a visibility and its groups, by the member names of the API."""
    if visibility not in Visibility.values:
        return [Problem("visibility", f"must be one of {', '.join(Visibility.values)}")]
    groups = [] if groups is None else groups
    if not isinstance(groups, list):
        return [Problem("visibilityGroups", "must be a list of group names")]
    if visibility != Visibility.GROUPS:
        if groups:
            return [Problem("visibilityGroups", "applies to visibility 'groups' only")]
        return []
    if not groups:
        return [Problem("visibilityGroups", "must name at least one group")]
    if len(groups) > VISIBILITY_GROUPS_MAX:
        return [Problem("visibilityGroups", f"must name at most {VISIBILITY_GROUPS_MAX} groups")]
    return [
        Problem(
            f"visibilityGroups[{index}]",
            "must be a group name: a letter or digit, then letters, digits and . _ : / @ -, "
            "at most 100 characters",
        )
        for index, group in enumerate(groups)
        if not (isinstance(group, str) and GROUP_PATTERN.fullmatch(group))
    ]


def visibility_checked(visibility: str, groups: list | None) -> tuple[str, list[str]]:
    """The visibility and its groups (sorted, once each), or a 400 naming every problem."""
    problems = visibility_problems(visibility, groups)
    if problems:
        raise ProblemError(
            400, "validation-error", f"{problems[0].path} {problems[0].message}.", problems
        )
    return visibility, sorted(set(groups or []))


def visibility_input(data: dict, agent: Agent | None = None) -> Asked:
    """The visibility a write body asks for (``visibility``, ``visibilityGroups``; what it
    leaves out stays as ``agent`` has it), checked before anything is written; None when
    the body names neither."""
    if "visibility" not in data and "visibilityGroups" not in data:
        return None
    visibility = data.get("visibility", agent.visibility if agent else Visibility.PUBLIC)
    groups = data.get("visibilityGroups")
    if groups is None and agent is not None and visibility == Visibility.GROUPS:
        groups = agent.visibility_groups
    return visibility_checked(visibility, groups)


@dataclass(frozen=True)
class Reader:
    """Who reads apart from a request (a webhook subscription at delivery, an event
    stream): an owner, whether an admin, and groups, as a ``Principal`` has them."""

    owner: str
    is_admin: bool = False
    groups: tuple[str, ...] = ()

    def may_change(self, owner: str) -> bool:
        return self.is_admin or owner == self.owner


def _principal(user) -> Principal | Reader | None:
    return user if isinstance(user, Principal | Reader) else None


def may_read(user, agent: Agent) -> bool:
    """Whether ``user`` (a request's user or principal) may read the agent: anyone a
    listed one; its owner and admins any; a caller of one of its groups an admitted
    ``groups`` agent."""
    if agent.listed:
        return True
    principal = _principal(user)
    if principal is None:
        return False
    if principal.may_change(agent.owner):
        return True
    return (
        agent.admitted
        and agent.visibility == Visibility.GROUPS
        and bool(set(agent.visibility_groups) & set(principal.groups))
    )


def request_reader(request) -> Principal | None:
    """Who a plain Django view's request reads as (its API key or token), for the reads
    outside DRF that serve restricted agents to those who may read them (the card URL);
    None for no credential or one that is not valid (read as anonymous)."""
    user = getattr(request, "user", None)
    if isinstance(user, Principal):
        return user
    try:
        return key_reader(raw_api_key_of(request.META))
    except ValueError:
        return None


def key_reader(key: str | None) -> Principal | None:
    """Who a raw API key or token reads as (the A2A and MCP faces' calls); None for none,
    or one that is not valid."""
    try:
        return principal_for_key(key) if key else None
    except APIException:
        return None


def readable_q(user) -> Q:
    """The condition on ``Agent`` of the agents ``user`` may read (``may_read`` for many)."""
    principal = _principal(user)
    if principal is None:
        return Q(listed=True)
    if principal.is_admin:
        return Q()
    readable = Q(listed=True) | Q(owner=principal.owner)
    if principal.groups:
        granted = AgentVisibilityGroup.objects.filter(group__in=principal.groups)
        readable |= Q(
            admitted=True,
            visibility=Visibility.GROUPS,
            pk__in=granted.values("agent_id"),
        )
    return readable


def readable_by(user, queryset: QuerySet | None = None) -> QuerySet:
    """The agents of ``queryset`` (all agents) that ``user`` may read."""
    queryset = Agent.objects.all() if queryset is None else queryset
    return queryset.filter(readable_q(user))


def readable_ids(user, ids) -> set:
    """Which of these agents' ids ``user`` may read now, a deleted one's by its tombstone
    (its owner's and the admins'); none for no reader."""
    principal, ids = _principal(user), [pk for pk in ids if pk is not None]
    if not ids or principal is None:
        return set()
    rows = Agent.objects.filter(pk__in=ids)
    found = set(rows.filter(readable_q(principal)).values_list("pk", flat=True))
    if len(found) < len(ids):  # deleted ones: by their restricted tombstone
        kept = set(rows.values_list("pk", flat=True))
        gone = [pk for pk in ids if pk not in kept]
        tombstones = tombstones_readable(principal).filter(agent_id__in=gone, public=False)
        found |= set(tombstones.values_list("agent_id", flat=True))
    return found


def tombstones_readable(user) -> QuerySet:
    """The tombstones ``user`` may read: the public ones, and those of restricted agents
    (``Tombstone.public`` false) whose owner it is or that it may read (a retired agent's
    row is kept: its groups too)."""
    principal = _principal(user)
    if principal is None:
        return Tombstone.objects.filter(public=True)
    if principal.is_admin:
        return Tombstone.objects.all()
    readable = readable_by(principal, Agent.objects.filter(listed=False)).values("pk")
    return Tombstone.objects.filter(
        Q(public=True) | Q(owner=principal.owner) | Q(agent_id__in=readable)
    )


def sees_restricted(user) -> bool:
    """Whether ``user`` may read any agent that is not publicly listed (an admin, an owner
    of one, a member of one's groups): such a caller's reads take the path that reads
    restricted agents too; every other caller's, the public path. Indexed: the owner's
    unlisted agents, the groups' grants."""
    principal = _principal(user)
    if principal is None:
        return False
    if principal.is_admin:
        return True
    if Agent.objects.filter(owner=principal.owner, listed=False).exists():
        return True
    return bool(principal.groups) and (
        AgentVisibilityGroup.objects.filter(
            group__in=principal.groups, agent__admitted=True
        ).exists()
    )


def reader_scope(user) -> str:
    """What decides a restricted reader's discovery pages (its owner, role and groups):
    the scope its cached pages are kept under, apart from the public pages."""
    return f"{user.owner}:{user.is_admin}:{','.join(sorted(user.groups))}"


def withheld_problem(agent_id, visibility: str) -> ProblemError:
    """What a caller who may not read an unlisted agent gets: for a restricted agent, the
    404 of an unknown id; for a public one moderation holds, 404 ``unlisted``."""
    if visibility != Visibility.PUBLIC:
        return ProblemError(404, "not-found", f"There is no agent {agent_id}.")
    return ProblemError(
        404,
        "unlisted",
        f"Agent {agent_id} is not publicly available: it is under the registry's moderation.",
    )


@transaction.atomic
def agent_visibility_change(*, agent: Agent, asked: Asked, created: bool = False) -> Agent:
    """``agent_visibility_set`` with the agent's row locked (``asked``: from
    ``visibility_input``; None changes nothing); ``agent`` (as its caller holds it, with
    what it prefetched) is updated to match."""
    if asked is None:
        return agent
    locked = agent_lock(agent)
    agent_visibility_set(agent=locked, visibility=asked[0], groups=asked[1], created=created)
    for name in ("visibility", "visibility_groups", "listed", "updated_at"):
        setattr(agent, name, getattr(locked, name))
    return agent


def agent_visibility_set(
    *, agent: Agent, visibility: str, groups: list[str], created: bool = False
) -> bool:
    """Set who may read the agent (its row locked by the caller, inside its transaction;
    checked by ``visibility_checked``), audited with the visibility before and after;
    its public listing follows (``listing_apply``; ``created``: the agent is new in this
    transaction). Whether anything changed."""
    groups = sorted(set(groups)) if visibility == Visibility.GROUPS else []
    before = {"visibility": agent.visibility, "visibilityGroups": list(agent.visibility_groups)}
    if before == {"visibility": visibility, "visibilityGroups": groups}:
        return False
    agent.visibility, agent.visibility_groups = visibility, groups
    agent.save(update_fields=["visibility", "visibility_groups", "updated_at"])
    AgentVisibilityGroup.objects.filter(agent=agent).exclude(group__in=groups).delete()
    kept = set(AgentVisibilityGroup.objects.filter(agent=agent).values_list("group", flat=True))
    AgentVisibilityGroup.objects.bulk_create(
        [AgentVisibilityGroup(agent=agent, group=g) for g in groups if g not in kept]
    )
    audit_record(
        "agent.visibility",
        agent_id=agent.pk,
        object_repr=agent.name,
        before=before,
        after={"visibility": visibility, "visibilityGroups": groups},
    )
    if not listing_apply(
        agent, created=created
    ):  # still unlisted: its stored listing shows the change
        agents_written_send([agent.pk])
    return True
