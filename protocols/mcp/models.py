"""The MCP app's stored parts: each MCP server version as the MCP Registry API serves it
(``/v0.1/servers``), kept at write time."""

from django.db import models


class ServerVersion(models.Model):
    """One version of one MCP server (an MCP endpoint of an agent) in the MCP Registry API's
    terms: its reverse-DNS ``name``, its ``version`` (the agent's, so its card's), its
    server.json document (``body``, as served) and its lifecycle. A new version string adds
    a row and the earlier ones stay, no longer latest; a retired agent or a removed endpoint
    leaves its rows ``deleted``, never removed, so that mirrors see the deletion."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        DEPRECATED = "deprecated", "Deprecated"
        DELETED = "deleted", "Deleted"

    name = models.CharField(max_length=200)
    version = models.CharField(max_length=255)
    agent_uuid = models.UUIDField()
    endpoint_uuid = models.UUIDField()
    is_latest = models.BooleanField(default=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    status_message = models.CharField(max_length=500, blank=True, default="")
    status_changed_at = models.DateTimeField(null=True, blank=True)
    body = models.BinaryField()
    published_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="mcp_server_version_unique")
        ]
        indexes = [
            # The list's pages: every version, or the latest only, in name order.
            models.Index(fields=["is_latest", "name"], name="mcp_server_latest_name"),
            models.Index(fields=["endpoint_uuid", "is_latest"], name="mcp_server_endpoint"),
            models.Index(fields=["agent_uuid"], name="mcp_server_agent"),
            models.Index(fields=["updated_at"], name="mcp_server_updated"),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"
