"""A2A agent card validation: a2a-sdk's types and parsers, plus the checks they lack.

``card_validate`` returns *every* problem with a path in the card's own field
names (camelCase or snake_case, as written). Errors make a card unacceptable;
warnings are deviations clients tolerate (unknown members, 0.3-style
requirements in a 1.0 card, a scheme of no known type).
"""

import copy
from typing import Any

from google.api.field_behavior_pb2 import FieldBehavior, field_behavior
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.json_format import MessageToDict, ParseError

from a2a.card_checks import (
    check_interfaces,
    check_lengths,
    check_security,
    check_sizes,
    check_skill_ids,
    check_v03,
)
from a2a.card_format import (
    HYBRID,
    LEGACY_MEMBERS,
    MEDIA_TYPE,
    V03,
    V1_RC,
    CardReport,
    card_classify,
    card_naming,
    rc_view,
    url_problem,
)
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard
from registry.jsonutil import Problem, join_path

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
_MODE_FIELDS = {"default_input_modes", "default_output_modes", "input_modes", "output_modes"}


def _is_required(fd: FieldDescriptor) -> bool:
    return FieldBehavior.REQUIRED in fd.GetOptions().Extensions[field_behavior]


def _is_map(fd: FieldDescriptor) -> bool:
    return fd.message_type is not None and fd.message_type.GetOptions().map_entry


_SCALAR_TYPES: dict[int, tuple[type, ...]] = {
    FieldDescriptor.TYPE_STRING: (str,),
    FieldDescriptor.TYPE_BOOL: (bool,),
}
_TYPE_NAMES = {FieldDescriptor.TYPE_STRING: "a string", FieldDescriptor.TYPE_BOOL: "a boolean"}


class CardWalker:
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
        elif fd.name in _MODE_FIELDS and not MEDIA_TYPE.match(value):
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
    walker = CardWalker(snake=naming == "snake_case", hybrid=spec_version == HYBRID)
    if spec_version == V03:
        check_v03(doc, walker)
        check_security(doc, walker, v1=False)
    else:
        work, rc_warnings = rc_view(doc) if spec_version == V1_RC else (doc, [])
        walker.message(work, AgentCard.DESCRIPTOR, "")
        check_interfaces(work, walker)
        check_security(work, walker, v1=True)
        if spec_version == V1_RC:
            _rc_problems(doc, walker, rc_warnings)
        if spec_version == HYBRID and isinstance(doc.get("url"), str):
            problem = url_problem(doc["url"])
            if problem:
                walker.errors.append(Problem("url", problem))
    check_skill_ids(doc, walker)
    check_lengths(doc, walker)
    check_sizes(doc, walker)
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


def _rc_problems(doc: dict, walker: CardWalker, rc_warnings: list[Problem]) -> None:
    """A 1.0 RC card's problems in its own names (``transport``), without the absent
    description that the dialect allows; a warning for each RC member."""
    allowed = Problem("description", "is required") if "description" not in doc else None
    renamed = []
    for problem in walker.errors:
        if problem == allowed:
            continue
        head, dot, tail = problem.path.partition(".protocolBinding")
        if (
            dot
            and head.startswith("supportedInterfaces[")
            and "protocolBinding" not in str(_interface_at(doc, head))
        ):
            problem = Problem(f"{head}.transport{tail}", problem.message)
        renamed.append(problem)
    walker.errors = renamed
    walker.warnings.extend(rc_warnings)


def _interface_at(doc: dict, path: str) -> dict:
    try:
        return doc["supportedInterfaces"][int(path.split("[", 1)[1].rstrip("]"))]
    except (KeyError, IndexError, ValueError, TypeError):
        return {}


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
    kind = card_classify(doc)
    if kind == V03:
        _single_flow(working)
    elif kind == V1_RC:
        working = rc_view(working)[0]
    message = parse_agent_card(working)
    return MessageToDict(message)
