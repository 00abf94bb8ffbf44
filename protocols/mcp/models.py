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


class RegistrySource(models.Model):
    """An MCP Registry the registry imports from (``/v0.1/servers``, or ``/v0/servers`` of an
    older one): its base URL, the owner of the agents it brings, and how far it was read
    (``synced_until``: the newest ``updatedAt`` seen, the next run's ``updated_since``)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Not imported yet"
        OK = "ok", "Imported"
        FAILED = "failed", "The registry could not be read"

    url = models.CharField(max_length=2048, unique=True)
    owner = models.CharField(max_length=200)
    api = models.CharField(max_length=10, blank=True, default="")
    synced_until = models.CharField(max_length=64, blank=True, default="")
    # Where a run stopped by its bounds ends, so that the next one goes on from there.
    cursor = models.CharField(max_length=2000, blank=True, default="")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    last_problem = models.TextField(blank=True, default="")
    report = models.JSONField(null=True, blank=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    next_run_at = models.DateTimeField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.url


class ImportedServer(models.Model):
    """A server an MCP Registry listed, and the agent it became (null: none, a server whose
    document was refused): its name and latest version there, its status there, and its
    server.json as listed (``packages`` and all)."""

    source = models.ForeignKey(RegistrySource, on_delete=models.CASCADE, related_name="servers")
    name = models.CharField(max_length=200)
    agent = models.OneToOneField(
        "registry.Agent", null=True, on_delete=models.SET_NULL, related_name="mcp_import"
    )
    version = models.CharField(max_length=255)
    status = models.CharField(max_length=10)
    document = models.JSONField()
    fingerprint = models.CharField(max_length=64)
    seen_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "name"], name="mcp_imported_server_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.source})"
