"""The trust score on the pages: a badge with the score that opens the agent page's trust
section, and that section (every signal's value, weight and what was seen), both from the
stored score and signals (no query per agent); a copy's badge, which opens its canonical
copy, and the agent page's list of the other copies of its group."""

from django.db.models import Q

from registry.agents.models import Agent
from registry.trust.scoring import band_of

# The copies an agent page lists at the most.
COPIES_SHOWN = 50


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


def copy_badge(agent: Agent) -> str | None:
    return "Copy" if agent.duplicate_of else None


def copy_href(agent: Agent) -> str | None:
    return f"/browse/agents/{agent.duplicate_of}" if agent.duplicate_of else None


def duplicates_panel(agent: Agent) -> dict | None:
    """The agent's duplicate group: the canonical copy it is a copy of, or its copies."""
    canonical_id = agent.duplicate_of or agent.pk
    group = list(
        Agent.objects.filter(Q(pk=canonical_id) | Q(duplicate_of=canonical_id))
        .exclude(pk=agent.pk)
        .order_by("created_at", "id")
        .values("id", "name", "owner", "duplicate_of")[:COPIES_SHOWN]
    )
    if not group:
        return None
    return {"is_copy": agent.duplicate_of is not None, "others": group}
