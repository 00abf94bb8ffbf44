"""A2A agent card validation: a2a-sdk's types and parsers, plus the checks they lack.

``card_validate`` returns *every* problem with a path in the card's own field
names (camelCase or snake_case, as written). Errors make a card unacceptable;
warnings are deviations clients tolerate (unknown members, 0.3-style
requirements in a 1.0 card, a scheme of no known type).
"""

import copy
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from google.api.field_behavior_pb2 import FieldBehavior, field_behavior
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.json_format import MessageToDict, ParseError
from pydantic import ValidationError

from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as v03
from a2a.types import AgentCard
from registry.jsonutil import Problem, join_path
from registry.models import Agent, Capability, CapabilityTag, Endpoint

V1 = "1.0"
V03 = "0.3"
HYBRID = "hybrid"

# Top-level members of a 0.3 card; in a 1.0 card they make it a hybrid.
LEGACY_MEMBERS = (
    "url",
    "protocolVersion",
    "preferredTransport",
    "additionalInterfaces",
    "supportsAuthenticatedExtendedCard",
    "security",
)
_SNAKE_HINTS = {
    "supported_interfaces",
    "default_input_modes",
    "default_output_modes",
    "security_schemes",
    "security_requirements",
    "documentation_url",
    "icon_url",
    "protocol_version",
    "preferred_transport",
    "additional_interfaces",
}
# Proto field names whose values are URLs that must be absolute https.
_URL_FIELDS = {
    "url",
    "documentation_url",
    "icon_url",
    "authorization_url",
    "token_url",
    "refresh_url",
    "device_authorization_url",
    "oauth2_metadata_url",
    "open_id_connect_url",
}
# Oneofs that must have exactly one member set (proto allows zero).
_EXACTLY_ONE = {"lf.a2a.v1.SecurityScheme": "scheme", "lf.a2a.v1.OAuthFlows": "flow"}
_MEDIA_TYPE = re.compile(r"^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+*-]+(\s*;.*)?$")
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
_MODE_FIELDS = {"default_input_modes", "default_output_modes", "input_modes", "output_modes"}


@dataclass
class CardReport:
    spec_version: str | None  # "1.0", "0.3", "hybrid"; None: not a card
    naming: str  # "camelCase" or "snake_case"
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def signed(self) -> bool:
        return bool(self.signatures)

    signatures: list[Any] = field(default_factory=list)
    # The card as a2a-sdk reads it (1.0 camelCase), when valid: for mapping and indexing.
    index_view: dict | None = None


def card_get(doc: dict, camel: str, default: Any = None) -> Any:
    """A member read under its camelCase name or its snake_case proto name."""
    if camel in doc:
        return doc[camel]
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()
    return doc.get(snake, default)


def card_classify(doc: dict) -> str | None:
    """1.0, hybrid (1.0 with 0.3 mirrors, as a2a-sdk servers publish) or 0.3."""
    if "supportedInterfaces" in doc or "supported_interfaces" in doc:
        if any(member in doc for member in LEGACY_MEMBERS):
            return HYBRID
        return V1
    if any(m in doc for m in ("url", "protocolVersion", "protocol_version", "preferred_transport")):
        return V03
    return None


def card_naming(doc: dict) -> str:
    return "snake_case" if _SNAKE_HINTS.intersection(doc) else "camelCase"


def _allow_http() -> bool:
    return bool(getattr(settings, "A2A_ALLOW_HTTP_URLS", False))


def url_problem(value: str) -> str | None:
    """Why a card URL is unacceptable, or None."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return "is not a valid URL"
    if not parts.scheme or not parts.netloc:
        return "must be an absolute URL"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and _allow_http():
        return None
    return "must be an https URL"


def _is_required(fd: FieldDescriptor) -> bool:
    return FieldBehavior.REQUIRED in fd.GetOptions().Extensions[field_behavior]


def _is_map(fd: FieldDescriptor) -> bool:
    return fd.message_type is not None and fd.message_type.GetOptions().map_entry


_SCALAR_TYPES: dict[int, tuple[type, ...]] = {
    FieldDescriptor.TYPE_STRING: (str,),
    FieldDescriptor.TYPE_BOOL: (bool,),
}
_TYPE_NAMES = {FieldDescriptor.TYPE_STRING: "a string", FieldDescriptor.TYPE_BOOL: "a boolean"}


class _Walker:
    """Walks a card beside the a2a-sdk AgentCard descriptor, collecting all problems."""

    def __init__(self, snake: bool, hybrid: bool):
        self.snake = snake
        self.hybrid = hybrid
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []

    def key(self, fd: FieldDescriptor) -> str:
        return fd.name if self.snake else fd.json_name

    def message(self, value: Any, desc: Descriptor, path: str) -> None:
        if not isinstance(value, dict):
            self.errors.append(Problem(path or "(card)", "must be an object"))
            return
        by_key: dict[str, FieldDescriptor] = {}
        for fd in desc.fields:
            by_key[fd.json_name] = fd
            by_key[fd.name] = fd
        present: dict[str, str] = {}
        for key, member in value.items():
            fd = by_key.get(key)
            member_path = join_path(path, key)
            if fd is None:
                if not (self.hybrid and ((not path and key in LEGACY_MEMBERS) or _in_scheme(desc))):
                    self.warnings.append(Problem(member_path, "unknown member; kept as published"))
                continue
            if fd.name in present:
                self.errors.append(
                    Problem(member_path, f"given twice, also as '{present[fd.name]}'")
                )
                continue
            present[fd.name] = key
            if member is None:
                continue  # ProtoJSON: null means unset
            self.member(member, fd, member_path)
        for oneof in desc.oneofs:
            if oneof.name.startswith("_"):
                continue  # proto3 optional, not a real choice
            chosen = [
                present[f.name]
                for f in oneof.fields
                if f.name in present and value[present[f.name]] is not None
            ]
            if len(chosen) > 1:
                self.errors.append(
                    Problem(path, f"has {', '.join(chosen)}: only one of them may be given")
                )
            elif not chosen and _EXACTLY_ONE.get(desc.full_name) == oneof.name:
                names = ", ".join(self.key(f) for f in oneof.fields)
                self.warnings.append(
                    Problem(path, f"declares none of {names}; clients cannot use it")
                )
        for fd in desc.fields:
            if not _is_required(fd):
                continue
            key = present.get(fd.name)
            member = value.get(key) if key else None
            # A present message, even {} (AgentCapabilities has no required member), is set;
            # an empty string or list is not.
            empty = member in ("", []) or (member == {} and _is_map(fd))
            if member is None or empty:
                message = (
                    "must have at least one element"
                    if fd.is_repeated and member == []
                    else "is required"
                )
                self.errors.append(Problem(join_path(path, self.key(fd)), message))

    def member(self, value: Any, fd: FieldDescriptor, path: str) -> None:
        if _is_map(fd):
            if not isinstance(value, dict):
                self.errors.append(Problem(path, "must be an object"))
                return
            value_fd = fd.message_type.fields_by_name["value"]
            for key, item in value.items():
                self.single(item, value_fd, join_path(path, key))
            return
        if fd.is_repeated:
            if not isinstance(value, list):
                self.errors.append(Problem(path, "must be an array"))
                return
            for index, item in enumerate(value):
                self.single(item, fd, join_path(path, index))
            return
        self.single(value, fd, path)

    def single(self, value: Any, fd: FieldDescriptor, path: str) -> None:
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            full_name = fd.message_type.full_name
            if full_name == "google.protobuf.Struct":
                if not isinstance(value, dict):
                    self.errors.append(Problem(path, "must be an object"))
                return
            if full_name.startswith("google.protobuf."):
                return
            self.message(value, fd.message_type, path)
            return
        expected = _SCALAR_TYPES.get(fd.type)
        if expected is None:
            return
        if not isinstance(value, expected) or (bool in expected) != isinstance(value, bool):
            self.errors.append(Problem(path, f"must be {_TYPE_NAMES[fd.type]}"))
            return
        if fd.name in _URL_FIELDS and value:
            if fd.name == "url" and fd.containing_type.name == "AgentInterface":
                return  # checked with its binding: gRPC takes host:port
            problem = url_problem(value)
            if problem:
                self.errors.append(Problem(path, problem))
        elif fd.name in _MODE_FIELDS and not _MEDIA_TYPE.match(value):
            self.errors.append(Problem(path, f"'{value}' is not a media type"))


def _in_scheme(desc: Descriptor) -> bool:
    return desc.full_name in {
        "lf.a2a.v1.SecurityScheme",
        "lf.a2a.v1.APIKeySecurityScheme",
        "lf.a2a.v1.HTTPAuthSecurityScheme",
        "lf.a2a.v1.OAuth2SecurityScheme",
        "lf.a2a.v1.OpenIdConnectSecurityScheme",
        "lf.a2a.v1.MutualTlsSecurityScheme",
        "lf.a2a.v1.SecurityRequirement",
    }


def _check_interfaces(doc: dict, walker: _Walker) -> None:
    key = "supported_interfaces" if "supported_interfaces" in doc else "supportedInterfaces"
    interfaces = doc.get(key)
    if not isinstance(interfaces, list):
        return
    for index, iface in enumerate(interfaces):
        if not isinstance(iface, dict):
            continue
        path = join_path(key, index)
        url = iface.get("url")
        binding = card_get(iface, "protocolBinding")
        if isinstance(url, str) and url:
            grpc_authority = binding == "GRPC" and "://" not in url
            problem = None if grpc_authority else url_problem(url)
            if problem:
                walker.errors.append(Problem(join_path(path, "url"), problem))
        version_key = "protocol_version" if "protocol_version" in iface else "protocolVersion"
        version = iface.get(version_key)
        if isinstance(version, str) and version:
            if not _VERSION.match(version):
                walker.errors.append(
                    Problem(join_path(path, version_key), 'must be Major.Minor, like "1.0"')
                )
            elif version.count(".") == 2:
                walker.warnings.append(
                    Problem(join_path(path, version_key), "should be Major.Minor, without patch")
                )


def _requirement_names(requirement: Any) -> list[str] | None:
    """Scheme names of a 1.0 requirement, or of a 0.3-style ``{name: [scopes]}``."""
    if not isinstance(requirement, dict):
        return None
    schemes = requirement.get("schemes")
    if isinstance(schemes, dict):
        return list(schemes)
    return list(requirement)


def _check_security(doc: dict, walker: _Walker, v1: bool) -> None:
    schemes = card_get(doc, "securitySchemes") or {}
    declared = set(schemes) if isinstance(schemes, dict) else set()
    sources: list[tuple[str, Any]] = []
    for camel in ("securityRequirements", "security"):
        key = camel if camel in doc else re.sub(r"([A-Z])", r"_\1", camel).lower()
        if isinstance(doc.get(key), list):
            sources.append((key, doc[key]))
    skills = doc.get("skills")
    if isinstance(skills, list):
        for index, skill in enumerate(skills):
            if not isinstance(skill, dict):
                continue
            for camel in ("securityRequirements", "security"):
                key = camel if camel in skill else re.sub(r"([A-Z])", r"_\1", camel).lower()
                if isinstance(skill.get(key), list):
                    sources.append((f"skills[{index}].{key}", skill[key]))
    for path, requirements in sources:
        for index, requirement in enumerate(requirements):
            names = _requirement_names(requirement)
            if names is None:
                continue
            item_path = join_path(path, index)
            if v1 and not path.endswith("security") and "schemes" not in requirement:
                walker.warnings.append(
                    Problem(
                        item_path,
                        "0.3-style requirement; A2A 1.0 writes "
                        '{"schemes": {"<name>": {"list": [...]}}}',
                    )
                )
            for name in names:
                if name not in declared:
                    walker.errors.append(
                        Problem(join_path(item_path, name), "names a scheme not in securitySchemes")
                    )


def _check_skill_ids(doc: dict, walker: _Walker) -> None:
    skills = doc.get("skills")
    if not isinstance(skills, list):
        return
    seen: dict[str, int] = {}
    for index, skill in enumerate(skills):
        if isinstance(skill, dict) and isinstance(skill.get("id"), str):
            if skill["id"] in seen:
                walker.errors.append(
                    Problem(
                        f"skills[{index}].id",
                        f"duplicate skill id '{skill['id']}' (also skills[{seen[skill['id']]}])",
                    )
                )
            else:
                seen[skill["id"]] = index


def _max_length(model: type, name: str) -> int:
    return model._meta.get_field(name).max_length


def _check_lengths(doc: dict, walker: _Walker) -> None:
    """What the registry stores of a card in columns (registry/models.py) must fit them."""
    address = _max_length(Endpoint, "address")
    skill_id = _max_length(Capability, "external_id")
    skill_name = _max_length(Capability, "name")
    tag_index = _max_length(CapabilityTag, "value")
    checks: list[tuple[str, Any, int]] = [
        ("name", doc.get("name"), _max_length(Agent, "name")),
        ("version", doc.get("version"), _max_length(Agent, "version")),
        ("url", doc.get("url"), address),
    ]
    for camel in ("supportedInterfaces", "additionalInterfaces"):
        key = camel if camel in doc else re.sub(r"([A-Z])", r"_\1", camel).lower()
        interfaces = doc.get(key)
        for index, iface in enumerate(interfaces if isinstance(interfaces, list) else []):
            if isinstance(iface, dict):
                checks.append((f"{key}[{index}].url", iface.get("url"), address))
    skills = doc.get("skills")
    for index, skill in enumerate(skills if isinstance(skills, list) else []):
        if not isinstance(skill, dict):
            continue
        checks.append((f"skills[{index}].id", skill.get("id"), skill_id))
        checks.append((f"skills[{index}].name", skill.get("name"), skill_name))
        tags = skill.get("tags")
        for number, tag in enumerate(tags if isinstance(tags, list) else []):
            # Tags are indexed lower-cased, and "\u0130".lower() is two characters long.
            lowered = tag.lower() if isinstance(tag, str) else None
            checks.append((f"skills[{index}].tags[{number}]", lowered, tag_index))
    for path, value, limit in checks:
        if isinstance(value, str) and len(value) > limit:
            walker.errors.append(Problem(path, f"must be at most {limit} characters"))


def _check_v03(doc: dict, walker: _Walker) -> None:
    try:
        v03.AgentCard.model_validate(doc)
    except ValidationError as exc:
        for error in exc.errors():
            path = ""
            for part in error["loc"]:
                path = join_path(path, part if isinstance(part, int) else str(part))
            walker.errors.append(Problem(path or "(card)", error["msg"]))
    url = doc.get("url")
    if isinstance(url, str) and url_problem(url):
        walker.errors.append(Problem("url", url_problem(url)))
    for index, iface in enumerate(doc.get("additionalInterfaces") or []):
        if isinstance(iface, dict) and isinstance(iface.get("url"), str):
            problem = url_problem(iface["url"])
            if problem and not (iface.get("transport") == "GRPC" and "://" not in iface["url"]):
                walker.errors.append(Problem(f"additionalInterfaces[{index}].url", problem))
    for key in ("documentationUrl", "iconUrl"):
        if isinstance(doc.get(key), str) and url_problem(doc[key]):
            walker.errors.append(Problem(key, url_problem(doc[key])))
    provider = doc.get("provider")
    provider_url = provider.get("url") if isinstance(provider, dict) else None
    if isinstance(provider_url, str) and url_problem(provider_url):
        walker.errors.append(Problem("provider.url", url_problem(provider_url)))
    for index, mode in enumerate(doc.get("defaultInputModes") or []):
        if isinstance(mode, str) and not _MEDIA_TYPE.match(mode):
            walker.errors.append(Problem(f"defaultInputModes[{index}]", "is not a media type"))
    for index, mode in enumerate(doc.get("defaultOutputModes") or []):
        if isinstance(mode, str) and not _MEDIA_TYPE.match(mode):
            walker.errors.append(Problem(f"defaultOutputModes[{index}]", "is not a media type"))


def card_validate(doc: Any) -> CardReport:
    """Validate a decoded A2A agent card (1.0 camelCase or snake_case, 0.3, hybrid)."""
    if not isinstance(doc, dict):
        return CardReport(
            None, "camelCase", [Problem("(card)", "an agent card must be a JSON object")]
        )
    spec_version = card_classify(doc)
    naming = card_naming(doc)
    report = CardReport(spec_version, naming)
    if spec_version is None:
        report.errors.append(
            Problem(
                "supportedInterfaces",
                "is required: this is not an A2A agent card "
                "(no supportedInterfaces for A2A 1.0, no url/protocolVersion for 0.3)",
            )
        )
        return report
    walker = _Walker(snake=naming == "snake_case", hybrid=spec_version == HYBRID)
    if spec_version == V03:
        _check_v03(doc, walker)
        _check_security(doc, walker, v1=False)
    else:
        walker.message(doc, AgentCard.DESCRIPTOR, "")
        _check_interfaces(doc, walker)
        _check_security(doc, walker, v1=True)
        if spec_version == HYBRID and isinstance(doc.get("url"), str):
            problem = url_problem(doc["url"])
            if problem:
                walker.errors.append(Problem("url", problem))
    _check_skill_ids(doc, walker)
    _check_lengths(doc, walker)
    if not walker.errors:
        # The SDK's own parser is the last word: what it cannot read is not accepted.
        try:
            report.index_view = card_index_view(doc)
        except (ParseError, ValueError, TypeError, AttributeError) as exc:
            walker.errors.append(Problem("(card)", f"a2a-sdk cannot parse the card: {exc}"))
    report.errors = _dedupe(walker.errors)
    report.warnings = _dedupe(walker.warnings)
    signatures = doc.get("signatures")
    report.signatures = signatures if isinstance(signatures, list) else []
    return report


def _dedupe(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))


def _single_flow(doc: dict) -> dict:
    """0.3 allowed several OAuth flows per scheme; 1.0 (a oneof) takes one: keep the first."""
    schemes = doc.get("securitySchemes")
    if isinstance(schemes, dict):
        for scheme in schemes.values():
            flows = scheme.get("flows") if isinstance(scheme, dict) else None
            if isinstance(flows, dict) and len(flows) > 1:
                first = next(iter(flows))
                scheme["flows"] = {first: flows[first]}
    return doc


def card_index_view(doc: dict) -> dict:
    """The card as a2a-sdk reads it, in 1.0 camelCase: for indexing, never for serving."""
    working = copy.deepcopy(doc)
    if card_classify(doc) == V03:
        _single_flow(working)
    message = parse_agent_card(working)
    return MessageToDict(message)
