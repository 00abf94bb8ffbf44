"""The protocol-agnostic agent model: agents, their endpoints and capabilities, and what
is written with them (the capability tags' index, the searchable text, tombstones).

Protocol-specific fields never widen these tables: they live in
``Endpoint.protocol_metadata``, in ``AgentFacet`` facts (registry.discovery.models), and in
the protocol apps' own tables (see registry/extensions.py).
"""

import uuid
from datetime import timedelta

from django.db import models
from django.db.models.functions import Lower

# How an agent came to be registered: natively through the API here; protocol apps
# register their own values (registry.extensions.register_source).
NATIVE_SOURCE = "native"


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public"
    PRIVATE = "private", "Private"
    GROUPS = "groups", "Groups"


class Agent(models.Model):
    Visibility = Visibility

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        DEPRECATED = "deprecated", "Deprecated"
        RETIRED = "retired", "Retired"

    class Compatibility(models.TextChoices):
        NONE = "none", "None"
        BACKWARD = "backward", "Backward"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # Indexed in Meta: a plain index (the field's own would add a pattern index for LIKE,
    # which no query uses, to every insert).
    owner = models.CharField(max_length=200)
    version = models.CharField(max_length=100, blank=True)
    source = models.CharField(max_length=40, default=NATIVE_SOURCE)
    # Their indexes are agent_created_id and agent_updated_id (Meta), which begin with them.
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The lifecycle (registry.agents.lifecycle): a retired agent is left out of discovery
    # and its card answers 410; its row and history stay.
    # Database defaults too: rows written by code that predates these columns stay valid.
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.ACTIVE, db_default=Status.ACTIVE
    )
    status_reason = models.TextField(blank=True, default="", db_default="")
    successor = models.UUIDField(null=True, blank=True)
    sunset_at = models.DateTimeField(null=True, blank=True)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    # backward: a change that breaks the agent's consumers is refused (a protocol app says
    # what breaks, e.g. protocols.a2a.versions.diff), unless its major version went up.
    compatibility = models.CharField(
        max_length=10,
        choices=Compatibility.choices,
        default=Compatibility.NONE,
        db_default=Compatibility.NONE,
    )
    # Trust (registry.trust): the score (0-100) of the agent's signals and each signal's
    # value and weight, kept when a signal changes and by a daily job, never computed by a
    # read; discovery filters (minTrust) and sorts (sort=trust) by the indexed score.
    trust_score = models.PositiveSmallIntegerField(default=0, db_default=0)
    trust_signals = models.JSONField(default=dict, db_default={}, blank=True)
    trust_changed_at = models.DateTimeField(null=True, blank=True)
    # The canonical copy of the agent's group when it is a copy (the same card digest or
    # preferred interface URL elsewhere, an entity's domain: registry.trust.duplicates),
    # kept at write time; discovery shows the canonical copies only (collapse=false: all).
    duplicate_of = models.UUIDField(null=True, blank=True)
    # The owner lets the registry send the agent a real request to check it (the task
    # probe: TRUST_TASK_PROBE "opt-in"); a message may make an agent act.
    task_probe = models.BooleanField(default=False, db_default=False)
    # Publicly listed: the one gate of every public read (discovery, cards, catalogs, the
    # change feed, events, pages), kept at write time by registry.agents.listing from what
    # decides it (moderation: pending review, rejected, quarantined). An unlisted agent is
    # its owner's and the admins' only.
    listed = models.BooleanField(default=True, db_default=True)
    # Moderation's half of ``listed`` (registry.agents.listing): admitted and not
    # quarantined. ``listed`` is admitted and public, kept at write time.
    admitted = models.BooleanField(default=True, db_default=True)
    # Who may read the agent (registry.agents.visibility): anyone (public), its owner and
    # the admins (private), or callers in one of ``visibility_groups`` (groups; their
    # index is ``AgentVisibilityGroup``).
    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, default=Visibility.PUBLIC, db_default="public"
    )
    visibility_groups = models.JSONField(default=list, db_default=[], blank=True)

    class Meta:
        ordering = ["-created_at", "id"]
        indexes = [
            models.Index(Lower("name"), "id", name="agent_name_lower"),
            models.Index(fields=["-created_at", "id"], name="agent_created_id"),
            models.Index(fields=["updated_at", "id"], name="agent_updated_id"),
            models.Index(fields=["owner"], name="agent_owner"),
            models.Index(fields=["-trust_score", "id"], name="agent_trust_id"),
            # Both hold the copies alone: the copies of an agent, and whether one is a copy.
            models.Index(
                fields=["duplicate_of"],
                name="agent_duplicate_of",
                condition=models.Q(duplicate_of__isnull=False),
            ),
            models.Index(
                fields=["id"], name="agent_copy", condition=models.Q(duplicate_of__isnull=False)
            ),
            # The few unlisted agents (moderation's queue, the admin's filter): public
            # reads read the column of the row they read anyway, no index.
            models.Index(fields=["id"], name="agent_unlisted", condition=models.Q(listed=False)),
        ]

    def __str__(self) -> str:
        return self.name


class AgentVisibilityGroup(models.Model):
    """A group that may read a ``groups`` agent: the index ``readable_by`` reads by the
    caller's groups (``Agent.visibility_groups`` is what the agent's JSON shows)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="visibility_grants")
    group = models.CharField(max_length=200)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["group", "agent"], name="agent_visibility_group")
        ]

    def __str__(self) -> str:
        return f"{self.agent_id}: {self.group}"


class Endpoint(models.Model):
    class Transport(models.TextChoices):
        HTTP = "Http", "HTTP"
        AMQP = "Amqp", "AMQP"
        AZURE_SERVICE_BUS = "AzureServiceBus", "Azure Service Bus"

    class Protocol(models.TextChoices):
        A2A = "A2A", "A2A"
        MCP = "MCP", "MCP"
        ACP = "ACP", "ACP"
        GENERIC = "Generic", "Generic"

    class Liveness(models.TextChoices):
        PERSISTENT = "Persistent", "Persistent (heartbeat)"
        EPHEMERAL = "Ephemeral", "Ephemeral (TTL)"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: endpoint_unique_name and endpoint_alive begin with it (one index
    # fewer for every heartbeat to write).
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="endpoints", db_index=False
    )
    name = models.CharField(max_length=200)
    transport = models.CharField(max_length=20, choices=Transport.choices)
    protocol = models.CharField(max_length=20, choices=Protocol.choices)
    address = models.CharField(max_length=2048)
    liveness_model = models.CharField(
        max_length=12, choices=Liveness.choices, default=Liveness.PERSISTENT
    )
    heartbeat_interval_seconds = models.PositiveIntegerField(null=True, blank=True)
    ttl_seconds = models.PositiveIntegerField(null=True, blank=True)
    protocol_metadata = models.JSONField(default=dict, blank=True)
    # Position in the agent's list: for A2A the first endpoint is the preferred interface.
    position = models.PositiveIntegerField(default=0)
    # Liveness: when the endpoint was last seen (a heartbeat, a renewal), until when that
    # keeps it live, and what saw it. Never seen: both null ("unknown").
    last_alive_at = models.DateTimeField(null=True, blank=True)
    alive_until = models.DateTimeField(null=True, blank=True)
    checked_by = models.CharField(max_length=10, blank=True)
    # How long a sign of life keeps the endpoint live (liveness_grace()), stored at write
    # time so that a heartbeat is one UPDATE whatever the model.
    liveness_grace = models.DurationField(default=timedelta(seconds=150))
    # Active probes (registry/liveness/probes.py): the last one's outcome, when the next is due, and
    # the share of successful probes over a day and a week (null: no probe in the span).
    last_probe_at = models.DateTimeField(null=True, blank=True)
    last_probe_ok = models.BooleanField(null=True, blank=True)
    last_probe_category = models.CharField(max_length=12, blank=True)
    next_probe_at = models.DateTimeField(null=True, blank=True)
    uptime_day = models.FloatField(null=True, blank=True)
    uptime_week = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent", "position"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "name"], name="endpoint_unique_name"),
        ]
        indexes = [
            models.Index(fields=["protocol", "agent"], name="endpoint_protocol"),
            models.Index(fields=["transport", "agent"], name="endpoint_transport"),
            models.Index(fields=["agent", "alive_until"], name="endpoint_alive"),
            # For the expiry sweep, Ephemeral endpoints only: a Persistent endpoint's
            # heartbeat then updates one index of alive_until, not two.
            models.Index(
                fields=["alive_until"],
                name="endpoint_ephemeral_expiry",
                condition=models.Q(liveness_model="Ephemeral"),
            ),
            models.Index(fields=["next_probe_at"], name="endpoint_probe_due"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.protocol} over {self.transport})"

    @property
    def is_queue(self) -> bool:
        return self.transport != self.Transport.HTTP


# What an agent needs at the most (native payloads and cards alike; docs/operations/security.md):
# longer texts and longer lists are refused with a problem naming them.
TEXT_MAX_CHARS = 20_000
CAPABILITIES_MAX = 500
ENDPOINTS_MAX = 32
LIST_MAX_ITEMS = 100

# Defaults of the registry design when an endpoint sets none, and the grace factor of a
# Persistent endpoint: live until 2.5 heartbeat intervals after its last heartbeat.
DEFAULT_HEARTBEAT_SECONDS = 60
DEFAULT_TTL_SECONDS = 300
HEARTBEAT_GRACE_FACTOR = 2.5


def liveness_grace(
    liveness_model: str, heartbeat_interval_seconds: int | None, ttl_seconds: int | None
) -> timedelta:
    """How long a sign of life keeps an endpoint of this model live."""
    if liveness_model == Endpoint.Liveness.EPHEMERAL:
        return timedelta(seconds=ttl_seconds or DEFAULT_TTL_SECONDS)
    interval = heartbeat_interval_seconds or DEFAULT_HEARTBEAT_SECONDS
    return timedelta(seconds=interval * HEARTBEAT_GRACE_FACTOR)


class Capability(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="capabilities")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    # The capability's id in its protocol (an A2A skill id); empty for native ones.
    external_id = models.CharField(max_length=200, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "capabilities"
        ordering = ["agent", "position"]
        indexes = [
            models.Index(Lower("name"), "agent", name="capability_name_lower"),
            models.Index(fields=["external_id"], name="capability_external_id"),
        ]

    def __str__(self) -> str:
        return self.name


class CapabilityTag(models.Model):
    """One row per tag, lower-cased: the indexed form of ``Capability.tags`` for filtering."""

    capability = models.ForeignKey(Capability, on_delete=models.CASCADE, related_name="tag_index")
    # Indexed by capability_tag_agent, which facet counts read alone (an index-only scan).
    # The capability's agent, copied: the capability's own key to the agent holds it there,
    # so the database checks no key of its own (a bulk load's batch writes some 20,000 tags,
    # each key of theirs to the agent checked at the commit: 0.09 ms of the database's time
    # an agent). Deleting an agent deletes its tags all the same (Django's cascade).
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    value = models.CharField(max_length=200)

    class Meta:
        indexes = [
            models.Index(fields=["value", "agent"], name="capability_tag_value"),
            models.Index(fields=["agent", "value"], name="capability_tag_agent"),
        ]

    def __str__(self) -> str:
        return self.value


class AgentSearchText(models.Model):
    """The searchable text of an agent (name, description, capability names, descriptions
    and tags), kept at write time. PostgreSQL indexes it in AgentSearchVector, SQLite in an
    FTS5 table; see registry/discovery/search.py.

    ``keys``: the agent's capability names and tags as exact filter keys
    (``"~capability translate"``, ``"~tag travel"``, lower-cased). PostgreSQL indexes them
    beside the words, so that a text query filtered by capability or tag is answered by the
    full-text index alone; see ``search_keys_build``.
    """

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="search_text"
    )
    text = models.TextField()
    keys = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return self.text[:80]


class Tombstone(models.Model):
    """A deleted agent, for mirrors syncing with updated_since.

    ``public``: the public change feed shows it (the agent was publicly listed, or its
    withdrawal from the public listing is this tombstone); else it is a restricted agent's
    (registry.agents.visibility), shown only to those who may read it
    (``tombstones_readable``)."""

    agent_id = models.UUIDField(primary_key=True)
    owner = models.CharField(max_length=200)
    deleted_at = models.DateTimeField(db_index=True)
    public = models.BooleanField(default=True, db_default=True)

    class Meta:
        ordering = ["deleted_at", "agent_id"]

    def __str__(self) -> str:
        return f"{self.agent_id} deleted {self.deleted_at:%Y-%m-%d %H:%M:%S}"


class OwnershipTransfer(models.Model):
    """An agent offered by its owner to another (registry.agents.ownership): pending until
    the receiving owner's key accepts it, either side cancels it, or it expires."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        CANCELLED = "cancelled", "Cancelled"
        EXPIRED = "expired", "Expired"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="transfers")
    from_owner = models.CharField(max_length=200)
    to_owner = models.CharField(max_length=200, db_index=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent"],
                condition=models.Q(state="pending"),
                name="one_pending_transfer",
            )
        ]

    def __str__(self) -> str:
        return f"{self.agent_id}: {self.from_owner} -> {self.to_owner} ({self.state})"


class DomainClaim(models.Model):
    """A key's claim to a domain, proven by a token the domain publishes (at
    /.well-known/a2a-registry-claim or in DNS TXT): once verified, its owner owns every
    agent registered from the domain (registry.agents.claims)."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        VERIFIED = "verified", "Verified"
        EXPIRED = "expired", "Expired"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    domain = models.CharField(max_length=262, db_index=True)
    owner = models.CharField(max_length=200, db_index=True)
    token = models.CharField(max_length=64)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    method = models.CharField(max_length=10, blank=True, help_text="well-known or dns")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    verified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["domain"],
                condition=models.Q(state="verified"),
                name="one_verified_claim_per_domain",
            )
        ]

    def __str__(self) -> str:
        return f"{self.domain} by {self.owner} ({self.state})"
