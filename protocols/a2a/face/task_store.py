"""The tasks of the registry's own A2A agent, in the project's database.

An a2a-sdk ``TaskStore``: the request handler saves and reads every task through it. Each
task belongs to the scope of the caller that created it, the hash of its API key (empty
without one), as the SDK's in-memory store scopes tasks by user: a task created with a key is read
with that key; one created without is read by whoever has its id (and becomes the key's
when a follow-up message brings one, as after auth-required); listing needs a key.
"""

import base64
from datetime import datetime, timedelta

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task, TaskState
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from google.protobuf.json_format import MessageToDict, ParseDict

from protocols.a2a.models import AgentTask
from registry.access.auth import bearer_key, credential_scope

# The call context's state entry holding the tasks this request saved or read.
SEEN = "registry.liveness.tasks"
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


def task_scope(context: ServerCallContext | None) -> str:
    headers = (context.state.get("headers") or {}) if context is not None else {}
    key = bearer_key(headers.get("authorization", ""))
    return credential_scope(key) if key else ""


def _commit_unsynced() -> None:
    """PostgreSQL: this transaction's commit does not wait for the disk. A task is a
    day-long record of an answer already given; a crash may lose the last moments of them,
    never anything else (every other write commits as usual)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def _task_save(task: Task, scope: str, stored: bool) -> None:
    """One query: an INSERT for a task not yet stored (the usual case: a task is answered
    at once), an UPDATE of the caller's own task otherwise."""
    body = MessageToDict(task, preserving_proto_field_name=False)
    fields = {"context_id": task.context_id, "state": TaskState.Name(task.status.state)}
    if not stored:
        try:
            with transaction.atomic():
                _commit_unsynced()
                AgentTask.objects.create(id=task.id, scope=scope, body=body, **fields)
            return
        except IntegrityError:
            pass  # stored after all (by an earlier request): update it, if it is the caller's
    # A task created without a key becomes the key's when a follow-up message brings one.
    AgentTask.objects.filter(pk=task.id, scope__in={scope, ""}).update(
        scope=scope, body=body, **fields
    )


def _task_get(task_id: str, scope: str) -> Task | None:
    row = AgentTask.objects.filter(pk=task_id, scope__in={scope, ""}).only("body").first()
    return None if row is None else ParseDict(row.body, Task(), ignore_unknown_fields=True)


def _offset(token: str) -> int:
    try:
        return max(0, int(base64.urlsafe_b64decode(token.encode()).decode()))
    except ValueError:
        return 0


def _tasks_list(params: ListTasksRequest, scope: str) -> ListTasksResponse:
    size = min(params.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    if not scope:  # callers without a key have no tasks of their own to list
        return ListTasksResponse(tasks=[], total_size=0, page_size=size)
    rows = AgentTask.objects.filter(scope=scope)
    if params.context_id:
        rows = rows.filter(context_id=params.context_id)
    if params.status:
        rows = rows.filter(state=TaskState.Name(params.status))
    if params.HasField("status_timestamp_after"):
        rows = rows.filter(updated_at__gte=params.status_timestamp_after.ToDatetime(tzinfo=None))
    total = rows.count()
    start = _offset(params.page_token) if params.page_token else 0
    page = list(rows.order_by("-updated_at", "-id")[start : start + size])
    tasks = [ParseDict(row.body, Task(), ignore_unknown_fields=True) for row in page]
    if not params.include_artifacts:
        for task in tasks:
            task.ClearField("artifacts")
    following = start + size
    token = base64.urlsafe_b64encode(str(following).encode()).decode() if following < total else ""
    return ListTasksResponse(tasks=tasks, next_page_token=token, total_size=total, page_size=size)


class DatabaseTaskStore(TaskStore):
    """Tasks in ``AgentTask``; within one request, a task saved or read is kept in the call
    context's state, so the handler's reads after a save need no query."""

    @staticmethod
    def _seen(context: ServerCallContext | None) -> dict[str, Task | None]:
        """This request's tasks by id (None: looked up, not stored)."""
        return context.state.setdefault(SEEN, {}) if context is not None else {}

    @classmethod
    def known_absent(cls, context: ServerCallContext, task_id: str) -> None:
        """A task id this request made up (the message named none): no task has it yet,
        so the handler's reads of it need no query."""
        cls._seen(context).setdefault(task_id, None)

    async def save(self, task: Task, context: ServerCallContext) -> None:
        seen = self._seen(context)
        stored = seen.get(task.id) is not None
        await sync_to_async(_task_save)(task, task_scope(context), stored)
        copy = Task()
        copy.CopyFrom(task)
        seen[task.id] = copy

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        seen = self._seen(context)
        if task_id not in seen:
            seen[task_id] = await sync_to_async(_task_get)(task_id, task_scope(context))
        if seen[task_id] is None:
            return None
        task = Task()
        task.CopyFrom(seen[task_id])
        return task

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await sync_to_async(_tasks_list)(params, task_scope(context))

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        self._seen(context).pop(task_id, None)
        await sync_to_async(
            AgentTask.objects.filter(pk=task_id, scope=task_scope(context)).delete
        )()


def agent_tasks_expire(now: datetime | None = None) -> int:
    """Remove the registry agent's tasks unchanged for A2A_TASK_RETENTION_SECONDS."""
    cutoff = (now or timezone.now()) - timedelta(seconds=settings.A2A_TASK_RETENTION_SECONDS)
    deleted, _ = AgentTask.objects.filter(updated_at__lt=cutoff).delete()
    return deleted
