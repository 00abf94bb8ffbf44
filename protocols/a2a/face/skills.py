"""The registry's own A2A skills, ``agent-discovery`` and ``agent-registration``, as plain
functions from what a message carries to an answer (``protocols.a2a.face.agent`` runs them for the
A2A server, ``mcp_face`` for MCP).

They go through the same code as the HTTP API: discovery through the discovery filters
and sorts (``registry.discovery``) over the agent selectors, registration through
``protocols.a2a.registration.api.card_register``, the code of ``POST /a2a/agents``, as the caller's
API key.
"""

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from rest_framework.exceptions import APIException, NotAuthenticated, Throttled

from protocols.a2a.cards.selectors import agent_summaries
from protocols.a2a.registration.api import card_register
from protocols.a2a.registration.provenance import CardSource
from protocols.a2a.serving.cards import card_url
from registry.access.auth import KeyExpired, Principal, principal_for_key
from registry.access.throttles import window_allows
from registry.access.tokens import IssuerUnavailable, TokenRefused
from registry.agents import selectors
from registry.agents.visibility import reader_scope, sees_restricted
from registry.discovery import cache as discovery_cache
from registry.discovery import discover as discovery
from registry.discovery import planner
from registry.discovery.query import query_parse
from registry.discovery.search import unlisted_searched
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError, database_unavailable, exception_problem

logger = logging.getLogger(__name__)

DISCOVERY = "agent-discovery"
REGISTRATION = "agent-registration"
# Words that ask for agents rather than describe them: dropped from a free-text query, so
# "find agents that can translate" searches for "translate".
FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "any",
        "some",
        "all",
        "me",
        "us",
        "i",
        "we",
        "please",
        "show",
        "list",
        "find",
        "search",
        "look",
        "looking",
        "for",
        "get",
        "give",
        "which",
        "who",
        "whose",
        "that",
        "can",
        "could",
        "do",
        "does",
        "able",
        "to",
        "agent",
        "agents",
        "bot",
        "bots",
        "something",
        "someone",
        "with",
        "is",
        "are",
        "there",
        "need",
        "want",
        "one",
        "ones",
        "help",
        "helps",
        "of",
        "in",
        "on",
        "by",
        "what",
    ]
)
WORD = re.compile(r"[\w][\w'.+#-]*", re.UNICODE)


@dataclass
class Answer:
    """What a skill answers: ``state`` is ``completed``, ``rejected`` (the request was
    refused: bad input, forbidden) or ``auth-required`` (no valid API key)."""

    state: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)


def text_query(text: str) -> str:
    """The search words of a free-text request, without the words that only ask."""
    words = [w.strip(".'") for w in WORD.findall(text or "")]
    kept = [w for w in words if w and w.lower() not in FILLER]
    return " ".join(kept)


def _param(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # JSON numbers travel as doubles in A2A data parts
    if isinstance(value, str | int | float):
        return str(value)
    raise ProblemError(
        400,
        "validation-error",
        f"{name} must be a string, a number or a boolean.",
        [Problem(name, "must be a string, a number or a boolean")],
    )


def discovery_params(data: dict[str, Any]) -> dict[str, str]:
    return {name: _param(name, value) for name, value in data.items() if value is not None}


def refused(exc: Exception) -> Answer:
    body = exception_problem(exc)
    if body is None:
        raise exc
    return Answer("rejected", body["detail"], {"problem": body})


def database_outage_refused(skill):
    """A skill whose database does not answer refuses with the HTTP API's 503 problem
    (``service-unavailable``), never the database's message."""

    @functools.wraps(skill)
    def run(*args, **kwargs) -> Answer:
        try:
            return skill(*args, **kwargs)
        except DatabaseError as exc:
            if not database_unavailable(exc):
                raise
            logger.warning("%s: the database does not answer (%s)", skill.__name__, exc)
            return refused(exc)

    return run


def unavailable(answer: Answer) -> bool:
    """Whether an answer is a refusal because the database does not answer."""
    return answer.data.get("problem", {}).get("status") == 503


def invalid_input(answer: Answer) -> bool:
    """Whether an answer refuses the request's own input (a 400 problem: a bad filter, a
    search word too long), not the caller (a key) nor the registry's state."""
    return answer.state == "rejected" and answer.data.get("problem", {}).get("status") == 400


@dataclass
class _Read:
    agents: list[dict[str, Any]]
    generation: int | None


@database_outage_refused
def discover(params: dict[str, str], reader=None) -> Answer:
    """Find agents with GET /discover/agents's filters, sorts and pages; for a ``reader``
    (a caller's principal) who may read restricted agents, among the public agents and
    those, as GET /discover/agents finds them for it (registry.agents.visibility)."""

    def read(ids) -> _Read:
        return _Read(*agent_summaries(list(ids)))

    try:
        # Parsed once, as GET /discover/agents parses it (facets: none here); its page's
        # keys found by the same plan, cached at the same data generation
        # (registry.discovery.cache); the agents' summaries read fresh.
        query = query_parse({k: v for k, v in params.items() if k != "facets"}, strict=False)
        agents, scope, restricted = selectors.agent_discoverable_queryset, DISCOVERY, False
        if sees_restricted(reader):
            agents = functools.partial(selectors.agent_readable_queryset, reader)
            scope, restricted = f"{DISCOVERY}:{reader_scope(reader)}", True
        with unlisted_searched(restricted):
            plan = planner.plan(query, lambda: discovery.query_agents(query, agents()))
            page, sort, read_rows = discovery_cache.page_cached(scope, query, plan.find, read)
    except APIException as exc:
        return refused(exc)
    found = read_rows.agents
    data = {"agents": found, "nextCursor": page.next_cursor, "sort": sort}
    asked = f" for “{params['q']}”" if params.get("q") else ""
    if not found:
        return Answer("completed", f"No agents found{asked}.", data)
    names = ", ".join(agent["name"] for agent in found[:5]) + (" …" if len(found) > 5 else "")
    more = " (more on the next page)" if page.next_cursor else ""
    plural = "agent" if len(found) == 1 else "agents"
    return Answer("completed", f"Found {len(found)} {plural}{asked}{more}: {names}.", data)


# Other discovery query shapes, taught by the apps that define them (the ARD app: an ARD
# search request, {"query": {"text", "filter"}, …}): each answers a data part of its shape,
# or returns None for any other. Registered from an app's ready(), read per message.
QUERY_SHAPES: list[Callable[[dict[str, Any]], "Answer | None"]] = []


def query_shape_register(answer: Callable[[dict[str, Any]], "Answer | None"]) -> None:
    QUERY_SHAPES.append(answer)


def discover_data(data: dict[str, Any], reader=None) -> Answer:
    """Answer a discovery data part: a registered query shape's (public agents), else the
    discovery filters of GET /discover/agents (``reader``: as ``discover``)."""
    for shape in QUERY_SHAPES:
        answered = shape(data)
        if answered is not None:
            return answered
    try:
        return discover(discovery_params(data), reader)
    except ProblemError as exc:  # a filter value that is not a scalar
        return refused(exc)


def discover_text(text: str, reader=None) -> Answer:
    query = text_query(text)
    return discover({"q": query} if query else {}, reader)


def principal_of(key: str | None) -> Principal | None:
    return principal_for_key(key) if key else None


@database_outage_refused
def register(body: dict[str, Any], key: str | None, card_text: bytes | None = None) -> Answer:
    """Register by ``{"card"}``, ``{"domain"}`` or ``{"url"}`` as the key's owner; a card
    is stored as ``card_text`` when the request carried its text, and one equal as JSON to
    the agent's stored card keeps the stored one (no new version)."""
    try:
        principal = principal_of(key)
    except (KeyExpired, TokenRefused) as exc:
        return Answer("auth-required", str(exc.detail), {"problem": exception_problem(exc)})
    except IssuerUnavailable as exc:
        return refused(exc)
    if principal is None:
        detail = (
            "The API key is not valid." if key else "Registration needs an API key."
        ) + " Send it as 'Authorization: Bearer <key>'."
        problem = exception_problem(NotAuthenticated(detail))
        return Answer("auth-required", detail, {"problem": problem})
    wait = window_allows("write", principal.ident, settings.RATE_LIMIT_WRITE)
    if wait is not None:  # the key's write budget, shared with the HTTP API
        return refused(Throttled(wait))
    try:
        source = CardSource(body=card_text, equal_kept=True)
        registration = card_register(principal, body, source)
    except APIException as exc:
        return refused(exc)
    agent, report = registration.agent, registration.report
    url = card_url(selectors.agent_get(str(agent.id)))
    verb = "Registered" if registration.created else "Updated"
    data = {
        "agentId": str(agent.id),
        "name": agent.name,
        "cardUrl": url,
        "created": registration.created,
        "specVersion": report.spec_version,
        "warnings": [w.as_dict() for w in report.warnings],
        "signature": registration.signature.status,
        "verified": bool(registration.source.verified_domain),
    }
    return Answer("completed", f"{verb} {agent.name} as agent {agent.id}; its card: {url}.", data)
