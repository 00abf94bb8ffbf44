"""The text of an agent that semantic search embeds: what it says it does, and what the apps
add about it (``registry.extensions.register_meaning_text``)."""

from registry import extensions
from registry.agents.models import Agent, Capability

# A static model averages its words: the name and description count once, each skill once.
MAX_CHARS = 4000


def meaning_texts(agent_ids: list) -> dict:
    """{agent id: text} for the agents of ``agent_ids`` that exist."""
    texts = {
        pk: [name, description]
        for pk, name, description in Agent.objects.filter(pk__in=agent_ids).values_list(
            "pk", "name", "description"
        )
    }
    skills = Capability.objects.filter(agent_id__in=list(texts)).order_by("agent_id", "position")
    for agent_id, name, description, tags in skills.values_list(
        "agent_id", "name", "description", "tags"
    ):
        texts[agent_id] += [name, description, " ".join(t for t in tags if isinstance(t, str))]
    for added in extensions.meaning_texts.read():
        for agent_id, text in added(list(texts)).items():
            if agent_id in texts and text:
                texts[agent_id].append(text)
    return {pk: ". ".join(p for p in parts if p)[:MAX_CHARS] for pk, parts in texts.items()}
