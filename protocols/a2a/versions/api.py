"""The card's history over HTTP: ``GET /agents/<id>/versions`` (newest first, paged),
``/versions/<n>``, ``/versions/<a>/diff/<b>``, and a pinned version's exact bytes at
``GET /a2a/agents/<id>?version=<n or card version>`` (immutable: cached for a year)."""

import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.utils.http import http_date
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from protocols.a2a.cards.selectors import card_version_read
from protocols.a2a.models import CardVersion
from protocols.a2a.versions.diff import card_patch, card_summary
from registry.access.auth import Principal
from registry.agents import selectors
from registry.agents.models import Agent
from registry.agents.serializers import registry_url
from registry.agents.visibility import may_read, request_reader
from registry.http.params import bad_parameter, limit_parse, limit_schema, params_check
from registry.http.problems import ProblemError, problem_response

IMMUTABLE = "public, max-age=31536000, immutable"
_META = ("seq", "card_version", "sha256", "created_at", "actor", "change", "breaking", "summary")
_META_FINDINGS = (*_META, "findings")


def _findings_shown(request: Request, agent: Agent) -> bool:
    """The scanners' findings of each version are its owner's and the admins' to read."""
    user = request.user
    return isinstance(user, Principal) and user.may_change(agent.owner)


def version_json(agent_id, row: dict[str, Any], latest: int) -> dict[str, Any]:
    shown = {"findings": row["findings"]} if "findings" in row else {}
    return {
        "seq": row["seq"],
        "version": row["card_version"],
        "sha256": row["sha256"],
        "createdAt": row["created_at"].isoformat().replace("+00:00", "Z"),
        "by": row["actor"],
        "change": row["change"],
        "latest": row["seq"] == latest,
        "breaking": row["breaking"],
        "summary": row["summary"],
        "cardUrl": registry_url(f"/a2a/agents/{agent_id}?version={row['seq']}"),
        **shown,
    }


def _seq_parse(raw: str, name: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise bad_parameter(name, "must be a version number (1, 2, 3 …)")
    return int(raw)


def _version(agent: Agent, seq: int) -> CardVersion:
    version = CardVersion.objects.filter(agent=agent, seq=seq).first()
    if version is None:
        raise ProblemError(404, "not-found", f"Agent {agent.id} has no card version {seq}.")
    return version


def _latest_seq(agent: Agent) -> int:
    return (
        CardVersion.objects.filter(agent=agent)
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
        or 0
    )


class AgentVersionListView(APIView):
    @extend_schema(
        operation_id="agents_versions_list",
        parameters=[
            OpenApiParameter("limit", limit_schema(), description="Page size, 1-100 (default 20)."),
            OpenApiParameter("before", int, description="Versions older than this number."),
        ],
        responses={200: OpenApiResponse(description="The agent's card versions, newest first.")},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        """The agent's card versions, newest first; ``next`` pages on with ``before``. To
        its owner and the admins each has ``findings``: the moderation scanners' findings
        of that version."""
        params_check(request.query_params, {"limit", "before"})
        agent = selectors.agent_get_shown(agent_id, request.user)
        limit = limit_parse(request.query_params.get("limit"))
        rows = CardVersion.objects.filter(agent=agent).order_by("-seq")
        before = request.query_params.get("before")
        if before:
            rows = rows.filter(seq__lt=_seq_parse(before, "before"))
        meta = _META_FINDINGS if _findings_shown(request, agent) else _META
        page = list(rows.values(*meta)[: limit + 1])
        latest = _latest_seq(agent)
        body = {"items": [version_json(agent.id, row, latest) for row in page[:limit]]}
        body["next"] = (
            f"/agents/{agent.id}/versions?limit={limit}&before={page[limit - 1]['seq']}"
            if len(page) > limit
            else None
        )
        return Response(body)


class AgentVersionDetailView(APIView):
    extra_problems = {"GET": {400}}  # a version number that is not one (seq)

    @extend_schema(responses={200: OpenApiResponse(description="One card version's metadata.")})
    def get(self, request: Request, agent_id: str, seq: str) -> Response:
        agent = selectors.agent_get_shown(agent_id, request.user)
        meta = _META_FINDINGS if _findings_shown(request, agent) else _META
        row = CardVersion.objects.filter(agent=agent, seq=_seq_parse(seq, "seq")).values(*meta)
        found = row.first()
        if found is None:
            raise ProblemError(404, "not-found", f"Agent {agent.id} has no card version {seq}.")
        return Response(version_json(agent.id, found, _latest_seq(agent)))


def _diff_body(old: dict, new: dict, a: int, b: int, limit: int) -> bytes:
    """The diff's JSON, at most ``limit`` bytes: past it without the patch, then without
    the changes (their count kept), with ``truncated: true``."""
    answer = {"from": a, "to": b, "truncated": False, "patch": card_patch(old, new)}
    answer.update(card_summary(old, new))
    body = json.dumps(answer, separators=(",", ":")).encode()
    if len(body) > limit:
        answer.update(truncated=True, patch=None, maxBytes=limit)
        body = json.dumps(answer, separators=(",", ":")).encode()
    if len(body) > limit:
        answer.update(changeCount=len(answer["changes"]), changes=None)
        body = json.dumps(answer, separators=(",", ":")).encode()
    return body


class AgentVersionDiffView(APIView):
    extra_problems = {"GET": {400}}  # a version number that is not one (a, b)

    @extend_schema(
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="A JSON Patch (RFC 6902) from version a to version b, and the "
                "semantic summary: every change with the rule that makes it breaking or not. "
                "Past VERSION_DIFF_MAX_BYTES (default 262144) the answer has `truncated: true` "
                "and `maxBytes`, and `patch` is null (then `changes` too, `changeCount` "
                "counting them): `breaking`, `majorVersionUp` and the versions stay, and "
                "each version's bytes are at /a2a/agents/<id>?version=<n> to diff locally. "
                "Versions never change: the answer is immutable (ETag, Cache-Control).",
            ),
            304: OpenApiResponse(description="If-None-Match named this diff's ETag."),
        }
    )
    def get(self, request: Request, agent_id: str, a: str, b: str) -> HttpResponse:
        agent = selectors.agent_get_shown(agent_id, request.user)
        seq_a, seq_b = _seq_parse(a, "a"), _seq_parse(b, "b")
        digests = dict(
            CardVersion.objects.filter(agent=agent, seq__in=[seq_a, seq_b]).values_list(
                "seq", "sha256"
            )
        )
        for seq in (seq_a, seq_b):
            if seq not in digests:
                raise ProblemError(404, "not-found", f"Agent {agent.id} has no card version {seq}.")
        limit = settings.VERSION_DIFF_MAX_BYTES
        key = f"{agent.id}:{seq_a}:{digests[seq_a]}:{seq_b}:{digests[seq_b]}:{limit}"
        etag = f'"{hashlib.sha256(key.encode()).hexdigest()[:32]}"'
        if etag in request.META.get("HTTP_IF_NONE_MATCH", ""):
            response = HttpResponseNotModified()
        else:
            cache_key = f"a2a:diff:{hashlib.sha256(key.encode()).hexdigest()}"
            body = cache.get(cache_key)
            if body is None:
                old = json.loads(bytes(_version(agent, seq_a).body))
                new = json.loads(bytes(_version(agent, seq_b).body))
                body = _diff_body(old, new, seq_a, seq_b, limit)
                if settings.VERSION_DIFF_CACHE_SECONDS > 0:
                    cache.set(cache_key, body, settings.VERSION_DIFF_CACHE_SECONDS)
            response = HttpResponse(body, content_type="application/json")
        response["ETag"] = etag
        response["Cache-Control"] = IMMUTABLE
        return response


def version_read(pk: uuid.UUID, spec: str) -> tuple[bytes, str, Any] | None:
    """(body, sha256, created_at) of a version: an all-digit ``spec`` is its number, anything
    else the card's ``version`` string (its newest version of that string)."""
    if spec.isascii() and spec.isdigit():
        return card_version_read(pk, int(spec))
    rows = CardVersion.objects.filter(agent_id=pk, card_version=spec, listed=True)
    rows = rows.order_by("-seq")
    return rows.values_list("body", "sha256", "created_at").first()


def withheld_response(
    request: HttpRequest, pk: uuid.UUID, read: Callable, unknown: Callable
) -> HttpResponse:
    """The card URL of an agent that is not publicly listed (registry.agents.listing): for
    a caller who may read it (registry.agents.visibility: its key or token), ``read()``'s
    answer, kept by no shared cache; for anyone else a restricted agent is ``unknown()``,
    the answer of an unknown id, and one moderation holds 404 ``unlisted`` (no-store)."""
    agent = Agent.objects.filter(pk=pk).first()
    if agent is not None and may_read(request_reader(request), agent):
        response = read()
        response["Cache-Control"] = "private, no-store"
        response["Vary"] = "Authorization, X-Api-Key"
        return response
    if agent is None or agent.visibility != Agent.Visibility.PUBLIC:
        return unknown()
    problem = selectors.unlisted_problem(pk)
    response = problem_response(404, problem.slug, problem.problem_detail)
    response["Cache-Control"] = "no-store"
    return response


def version_serve(request: HttpRequest, pk: uuid.UUID, spec: str) -> HttpResponse:
    """GET /a2a/agents/<id>?version=…: that version's exact bytes, immutable."""
    entry = version_read(pk, spec)
    if entry is None:
        if Agent.objects.filter(pk=pk, listed=False).exists():
            read = lambda: _version_answer(pk, spec)  # noqa: E731
            return withheld_response(request, pk, read, lambda: _no_version(pk, spec))
        return _no_version(pk, spec)
    return _version_response(*entry)


def _no_version(pk: uuid.UUID, spec: str) -> HttpResponse:
    return problem_response(404, "not-found", f"Agent {pk} has no card version '{spec[:100]}'.")


def _version_answer(pk: uuid.UUID, spec: str) -> HttpResponse:
    """A version of an unlisted agent, for a caller who may read it."""
    rows = CardVersion.objects.filter(agent_id=pk)
    if spec.isascii() and spec.isdigit():
        rows = rows.filter(seq=min(int(spec), 2**31 - 1))
    else:
        rows = rows.filter(card_version=spec).order_by("-seq")
    entry = rows.values_list("body", "sha256", "created_at").first()
    return _no_version(pk, spec) if entry is None else _version_response(*entry)


def _version_response(body, sha256: str, created_at) -> HttpResponse:
    response = HttpResponse(bytes(body), content_type="application/json")
    response["ETag"] = f'"{sha256}"'
    response["Last-Modified"] = http_date(created_at.timestamp())
    response["Cache-Control"] = IMMUTABLE
    return response
