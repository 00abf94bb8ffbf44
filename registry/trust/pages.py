"""The trust score on the pages: a badge with the score that opens the agent page's trust
section, and that section (every signal's value, weight and what was seen), both from the
stored score and signals (no query per agent)."""

from registry.agents.models import Agent
from registry.trust.scoring import band_of


def trust_badge(agent: Agent) -> str:
    return f"Trust {agent.trust_score}"


def trust_href(agent: Agent) -> str:
    return f"/browse/agents/{agent.pk}#trust-title"


def _seen(entry: dict) -> str:
    return ", ".join(
        f"{name}: {value}" for name, value in entry.items() if name not in ("value", "weight")
    )


def trust_panel(agent: Agent) -> dict:
    signals = [
        {
            "name": name,
            "value": entry.get("value"),
            "weight": entry.get("weight"),
            "seen": _seen(entry),
        }
        for name, entry in sorted((agent.trust_signals or {}).items())
        if isinstance(entry, dict)
    ]
    return {
        "score": agent.trust_score,
        "band": band_of(agent.trust_score),
        "signals": signals,
        "changed_at": agent.trust_changed_at,
    }
