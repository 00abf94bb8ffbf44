"""The text of an agent that semantic search embeds: what it says it does, and what the apps
add about it (``registry.extensions.register_meaning_text``); and how much its vector
weighs (``meaning_weight``)."""

import re

from registry import extensions
from registry.agents.models import Agent, Capability
from registry.agents.selectors import agents_by_id
from registry.signals import dispatch_shared

# A static model averages its words: the name and description count once, each skill once.
MAX_CHARS = 4000
# A text of fewer words than this (a name alone) weighs its share of them: the mean of two
# words is near many queries by chance, and a named agent that says nothing of what it
# does should not come before one that does (bench/RESULTS.md, "Search by meaning").
FULL_WORDS = 8
WORD = re.compile(r"\w+")


def _skill_parts(name: str, description: str, tags) -> list[str]:
    return [name, description, " ".join(t for t in tags if isinstance(t, str))]


def _own_texts(agent_ids: list) -> dict:
    """{agent id: [name, description, each skill's name, description and tags]}, of the
    publicly listed agents only: search by meaning's index holds no other (the lean lane
    takes its hits as discoverable), so an unlisted agent (restricted, held) has no vector
    until it is listed (registry.agents.listing: its write embeds it then)."""
    if dispatch_shared() is not None:  # agents_written's receivers share one read of them
        return {
            pk: [agent.name, agent.description]
            + [
                part
                for c in agent.capabilities.all()
                for part in _skill_parts(c.name, c.description, c.tags)
            ]
            for pk, agent in agents_by_id(agent_ids).items()
            if agent.listed
        }
    listed = Agent.objects.filter(pk__in=agent_ids, listed=True)
    texts = {
        pk: [name, description]
        for pk, name, description in listed.values_list("pk", "name", "description")
    }
    skills = Capability.objects.filter(agent_id__in=list(texts)).order_by("agent_id", "position")
    for agent_id, name, description, tags in skills.values_list(
        "agent_id", "name", "description", "tags"
    ):
        texts[agent_id] += _skill_parts(name, description, tags)
    return texts


def meaning_texts(agent_ids: list) -> dict:
    """{agent id: text} for the agents of ``agent_ids`` that exist and are publicly listed."""
    texts = _own_texts(agent_ids)
    for added in extensions.meaning_texts.read():
        for agent_id, text in added(list(texts)).items():
            if agent_id in texts and text:
                texts[agent_id].append(text)
    return {pk: ". ".join(p for p in parts if p)[:MAX_CHARS] for pk, parts in texts.items()}


def meaning_weight(text: str) -> float:
    """The weight of an agent's vector (registry.semantic.embedder.vector_weighed): 1 for a
    text of FULL_WORDS words or more, less for fewer."""
    return min(1.0, len(WORD.findall(text)) / FULL_WORDS)
