"""Writing the agents' vectors: at write time, for the agents a write changed (the core's
``agents_written``, inside the write's transaction), and all of them again on demand
(``manage.py embeddings_rebuild``: after an upgrade or a model change)."""

import logging

from django.db import transaction
from django.utils import timezone

from registry.fastpath.copy import objects_insert
from registry.semantic import client
from registry.semantic.models import AgentVector
from registry.semantic.text import meaning_texts, meaning_weight
from registry.signals import vectors_rebuilt

log = logging.getLogger(__name__)
BATCH = 1000


def vectors_write(agent_ids) -> int:
    """Embed the agents of ``agent_ids`` that exist and store their vectors; the number
    written. When the embedding service does not answer, the write goes on without them
    (search by meaning misses these agents until ``embeddings_rebuild --missing``)."""
    from registry.semantic.embedder import model_name, vector_weighed

    agent_ids = list(agent_ids)
    written = 0
    for start in range(0, len(agent_ids), BATCH):
        texts = meaning_texts(agent_ids[start : start + BATCH])
        if not texts:
            continue
        try:
            vectors = client.embed(list(texts.values()))
            vectors = [
                vector_weighed(vector, meaning_weight(text))
                for vector, text in zip(vectors, texts.values(), strict=True)
            ]
        except client.SemanticUnavailable as exc:
            log.warning(
                "embedding service unavailable, %d agents not embedded: %s", len(texts), exc
            )
            return written
        now, name = timezone.now(), model_name()
        objects_insert(
            [
                AgentVector(agent_id=pk, model=name, vector=vector, updated_at=now)
                for pk, vector in zip(texts, vectors, strict=True)
            ],
            unique_fields=["agent"],
            update_fields=["model", "vector", "updated_at"],
        )
        written += len(texts)
    return written


def vectors_on_write(sender, agent_ids, **kwargs) -> None:
    vectors_write(agent_ids)


def vectors_rebuild(*, missing_only: bool = False) -> int:
    """Re-embed every agent (or those without a vector of the current model)."""
    from registry.agents.models import Agent
    from registry.semantic.embedder import model_name

    agents = Agent.objects.order_by("pk")
    if missing_only:
        current = AgentVector.objects.filter(model=model_name()).values("agent_id")
        agents = agents.exclude(pk__in=current)
    ids = list(agents.values_list("pk", flat=True))
    written = 0
    for start in range(0, len(ids), BATCH):
        with transaction.atomic():
            written += vectors_write(ids[start : start + BATCH])
            vectors_rebuilt.send(sender=vectors_rebuild)  # (discovery: its cached pages)
    return written
