"""The task probe's checks of what an agent answered, the same for every binding
(task_probe over HTTP, grpc_probe over gRPC): the authentication it declares against the
one it requires, a well-formed answer, the task's lifecycle."""

from a2a.types.a2a_pb2 import Task

from registry.liveness.probes import TaskCheck


def declares_auth(card: dict | None) -> bool:
    if not isinstance(card, dict):
        return False
    return bool(card.get("securitySchemes")) or bool(card.get("securityRequirements"))


def answer_checks(seen: dict, required: bool) -> list[TaskCheck]:
    """``auth``, then (unless it required authentication) ``wellFormed`` and
    ``taskLifecycle``, from what the exchange ``seen``."""
    declared = seen.get("declared", False)
    if required and not declared:
        checks = [TaskCheck("auth", False, "it requires authentication its card does not declare")]
    else:
        note = "declared and required" if required else ("declared" if declared else "none")
        checks = [TaskCheck("auth", True, f"authentication: {note}")]
    if required:
        return checks
    well_formed = seen.get("answer") is not None or "a2a_error" in seen
    checks.append(
        TaskCheck(
            "wellFormed",
            well_formed,
            "a well-formed A2A answer"
            if well_formed
            else f"not a well-formed A2A answer: {seen.get('error', '')}",
        )
    )
    task, fetched = seen.get("task"), seen.get("fetched")
    if isinstance(task, Task):
        holds = isinstance(fetched, Task) and fetched.id == task.id
        detail = (
            f"task {task.id[:40]} found again by GetTask"
            if holds
            else "the task it sent back was not found by GetTask"
        )
        checks.append(TaskCheck("taskLifecycle", holds, detail))
    elif seen.get("answer") is not None:
        checks.append(TaskCheck("taskLifecycle", True, "answered with a message (no task)"))
    else:
        checks.append(TaskCheck("taskLifecycle", False, "no answer to follow"))
    return checks
