"""The ARD request shapes (v0.9 §7, unchanged at v0.91), parsed and checked: every problem
is a 400 ``INVALID_ARGUMENT`` naming its path, and nothing else is accepted (the official
OpenAPI closes the request objects)."""

import base64
import binascii
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.utils.dateparse import parse_datetime

from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError

# Filter and facet paths into an entry, and where each is read.
FILTER_PATHS = frozenset(
    {
        "identifier",
        "type",
        "tags",
        "capabilities",
        "publisher",
        "metadata.verifiedDomain",
        "metadata.cardSignature",
        "metadata.live",
    }
)
FACET_PATHS = FILTER_PATHS - {"identifier", "metadata.live"}
FEDERATION = ("auto", "referrals", "none")
MAX_PAGE_SIZE = 100
MAX_VALUES = 50
MAX_TEXT = 500
# query.mode: how the text ranks (the registry's extension; GET /discover/agents's mode).
MODES = ("hybrid", "semantic", "keyword")


def invalid(path: str, message: str) -> ProblemError:
    detail = f"{path} {message}." if path else f"{message}."
    return ProblemError(
        400,
        "ard-invalid-argument",
        detail,
        [Problem(path, message)],
        errorCode="INVALID_ARGUMENT",
        message=detail,
    )


def _closed(value, path: str, allowed: set[str], required: set[str] = frozenset()) -> dict:
    if not isinstance(value, dict):
        raise invalid(path, "must be an object")
    for name in value:
        if name not in allowed:
            raise invalid(f"{path}.{name}" if path else name, "is not a member of this request")
    for name in required:
        if name not in value:
            raise invalid(f"{path}.{name}" if path else name, "is required")
    return value


def _page_size(value, path: str, default: int) -> int:
    if value is None:
        return default
    if type(value) is not int or not 1 <= value <= MAX_PAGE_SIZE:
        raise invalid(path, f"must be an integer from 1 to {MAX_PAGE_SIZE}")
    return value


def _filters(value, path: str) -> dict[str, list[str]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid(path, "must be an object")
    filters = {}
    for key, values in value.items():
        where = f"{path}.{key}"
        if key not in FILTER_PATHS:
            raise invalid(
                where, f"is not a supported filter path ({', '.join(sorted(FILTER_PATHS))})"
            )
        values = [values] if isinstance(values, str) else values
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise invalid(where, "must be a string or an array of strings")
        if not values or len(values) > MAX_VALUES:
            raise invalid(where, f"must hold 1 to {MAX_VALUES} values")
        filters[key] = values
    return filters


@dataclass
class Query:
    text: str = ""
    filters: dict[str, list[str]] = field(default_factory=dict)
    # How the text ranks: registry/discovery/hybrid.py (hybrid, semantic or keyword).
    mode: str = "hybrid"
    # Only entries whose trust score is at least this (the registry's extension; GET
    # /discover/agents's minTrust).
    min_trust: int | None = None


def query_parse(value, path: str, *, text_required: bool) -> Query:
    body = _closed(
        value,
        path,
        {"text", "filter", "mode", "minTrust", "@context"},
        {"text"} if text_required else set(),
    )
    text = body.get("text", "")
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise invalid(f"{path}.text", f"must be a string of at most {MAX_TEXT} characters")
    if text_required and not text.strip():
        raise invalid(f"{path}.text", "must not be empty")
    mode = body.get("mode", "hybrid")
    if mode not in MODES:
        raise invalid(f"{path}.mode", f"must be one of {', '.join(MODES)}")
    min_trust = body.get("minTrust")
    if min_trust is not None and (type(min_trust) is not int or not 0 <= min_trust <= 100):
        raise invalid(f"{path}.minTrust", "must be an integer from 0 to 100")
    return Query(text.strip(), _filters(body.get("filter"), f"{path}.filter"), mode, min_trust)


@dataclass
class SearchRequest:
    query: Query
    federation: str
    page_size: int
    page_token: str | None


def search_parse(body) -> SearchRequest:
    body = _closed(body, "", {"query", "federation", "pageSize", "pageToken"}, {"query"})
    federation = body.get("federation", "auto")
    if federation not in FEDERATION:
        raise invalid("federation", f"must be one of {', '.join(FEDERATION)}")
    token = body.get("pageToken")
    if token is not None and (not isinstance(token, str) or len(token) > 1000):
        raise invalid("pageToken", "must be a token from a previous answer")
    return SearchRequest(
        query_parse(body["query"], "query", text_required=True),
        federation,
        _page_size(body.get("pageSize"), "pageSize", 10),
        token or None,
    )


@dataclass
class FacetRequest:
    field: str
    limit: int
    min_count: int


def explore_parse(body) -> tuple[Query, list[FacetRequest]]:
    body = _closed(body, "", {"query", "resultType"}, {"resultType"})
    query = query_parse(body["query"], "query", text_required=False) if "query" in body else Query()
    result_type = _closed(body["resultType"], "resultType", {"facets"}, {"facets"})
    facets = result_type["facets"]
    if not isinstance(facets, list) or not 1 <= len(facets) <= len(FACET_PATHS):
        raise invalid("resultType.facets", f"must be an array of 1 to {len(FACET_PATHS)} facets")
    wanted = []
    for index, facet in enumerate(facets):
        path = f"resultType.facets[{index}]"
        facet = _closed(facet, path, {"field", "limit", "minCount"}, {"field"})
        if facet["field"] not in FACET_PATHS:
            raise invalid(f"{path}.field", f"is not a facet ({', '.join(sorted(FACET_PATHS))})")
        limit = facet.get("limit", 20)
        min_count = facet.get("minCount", 1)
        if type(limit) is not int or not 1 <= limit <= 100:
            raise invalid(f"{path}.limit", "must be an integer from 1 to 100")
        if type(min_count) is not int or min_count < 0:
            raise invalid(f"{path}.minCount", "must be a non-negative integer")
        wanted.append(FacetRequest(facet["field"], limit, min_count))
    return query, wanted


# GET /ard/agents (Appendix A): clauses joined by AND, each ``field op value``; a value may
# be quoted; publisherId takes comma-separated alternatives.
_CLAUSE = re.compile(
    r"^\s*(displayName|type|publisherId|createdAfter|updatedAfter)\s*(=|>)\s*"
    r"(?:'([^']*)'|\"([^\"]*)\"|(\S+))\s*$"
)
ORDERS = {"displayName": "name", "updatedAt": "updated_at", "createdAt": "created_at"}


@dataclass
class ListFilter:
    display_name: str | None = None
    type: str | None = None
    publishers: list[str] = field(default_factory=list)
    created_after: datetime | None = None
    updated_after: datetime | None = None


def list_filter_parse(raw: str | None) -> ListFilter:
    parsed = ListFilter()
    if not raw or not raw.strip():
        return parsed
    if "\x00" in raw:  # no database text holds one (PostgreSQL refuses it in a query)
        raise invalid("filter", "contains a NUL character (U+0000)")
    for clause in re.split(r"\s+AND\s+", raw.strip(), flags=re.IGNORECASE):
        match = _CLAUSE.match(clause)
        if match is None:
            raise invalid("filter", f"has a clause that is not 'field = value': {clause[:80]!r}")
        name, op, *values = match.groups()
        value = next(v for v in values if v is not None)
        if (op == ">") != name.endswith("After"):
            raise invalid("filter", f"{name} takes {'>' if name.endswith('After') else '='}")
        if name.endswith("After"):
            try:  # a date out of range (month 13) is a ValueError, a shape it cannot read None
                when = parse_datetime(value)
            except ValueError:
                when = None
            if when is None or when.tzinfo is None:
                raise invalid("filter", f"{name} needs an RFC 3339 time, not {value[:40]!r}")
            # Any RFC 3339 offset (up to ±23:59), in UTC: the database holds no wider offset.
            when = when.astimezone(UTC)
            setattr(parsed, "created_after" if name == "createdAfter" else "updated_after", when)
        elif name == "publisherId":
            parsed.publishers = [p.strip().lower() for p in value.split(",") if p.strip()]
        elif name == "displayName":
            parsed.display_name = value
        else:
            parsed.type = value
    return parsed


def order_parse(raw: str | None) -> str:
    if not raw:
        return "name"
    parts = raw.split()
    if (
        not parts  # white space alone
        or parts[0] not in ORDERS
        or len(parts) > 2
        or (len(parts) == 2 and parts[1].upper() not in ("ASC", "DESC"))
    ):
        raise invalid("orderBy", f"must be one of {', '.join(ORDERS)}, optionally ASC or DESC")
    return ("-" if len(parts) == 2 and parts[1].upper() == "DESC" else "") + ORDERS[parts[0]]


def offset_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode().rstrip("=")


def offset_parse(token: str | None, path: str = "pageToken") -> int:
    if not token:
        return 0
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raw = ""
    if not re.fullmatch(r"o\d{1,9}", raw):
        raise invalid(path, "must be a token from a previous answer")
    return int(raw[1:])
