"""``ListTasks``'s parameters, checked before any task is read, by the registry's agent and
the queue relay alike: a bad value is an answer naming the parameter (a 400 problem on
HTTP+JSON, checked on the query string before the SDK reads it; invalid params on JSON-RPC),
never an exception's text or a 500.
"""

from a2a.types.a2a_pb2 import ListTasksRequest, TaskState
from a2a.utils.errors import InvalidParamsError
from django.http import HttpRequest, HttpResponse

from registry.http.jsonutil import Problem
from registry.http.problems import problem_response

MAX_PAGE_SIZE = 100
STATE_NAMES = TaskState.DESCRIPTOR.values_by_name
STATES = ", ".join(name for name in STATE_NAMES if name != "TASK_STATE_UNSPECIFIED")
TEXT_PARAMS = {"contextId": "context_id", "pageToken": "page_token"}


def _text_problem(name: str, value: str) -> Problem | None:
    if "\x00" in value or len(value) > 1000:
        return Problem(name, "must be text of at most 1000 characters without NUL")
    return None


def _status_problem(value: int) -> Problem | None:
    if value not in TaskState.values():
        return Problem("status", f"must be one of {STATES}")
    return None


def _page_size_problem(value: int) -> Problem | None:
    if not 1 <= value <= MAX_PAGE_SIZE:
        return Problem("pageSize", f"must be a whole number from 1 to {MAX_PAGE_SIZE}")
    return None


def list_params_problems(params: ListTasksRequest) -> list[Problem]:
    """What is wrong with a parsed ``ListTasksRequest``."""
    found = [_text_problem(name, getattr(params, field)) for name, field in TEXT_PARAMS.items()]
    found.append(_status_problem(params.status))
    if params.HasField("page_size"):
        found.append(_page_size_problem(params.page_size))
    if params.HasField("history_length") and params.history_length < 0:
        found.append(Problem("historyLength", "must not be negative"))
    return [p for p in found if p is not None]


def list_params_check(params: ListTasksRequest) -> None:
    """InvalidParamsError naming the first bad parameter (its message, never an exception's)."""
    problems = list_params_problems(params)
    if problems:
        first = problems[0]
        raise InvalidParamsError(
            message=f"Invalid params: {first.path} {first.message}.",
            data={"errors": [{"field": p.path, "message": p.message} for p in problems]},
        )


def _int_problem(name: str, raw: str, check) -> Problem | None:
    try:
        return check(int(raw))
    except ValueError:
        return check(-1) if name == "pageSize" else Problem(name, "must be a whole number")


def list_query_problem(request: HttpRequest, path: str) -> HttpResponse | None:
    """HTTP+JSON's ``GET …/tasks``: a 400 problem naming the first bad query parameter,
    or None (the SDK then reads the query)."""
    if request.method != "GET" or path.strip("/") != "tasks":
        return None
    query = request.GET
    found: list[Problem | None] = [
        _text_problem(name, query[name]) for name in TEXT_PARAMS if name in query
    ]
    if "status" in query:
        raw = query["status"]
        found.append(
            _int_problem("status", raw, _status_problem)
            if raw.lstrip("-").isdigit()
            else _status_problem(TaskState.Value(raw) if raw in STATE_NAMES else -1)
        )
    if "pageSize" in query:
        found.append(_int_problem("pageSize", query["pageSize"], _page_size_problem))
    if "historyLength" in query:
        found.append(
            _int_problem(
                "historyLength",
                query["historyLength"],
                lambda n: Problem("historyLength", "must not be negative") if n < 0 else None,
            )
        )
    problems = [p for p in found if p is not None]
    if not problems:
        return None
    first = problems[0]
    return problem_response(
        400,
        "validation-error",
        f"The query parameter {first.path} {first.message}.",
        errors=problems,
    )
