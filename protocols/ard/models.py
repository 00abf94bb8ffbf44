"""The catalog's stored parts: each agent's entry (built at write time), the catalog's pages
(assembled from the entries), the catalogs the registry crawls and where a crawled agent
came from."""

import uuid

from django.db import models

from registry.agents.models import Agent


class CatalogEntry(models.Model):
    """An agent's entry in the registry's catalog, as served (``body``: its JSON, with
    ``metadata`` last so that the liveness of the moment is added where it is served).

    ``identifier`` is never changed or given to another agent: the row outlives its agent
    (``agent_uuid`` is a plain column, not a key) and stays, unlisted, after a delete."""

    identifier = models.CharField(max_length=512, unique=True)
    agent_uuid = models.UUIDField(null=True, unique=True)
    type = models.CharField(max_length=100, blank=True)
    # The types of the entries nested in it (an agent's MCP servers), " a b ": the type
    # filters and facets find an agent by these too.
    types = models.CharField(max_length=400, blank=True, default="")
    publisher = models.CharField(max_length=262, blank=True)
    listed = models.BooleanField(default=False)
    body = models.BinaryField(default=b"")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "catalog entries"
        indexes = [
            models.Index(fields=["listed", "id"], name="ard_entry_listed"),
            models.Index(fields=["publisher"], name="ard_entry_publisher"),
        ]

    def __str__(self) -> str:
        return self.identifier


class CatalogPage(models.Model):
    """One served document: ``number`` 0 is the root (``/.well-known/ai-catalog.json``), the
    others the nested pages it links when the catalog outgrows one document."""

    number = models.PositiveIntegerField(primary_key=True)
    body = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    entries = models.PositiveIntegerField(default=0)
    generation = models.BigIntegerField(default=0)
    built_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"catalog page {self.number} ({self.entries} entries)"


class CatalogSource(models.Model):
    """A catalog the registry crawls: a domain's well-known documents, or a catalog URL."""

    class Status(models.TextChoices):
        PENDING = "pending", "Not crawled yet"
        OK = "ok", "Crawled"
        FAILED = "failed", "The catalog could not be read"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    url = models.CharField(max_length=2048, blank=True)
    domain = models.CharField(max_length=262, blank=True)
    owner = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    catalog_url = models.CharField(max_length=2048, blank=True)
    etag = models.CharField(max_length=200, blank=True)
    report = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    crawled_at = models.DateTimeField(null=True, blank=True)
    next_crawl_at = models.DateTimeField(null=True, blank=True, db_index=True)

    def __str__(self) -> str:
        return self.url or self.domain


class EntryProvenance(models.Model):
    """Where a crawled agent came from: the catalog document that listed it, the entry's
    identifier there and the digest of the card it pointed at; ``retired`` when the source
    no longer lists it (kept, out of the catalog and ARD search)."""

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="ard_provenance"
    )
    # No index of its own: ard_provenance_source begins with it.
    source = models.ForeignKey(
        CatalogSource, on_delete=models.CASCADE, related_name="agents", db_index=False
    )
    catalog = models.CharField(max_length=2048)
    identifier = models.CharField(max_length=512)
    digest = models.CharField(max_length=200, blank=True)
    # SHA-256 of the entry as listed (sorted keys): an MCP server entry unchanged since.
    fingerprint = models.CharField(max_length=64, blank=True)
    flagged = models.CharField(max_length=300, blank=True)
    retired = models.BooleanField(default=False)
    seen_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["source", "retired"], name="ard_provenance_source")]

    def __str__(self) -> str:
        return f"{self.identifier} from {self.catalog}"
