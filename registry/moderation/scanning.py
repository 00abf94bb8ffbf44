"""Admission scanning: every agent written, on every path (native, cards, imports, crawls,
entity cards: each a receiver of ``agent_changed`` away), meets the scanners the registry
ships (``rules``) and those the apps register (``registry.extensions.register_scanner``).
Each finding has a rule, a path, a severity and a verdict: ``block`` refuses the write
(422 ``scan-refused`` listing the findings); ``review`` holds the agent for the moderators
when ``REGISTRY_ADMISSION`` is ``review``, else it is a warning; ``note`` is recorded only.
The findings are kept with the agent's moderation (``Moderation.findings``: what it serves
now), with each card version, and with a change that waits (``PendingChange``), for its
owner and the admins."""

from contextvars import ContextVar
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from registry import extensions
from registry.agents.models import Agent
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.moderation.admission import admission_decide
from registry.moderation.models import Moderation
from registry.moderation.rules import address_hosts, hosts_resolve
from registry.signals import agents_offered, write_batch

# The parts of a write that the scanners read.
SCANNED = frozenset({"name", "description", "capabilities", "endpoints", "owner"})
VERDICTS = ("block", "review", "note")


@dataclass
class Subject:
    """What the scanners read of an agent being written."""

    owner: str
    name: str
    texts: list[tuple[str, str]] = field(default_factory=list)
    addresses: list[tuple[str, str]] = field(default_factory=list)
    # Each endpoint host's addresses, or why it did not resolve: asked once per write.
    resolved: dict[str, list[str] | str] = field(default_factory=dict)


def agent_subject(agent: Agent) -> Subject:
    texts = [("name", agent.name), ("description", agent.description)]
    for i, capability in enumerate(agent.capabilities.all()):
        texts.append((f"capabilities[{i}].name", capability.name))
        if capability.description:
            texts.append((f"capabilities[{i}].description", capability.description))
        texts += [(f"capabilities[{i}].tags[{j}]", tag) for j, tag in enumerate(capability.tags)]
    addresses = [
        (f"endpoints[{i}].address", e.address) for i, e in enumerate(agent.endpoints.all())
    ]
    return Subject(agent.owner, agent.name, [t for t in texts if t[1]], addresses)


def verdicts_set() -> dict[str, str]:
    """``SCAN_VERDICTS`` as {rule: verdict}; a bad entry fails loudly."""
    chosen = {}
    for item in settings.SCAN_VERDICTS:
        rule, _, verdict = item.partition("=")
        if verdict.strip() not in VERDICTS:
            raise ImproperlyConfigured(
                f"SCAN_VERDICTS: {item!r} must be rule=verdict, the verdict one of "
                f"{', '.join(VERDICTS)}"
            )
        chosen[rule.strip()] = verdict.strip()
    return chosen


def subject_scan(subject: Subject) -> list[dict]:
    """Every scanner's findings about the subject, each with its verdict."""
    chosen = verdicts_set()
    findings = []
    for scanner in extensions.scanners.read():
        verdict = chosen.get(scanner.name, scanner.verdict)
        for path, message in scanner.scan(subject):
            findings.append(
                {
                    "rule": scanner.name,
                    "path": path,
                    "severity": scanner.severity,
                    "verdict": verdict,
                    "message": message,
                }
            )
    return findings


def findings_refuse(findings: list[dict]) -> None:
    """422 ``scan-refused`` when a finding's verdict is ``block``, listing them."""
    blocked = [f for f in findings if f["verdict"] == "block"]
    if blocked:
        raise ProblemError(
            422,
            "scan-refused",
            "The registry's scanners refuse this: "
            + "; ".join(f"{f['rule']} at {f['path'] or 'the card'}" for f in blocked)
            + ".",
            [Problem(f["path"], f"{f['rule']}: {f['message']}") for f in blocked],
            findings=blocked,
        )


def findings_store(agent: Agent, findings: list[dict], *, created: bool) -> None:
    """Keep the findings with the agent's moderation (none: nothing is written for a new
    agent, and an earlier scan's findings are cleared)."""
    if findings:
        Moderation.objects.update_or_create(agent=agent, defaults={"findings": findings})
    elif not created:
        Moderation.objects.filter(agent=agent).exclude(findings=[]).update(findings=[])


def findings_of(agent_ids: list) -> dict:
    """{agent id: the scanners' findings of what it serves now}, for those that have any
    (a card's version keeps them: written in the same write, after the scan)."""
    rows = Moderation.objects.filter(agent_id__in=agent_ids).exclude(findings=[])
    return dict(rows.values_list("agent_id", "findings"))


# A bulk write's hosts, resolved at its first scanned agent: (the write's batch, the agents
# whose hosts were asked, the answers).
_ahead: ContextVar[tuple[object, set, dict] | None] = ContextVar("scan_ahead", default=None)


def _hosts_ahead(agent: Agent) -> dict:
    """In a bulk write (the agents it offered, ``registry.signals.agents_offer``): every
    endpoint host of its agents, asked once, side by side, when its first agent is scanned
    (``rules.hosts_resolve``); else nothing (a single write asks its own hosts)."""
    offered, batch = agents_offered(), write_batch()
    if not offered or batch is None or agent.pk not in offered or not settings.SCAN_RESOLVE_HOSTS:
        return {}
    held = _ahead.get()
    if held is None or held[0] is not batch:
        held = (batch, set(), {})
        _ahead.set(held)
    _, asked, answers = held
    if agent.pk not in asked:  # the agents offered since (a write may offer twice)
        fresh = [a for pk, a in offered.items() if pk not in asked]
        addresses = [e.address for a in fresh for e in a.endpoints.all()]
        hosts = {host for _, host in address_hosts(enumerate(addresses))} - answers.keys()
        answers.update(hosts_resolve(hosts))
        asked.update(a.pk for a in fresh)
    return answers


def on_agent_changed(sender, agent: Agent, changed: set, created: bool = False, **kwargs):
    """Scan what a write changed (receiver of ``agent_changed``), refuse it on a ``block``."""
    if not changed & SCANNED or not extensions.scanners:
        return
    subject = agent_subject(agent)
    ahead = _hosts_ahead(agent)
    if ahead:
        subject.resolved.update(
            (host, ahead[host]) for _, host in address_hosts(subject.addresses) if host in ahead
        )
    findings = subject_scan(subject)
    findings_refuse(findings)
    if admission_decide(agent, findings, created=created):
        return  # the write waits for review, undone: nothing of it is kept here
    findings_store(agent, findings, created=created)
