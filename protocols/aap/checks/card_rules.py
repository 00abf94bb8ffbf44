"""The AAP v0.1 rules over an agent card (card.extension … card.auth)."""

from collections.abc import Iterable
from typing import Any

from protocols.aap.checks.documents import (
    AAP_BINDINGS,
    AAP_SKILL_IDS,
    AAP_V01_EXTENSION_URI,
    Card,
    Declaration,
    skill_ids,
)
from protocols.aap.checks.report import FAIL, MUST, PASS, RULES, SKIP, WARN, RuleResult
from protocols.aap.checks.schema_checks import card_schema_findings, show
from registry.http.jsonutil import Problem, join_path
from registry.outbound.hosts import https_url_problem


def outcome(rule: str, problems: list[Problem], passed: Problem) -> list[RuleResult]:
    """The results of one rule: one pass, or one fail/warn per problem."""
    level = RULES[rule]
    if not problems:
        return [RuleResult(rule, level, PASS, passed.path, passed.message)]
    status = FAIL if level == MUST else WARN
    return [RuleResult(rule, level, status, p.path, p.message) for p in problems]


def skipped(rules: Iterable[str], path: str, message: str) -> list[RuleResult]:
    return [RuleResult(rule, RULES[rule], SKIP, path, message) for rule in rules]


def merge(explicit: list[Problem], schema: list[Problem]) -> list[Problem]:
    """Explicit problems, then schema findings at paths the explicit ones do not cover."""
    covered = {p.path for p in explicit}
    return explicit + [p for p in dict.fromkeys(schema) if p.path not in covered]


def _https_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string holding an absolute https URL"
    if https_url_problem(value):
        return f"{show(value)} should be an absolute https URL"
    return None


class CardChecks:
    """The card rules for a card that declares AAP v0.1 (or nearly does)."""

    def __init__(self, card: Card, declaration: Declaration):
        self.card = card
        self.declaration = declaration
        _, capabilities = card.get(card.doc, "capabilities")
        self.extension = capabilities["extensions"][declaration.index]
        self.extension_path = f"capabilities.extensions[{declaration.index}]"
        self.params = self.extension.get("params")
        self.params_path = f"{self.extension_path}.params"
        self.schema = card_schema_findings(card, declaration.index)
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
                    f"{show(self.declaration.uri)} is not exactly the AAP v0.1 extension URI "
                    f"{AAP_V01_EXTENSION_URI}",
                )
            )
        passed = Problem(path, "declares the AAP v0.1 extension")
        return outcome("card.extension", merge(problems, self.found("card.extension")), passed)

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
        return outcome(
            "card.manifest_url", merge(problems, self.found("card.manifest_url")), passed
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
                        Problem(f"{path}[{index}]", f"{show(skill_id)} is not a v0.1 skill id")
                    )
        passed = Problem(self.params_path, "declares the v0.1 skill vocabulary")
        return outcome(
            "card.skill_vocabulary", merge(problems, self.found("card.skill_vocabulary")), passed
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
                        f"duplicate skill id {show(skill_id)} (also skills[{seen[skill_id]}])",
                    )
                )
            else:
                seen[skill_id] = index
        aap_ids = skill_ids(self.card)
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
        return outcome("card.skills", merge(problems, self.found("card.skills")), passed)

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
        return outcome("card.binding", merge(problems, self.found("card.binding")), passed)

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
                        f"scheme {show(name)} is not an AAP v0.1 mode "
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
                            f"references {show(name)}; bearer is the only v0.1 scheme",
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
        problems = merge(problems, self.found("card.auth"))
        if not problems:
            self.auth_mode = "bearer" if has_bearer else "public"
        message = (
            "bearer: security_schemes.bearer, required by security_requirements"
            if has_bearer
            else "public: no security requirements and no bearer scheme"
        )
        return outcome("card.auth", problems, Problem(requirements_key, message))
