from django.db import models

from registry.agents.models import Agent


class AgentVector(models.Model):
    """An agent's text embedded (registry/semantic/embedder.py): unit length, quantized to
    one signed byte per dimension, with the model that made it (``name@version``), so a
    model change is seen and ``manage.py embeddings_rebuild`` redoes them."""

    agent = models.OneToOneField(
        Agent, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    model = models.CharField(max_length=100)
    vector = models.BinaryField()
    # The index reads what changed since it last looked (registry/semantic/index.py).
    updated_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.agent_id} ({self.model})"
