"""Auto Agent Protocol v0.1 compliance of an agent card and, optionally, its contract manifest.

``aap_check`` is pure (no network, no database) and judges the raw decoded documents,
never an a2a-sdk view of them: the SDK turns the published bearer declaration into
an empty requirement. Every finding is a ``RuleResult`` under one of the ids in
``RULES``; a rule that holds gets one 'pass' result, a broken MUST rule one 'fail'
per problem, a broken SHOULD rule one 'warn' per problem.

Choices:

- The rule set is picked by the exact v0.1 extension URI. A near miss (other case,
  http, trailing slash) is a v0.1 card that fails ``card.extension``. A later AAP URI
  (``…/v0.2``, ``…/v1.0``, ``…/aap/v1.1``) reports that version, skips every rule and
  says this checker covers v0.1 only. No AAP URI at all: a generic A2A agent,
  ``card.extension`` fails and the rules after it are skipped.
- Checks made elsewhere (``aap.services`` fetching a domain's documents gives
  ``card.fetch`` and ``manifest.fetch``) join a report through ``report_with_results``.
- ``manifest=None`` means the manifest was not supplied: manifest rules are 'skip' and
  do not count, so ``compliant`` covers the card rules and the verdict says
  "manifest not checked". Skips never make a report compliant on their own:
  ``compliant`` also needs a v0.1 extension declaration.
- Paths are JSON-path-like, in each document's own member names (``skills[2].id``,
  ``supportedInterfaces[0]`` in a camelCase card, ``a2a.skills[5].id`` in a
  manifest). The rule id's prefix (``card.`` / ``manifest.``) names the document; a
  document's root is ``(card)`` or ``(manifest)``.
- Shape is judged by the project's schemas in ``aap/schemas/``; card schema findings
  are filed under the rule that owns their path (interfaces under ``card.binding``,
  skills under ``card.skills``, …). ``card.binding`` needs one interface whose binding
  is JSONRPC or HTTP+JSON; other bindings (gRPC) may be listed beside it and are named
  in the pass message, not failed. Interface entries may carry A2A's ``tenant``.
  The manifest schema also pins what v0.1 fixes beyond the published schema: contract
  version 0.1.1 and URI, each skill's schema URLs, lead.submit's anonymity and consent.
"""

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

from a2a.validation import card_naming, card_validate
from registry.jsonutil import Problem, join_path

AAP_V01_EXTENSION_URI = "https://autoagentprotocol.org/extensions/a2a-automotive-retail/v0.1"
AAP_SKILL_IDS = (
    "dealer.information",
    "inventory.facets",
    "inventory.search",
    "inventory.vehicle",
    "lead.submit",
)
AAP_BINDINGS = ("JSONRPC", "HTTP+JSON")
LEGACY_CONTRACT_VERSION = "0.1.0"
LEGACY_SKILL_IDS = ("lead.general", "lead.vehicle", "lead.appointment")

MUST = "MUST"
SHOULD = "SHOULD"
PASS = "pass"
FAIL = "fail"
WARN = "warn"
SKIP = "skip"

RULES: dict[str, str] = {
    "card.a2a": MUST,
    "card.extension": MUST,
    "card.manifest_url": SHOULD,
    "card.skill_vocabulary": SHOULD,
    "card.skills": MUST,
    "card.binding": MUST,
    "card.auth": MUST,
    "manifest.schema": MUST,
    "manifest.auth_type": MUST,
    "manifest.skills": MUST,
    "manifest.endpoint": MUST,
}
CARD_ROOT = "(card)"
MANIFEST_ROOT = "(manifest)"

# Any AAP extension URI; group 1 is its version ("0.1", "1.1", ...).
_AAP_URI = re.compile(
    r"^https?://(?:www\.)?autoagentprotocol\.org/extensions/[^/]+/v(\d+(?:\.\d+)*)/?$",
    re.IGNORECASE,
)
_SCHEMA_DIR = Path(__file__).with_name("schemas")
# camelCase member names the card schema knows, renamed to their snake_case spelling.
_CARD_MEMBERS = (
    "supported_interfaces",
    "protocol_binding",
    "protocol_version",
    "documentation_url",
    "icon_url",
    "default_input_modes",
    "default_output_modes",
    "security_schemes",
    "security_requirements",
    "push_notifications",
    "extended_agent_card",
    "input_modes",
    "output_modes",
)
# Members whose keys are chosen by the publisher (scheme names, extension params).
_OPAQUE_MEMBERS = {"params", "security_schemes", "security_requirements"}


@dataclass(frozen=True)
class RuleResult:
    rule: str
    level: str  # MUST or SHOULD
    status: str  # pass, fail, warn or skip
    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class AAPReport:
    compliant: bool
    aap_version: str | None
    verdict: str
    is_dealer_agent: bool
    implemented_skills: list[str] = field(default_factory=list)
    results: list[RuleResult] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "compliant": self.compliant,
            "aapVersion": self.aap_version,
            "verdict": self.verdict,
            "isDealerAgent": self.is_dealer_agent,
            "implementedSkills": list(self.implemented_skills),
            "results": [result.as_dict() for result in self.results],
        }

    def failed_rules(self) -> list[str]:
        """Ids of the MUST rules that fail, in rule order."""
        return list(dict.fromkeys(r.rule for r in self.results if r.status == FAIL))

    def warned_rules(self) -> list[str]:
        return list(dict.fromkeys(r.rule for r in self.results if r.status == WARN))


# --- reading cards in either spelling -------------------------------------------------


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


_SNAKE_OF = {_camel(name): name for name in _CARD_MEMBERS}


class _Card:
    """A decoded card read under snake_case or camelCase member names."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.snake = card_naming(doc) == "snake_case"

    def key(self, obj: Any, name: str) -> str:
        """The member's key as written in ``obj``, else as this card would spell it."""
        camel = _camel(name)
        if isinstance(obj, dict):
            if name in obj:
                return name
            if camel in obj:
                return camel
        return name if self.snake else camel

    def get(self, obj: Any, name: str) -> tuple[str, Any]:
        key = self.key(obj, name)
        return key, obj.get(key) if isinstance(obj, dict) else None


@dataclass(frozen=True)
class _Declaration:
    """What the card's extension list says about AAP."""

    kind: str  # "v0.1", "near" (near-miss v0.1 URI), "other" (another AAP version), "none"
    version: str | None = None
    index: int | None = None
    uri: str | None = None


def _declaration(card: _Card) -> _Declaration:
    _, capabilities = card.get(card.doc, "capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    if not isinstance(extensions, list):
        return _Declaration("none")
    uris = [
        (index, entry["uri"])
        for index, entry in enumerate(extensions)
        if isinstance(entry, dict) and isinstance(entry.get("uri"), str)
    ]
    for index, uri in uris:
        if uri == AAP_V01_EXTENSION_URI:
            return _Declaration("v0.1", "0.1", index, uri)
    for index, uri in uris:
        match = _AAP_URI.match(uri.strip())
        if match:
            kind = "near" if match.group(1) == "0.1" else "other"
            return _Declaration(kind, match.group(1), index, uri)
    return _Declaration("none")


def _skill_ids(card: _Card) -> list[str]:
    """AAP skill ids the card's ``skills[]`` declares, in card order, once each."""
    skills = card.doc.get("skills")
    if not isinstance(skills, list):
        return []
    ids = [s.get("id") for s in skills if isinstance(s, dict)]
    return list(dict.fromkeys(i for i in ids if i in AAP_SKILL_IDS))


def aap_card_summary(card: Any) -> dict[str, Any]:
    """Dealer-agent status of a card without validating it: for storing beside the card."""
    if not isinstance(card, dict):
        return {"isDealerAgent": False, "aapVersion": None, "implementedSkills": []}
    view = _Card(card)
    declaration = _declaration(view)
    dealer = declaration.kind != "none"
    return {
        "isDealerAgent": dealer,
        "aapVersion": declaration.version,
        "implementedSkills": _skill_ids(view) if dealer else [],
    }


def aap_manifest_url(card: Any) -> str | None:
    """The ``manifest_url`` param of the card's AAP extension, if it gives one."""
    if not isinstance(card, dict):
        return None
    view = _Card(card)
    declaration = _declaration(view)
    if declaration.index is None:
        return None
    _, capabilities = view.get(card, "capabilities")
    params = capabilities["extensions"][declaration.index].get("params")
    url = params.get("manifest_url") if isinstance(params, dict) else None
    return url.strip() if isinstance(url, str) and url.strip() else None


# --- schemas --------------------------------------------------------------------------

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


def _format_checker() -> FormatChecker:
    checker = FormatChecker()
    checker.checks("uri")(_is_uri)
    return checker


@cache
def _validator(name: str) -> Draft202012Validator:
    schema = json.loads((_SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return Draft202012Validator(schema, format_checker=_format_checker())


def card_schema_validator() -> Draft202012Validator:
    return _validator("agent-card.schema.json")


def manifest_schema_validator() -> Draft202012Validator:
    return _validator("contract-manifest.schema.json")


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


_ARTICLE = {"object": "an object", "array": "an array", "integer": "an integer"}


def _schema_message(error: ValidationError) -> str:
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "const":
        return f"must be {_show(expected)}, not {_show(instance)}"
    if kind == "enum":
        return f"{_show(instance)} is not one of {', '.join(_show(v) for v in expected)}"
    if kind == "type":
        names = expected if isinstance(expected, list) else [expected]
        return "must be " + " or ".join(_ARTICLE.get(n, f"a {n}") for n in names)
    if kind == "format":
        if expected == "uri":
            return f"{_show(instance)} is not an absolute URI"
        return f"{_show(instance)} is not a valid {expected}"
    if kind == "minItems":
        return f"must have at least {expected} item{'s' if expected != 1 else ''}"
    return error.message


def _expand(error: ValidationError) -> list[tuple[list[str | int], str]]:
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


def _path_key(parts: list[str | int]) -> tuple:
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in parts)


def _dotted(parts: Iterable[str | int], root: str) -> str:
    path = ""
    for part in parts:
        path = join_path(path, part)
    return path or root


# --- card rules -----------------------------------------------------------------------


def _snake_view(value: Any) -> Any:
    """The card with camelCase member names renamed for the snake_case card schema."""
    if isinstance(value, list):
        return [_snake_view(item) for item in value]
    if not isinstance(value, dict):
        return value
    renamed = {}
    for key, member in value.items():
        name = _SNAKE_OF.get(key, key)
        renamed[name] = member if name in _OPAQUE_MEMBERS else _snake_view(member)
    return renamed


def _card_path(card: _Card, parts: list[str | int]) -> str:
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
    return _dotted(spelled, CARD_ROOT)


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


def _card_schema_findings(card: _Card, aap_index: int | None) -> dict[str, list[Problem]]:
    findings: dict[str, list[Problem]] = {}
    for error in card_schema_validator().iter_errors(_snake_view(card.doc)):
        # The explicit checks say more than "contains" can (which URI, which skills).
        if error.validator == "contains":
            continue
        for parts, message in _expand(error):
            rule = _card_schema_rule(parts, aap_index)
            findings.setdefault(rule, []).append(Problem(_card_path(card, parts), message))
    return findings


def _outcome(rule: str, problems: list[Problem], passed: Problem) -> list[RuleResult]:
    """The results of one rule: one pass, or one fail/warn per problem."""
    level = RULES[rule]
    if not problems:
        return [RuleResult(rule, level, PASS, passed.path, passed.message)]
    status = FAIL if level == MUST else WARN
    return [RuleResult(rule, level, status, p.path, p.message) for p in problems]


def _skipped(rules: Iterable[str], path: str, message: str) -> list[RuleResult]:
    return [RuleResult(rule, RULES[rule], SKIP, path, message) for rule in rules]


def _merge(explicit: list[Problem], schema: list[Problem]) -> list[Problem]:
    """Explicit problems, then schema findings at paths the explicit ones do not cover."""
    covered = {p.path for p in explicit}
    return explicit + [p for p in dict.fromkeys(schema) if p.path not in covered]


def _https_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string holding an absolute https URL"
    try:
        parts = urlsplit(value)
    except ValueError:
        return f"{_show(value)} is not a URL"
    if parts.scheme != "https" or not parts.netloc:
        return f"{_show(value)} should be an absolute https URL"
    return None


class _CardChecks:
    """The card rules for a card that declares AAP v0.1 (or nearly does)."""

    def __init__(self, card: _Card, declaration: _Declaration):
        self.card = card
        self.declaration = declaration
        _, capabilities = card.get(card.doc, "capabilities")
        self.extension = capabilities["extensions"][declaration.index]
        self.extension_path = f"capabilities.extensions[{declaration.index}]"
        self.params = self.extension.get("params")
        self.params_path = f"{self.extension_path}.params"
        self.schema = _card_schema_findings(card, declaration.index)
        self.auth_mode: str | None = None
        self.interfaces: list[tuple[str, str]] = []

    def found(self, rule: str) -> list[Problem]:
        return self.schema.get(rule, [])

    def extension_rule(self) -> list[RuleResult]:
        path = f"{self.extension_path}.uri"
        problems = []
        if self.declaration.kind == "near":
            problems.append(
                Problem(
                    path,
                    f"{_show(self.declaration.uri)} is not exactly the AAP v0.1 extension URI "
                    f"{AAP_V01_EXTENSION_URI}",
                )
            )
        passed = Problem(path, "declares the AAP v0.1 extension")
        return _outcome("card.extension", _merge(problems, self.found("card.extension")), passed)

    def manifest_url_rule(self) -> list[RuleResult]:
        path = f"{self.params_path}.manifest_url"
        problems = []
        if not isinstance(self.params, dict):
            problems.append(Problem(self.params_path, "is missing; it should give manifest_url"))
        elif "manifest_url" not in self.params:
            problems.append(Problem(path, "is missing; it should be the manifest's https URL"))
        else:
            problem = _https_problem(self.params["manifest_url"])
            if problem:
                problems.append(Problem(path, problem))
        passed = Problem(path, "points at the contract manifest")
        return _outcome(
            "card.manifest_url", _merge(problems, self.found("card.manifest_url")), passed
        )

    def vocabulary_rule(self) -> list[RuleResult]:
        params = self.params if isinstance(self.params, dict) else {}
        problems = []
        path = f"{self.params_path}.aap_skill_ids"
        declared = params.get("aap_skill_ids")
        if declared is None:
            problems.append(Problem(path, "is missing; it should list the five v0.1 skill ids"))
        elif not isinstance(declared, list) or sorted(map(str, declared)) != sorted(AAP_SKILL_IDS):
            problems.append(
                Problem(path, f"should be the five v0.1 skill ids: {', '.join(AAP_SKILL_IDS)}")
            )
        path = f"{self.params_path}.implemented_skills"
        implemented = params.get("implemented_skills")
        if implemented is None:
            problems.append(Problem(path, "is missing; it should list the AAP skills implemented"))
        elif not isinstance(implemented, list):
            problems.append(Problem(path, "should be an array of v0.1 skill ids"))
        else:
            for index, skill_id in enumerate(implemented):
                if skill_id not in AAP_SKILL_IDS:
                    problems.append(
                        Problem(f"{path}[{index}]", f"{_show(skill_id)} is not a v0.1 skill id")
                    )
        passed = Problem(self.params_path, "declares the v0.1 skill vocabulary")
        return _outcome(
            "card.skill_vocabulary", _merge(problems, self.found("card.skill_vocabulary")), passed
        )

    def skills_rule(self) -> list[RuleResult]:
        skills = self.card.doc.get("skills")
        problems = []
        if not isinstance(skills, list):
            message = "is required" if skills is None else "must be an array"
            problems.append(Problem("skills", message))
            skills = []
        seen: dict[str, int] = {}
        for index, skill in enumerate(skills):
            skill_id = skill.get("id") if isinstance(skill, dict) else None
            if not isinstance(skill_id, str):
                continue
            if skill_id in seen:
                problems.append(
                    Problem(
                        f"skills[{index}].id",
                        f"duplicate skill id {_show(skill_id)} (also skills[{seen[skill_id]}])",
                    )
                )
            else:
                seen[skill_id] = index
        aap_ids = _skill_ids(self.card)
        if not aap_ids and isinstance(self.card.doc.get("skills"), list):
            problems.append(
                Problem(
                    "skills",
                    f"lists no AAP skill; expected one or more of: {', '.join(AAP_SKILL_IDS)}",
                )
            )
        implemented = (
            self.params.get("implemented_skills") if isinstance(self.params, dict) else None
        )
        if isinstance(implemented, list) and aap_ids:
            listed = {s for s in implemented if s in AAP_SKILL_IDS}
            unlisted = [s for s in aap_ids if s not in listed]
            undeclared = [s for s in AAP_SKILL_IDS if s in listed and s not in aap_ids]
            clauses = []
            if undeclared:
                clauses.append(f"lists {', '.join(undeclared)}, which skills[] does not declare")
            if unlisted:
                clauses.append(f"omits {', '.join(unlisted)}, which skills[] declares")
            if clauses:
                problems.append(
                    Problem(f"{self.params_path}.implemented_skills", "; ".join(clauses))
                )
        passed = Problem("skills", f"declares AAP skills {', '.join(aap_ids)}")
        return _outcome("card.skills", _merge(problems, self.found("card.skills")), passed)

    def binding_rule(self) -> list[RuleResult]:
        key, interfaces = self.card.get(self.card.doc, "supported_interfaces")
        problems = []
        if not isinstance(interfaces, list) or not interfaces:
            message = "is required" if interfaces is None else "must be a non-empty array"
            problems.append(Problem(key, message))
            interfaces = []
        usable: int | None = None
        others: list[str] = []
        for index, interface in enumerate(interfaces):
            if not isinstance(interface, dict):
                continue
            _, binding = self.card.get(interface, "protocol_binding")
            if binding in AAP_BINDINGS:
                self.interfaces.append((interface.get("url"), binding))
                usable = index if usable is None else usable
            elif isinstance(binding, str):
                others.append(f"{binding} ({key}[{index}])")
        if interfaces and usable is None:
            problems.insert(
                0,
                Problem(
                    key,
                    "has no interface with binding JSONRPC or HTTP+JSON"
                    + (f"; it lists only {', '.join(others)}" if others else ""),
                ),
            )
        if usable is None:
            passed = Problem(key, "has a JSONRPC or HTTP+JSON interface")
        else:
            first = interfaces[usable]
            message = f"{first.get('url')} speaks {self.card.get(first, 'protocol_binding')[1]}"
            if others:
                message += f"; also lists {', '.join(others)}, which AAP v0.1 clients do not use"
            passed = Problem(f"{key}[{usable}]", message)
        return _outcome("card.binding", _merge(problems, self.found("card.binding")), passed)

    def auth_rule(self) -> list[RuleResult]:
        schemes_key, schemes = self.card.get(self.card.doc, "security_schemes")
        requirements_key, requirements = self.card.get(self.card.doc, "security_requirements")
        problems = []
        if schemes is None:
            schemes = {}
        elif not isinstance(schemes, dict):
            problems.append(Problem(schemes_key, "must be an object"))
            schemes = {}
        if requirements is None:
            requirements = []
        elif not isinstance(requirements, list):
            problems.append(Problem(requirements_key, "must be an array"))
            requirements = []
        for name in schemes:
            if name != "bearer":
                problems.append(
                    Problem(
                        join_path(schemes_key, name),
                        f"scheme {_show(name)} is not an AAP v0.1 mode "
                        '(public, or one scheme named "bearer")',
                    )
                )
        referenced = False
        for index, requirement in enumerate(requirements):
            path = join_path(requirements_key, index)
            if not isinstance(requirement, dict):
                problems.append(Problem(path, "must be an object"))
                continue
            names: Any = requirement
            if isinstance(requirement.get("schemes"), dict):  # A2A 1.0 {"schemes": {...}}
                path, names = join_path(path, "schemes"), requirement["schemes"]
            if not names:
                problems.append(
                    Problem(
                        path,
                        "names no scheme, which would allow anonymous calls "
                        "beside bearer; v0.1 has no such mode",
                    )
                )
            for name in names:
                if name == "bearer":
                    referenced = True
                else:
                    problems.append(
                        Problem(
                            join_path(path, name),
                            f"references {_show(name)}; bearer is the only v0.1 scheme",
                        )
                    )
        has_bearer = "bearer" in schemes
        if has_bearer and not referenced:
            problems.append(
                Problem(
                    requirements_key,
                    "references no bearer scheme although security_schemes declares one: "
                    "neither public nor bearer",
                )
            )
        if referenced and not has_bearer:
            problems.append(
                Problem(
                    schemes_key,
                    "has no bearer scheme although security_requirements references one: "
                    "neither public nor bearer",
                )
            )
        problems = _merge(problems, self.found("card.auth"))
        if not problems:
            self.auth_mode = "bearer" if has_bearer else "public"
        message = (
            "bearer: security_schemes.bearer, required by security_requirements"
            if has_bearer
            else "public: no security requirements and no bearer scheme"
        )
        return _outcome("card.auth", problems, Problem(requirements_key, message))


# --- manifest rules -------------------------------------------------------------------


def _manifest_schema_rule(manifest: dict) -> tuple[list[RuleResult], bool]:
    """manifest.schema results, and whether the manifest is a legacy 0.1.0 one."""
    contract = manifest.get("contract")
    legacy = isinstance(contract, dict) and contract.get("version") == LEGACY_CONTRACT_VERSION
    problems = []
    for parts, message in sorted(
        (
            found
            for error in manifest_schema_validator().iter_errors(manifest)
            for found in _expand(error)
        ),
        key=lambda found: (_path_key(found[0]), found[1]),
    ):
        path = _dotted(parts, MANIFEST_ROOT)
        if legacy and path == "contract.version":
            message = (
                "legacy 0.1.0 manifest: the v0.1 contract is now 0.1.1, with lead.submit "
                "replacing lead.general, lead.vehicle and lead.appointment"
            )
        elif legacy and message.startswith(tuple(_show(s) for s in LEGACY_SKILL_IDS)):
            message = message.split(" ", 1)[0] + " is a legacy 0.1.0 skill id; use lead.submit"
        problems.append(Problem(path, message))
    passed = Problem(MANIFEST_ROOT, "matches the AAP v0.1 (0.1.1) contract manifest schema")
    return _outcome("manifest.schema", problems, passed), legacy


def _manifest_auth_rule(manifest: dict, auth_mode: str | None) -> list[RuleResult]:
    rule = "manifest.auth_type"
    if auth_mode is None:
        return _skipped(
            [rule],
            "auth_type",
            "the card's auth declaration is not a v0.1 mode "
            "(see card.auth), so there is nothing to compare",
        )
    expected = None if auth_mode == "public" else "bearer"
    problems = []
    if "auth_type" not in manifest:
        problems.append(
            Problem("auth_type", f"is missing; the {auth_mode} card needs {_show(expected)}")
        )
    elif manifest["auth_type"] != expected:
        problems.append(
            Problem(
                "auth_type",
                f"is {_show(manifest['auth_type'])} but the card is "
                f"{auth_mode}, which needs {_show(expected)}",
            )
        )
    passed = Problem("auth_type", f"{_show(expected)} agrees with the {auth_mode} card")
    return _outcome(rule, problems, passed)


def _manifest_a2a(manifest: dict) -> dict:
    a2a = manifest.get("a2a")
    return a2a if isinstance(a2a, dict) else {}


def _manifest_skills_rule(manifest: dict, card_skills: list[str]) -> list[RuleResult]:
    rule = "manifest.skills"
    skills = _manifest_a2a(manifest).get("skills")
    if not isinstance(skills, list):
        return _skipped([rule], "a2a.skills", "a2a.skills is not an array (see manifest.schema)")
    problems = []
    seen: dict[str, int] = {}
    for index, skill in enumerate(skills):
        skill_id = skill.get("id") if isinstance(skill, dict) else None
        if not isinstance(skill_id, str):
            continue  # manifest.schema reports it
        path = f"a2a.skills[{index}].id"
        if skill_id in seen:
            problems.append(
                Problem(
                    path, f"{_show(skill_id)} is listed twice (also a2a.skills[{seen[skill_id]}])"
                )
            )
            continue
        seen[skill_id] = index
        if skill_id not in card_skills:
            problems.append(
                Problem(path, f"{_show(skill_id)} is not an AAP skill the card implements")
            )
    missing = [s for s in card_skills if s not in seen]
    if missing:
        problems.append(
            Problem("a2a.skills", f"omits {', '.join(missing)}, which the card implements")
        )
    passed = Problem("a2a.skills", "lists exactly the AAP skills the card implements")
    return _outcome(rule, problems, passed)


def _manifest_endpoint_rule(manifest: dict, interfaces: list[tuple[str, str]]) -> list[RuleResult]:
    rule = "manifest.endpoint"
    a2a = _manifest_a2a(manifest)
    endpoint, binding = a2a.get("endpoint"), a2a.get("protocol_binding")
    if not isinstance(endpoint, str) or not isinstance(binding, str):
        return _skipped(
            [rule],
            "a2a.endpoint",
            "a2a.endpoint or a2a.protocol_binding is missing (see manifest.schema)",
        )
    problems = []
    if (endpoint, binding) not in interfaces:
        problems.append(
            Problem(
                "a2a.endpoint",
                f"{endpoint} over {binding} is not among the card's supported interfaces",
            )
        )
    passed = Problem("a2a.endpoint", f"{endpoint} over {binding} is a card interface")
    return _outcome(rule, problems, passed)


# --- the check ------------------------------------------------------------------------

_CARD_RULES_AFTER_EXTENSION = (
    "card.manifest_url",
    "card.skill_vocabulary",
    "card.skills",
    "card.binding",
    "card.auth",
)
_MANIFEST_RULES = ("manifest.schema", "manifest.auth_type", "manifest.skills", "manifest.endpoint")


def _plural(count: int, noun: str, verb: str = "") -> str:
    words = f"{count} {noun}{'' if count == 1 else 's'}"
    if verb:
        words += f" {verb}{'s' if count == 1 else ''}"
    return words


def aap_check(card: Any, manifest: Any | None = None) -> AAPReport:
    """Check a decoded card, and its decoded contract manifest if given, against AAP v0.1."""
    if not isinstance(card, dict):
        results = [RuleResult("card.a2a", MUST, FAIL, CARD_ROOT, "the card must be a JSON object")]
        reason = "not checked: the card is not a JSON object"
        results += _skipped(["card.extension", *_CARD_RULES_AFTER_EXTENSION], CARD_ROOT, reason)
        results += _skipped(_MANIFEST_RULES, MANIFEST_ROOT, reason)
        return AAPReport(
            False, None, "Not compliant: the card is not a JSON object", False, [], results
        )

    view = _Card(card)
    a2a_report = card_validate(card)
    declaration = _declaration(view)
    a2a_problems = list(a2a_report.errors)

    if declaration.kind in {"none", "other"}:
        results = _outcome(
            "card.a2a",
            a2a_problems,
            Problem(CARD_ROOT, f"a valid A2A {a2a_report.spec_version} card"),
        )
        if declaration.kind == "none":
            extensions_path = f"{view.key(card, 'capabilities')}.extensions"
            results.append(
                RuleResult(
                    "card.extension",
                    MUST,
                    FAIL,
                    extensions_path,
                    f"has no AAP extension ({AAP_V01_EXTENSION_URI})",
                )
            )
            reason = "not an AAP dealer agent"
            verdict = (
                "A generic A2A agent, not an AAP dealer agent"
                if a2a_report.ok
                else "Not an AAP dealer agent, and not a valid A2A card"
            )
        else:
            reason = f"declares AAP v{declaration.version}; this checker covers v0.1 only"
            results += _skipped(
                ["card.extension"],
                f"capabilities.extensions[{declaration.index}].uri",
                f"{declaration.uri} is the AAP v{declaration.version} extension; "
                "this checker covers v0.1 only",
            )
            verdict = f"Declares AAP v{declaration.version}; this checker covers AAP v0.1 only"
        results += _skipped(_CARD_RULES_AFTER_EXTENSION, CARD_ROOT, f"not checked: {reason}")
        results += _skipped(_MANIFEST_RULES, MANIFEST_ROOT, f"not checked: {reason}")
        return AAPReport(
            compliant=False,
            aap_version=declaration.version,
            verdict=verdict,
            is_dealer_agent=declaration.kind == "other",
            implemented_skills=_skill_ids(view) if declaration.kind == "other" else [],
            results=results,
        )

    checks = _CardChecks(view, declaration)
    results = _outcome(
        "card.a2a",
        _merge(a2a_problems, checks.found("card.a2a")),
        Problem(CARD_ROOT, f"a valid A2A {a2a_report.spec_version} card"),
    )
    results += checks.extension_rule()
    results += checks.manifest_url_rule()
    results += checks.vocabulary_rule()
    results += checks.skills_rule()
    results += checks.binding_rule()
    results += checks.auth_rule()

    legacy = False
    if manifest is None:
        results += _skipped(_MANIFEST_RULES, MANIFEST_ROOT, "not checked: manifest not supplied")
    elif not isinstance(manifest, dict):
        results.append(
            RuleResult(
                "manifest.schema", MUST, FAIL, MANIFEST_ROOT, "the manifest must be a JSON object"
            )
        )
        results += _skipped(
            _MANIFEST_RULES[1:], MANIFEST_ROOT, "not checked: the manifest is not a JSON object"
        )
    else:
        schema_results, legacy = _manifest_schema_rule(manifest)
        results += schema_results
        results += _manifest_auth_rule(manifest, checks.auth_mode)
        results += _manifest_skills_rule(manifest, _skill_ids(view))
        results += _manifest_endpoint_rule(manifest, checks.interfaces)

    report = AAPReport(
        compliant=False,
        aap_version="0.1",
        verdict="",
        is_dealer_agent=True,
        implemented_skills=_skill_ids(view),
        results=results,
    )
    failed, warned = report.failed_rules(), report.warned_rules()
    report.compliant = not failed
    if failed:
        report.verdict = f"Not compliant: {_plural(len(failed), 'MUST rule', 'fail')}"
        if legacy:
            report.verdict += "; the manifest is legacy 0.1.0"
    else:
        report.verdict = (
            "AAP v0.1 compliant"
            if manifest is not None
            else "AAP v0.1 card rules pass; manifest not checked"
        )
        if warned:
            report.verdict += f", with {_plural(len(warned), 'SHOULD warning')}"
    return report


def report_with_results(report: AAPReport, results: Iterable[RuleResult]) -> AAPReport:
    """``report`` with the results of checks made outside ``aap_check``, such as fetches.

    Each extra result goes before the first result about the same document (``card.``,
    ``manifest.``). A failing one makes the report non-compliant, and the verdict then
    counts the failing MUST rules again.
    """
    extra = list(results)
    merged = list(report.results)
    for result in extra:
        document = result.rule.split(".", 1)[0] + "."
        at = next(
            (i for i, r in enumerate(merged) if r.rule.startswith(document) and r not in extra),
            len(merged),
        )
        merged.insert(at, result)
    combined = AAPReport(
        compliant=report.compliant,
        aap_version=report.aap_version,
        verdict=report.verdict,
        is_dealer_agent=report.is_dealer_agent,
        implemented_skills=list(report.implemented_skills),
        results=merged,
    )
    if any(r.status == FAIL for r in extra):
        combined.compliant = False
        failed = combined.failed_rules()
        combined.verdict = f"Not compliant: {_plural(len(failed), 'MUST rule', 'fail')}"
    return combined


STATUS_MARKS = {PASS: "✔", FAIL: "✘", WARN: "!", SKIP: "\u2013"}  # en dash


def report_as_text(report: AAPReport) -> str:
    """The report as a checklist, one line per result, for terminals and logs."""
    width = max(len(rule) for rule in [*RULES, *(r.rule for r in report.results)])
    lines = [
        f"{STATUS_MARKS[r.status]} {r.rule:<{width}}  {r.level:<6}  {r.path}: {r.message}"
        for r in report.results
    ]
    skills = ", ".join(report.implemented_skills) or "none"
    lines.append("")
    lines.append(
        f"AAP version: {report.aap_version or 'none'} · dealer agent: "
        f"{'yes' if report.is_dealer_agent else 'no'} · implemented skills: {skills}"
    )
    lines.append(f"Verdict: {report.verdict}")
    return "\n".join(lines)
