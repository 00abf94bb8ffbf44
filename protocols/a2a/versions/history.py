"""The card's history: every change of an agent's card stores an immutable version (the
exact bytes served, their SHA-256, who and what changed it, the summary of the change),
numbered 1, 2, 3 … per agent without gaps; and the compatibility rule that refuses a
breaking change.

``version_record`` is called by every write of a card document (protocols.a2a.registration.services,
protocols.a2a.receivers, protocols.a2a.registration.bulk) inside its transaction; the agent's row
is locked first, so two concurrent writes of one agent take the next numbers one after the other.
"""

import hashlib
import json
from datetime import datetime

from django.conf import settings
from django.db.models import F, Max, OuterRef, Subquery
from django.utils import timezone

from protocols.a2a.models import CardVersion
from protocols.a2a.versions.diff import card_summary
from registry.access.audit import audit_actor
from registry.agents.models import Agent
from registry.events.outbox import event_extend
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.moderation.scanning import findings_of


def version_latest(agent: Agent) -> CardVersion | None:
    return CardVersion.objects.filter(agent=agent).order_by("-seq").first()


def compatibility_check(agent: Agent, summary: dict | None) -> None:
    """``compatibility: backward`` refuses a change with a breaking part (409
    ``breaking-change`` listing each), unless the card's major version went up."""
    if summary is None or not summary["breaking"] or summary["majorVersionUp"]:
        return
    if agent.compatibility != Agent.Compatibility.BACKWARD:
        return
    breaks = [c for c in summary["changes"] if c["breaking"]]
    raise ProblemError(
        409,
        "breaking-change",
        f"Agent {agent.id} keeps backward compatibility, and this card breaks it "
        f"({len(breaks)} breaking change{'s' if len(breaks) > 1 else ''}): raise the card's "
        "major version, or set compatibility to none.",
        [Problem(c["path"], f"{c['rule']}: {c['detail']} ({c['why']})") for c in breaks],
        summary=summary,
    )


def _next_version(agent: Agent, body: bytes) -> tuple[CardVersion | None, str, dict | None]:
    """(the latest version, the SHA-256 of ``body``, the summary of the change from the
    latest, None without one); raises 409 breaking-change under ``compatibility: backward``.
    Takes the agent's row lock (a no-op where one is held)."""
    Agent.objects.select_for_update().filter(pk=agent.pk).values_list("pk").first()
    sha256 = hashlib.sha256(body).hexdigest()
    latest = version_latest(agent)
    summary = None
    if latest is not None and latest.sha256 != sha256:
        summary = card_summary(json.loads(bytes(latest.body)), json.loads(body))
        fresh = Agent.objects.filter(pk=agent.pk).values_list("compatibility", flat=True).first()
        agent.compatibility = fresh or agent.compatibility
        compatibility_check(agent, summary)
    return latest, sha256, summary


def version_record(agent: Agent, body: bytes, *, change: str) -> CardVersion | None:
    """Store ``body`` as the agent's next card version, unless it is the latest already.
    Checks the agent's compatibility rule first (raises ProblemError)."""
    latest, sha256, summary = _next_version(agent, body)
    if latest is not None and latest.sha256 == sha256:
        return None
    card = json.loads(body)
    actor, key_prefix = audit_actor.get() or ("system", "")
    seq = (latest.seq + 1) if latest is not None else 1
    # The write's agent.created or agent.updated event says which version it stored.
    attributes = {"cardversionseq": str(seq)}
    if summary is not None:
        attributes["cardversionbreaking"] = "true" if summary["breaking"] else "false"
        rules = sorted({c["rule"] for c in summary["changes"]})
        if rules:
            attributes["cardversionchanges"] = ",".join(rules)
    event_extend(agent.pk, **attributes)
    return CardVersion.objects.create(
        agent=agent,
        seq=seq,
        card_version=str(card.get("version", ""))[:100],
        body=body,
        sha256=sha256,
        created_at=timezone.now(),
        actor=actor[:200],
        key_prefix=key_prefix[:20],
        change=change,
        summary=summary,
        breaking=bool(summary and summary["breaking"]),
        findings=findings_of([agent.pk]).get(agent.pk, []),
    )


def version_rows(agent: Agent, body: bytes, *, change: str, at: datetime) -> CardVersion:
    """An unsaved first version (bulk imports save many at once); the agent.created event
    says it stored version 1, as ``version_record``'s does."""
    card = json.loads(body)
    actor, key_prefix = audit_actor.get() or ("system", "")
    event_extend(agent.pk, cardversionseq="1")
    return CardVersion(
        agent=agent,
        seq=1,
        card_version=str(card.get("version", ""))[:100],
        body=body,
        sha256=hashlib.sha256(body).hexdigest(),
        created_at=at,
        actor=actor[:200],
        key_prefix=key_prefix[:20],
        change=change,
    )


def versions_prune(keep: int | None = None) -> int:
    """Delete each agent's versions beyond the newest ``keep`` (CARD_VERSIONS_KEEP; 0 keeps
    every version). The latest is never deleted. Returns how many were deleted."""
    keep = settings.CARD_VERSIONS_KEEP if keep is None else keep
    if keep <= 0:
        return 0
    newest = CardVersion.objects.filter(agent=OuterRef("agent")).values("agent")
    newest = newest.annotate(top=Max("seq")).values("top")
    stale = CardVersion.objects.annotate(top=Subquery(newest)).filter(seq__lte=F("top") - keep)
    doomed = list(stale.values_list("pk", flat=True))
    deleted = 0
    for start in range(0, len(doomed), 1000):
        deleted += CardVersion.objects.filter(pk__in=doomed[start : start + 1000]).delete()[0]
    return deleted


def dry_run_parse(raw: str | None) -> bool:
    if raw in (None, "", "false"):
        return False
    if raw == "true":
        return True
    raise ProblemError(
        400,
        "validation-error",
        f"dryRun must be true or false, not '{raw[:50]}'.",
        [Problem("dryRun", "must be true or false")],
    )


def version_preview(agent: Agent, body: bytes) -> dict:
    """A dry run's answer: what storing ``body`` would record as the agent's next card
    version, its summary included, computed as ``version_record`` computes it and with
    nothing written (a refusal, 409 breaking-change, raised as the write would raise it)."""
    latest, sha256, summary = _next_version(agent, body)
    if latest is not None and latest.sha256 == sha256:
        changed, seq, version = False, latest.seq, latest.card_version
    else:
        changed, seq = True, (latest.seq + 1) if latest is not None else 1
        version = str(json.loads(body).get("version", ""))[:100]
    return {
        "dryRun": True,
        "changed": changed,
        "seq": seq,
        "version": version,
        "sha256": sha256,
        "breaking": bool(summary and summary["breaking"]),
        "summary": summary,
    }
