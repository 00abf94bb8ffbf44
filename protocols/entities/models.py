"""Entities: businesses that publish entity cards (A2E, EDP), and EDP providers' claims.

Each entity is also a core ``Agent`` (source ``entity-card`` or ``edp-provider``) whose MCP
servers are its ``MCP`` endpoints; what only entities have lives here, one row per agent.
"""

import uuid

from django.db import models

from registry.agents.models import Agent


class EntityCard(models.Model):
    """A domain's entity card as last fetched, and the crawl's state of that domain."""

    class Status(models.TextChoices):
        OK = "ok", "OK"
        MISSING = "missing", "Missing (not found when crawled)"
        INVALID = "invalid", "Invalid (changed into an invalid card)"

    domain = models.CharField(max_length=253, unique=True)
    # host[:port]: where the card is fetched (a port only in development and tests).
    authority = models.CharField(max_length=260)
    url = models.CharField(max_length=2048)
    format = models.CharField(max_length=20)
    body = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    owner = models.CharField(max_length=200)
    etag = models.CharField(max_length=300, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)
    fetched_at = models.DateTimeField(null=True, blank=True)
    next_crawl_at = models.DateTimeField(db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OK)
    status_detail = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["domain"]

    def __str__(self) -> str:
        return self.domain

    @property
    def flagged(self) -> bool:
        return self.status != self.Status.OK


class Entity(models.Model):
    """One business: an entity of a domain's card, or an entity only a provider claims."""

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="entity"
    )
    card = models.ForeignKey(
        EntityCard, null=True, blank=True, on_delete=models.SET_NULL, related_name="entities"
    )
    # Unique: "<domain><path>" for a card's entity, "provider:<id>/<entity_id>" for a claim.
    key = models.CharField(max_length=500, unique=True)
    # The agent's ``listed`` (registry.agents.listing), copied by protocols.entities.receivers
    # so that the entity reads leave an unlisted business out without a join.
    listed = models.BooleanField(default=True, db_default=True)
    domain = models.CharField(max_length=253, blank=True, db_index=True)
    path = models.CharField(max_length=200, blank=True)
    format = models.CharField(max_length=20)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    category = models.CharField(max_length=100, blank=True, db_index=True)
    address = models.CharField(max_length=300, blank=True)
    city = models.CharField(max_length=100, blank=True)
    # The city folded (lower case, no accents) for ?location=<city>.
    city_key = models.CharField(max_length=100, blank=True, db_index=True)
    postal_code = models.CharField(max_length=20, blank=True)
    country = models.CharField(max_length=2, blank=True)
    lat = models.FloatField(null=True, blank=True)
    lng = models.FloatField(null=True, blank=True)
    contact = models.JSONField(default=dict, blank=True)
    phone = models.CharField(max_length=40, blank=True)
    # Opening hours: [{"days": ["Mo", …], "opens": "HH:MM", "closes": "HH:MM"}]
    # (protocols.entities.cards.hours).
    hours = models.JSONField(default=list, blank=True)
    website = models.CharField(max_length=2048, blank=True)
    same_as = models.JSONField(default=list, blank=True)
    # The IANA zone of its coordinates (or its country), for openNow; "" when unknown.
    time_zone = models.CharField(max_length=64, blank=True)
    # The MCP entries, preferred first, each with its verification result.
    mcps = models.JSONField(default=list)
    # 0: a provider's claim only (or a flagged card); 1: the domain's card; 2: both agree.
    verification_level = models.PositiveSmallIntegerField(default=0, db_index=True)
    flagged = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "entities"
        ordering = ["domain", "path"]
        indexes = [models.Index(fields=["lat", "lng"], name="entity_lat_lng")]

    def __str__(self) -> str:
        return f"{self.name} ({self.domain}{self.path})" if self.domain else self.name


class EntityTerm(models.Model):
    """The words an entity is found by (name, category, city, description) with their weight,
    and its capabilities as ``cap:<name>`` (weight 0): the index of /v1/resolve."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="terms")
    term = models.CharField(max_length=100)
    weight = models.PositiveSmallIntegerField()

    class Meta:
        # A word's entities best first: /v1/resolve reads the top of one range per word.
        indexes = [models.Index(fields=["term", "-weight", "entity"], name="entity_term")]

    def __str__(self) -> str:
        return self.term


class Provider(models.Model):
    """An EDP provider (EDP §3), changed only by the API key owner that registered it."""

    provider_id = models.CharField(max_length=50, unique=True)
    name = models.CharField(max_length=100)
    endpoint = models.CharField(max_length=2048)
    public_key = models.TextField(blank=True)
    capabilities = models.JSONField(default=list, blank=True)
    owner = models.CharField(max_length=200, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["provider_id"]

    def __str__(self) -> str:
        return self.provider_id


class ProviderClaim(models.Model):
    """An entity a provider's registration names: evidence for verification level 0 or 2."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="claims")
    entity_id = models.CharField(max_length=200)
    name = models.CharField(max_length=200)
    domain = models.CharField(max_length=253, blank=True, db_index=True)
    category = models.CharField(max_length=100, blank=True)
    city = models.CharField(max_length=100, blank=True)
    country = models.CharField(max_length=2, blank=True)
    lat = models.FloatField(null=True, blank=True)
    lng = models.FloatField(null=True, blank=True)
    capabilities = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["provider", "entity_id"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "entity_id"], name="claim_unique")
        ]

    def __str__(self) -> str:
        return f"{self.provider_id}/{self.entity_id}"


class EntitySource(models.Model):
    """What one source says about an entity, and where and when it was read: the entity's
    own card, its website's markup, a provider's claim. ``protocols.entities.cards.facts`` picks
    each shown
    fact from them; a source that disappears takes only its own values with it."""

    class Kind(models.TextChoices):
        CARD = "card", "The entity's own card (A2E, EDP)"
        WEBSITE = "website", "The website's markup (Schema.org, Open Graph)"
        CLAIM = "provider-claim", "An EDP provider's registration"

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # Which one of its kind: "<provider>/<entity_id>" for a claim, "" otherwise.
    key = models.CharField(max_length=300, blank=True)
    url = models.CharField(max_length=2048, blank=True)
    read_at = models.DateTimeField()
    # fact name -> value (protocols.entities.cards.facts.FACTS), only the facts this source gives.
    values = models.JSONField(default=dict, blank=True)
    # A claim's verification level (2 when the domain's card confirms it); 0 otherwise.
    level = models.PositiveSmallIntegerField(default=0)
    # The website: how the last read went ("ok", "no-markup", "error"), and its cache state.
    status = models.CharField(max_length=20, blank=True)
    detail = models.TextField(blank=True)
    etag = models.CharField(max_length=300, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)
    next_read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["entity", "kind", "key"]
        constraints = [
            models.UniqueConstraint(fields=["entity", "kind", "key"], name="entity_source_unique")
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.key}" if self.key else self.kind


class McpServerCard(models.Model):
    """An MCP server's card (SEP-1649, ``/.well-known/mcp/server-card.json`` at the origin of
    its endpoint) as last read: one row per card URL, shared by every endpoint there."""

    class Status(models.TextChoices):
        FOUND = "found", "Found"
        ABSENT = "absent", "Absent (not published, or not reachable)"
        INVALID = "invalid", "Invalid"

    url = models.CharField(max_length=2048, unique=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    reason = models.TextField(blank=True)
    name = models.CharField(max_length=200, blank=True)
    version = models.CharField(max_length=100, blank=True)
    # [{"name", "description"}]; null when the card says its tools are dynamic or lists none.
    tools = models.JSONField(null=True, blank=True)
    transport = models.JSONField(null=True, blank=True)
    # A found card byte for byte as read, served back as read (the MCP app's server cards).
    body = models.BinaryField(default=b"", blank=True)
    fetched_at = models.DateTimeField()
    next_read_at = models.DateTimeField(db_index=True)
    etag = models.CharField(max_length=300, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["url"]

    def __str__(self) -> str:
        return self.url


class ProviderJob(models.Model):
    """A provider registration too large to register within its request, run by a worker:
    its state, the registration it was given, and what came of it."""

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    key = models.ForeignKey("registry.ApiKey", null=True, on_delete=models.SET_NULL)
    owner = models.CharField(max_length=200, db_index=True)
    provider_id = models.CharField(max_length=50)
    payload = models.JSONField()
    entities = models.PositiveIntegerField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    # The registration's answer (as POST answers at once) or the problem that refused it.
    result = models.JSONField(null=True, blank=True)
    problem = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.provider_id} ({self.state})"
