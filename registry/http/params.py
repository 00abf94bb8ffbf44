"""A request's parameters: page sizes, choices, unknown query parameters and ids in paths,
each refused with a problem that names it."""

import uuid
from collections.abc import Iterable

from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def limit_schema(most: int = MAX_LIMIT) -> dict:
    """The OpenAPI schema of a ``limit`` that ``limit_parse(..., most=most)`` reads."""
    return {"type": "integer", "minimum": 1, "maximum": most}


def bad_parameter(name: str, message: str) -> ProblemError:
    """A 400 problem naming one query parameter."""
    return ProblemError(400, "validation-error", f"{name} {message}.", [Problem(name, message)])


def text_param(params, name: str, default: str | None = "") -> str | None:
    """A text parameter; one with a NUL character (which no database text holds, and
    PostgreSQL refuses in a query) is a 400 naming it."""
    value = params.get(name, default)
    if value is not None and "\x00" in value:
        raise bad_parameter(name, "contains a NUL character (U+0000)")
    return value


def limit_parse(raw: str | None, default: int = DEFAULT_LIMIT, most: int = MAX_LIMIT) -> int:
    """A page size: a whole number from 1 to ``most``; anything else is a 400 saying so
    (never silently clamped)."""
    if raw is None or raw == "":
        return default
    value = int(raw) if raw.isascii() and raw.isdigit() else 0
    if not 1 <= value <= most:
        raise bad_parameter("limit", f"must be a whole number from 1 to {most}")
    return value


def choice_parse(name: str, raw: str | None, choices: Iterable[str]) -> str | None:
    """One of ``choices`` (None when absent); else a 400 listing them."""
    if raw is None or raw == "":
        return None
    choices = list(choices)
    if raw not in choices:
        raise bad_parameter(name, f"must be one of {', '.join(choices)}, not '{raw}'")
    return raw


def params_check(params: Iterable[str], known: Iterable[str]) -> None:
    """Every list endpoint refuses query parameters it does not know: a 400 naming them
    (a misspelt filter would otherwise widen the answer without a word)."""
    known = set(known)
    unknown = sorted(set(params) - known)
    if unknown:
        raise ProblemError(
            400,
            "validation-error",
            f"Unknown query parameter{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(unknown)}; this endpoint takes {', '.join(sorted(known))}.",
            [Problem(name, "is not a parameter of this endpoint") for name in unknown],
        )


def parse_uuid(value: str, what: str = "agent") -> uuid.UUID:
    """The id in a path; a malformed one names no resource: 404, as an unknown id is."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise ProblemError(
            404, "not-found", f"There is no {what} '{value}' (ids are UUIDs)."
        ) from None
