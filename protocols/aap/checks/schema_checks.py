"""The AAP JSON Schemas (aap/schemas/) applied to a card and a manifest: validators,
readable messages, and card findings filed under the rule that owns their path."""

import json
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from protocols.aap.checks.documents import OPAQUE_MEMBERS, SNAKE_OF, Card
from protocols.aap.checks.report import CARD_ROOT
from registry.http.jsonutil import Problem, join_path

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, FormatChecker
    from jsonschema.exceptions import ValidationError

# jsonschema is imported where a document is checked: a web worker serving reads never
# needs it.
_SCHEMA_DIR = Path(__file__).with_name("schemas")


_URI_CHARS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*$")


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _is_uri(value: object) -> bool:
    """RFC 3986 absolute URI: a scheme, legal characters, a host for http(s) and ws(s).

    jsonschema asserts "uri" only with rfc3987 or rfc3986-validator installed; this
    small check keeps the project off both.
    """
    if not isinstance(value, str):
        return True
    if not value or not _URI_CHARS.match(value) or _BAD_ESCAPE.search(value):
        return False
    scheme, colon, rest = value.partition(":")
    if not colon or not _SCHEME.match(scheme) or not rest:
        return False
    if scheme.lower() in {"http", "https", "ws", "wss"}:
        try:
            return bool(urlsplit(value).hostname)
        except ValueError:
            return False
    return True


def _format_checker() -> "FormatChecker":
    from jsonschema import FormatChecker

    checker = FormatChecker()
    checker.checks("uri")(_is_uri)
    return checker


@cache
def _validator(name: str) -> "Draft202012Validator":
    from jsonschema import Draft202012Validator

    schema = json.loads((_SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return Draft202012Validator(schema, format_checker=_format_checker())


def card_schema_validator() -> "Draft202012Validator":
    return _validator("agent-card.schema.json")


def manifest_schema_validator() -> "Draft202012Validator":
    return _validator("contract-manifest.schema.json")


def show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


_ARTICLE = {"object": "an object", "array": "an array", "integer": "an integer"}


def _schema_message(error: "ValidationError") -> str:
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "const":
        return f"must be {show(expected)}, not {show(instance)}"
    if kind == "enum":
        return f"{show(instance)} is not one of {', '.join(show(v) for v in expected)}"
    if kind == "type":
        names = expected if isinstance(expected, list) else [expected]
        return "must be " + " or ".join(_ARTICLE.get(n, f"a {n}") for n in names)
    if kind == "format":
        if expected == "uri":
            return f"{show(instance)} is not an absolute URI"
        return f"{show(instance)} is not a valid {expected}"
    if kind == "minItems":
        return f"must have at least {expected} item{'s' if expected != 1 else ''}"
    return error.message


def expand(error: "ValidationError") -> list[tuple[list[str | int], str]]:
    """A schema error as (path parts, message) findings, each at the member at fault.

    ``required`` and ``additionalProperties`` errors are reported on the object that
    holds the member; they are moved onto the member, one finding per member.
    """
    parts = list(error.absolute_path)
    if error.validator == "required":
        missing = [
            name
            for name in error.validator_value
            if name not in error.instance and error.message.startswith(repr(name))
        ]
        return [(parts + missing[:1], "is required")]
    if error.validator == "additionalProperties" and error.validator_value is False:
        known = error.schema.get("properties", {})
        return [
            ([*parts, name], "is not allowed here (a closed object)")
            for name in error.instance
            if name not in known
        ]
    return [(parts, _schema_message(error))]


def path_key(parts: list[str | int]) -> tuple:
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in parts)


def dotted(parts: Iterable[str | int], root: str) -> str:
    path = ""
    for part in parts:
        path = join_path(path, part)
    return path or root


def _snake_view(value: Any) -> Any:
    """The card with camelCase member names renamed for the snake_case card schema."""
    if isinstance(value, list):
        return [_snake_view(item) for item in value]
    if not isinstance(value, dict):
        return value
    renamed = {}
    for key, member in value.items():
        name = SNAKE_OF.get(key, key)
        renamed[name] = member if name in OPAQUE_MEMBERS else _snake_view(member)
    return renamed


def _card_path(card: Card, parts: list[str | int]) -> str:
    """A snake_case schema path spelled in the card's own member names."""
    node: Any = card.doc
    spelled: list[str | int] = []
    for part in parts:
        if isinstance(part, str):
            part = card.key(node, part)
            node = node.get(part) if isinstance(node, dict) else None
        else:
            node = node[part] if isinstance(node, list) and part < len(node) else None
        spelled.append(part)
    return dotted(spelled, CARD_ROOT)


def _card_schema_rule(parts: list[str | int], aap_index: int | None) -> str:
    """The rule that owns a card schema finding at ``parts``."""
    head = parts[0] if parts else None
    if head == "capabilities":
        if aap_index is not None and parts[2:4] == [aap_index, "params"] and len(parts) > 4:
            return "card.manifest_url" if parts[4] == "manifest_url" else "card.skill_vocabulary"
        return "card.extension"
    return {
        "supported_interfaces": "card.binding",
        "skills": "card.skills",
        "security_schemes": "card.auth",
        "security_requirements": "card.auth",
    }.get(head, "card.a2a")


def card_schema_findings(card: Card, aap_index: int | None) -> dict[str, list[Problem]]:
    findings: dict[str, list[Problem]] = {}
    for error in card_schema_validator().iter_errors(_snake_view(card.doc)):
        # The explicit checks say more than "contains" can (which URI, which skills).
        if error.validator == "contains":
            continue
        for parts, message in expand(error):
            rule = _card_schema_rule(parts, aap_index)
            findings.setdefault(rule, []).append(Problem(_card_path(card, parts), message))
    return findings
