"""A2A agent card validation: a2a-sdk's types and parsers, plus the checks they lack.

``card_validate`` returns *every* problem with a path in the card's own field
names (camelCase or snake_case, as written). Errors make a card unacceptable;
warnings are deviations clients tolerate (unknown members, 0.3-style
requirements in a 1.0 card, a scheme of no known type).
"""

from typing import Any

from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard
from google.protobuf.json_format import MessageToDict, ParseError

from protocols.a2a.cards.checks import (
    check_interfaces,
    check_lengths,
    check_security,
    check_sizes,
    check_skill_ids,
    check_v03,
)
from protocols.a2a.cards.formats import (
    HYBRID,
    V03,
    V1_RC,
    CardReport,
    card_classify,
    card_naming,
    rc_view,
    url_problem,
)
from protocols.a2a.cards.walker import CardWalker
from registry.http.jsonutil import Problem


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


def _parse_copy(doc: dict) -> dict:
    """A copy of ``doc`` that ``parse_agent_card`` and ``_single_flow`` may change, deep only
    where they write: the card's top level, its ``capabilities``, each skill and each
    security scheme (their legacy members are popped or renamed in place). Whatever else they
    read stays shared with ``doc``: a whole deep copy was about a tenth of a card's validation.
    ``tests/protocols/a2a/cards/test_validation.py`` holds every dialect's card unchanged by its
    index view."""
    working = dict(doc)
    capabilities = working.get("capabilities")
    if isinstance(capabilities, dict):
        working["capabilities"] = dict(capabilities)
    skills = working.get("skills")
    if isinstance(skills, list):
        working["skills"] = [dict(s) if isinstance(s, dict) else s for s in skills]
    schemes = working.get("securitySchemes")
    if isinstance(schemes, dict):
        working["securitySchemes"] = {
            name: dict(scheme) if isinstance(scheme, dict) else scheme
            for name, scheme in schemes.items()
        }
    return working


def card_index_view(doc: dict) -> dict:
    """The card as a2a-sdk reads it, in 1.0 camelCase: for indexing, never for serving."""
    kind = card_classify(doc)
    if kind == V1_RC:
        working = rc_view(doc)[0]  # (a copy of its own)
    else:
        working = _parse_copy(doc)
        if kind == V03:
            _single_flow(working)
    message = parse_agent_card(working)
    return MessageToDict(message)
