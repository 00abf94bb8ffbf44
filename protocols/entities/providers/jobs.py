"""Provider registrations too large for one request (more than ``PROVIDER_REGISTER_NOW``
entities, at most ``PROVIDER_REGISTER_MAX``): checked at once (the same 400 and 403 as a
registration answered at once), then queued as a ``ProviderJob`` that a worker runs
(the ``entities.tasks.provider_job`` task); ``GET /v1/provider/register/jobs/<id>`` reads it."""

import logging
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from protocols.entities.models import Provider, ProviderJob
from protocols.entities.providers.services import provider_register, registration_checked
from registry.access.auth import Principal
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError, exception_problem, problem_body

logger = logging.getLogger(__name__)
PROVIDER_JOB_TASK = "entities.tasks.provider_job"


def registration_answer(registered) -> dict[str, Any]:
    """What a registration answers: the provider, its entities, any warnings."""
    provider = registered.provider
    body = {
        "provider": {
            "id": provider.provider_id,
            "name": provider.name,
            "endpoint": provider.endpoint,
            "capabilities": provider.capabilities,
            "public_key": bool(provider.public_key),
        },
        "entities": [
            {"entity_id": c.entity_id, "name": c.name, "domain": c.domain or None}
            for c in provider.claims.all()
        ],
    }
    if registered.warnings:
        body["warnings"] = [w.as_dict() for w in registered.warnings]
    return body


def registration_is_large(payload: Any) -> bool:
    entities = payload.get("entities") if isinstance(payload, dict) else None
    return isinstance(entities, list) and len(entities) > settings.PROVIDER_REGISTER_NOW


@transaction.atomic
def provider_job_queue(*, principal: Principal, payload: dict) -> ProviderJob:
    """Check a large registration as one answered at once would be (a 400 naming each
    problem, a 403 for another owner's provider), then queue it; the job runs once this
    transaction commits."""
    registration_checked(payload, most=settings.PROVIDER_REGISTER_MAX)
    if principal.key is None:
        raise ProblemError(
            403,
            "forbidden",
            "A registration this large runs later as a job, under the API key that queued "
            "it: send it with an API key, or in parts small enough to register at once.",
            [Problem("entities", "too many to register at once with a token")],
        )
    provider_id = payload["provider"]["id"]
    owner = Provider.objects.filter(provider_id=provider_id).values_list("owner", flat=True)
    if owner and not principal.may_change(owner[0]):
        raise ProblemError(
            403,
            "forbidden",
            f"Provider {provider_id!r} was registered with another API key; only that key's "
            "owner (or an admin key) may change it.",
            [Problem("provider.id", "is registered by another owner")],
        )
    job = ProviderJob.objects.create(
        key=principal.key,
        owner=principal.owner,
        provider_id=provider_id,
        payload=payload,
        entities=len(payload["entities"]),
    )
    # By its name: the task (protocols.entities.tasks) imports this module.
    task = current_app.tasks[PROVIDER_JOB_TASK]
    transaction.on_commit(lambda: task.delay(str(job.pk)))
    return job


def provider_job_run(job_id: str) -> ProviderJob | None:
    """Run a queued job (once: a job already started is left alone)."""
    with transaction.atomic():
        job = ProviderJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.state != ProviderJob.State.QUEUED:
            return job
        job.state, job.started_at = ProviderJob.State.RUNNING, timezone.now()
        job.save(update_fields=["state", "started_at"])
    try:
        if job.key is None or not job.key.is_active(timezone.now()):
            raise ProblemError(
                403,
                "forbidden",
                "The API key that queued this registration was revoked before it ran.",
            )
        registered = provider_register(principal=Principal(job.key), payload=job.payload)
        job.result, job.state = registration_answer(registered), ProviderJob.State.SUCCEEDED
    except ProblemError as exc:
        job.problem, job.state = exception_problem(exc), ProviderJob.State.FAILED
    except Exception:
        # The log has what failed; the job says only that it did (no internal message).
        logger.exception("Provider registration job %s failed", job_id)
        job.problem = problem_body(500, "server-error", "The registration failed; see its log.")
        job.state = ProviderJob.State.FAILED
    job.finished_at = timezone.now()
    job.save(update_fields=["state", "result", "problem", "finished_at"])
    return job


def job_url(job: ProviderJob) -> str:
    return f"{settings.REGISTRY_BASE_URL}/v1/provider/register/jobs/{job.pk}"


def job_document(job: ProviderJob) -> dict[str, Any]:
    """A job as GET shows it: its state, its counts, what it answered or its problem."""
    result = job.result or {}
    problems = list(result.get("warnings") or [])
    if job.problem:
        whole = [{"path": "$", "message": job.problem["detail"]}]
        problems = list(job.problem.get("errors") or whole)
    return {
        "id": str(job.pk),
        "url": job_url(job),
        "state": job.state,
        "provider": job.provider_id,
        "counts": {
            "entities": job.entities,
            "registered": len(result["entities"]) if "entities" in result else None,
            "problems": len(problems),
        },
        "problems": problems,
        "result": job.result,
        "problem": job.problem,
        "createdAt": job.created_at.isoformat(),
        "startedAt": job.started_at.isoformat() if job.started_at else None,
        "finishedAt": job.finished_at.isoformat() if job.finished_at else None,
    }
