"""What the AAP app shows on an agent's page (registry.extensions.AgentPanel)."""

from registry.agents.models import Agent


def aap_panel(agent: Agent) -> dict | None:
    status = getattr(agent, "aap_status", None)  # select_related (register_related)
    if status is None or not (status.is_dealer_agent or status.aap_version):
        return None
    return {"status": status, "report_path": f"/aap/check?agent={agent.pk}"}


def aap_badge(agent: Agent) -> str | None:
    status = getattr(agent, "aap_status", None)  # select_related (register_related)
    if status is None or not status.is_dealer_agent:
        return None
    return "AAP compliant" if status.compliant else "AAP dealer"
