"""The checks of an A2A card that a2a-sdk's types do not make: interface URLs and
versions, declared security schemes, unique skill ids, field lengths the registry can
store, and the 0.3 card's own rules. Each adds its problems to the walker of
``card_validate`` (protocols/a2a/cards/validation.py)."""

import re
from typing import Any

from a2a.compat.v0_3 import types as v03
from pydantic import ValidationError

from protocols.a2a.cards.formats import MEDIA_TYPE, card_get, url_problem
from protocols.a2a.cards.walker import CardWalker
from registry.agents.models import (
    CAPABILITIES_MAX,
    ENDPOINTS_MAX,
    LIST_MAX_ITEMS,
    TEXT_MAX_CHARS,
    Agent,
    Capability,
    CapabilityTag,
    Endpoint,
)
from registry.http.jsonutil import Problem, join_path

VERSION_PATTERN = re.compile(r"^\d+\.\d+(\.\d+)?$")
# Signatures per card: each may name a key set to fetch (docs/operations/security.md).
SIGNATURES_MAX = 8
# Lists with their own cap (by member name, either spelling); any other list holds at most
# LIST_MAX_ITEMS, and any string at most TEXT_MAX_CHARS characters.
LIST_CAPS = {
    "skills": CAPABILITIES_MAX,
    "supportedInterfaces": ENDPOINTS_MAX,
    "supported_interfaces": ENDPOINTS_MAX,
    "additionalInterfaces": ENDPOINTS_MAX,
    "additional_interfaces": ENDPOINTS_MAX,
    "signatures": SIGNATURES_MAX,
}


def check_interfaces(doc: dict, walker: CardWalker) -> None:
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
            if not VERSION_PATTERN.match(version):
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


def check_security(doc: dict, walker: CardWalker, v1: bool) -> None:
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


def check_skill_ids(doc: dict, walker: CardWalker) -> None:
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


def check_lengths(doc: dict, walker: CardWalker) -> None:
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


def check_sizes(doc: Any, walker: CardWalker, path: str = "", key: str = "") -> None:
    """No string longer, and no list longer, than a real card needs."""
    if isinstance(doc, str):
        if len(doc) > TEXT_MAX_CHARS:
            walker.errors.append(Problem(path, f"must be at most {TEXT_MAX_CHARS} characters"))
    elif isinstance(doc, list):
        cap = LIST_CAPS.get(key, LIST_MAX_ITEMS) if path == key else LIST_MAX_ITEMS
        if len(doc) > cap:
            walker.errors.append(Problem(path, f"must have at most {cap} items"))
            return
        for index, item in enumerate(doc):
            check_sizes(item, walker, join_path(path, index))
    elif isinstance(doc, dict):
        for name, value in doc.items():
            check_sizes(value, walker, join_path(path, str(name)), str(name))


def _listed(value: Any) -> list:
    return value if isinstance(value, list) else []


def check_v03(doc: dict, walker: CardWalker) -> None:
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
    for index, iface in enumerate(_listed(doc.get("additionalInterfaces"))):
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
    for index, mode in enumerate(_listed(doc.get("defaultInputModes"))):
        if isinstance(mode, str) and not MEDIA_TYPE.match(mode):
            walker.errors.append(Problem(f"defaultInputModes[{index}]", "is not a media type"))
    for index, mode in enumerate(_listed(doc.get("defaultOutputModes"))):
        if isinstance(mode, str) and not MEDIA_TYPE.match(mode):
            walker.errors.append(Problem(f"defaultOutputModes[{index}]", "is not a media type"))
