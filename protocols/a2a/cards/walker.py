"""Walks an A2A card beside a2a-sdk's ``AgentCard`` descriptor (types, REQUIRED fields,
oneofs, URLs, media types), collecting every problem with its path; the checks the SDK
lacks (protocols.a2a.cards.checks) report through it. ``card_validate``
(protocols.a2a.cards.validation)
drives it."""

import functools
from typing import Any

from google.api.field_behavior_pb2 import FieldBehavior, field_behavior
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from protocols.a2a.cards.formats import LEGACY_MEMBERS, MEDIA_TYPE, url_problem
from registry.http.jsonutil import Problem, join_path

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


# What the walk asks of each descriptor, worked out once (descriptors never change).


@functools.cache
def _fields_by_key(desc: Descriptor) -> dict[str, FieldDescriptor]:
    """A message's fields by their JSON and proto names."""
    by_key: dict[str, FieldDescriptor] = {}
    for fd in desc.fields:
        by_key[fd.json_name] = fd
        by_key[fd.name] = fd
    return by_key


@functools.cache
def _required(desc: Descriptor) -> tuple[FieldDescriptor, ...]:
    return tuple(
        fd
        for fd in desc.fields
        if FieldBehavior.REQUIRED in fd.GetOptions().Extensions[field_behavior]
    )


@functools.cache
def _choices(desc: Descriptor) -> tuple:
    """A message's oneofs (not proto3's optional, which is no choice)."""
    return tuple(oneof for oneof in desc.oneofs if not oneof.name.startswith("_"))


@functools.cache
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
        by_key = _fields_by_key(desc)
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
        for oneof in _choices(desc):
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
        for fd in _required(desc):
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
