"""What changed between two versions of a card, for its consumers: a JSON Patch (RFC 6902,
the ``jsonpatch`` library) of the stored documents, and a semantic summary over the cards
as a2a-sdk reads them (1.0 names, so a 0.3 card and its 1.0 successor compare).

Each change names the rule that decides whether it breaks a consumer
(docs/guides/publish-an-agent.md):
what a client relied on (a skill, an interface, a mode, a capability, an extension) is
gone or now demands more (a security requirement, a required extension).
"""

import re
from dataclasses import asdict, dataclass
from typing import Any

import jsonpatch

from protocols.a2a.cards.validation import card_index_view

# rule -> (breaking, why): the publishing guide's table of breaking rules is this table.
RULES: dict[str, tuple[bool, str]] = {
    "skill-added": (False, "a new skill breaks no caller"),
    "skill-removed": (True, "callers of the removed skill fail"),
    "skill-described": (False, "name, description, tags and examples are for people"),
    "skill-modes-narrowed": (True, "a client sending or accepting a dropped media type fails"),
    "skill-modes-widened": (False, "more media types break no client"),
    "skill-security-added": (True, "callers without the new credentials are refused"),
    "interface-added": (False, "a new interface breaks no client"),
    "interface-removed": (True, "clients of the removed interface fail"),
    "interface-url-changed": (True, "clients calling the old URL fail"),
    "interface-binding-changed": (True, "clients speaking the old binding fail"),
    "interface-version-changed": (True, "clients of the old protocol version may fail"),
    "security-added": (True, "callers without the new credentials are refused"),
    "security-removed": (False, "fewer requirements break no caller"),
    "modes-narrowed": (True, "a client sending or accepting a dropped media type fails"),
    "modes-widened": (False, "more media types break no client"),
    "extension-added": (False, "an optional extension breaks no client"),
    "required-extension-added": (True, "clients without the extension are refused"),
    "extension-removed": (True, "clients relying on the extension lose it"),
    "capability-withdrawn": (True, "clients using streaming or push notifications fail"),
    "capability-added": (False, "a new capability breaks no client"),
    "version-changed": (False, "the card's version string, for information"),
}


@dataclass(frozen=True)
class Change:
    rule: str
    path: str
    detail: str

    def as_dict(self) -> dict[str, Any]:
        breaking, why = RULES[self.rule]
        return {**asdict(self), "breaking": breaking, "why": why}


def card_patch(old: dict, new: dict) -> list[dict]:
    """The RFC 6902 operations that turn ``old`` into ``new``."""
    return jsonpatch.make_patch(old, new).patch


def major_version(version: str) -> int | None:
    found = re.match(r"\s*v?(\d+)", version or "")
    return int(found.group(1)) if found else None


def major_bumped(old: dict, new: dict) -> bool:
    before, after = (
        major_version(str(old.get("version", ""))),
        major_version(str(new.get("version", ""))),
    )
    return before is not None and after is not None and after > before


def card_summary(old: dict, new: dict) -> dict[str, Any]:
    """The semantic summary of going from ``old`` to ``new``: every change with its rule,
    whether any breaks, and whether the major version went up."""
    changes = card_changes(card_index_view(old), card_index_view(new))
    return {
        "fromVersion": str(old.get("version", "")),
        "toVersion": str(new.get("version", "")),
        "breaking": any(RULES[c.rule][0] for c in changes),
        "majorVersionUp": major_bumped(old, new),
        "changes": [c.as_dict() for c in changes],
    }


def card_changes(old: dict, new: dict) -> list[Change]:
    changes: list[Change] = []
    if old.get("version", "") != new.get("version", ""):
        changes.append(
            Change("version-changed", "version", f"{old.get('version')} -> {new.get('version')}")
        )
    changes += _skills(old.get("skills", []), new.get("skills", []))
    changes += _interfaces(old.get("supportedInterfaces", []), new.get("supportedInterfaces", []))
    changes += _requirements("securityRequirements", old, new, "security")
    for name in ("defaultInputModes", "defaultOutputModes"):
        changes += _modes(name, old.get(name, []), new.get(name, []), "modes")
    changes += _capabilities(old.get("capabilities") or {}, new.get("capabilities") or {})
    return changes


def _skills(old: list[dict], new: list[dict]) -> list[Change]:
    before = {s.get("id"): s for s in old}
    after = {s.get("id"): s for s in new}
    changes = [Change("skill-removed", f"skills[{i}]", i) for i in before if i not in after]
    changes += [Change("skill-added", f"skills[{i}]", i) for i in after if i not in before]
    for skill_id in before.keys() & after.keys():
        was, now = before[skill_id], after[skill_id]
        path = f"skills[{skill_id}]"
        described = [
            k for k in ("name", "description", "tags", "examples") if was.get(k) != now.get(k)
        ]
        if described:
            changes.append(Change("skill-described", path, ", ".join(described)))
        for name in ("inputModes", "outputModes"):
            if name in was or name in now:
                changes += _modes(
                    f"{path}.{name}", was.get(name, []), now.get(name, []), "skill-modes"
                )
        changes += _requirements(f"{path}.securityRequirements", was, now, "skill-security")
    return changes


def _interfaces(old: list[dict], new: list[dict]) -> list[Change]:
    def key(iface: dict) -> tuple[str, str]:
        return iface.get("protocolBinding", ""), iface.get("url", "")

    before, after = [key(i) for i in old], [key(i) for i in new]
    versions_before = {key(i): i.get("protocolVersion", "") for i in old}
    versions_after = {key(i): i.get("protocolVersion", "") for i in new}
    gone = [k for k in before if k not in after]
    fresh = [k for k in after if k not in before]
    changes = []
    for binding, url in gone:
        moved = next((k for k in fresh if k[0] == binding), None)
        if moved is None:
            moved = next((k for k in fresh if k[1] == url), None)
        path = f"supportedInterfaces[{binding} {url}]"
        if moved is None:
            changes.append(Change("interface-removed", path, f"{binding} at {url}"))
            continue
        fresh.remove(moved)
        if moved[0] == binding:
            changes.append(Change("interface-url-changed", path, f"{url} -> {moved[1]}"))
        else:
            changes.append(Change("interface-binding-changed", path, f"{binding} -> {moved[0]}"))
    changes += [
        Change("interface-added", f"supportedInterfaces[{b} {u}]", f"{b} at {u}") for b, u in fresh
    ]
    for kept in set(before) & set(after):
        if versions_before[kept] != versions_after[kept]:
            changes.append(
                Change(
                    "interface-version-changed",
                    f"supportedInterfaces[{kept[0]} {kept[1]}].protocolVersion",
                    f"{versions_before[kept]} -> {versions_after[kept]}",
                )
            )
    return changes


def _requirement_names(doc: dict) -> set[str]:
    return {
        " + ".join(sorted((requirement.get("schemes") or {}).keys()))
        for requirement in doc.get("securityRequirements", [])
    }


def _requirements(path: str, old: dict, new: dict, rule: str) -> list[Change]:
    before, after = _requirement_names(old), _requirement_names(new)
    changes = [Change(f"{rule}-added", path, name) for name in sorted(after - before)]
    if rule == "security":
        changes += [Change("security-removed", path, name) for name in sorted(before - after)]
    return changes


def _modes(path: str, old: list[str], new: list[str], rule: str) -> list[Change]:
    dropped, added = sorted(set(old) - set(new)), sorted(set(new) - set(old))
    changes = []
    if dropped:
        changes.append(Change(f"{rule}-narrowed", path, "dropped " + ", ".join(dropped)))
    if added:
        changes.append(Change(f"{rule}-widened", path, "added " + ", ".join(added)))
    return changes


def _capabilities(old: dict, new: dict) -> list[Change]:
    changes = []
    for flag in ("streaming", "pushNotifications", "extendedAgentCard"):
        was, now = bool(old.get(flag)), bool(new.get(flag))
        if was and not now:
            changes.append(Change("capability-withdrawn", f"capabilities.{flag}", flag))
        elif now and not was:
            changes.append(Change("capability-added", f"capabilities.{flag}", flag))
    before = {e.get("uri"): e for e in old.get("extensions", [])}
    after = {e.get("uri"): e for e in new.get("extensions", [])}
    path = "capabilities.extensions"
    changes += [Change("extension-removed", path, uri) for uri in before if uri not in after]
    for uri, extension in after.items():
        required = bool(extension.get("required"))
        if uri not in before or (required and not before[uri].get("required")):
            changes.append(
                Change("required-extension-added" if required else "extension-added", path, uri)
            )
    return changes
