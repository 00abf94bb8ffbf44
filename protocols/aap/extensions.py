"""What the AAP app adds to the core (registry.extensions), registered at start-up."""

from django.conf import settings

from protocols.aap.demo import dealer_demo_load
from protocols.aap.views.panels import aap_badge, aap_panel
from registry import extensions
from registry.agents.models import Agent
from registry.extensions import AgentPanel, Badge, FactKind, Member

FACT_KINDS = [
    FactKind(
        "aap",
        "true: agents that declare AAP (dealer agents, whatever their compliance); "
        "false: all others.",
        filter="present",
    ),
    FactKind(
        "aapCompliant",
        "true: dealer agents whose card passes every AAP v0.1 card MUST rule (the registry "
        "checks cards, not manifests: POST /aap/check with the manifest or the domain gives "
        "the full verdict); false: all others.",
        filter="present",
    ),
    FactKind("aapSkill", "Implements this AAP skill (e.g. lead.submit).", facet=False),
]

AAP_SCHEMA = {
    "type": "object",
    "nullable": True,
    "properties": {
        "dealer": {"type": "boolean"},
        "cardCompliant": {
            "type": "boolean",
            "description": "The card passes every AAP v0.1 card MUST rule. Compliance also "
            "needs the manifest rules, which the registry does not check.",
        },
        "version": {"type": "string", "nullable": True},
        "implementedSkills": {"type": "array", "items": {"type": "string"}},
    },
}


def aap_member(agent: Agent) -> dict | None:
    status = getattr(agent, "aap_status", None)  # select_related (register_related)
    if status is None:
        return None
    return {
        "dealer": status.is_dealer_agent,
        "cardCompliant": status.compliant,
        "version": status.aap_version or None,
        "implementedSkills": list(status.implemented_skills),
    }


def register() -> None:
    for kind in FACT_KINDS:
        extensions.register_fact_kind(kind)
    extensions.register_related("aap_status")
    extensions.register_agent_member(
        Member(
            "aap",
            aap_member,
            AAP_SCHEMA,
            "Auto Agent Protocol status from the agent's card; null without a card.",
        )
    )
    extensions.register_agent_panel(AgentPanel("aap", "aap/agent_panel.html", aap_panel, 30))
    extensions.register_badge(Badge("aap", aap_badge, 40))
    extensions.register_demo_loader("aap", dealer_demo_load)
    extensions.register_urls("protocols.aap.urls")
    extensions.register_schedule(
        "aap-refresh", "aap.tasks.aap_refresh", settings.AAP_REFRESH_INTERVAL_SECONDS
    )
