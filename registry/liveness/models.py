"""The liveness history: one row per active probe of an endpoint."""

from django.db import models

from registry.agents.models import Agent, Endpoint


class ProbeResult(models.Model):
    """One active probe of an endpoint: its history, and what uptime is counted from."""

    id = models.BigAutoField(primary_key=True)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="probes")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField()
    # Up (reachable), and what was found: ok, not_a2a, http_error, timeout, dns, tls,
    # connect, refused.
    ok = models.BooleanField()
    category = models.CharField(max_length=12)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    detail = models.CharField(max_length=300, blank=True)
    # The SHA-256 of the agent's card where it was published, when the probe fetched it,
    # and whether it differed from the card the registry had.
    card_digest = models.CharField(max_length=64, blank=True)
    card_changed = models.BooleanField(default=False)
    # When the endpoint's TLS certificate expires, where the probe saw it.
    cert_expires_at = models.DateTimeField(null=True, blank=True)
    # Empty for the liveness probe itself; else the task probe's check this row is the
    # outcome of (registry.liveness.probes.TASK_CHECKS): ok says it passed.
    task_check = models.CharField(max_length=20, blank=True, default="", db_default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["endpoint", "at"], name="probe_endpoint_at"),
            models.Index(fields=["agent", "at"], name="probe_agent_at"),
            models.Index(fields=["at"], name="probe_at"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id} {self.category} at {self.at:%Y-%m-%d %H:%M:%S}"
