"""The query parameters of the entities API (``api``): each bad value a 400 problem naming
its parameter."""

import math

from registry.http.jsonutil import Problem
from registry.http.params import text_param
from registry.http.problems import ProblemError


def invalid(name: str, message: str) -> ProblemError:
    return ProblemError(400, "validation-error", f"{name} {message}.", [Problem(name, message)])


def number_param(params, name: str, low: float, high: float, default: float | None = None) -> float:
    raw = params.get(name)
    if raw is None or raw == "":
        if default is None:
            raise invalid(name, "is required")
        return default
    try:
        value = float(raw)
    except ValueError:
        raise invalid(name, "must be a number") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise invalid(name, f"must be between {low:g} and {high:g}")
    return value


def int_param(params, name: str, low: int, high: int, default: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid(name, "must be an integer") from None
    if not low <= value <= high:
        raise invalid(name, f"must be between {low} and {high}")
    return value


def flag_param(params, name: str) -> bool:
    raw = params.get(name, "").strip().lower()
    if raw in ("", "false", "0", "no"):
        return False
    if raw in ("true", "1", "yes"):
        return True
    raise invalid(name, "must be true or false")


def capabilities_param(params) -> list[str]:
    names = [c.strip() for c in text_param(params, "capabilities").split(",") if c.strip()]
    if len(names) > 20:
        raise invalid("capabilities", "may list 20 capabilities at the most")
    return names
