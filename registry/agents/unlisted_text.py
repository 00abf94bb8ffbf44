"""The words of the agents that are not publicly listed, for the callers who may read them
(registry.agents.visibility): a model of its own beside ``models.AgentSearchText``."""

from django.db import models

from registry.agents.models import Agent


class UnlistedSearchText(models.Model):
    """The words of an agent that is not publicly listed (restricted, or held by
    moderation) and not retired: what text search matches for a caller who may read it
    (registry.discovery.search, ``unlisted_searched``), kept at write time as
    ``AgentSearchText`` is for the listed (an agent has one or the other). No index reads
    it: the public reads never look, and a reader's query matches these few rows one by
    one. Each column holds its words lower-cased, space-separated, with a space before
    and after (a query word starts a word: ``LIKE '% word%'``): ``words`` all the text
    searched, ``names`` the name's, ``titles`` the name's, capability names' and tags'
    (the relevance tiers)."""

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="unlisted_text"
    )
    words = models.TextField()
    names = models.TextField()
    titles = models.TextField()

    def __str__(self) -> str:
        return self.words[:80]
