"""Refreshing cards from where they were registered (by domain or URL): fetched again
through the safe fetcher (the periodic job conditionally, with the last ETag), checked as
at registration (validity, the origin policy, the signature against the serving domain),
and stored as a new version when they changed
(``protocols.a2a.registration.services.agent_replace_card``,
change ``refresh``, the summary on the version).

``agent_refresh`` is ``POST /agents/<id>/refresh`` (``dry_run``: the would-be version only);
``agents_refresh`` is the periodic job and ``manage.py agents_refresh``.
"""

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from protocols.a2a.cards.validation import card_validate
from protocols.a2a.models import CardProvenance, CardVersion
from protocols.a2a.registration.bootstrap import card_origin_problems
from protocols.a2a.registration.provenance import CardSource
from protocols.a2a.registration.services import agent_replace_card, agent_replace_card_preview
from registry.access.audit import audit_actor
from registry.agents.models import Agent
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.outbound.fetch import FetchError, fetch
from registry.outbound.hosts import url_authority

logger = logging.getLogger(__name__)


def _max_age(cache_control: str) -> int:
    for part in cache_control.lower().split(","):
        name, _, value = part.strip().partition("=")
        if name in ("no-store", "no-cache"):
            return 0
        if name == "max-age" and value.isdigit():
            return int(value)
    return 0


def _schedule(provenance: CardProvenance, *, etag: str | None, max_age: int, problem: str) -> None:
    now = timezone.now()
    wait = max(settings.AGENT_REFRESH_INTERVAL_SECONDS, max_age)
    fields = {"refreshed_at": now, "next_refresh_at": now + timedelta(seconds=wait)}
    fields["refresh_problem"] = problem[:2000]
    if etag is not None:
        fields["refresh_etag"] = etag[:200]
    CardProvenance.objects.filter(pk=provenance.pk).update(**fields)


def _latest(agent: Agent) -> CardVersion | None:
    return CardVersion.objects.filter(agent=agent).order_by("-seq").first()


def agent_refresh(*, agent: Agent, dry_run: bool = False, conditional: bool = False) -> dict:
    """Fetch the agent's card from its source again; store it as a new version when it
    changed. Raises ProblemError: 409 ``not-refreshable`` (a posted card), 422 when the
    source fails or serves an invalid card, 409 ``breaking-change``."""
    provenance = CardProvenance.objects.filter(agent=agent).first()
    if agent.status == Agent.Status.RETIRED or provenance is None or not provenance.source_url:
        raise ProblemError(
            409,
            "not-refreshable",
            f"Agent {agent.id} was not registered by domain or URL (or its card was replaced "
            "by a posted one since): there is no source to refresh it from.",
        )
    headers = {}
    if conditional and provenance.refresh_etag:
        headers["If-None-Match"] = provenance.refresh_etag
    try:
        result = fetch(provenance.source_url, headers=headers or None)
        card = result.json()
    except FetchError as exc:
        if exc.status == 304:
            _schedule(provenance, etag=None, max_age=0, problem="")
            return {"dryRun": dry_run, "changed": False, "notModified": True}
        raise ProblemError(
            422,
            "fetch-failed",
            f"The card could not be fetched from {provenance.source_url}: {exc.detail}",
            [Problem("sourceUrl", exc.reason)],
        ) from None
    report = card_validate(card) if isinstance(card, dict) else None
    if report is None or not report.ok:
        errors = report.errors if report is not None else [Problem("", "is not a JSON object")]
        raise ProblemError(
            422,
            "invalid-card",
            f"The card served at {provenance.source_url} is invalid: "
            f"{errors[0].path} {errors[0].message}.",
            errors,
        )
    host = url_authority(result.url) or ""
    origin = card_origin_problems(card, host)
    if origin and settings.A2A_ORIGIN_POLICY == "reject":
        raise ProblemError(
            422,
            "origin-mismatch",
            f"The card served by {host} names interfaces on other hosts.",
            origin,
        )
    source = CardSource(
        body=result.body,
        verified_domain=host,
        source_url=provenance.source_url,
        discovery_path=provenance.discovery_path,
        origin_problems=origin,
    )

    if dry_run:
        return agent_replace_card_preview(agent=agent, card=card, source=source)
    before = _latest(agent)
    agent_replace_card(agent=agent, card=card, source=source, change="refresh")
    _schedule(
        provenance,
        etag=result.headers.get("etag", ""),
        max_age=_max_age(result.headers.get("cache-control", "")),
        problem="",
    )
    latest = _latest(agent)
    changed = latest is not None and (before is None or latest.seq > before.seq)
    return {
        "dryRun": False,
        "changed": changed,
        "seq": latest.seq if latest else None,
        "version": latest.card_version if latest else "",
        "breaking": bool(changed and latest.breaking),
        "summary": latest.summary if changed else None,
    }


def agents_refresh(
    *, due_only: bool = True, now: datetime | None = None, limit: int = 500
) -> dict[str, Any]:
    """Refresh the agents registered by domain or URL (``due_only``: those due now), each
    on its own; a failure is recorded on its provenance and retried at the next interval."""
    now = now or timezone.now()
    rows = CardProvenance.objects.exclude(source_url="").exclude(agent__status=Agent.Status.RETIRED)
    if due_only:
        rows = rows.filter(next_refresh_at__lte=now)
    counts = {"changed": 0, "unchanged": 0, "notModified": 0, "failed": 0}
    token = audit_actor.set(("system:refresh", ""))
    try:
        for provenance in rows.select_related("agent").order_by("next_refresh_at")[:limit]:
            try:
                outcome = agent_refresh(agent=provenance.agent, conditional=True)
            except ProblemError as exc:
                counts["failed"] += 1
                _schedule(provenance, etag=None, max_age=0, problem=f"{exc.slug}: {exc.detail}")
                logger.info("Refreshing agent %s failed: %s", provenance.agent_id, exc.detail)
                continue
            if outcome.get("notModified"):
                counts["notModified"] += 1
            else:
                counts["changed" if outcome["changed"] else "unchanged"] += 1
    finally:
        audit_actor.reset(token)
    return counts
