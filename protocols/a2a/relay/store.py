"""The relayed tasks in the database (``RelayTask``): created pending before the request is
published, made visible once the broker confirmed it, changed by the agents' replies (the
relay consumer), read by the credentials that created them.

A reply is one of A2A's stream events (a ``Task``, a ``Message``, a status update or an
artifact update), validated with a2a-sdk's types; ``reply_apply`` says why it cannot use
one (the consumer dead-letters it with that reason).
"""

import base64
import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from a2a.types.a2a_pb2 import (
    ListTasksRequest,
    ListTasksResponse,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
)
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from google.protobuf.json_format import MessageToDict, ParseDict

from protocols.a2a.models import RelayTask
from protocols.a2a.relay.waits import WaitRefused
from registry.access.auth import KEY_PREFIX, api_key_hash, credential_scope
from registry.access.counters import window_allows
from registry.access.tokens import looks_like_token

FINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
INTERRUPTED = {TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED}
FINAL_NAMES = {TaskState.Name(s) for s in FINAL}
SETTLED_NAMES = FINAL_NAMES | {TaskState.Name(s) for s in INTERRUPTED}
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


def relay_scope(headers: dict[str, str]) -> str:
    """Whose a relayed task is, from the request's headers: a registry API key
    (``X-Api-Key``, or ``Authorization: Bearer rk_…``) by its hash; a token from an
    accepted identity provider by its identity; else the Authorization value's hash; else
    nobody ("")."""
    key = headers.get("x-api-key", "").strip()
    authorization = headers.get("authorization", "").strip()
    if key:
        return api_key_hash(key)
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() == "bearer" and token.strip().startswith(KEY_PREFIX):
        return api_key_hash(token.strip())
    if scheme.lower() == "bearer" and looks_like_token(token.strip()):
        # A registry token's identity, when it is one (a token for the agent is not).
        scope = credential_scope(token.strip())
        if scope != api_key_hash(token.strip()):
            return scope
    if authorization:
        return hashlib.sha256(b"authorization\n" + authorization.encode()).hexdigest()
    return ""


def task_json(task: Task) -> dict:
    return MessageToDict(task, preserving_proto_field_name=False)


def task_parse(body: dict) -> Task:
    return ParseDict(body, Task(), ignore_unknown_fields=True)


def anonymous_task_allowed(client: str) -> None:
    """A new task without credentials may be made for ``client`` (an address): at most
    QUEUE_RELAY_ANONYMOUS_TASKS_MAX such tasks are open (not final) in all, and a client
    makes at most QUEUE_RELAY_ANONYMOUS_TASKS_PER_CLIENT an hour; WaitRefused past one."""
    most = settings.QUEUE_RELAY_ANONYMOUS_TASKS_MAX
    open_now = RelayTask.objects.filter(scope="").exclude(state__in=FINAL_NAMES)
    if open_now.count() >= most:
        raise WaitRefused(
            503,
            "QUEUE_RELAY_ANONYMOUS_TASKS_MAX",
            f"{most} relayed tasks without credentials are open already "
            "(QUEUE_RELAY_ANONYMOUS_TASKS_MAX): nothing was sent. Retry later, or send "
            "an Authorization.",
            slug="relay-anonymous-limit",
            retry_after=settings.QUEUE_RELAY_RETRY_AFTER_SECONDS,
        )
    per_client = settings.QUEUE_RELAY_ANONYMOUS_TASKS_PER_CLIENT
    wait = window_allows("relay-anonymous", client, f"{per_client}/hour")
    if wait is not None:
        raise WaitRefused(
            429,
            "QUEUE_RELAY_ANONYMOUS_TASKS_PER_CLIENT",
            f"This client made {per_client} relayed tasks without credentials this hour "
            "(QUEUE_RELAY_ANONYMOUS_TASKS_PER_CLIENT): nothing was sent. Retry after "
            "Retry-After, or send an Authorization.",
            slug="relay-anonymous-limit",
            retry_after=int(wait),
        )


def task_pending_create(task: Task, *, endpoint_id, scope: str) -> str:
    """A new task, not yet visible: its request is not confirmed by the broker yet. Its
    reply secret (random) is returned, to publish with the request."""
    secret = secrets.token_urlsafe(32)
    RelayTask.objects.create(
        id=task.id,
        endpoint_id=endpoint_id,
        scope=scope,
        context_id=task.context_id,
        state=RelayTask.PENDING,
        body=task_json(task),
        reply_secret=secret,
    )
    return secret


def task_reply_secret(task_id: str) -> str:
    """The reply secret of a task (a follow-up's request carries it again); a task made
    before tasks had one is given one now."""
    secret = RelayTask.objects.filter(pk=task_id).values_list("reply_secret", flat=True).first()
    if not secret:
        secret = secrets.token_urlsafe(32)
        RelayTask.objects.filter(pk=task_id, reply_secret="").update(reply_secret=secret)
        secret = RelayTask.objects.filter(pk=task_id).values_list("reply_secret", flat=True)[0]
    return secret


def task_confirm(task_id: str) -> None:
    """The broker took the request: the task is submitted (unless a reply came first)."""
    RelayTask.objects.filter(pk=task_id, state=RelayTask.PENDING).update(
        state=TaskState.Name(TaskState.TASK_STATE_SUBMITTED), updated_at=timezone.now()
    )


def task_abandon(task_id: str) -> None:
    """The broker did not take the request: no task was made."""
    RelayTask.objects.filter(pk=task_id, state=RelayTask.PENDING).delete()


def task_method_set(task_id: str, method: str) -> None:
    RelayTask.objects.filter(pk=task_id).update(last_method=method)


def _visible(endpoint_id, scope: str):
    return RelayTask.objects.filter(endpoint_id=endpoint_id, scope__in={scope, ""}).exclude(
        state=RelayTask.PENDING
    )


def task_get(task_id: str, *, endpoint_id, scope: str) -> Task | None:
    """The task, when the caller may see it: created with the same credentials, or with
    none (then its random id is what reaches it)."""
    row = _visible(endpoint_id, scope).filter(pk=task_id).only("body").first()
    return None if row is None else task_parse(row.body)


def task_settled(task_id: str, since: datetime, *, final_only: bool = False) -> bool:
    """Whether a reply after ``since`` made the task final (or interrupted it)."""
    states = FINAL_NAMES if final_only else SETTLED_NAMES
    return RelayTask.objects.filter(pk=task_id, state__in=states, updated_at__gt=since).exists()


def task_is_final(task: Task) -> bool:
    return task.status.state in FINAL


def _offset(token: str) -> int:
    try:
        return max(0, int(base64.urlsafe_b64decode(token.encode()).decode()))
    except ValueError:
        return 0


def tasks_list(params: ListTasksRequest, *, endpoint_id, scope: str) -> ListTasksResponse:
    """The caller's tasks at this endpoint, most recently changed first; none without
    credentials."""
    size = min(params.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    if not scope:
        return ListTasksResponse(tasks=[], total_size=0, page_size=size)
    rows = RelayTask.objects.filter(endpoint_id=endpoint_id, scope=scope).exclude(
        state=RelayTask.PENDING
    )
    if params.context_id:
        rows = rows.filter(context_id=params.context_id)
    if params.status:
        rows = rows.filter(state=TaskState.Name(params.status))
    total = rows.count()
    start = _offset(params.page_token) if params.page_token else 0
    page = list(rows.order_by("-updated_at", "-id")[start : start + size])
    tasks = [task_parse(row.body) for row in page]
    if not params.include_artifacts:
        for task in tasks:
            task.ClearField("artifacts")
    following = start + size
    token = base64.urlsafe_b64encode(str(following).encode()).decode() if following < total else ""
    return ListTasksResponse(tasks=tasks, next_page_token=token, total_size=total, page_size=size)


def _artifact_add(task: Task, update) -> None:
    artifact = update.artifact
    for existing in task.artifacts:
        if existing.artifact_id == artifact.artifact_id:
            if update.append:
                existing.parts.extend(artifact.parts)
            else:
                existing.CopyFrom(artifact)
            return
    task.artifacts.append(artifact)


def _event_apply(task: Task, event: StreamResponse) -> None:
    kind = event.WhichOneof("payload")
    if kind == "task":
        history = list(task.history)
        task.CopyFrom(event.task)
        if not task.history:
            task.history.extend(history)
    elif kind == "message":  # an answer that needs no task: it completes the relayed one
        status = TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=event.message)
        status.timestamp.GetCurrentTime()
        task.status.CopyFrom(status)
    elif kind == "status_update":
        task.status.CopyFrom(event.status_update.status)
        if event.status_update.HasField("metadata"):
            task.metadata.MergeFrom(event.status_update.metadata)
    else:
        _artifact_add(task, event.artifact_update)


def _error_apply(task: Task, error: dict, method: str) -> None:
    task.metadata.update({"relayError": {"code": error["code"], "message": error["message"]}})
    if method != "CancelTask":  # a refused cancel leaves the task as it is
        status = TaskStatus(state=TaskState.TASK_STATE_FAILED)
        status.message.role = 2  # ROLE_AGENT
        status.message.message_id = f"{task.id}-error"
        status.message.parts.add().text = f"The agent answered with an error: {error['message']}"
        status.timestamp.GetCurrentTime()
        task.status.CopyFrom(status)


def reply_apply(
    task_id: str, *, secret: str, event: StreamResponse | None, error: dict | None
) -> str | None:
    """Apply one reply (an event, or a JSON-RPC error) to its task; None when applied,
    else why not: ``unknown-task``, ``wrong-reply-secret`` (the reply does not echo the
    task's secret: not the agent's), or ``task-final`` for a change to a finished task."""
    with transaction.atomic():
        row = RelayTask.objects.select_for_update().filter(pk=task_id).first()
        if row is None:
            return "unknown-task"
        if not row.reply_secret or not hmac.compare_digest(
            row.reply_secret.encode(), secret.encode()
        ):
            return "wrong-reply-secret"
        task = task_parse(row.body)
        if task_is_final(task) and row.state != RelayTask.PENDING:
            return "task-final"
        context_id = task.context_id
        if event is not None:
            _event_apply(task, event)
        else:
            _error_apply(task, error, row.last_method)
        # The registry's ids name the task, whatever ids the agent's reply carried.
        task.id = task_id
        task.context_id = task.context_id or context_id
        row.body = task_json(task)
        row.context_id = task.context_id
        row.state = TaskState.Name(task.status.state)
        row.save(update_fields=["body", "context_id", "state", "updated_at"])
    return None


def relay_tasks_expire(now: datetime | None = None) -> int:
    """Remove the relayed tasks unchanged for QUEUE_RELAY_TASK_RETENTION_SECONDS, and those
    made without credentials and still unanswered (pending or submitted) after
    QUEUE_RELAY_ANONYMOUS_TASK_RETENTION_SECONDS."""
    cutoff = (now or timezone.now()) - timedelta(
        seconds=settings.QUEUE_RELAY_TASK_RETENTION_SECONDS
    )
    deleted, _ = RelayTask.objects.filter(updated_at__lt=cutoff).delete()
    # Tasks without credentials that no reply reached yet go sooner: anyone may make them.
    unanswered = (now or timezone.now()) - timedelta(
        seconds=settings.QUEUE_RELAY_ANONYMOUS_TASK_RETENTION_SECONDS
    )
    submitted = (RelayTask.PENDING, TaskState.Name(TaskState.TASK_STATE_SUBMITTED))
    anonymous, _ = RelayTask.objects.filter(
        scope="", state__in=submitted, updated_at__lt=unanswered
    ).delete()
    return deleted + anonymous
