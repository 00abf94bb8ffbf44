"""The AAP v0.1 rules over a contract manifest (manifest.schema … manifest.endpoint)."""

from protocols.aap.checks.card_rules import outcome, skipped
from protocols.aap.checks.documents import LEGACY_CONTRACT_VERSION, LEGACY_SKILL_IDS
from protocols.aap.checks.report import MANIFEST_ROOT, RuleResult
from protocols.aap.checks.schema_checks import (
    dotted,
    expand,
    manifest_schema_validator,
    path_key,
    show,
)
from registry.http.jsonutil import Problem


def manifest_schema_rule(manifest: dict) -> tuple[list[RuleResult], bool]:
    """manifest.schema results, and whether the manifest is a legacy 0.1.0 one."""
    contract = manifest.get("contract")
    legacy = isinstance(contract, dict) and contract.get("version") == LEGACY_CONTRACT_VERSION
    problems = []
    for parts, message in sorted(
        (
            found
            for error in manifest_schema_validator().iter_errors(manifest)
            for found in expand(error)
        ),
        key=lambda found: (path_key(found[0]), found[1]),
    ):
        path = dotted(parts, MANIFEST_ROOT)
        if legacy and path == "contract.version":
            message = (
                "legacy 0.1.0 manifest: the v0.1 contract is now 0.1.1, with lead.submit "
                "replacing lead.general, lead.vehicle and lead.appointment"
            )
        elif legacy and message.startswith(tuple(show(s) for s in LEGACY_SKILL_IDS)):
            message = message.split(" ", 1)[0] + " is a legacy 0.1.0 skill id; use lead.submit"
        problems.append(Problem(path, message))
    passed = Problem(MANIFEST_ROOT, "matches the AAP v0.1 (0.1.1) contract manifest schema")
    return outcome("manifest.schema", problems, passed), legacy


def manifest_auth_rule(manifest: dict, auth_mode: str | None) -> list[RuleResult]:
    rule = "manifest.auth_type"
    if auth_mode is None:
        return skipped(
            [rule],
            "auth_type",
            "the card's auth declaration is not a v0.1 mode "
            "(see card.auth), so there is nothing to compare",
        )
    expected = None if auth_mode == "public" else "bearer"
    problems = []
    if "auth_type" not in manifest:
        problems.append(
            Problem("auth_type", f"is missing; the {auth_mode} card needs {show(expected)}")
        )
    elif manifest["auth_type"] != expected:
        problems.append(
            Problem(
                "auth_type",
                f"is {show(manifest['auth_type'])} but the card is "
                f"{auth_mode}, which needs {show(expected)}",
            )
        )
    passed = Problem("auth_type", f"{show(expected)} agrees with the {auth_mode} card")
    return outcome(rule, problems, passed)


def _manifest_a2a(manifest: dict) -> dict:
    a2a = manifest.get("a2a")
    return a2a if isinstance(a2a, dict) else {}


def manifest_skills_rule(manifest: dict, card_skills: list[str]) -> list[RuleResult]:
    rule = "manifest.skills"
    skills = _manifest_a2a(manifest).get("skills")
    if not isinstance(skills, list):
        return skipped([rule], "a2a.skills", "a2a.skills is not an array (see manifest.schema)")
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
                    path, f"{show(skill_id)} is listed twice (also a2a.skills[{seen[skill_id]}])"
                )
            )
            continue
        seen[skill_id] = index
        if skill_id not in card_skills:
            problems.append(
                Problem(path, f"{show(skill_id)} is not an AAP skill the card implements")
            )
    missing = [s for s in card_skills if s not in seen]
    if missing:
        problems.append(
            Problem("a2a.skills", f"omits {', '.join(missing)}, which the card implements")
        )
    passed = Problem("a2a.skills", "lists exactly the AAP skills the card implements")
    return outcome(rule, problems, passed)


def manifest_endpoint_rule(manifest: dict, interfaces: list[tuple[str, str]]) -> list[RuleResult]:
    rule = "manifest.endpoint"
    a2a = _manifest_a2a(manifest)
    endpoint, binding = a2a.get("endpoint"), a2a.get("protocol_binding")
    if not isinstance(endpoint, str) or not isinstance(binding, str):
        return skipped(
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
    return outcome(rule, problems, passed)
