"""The A2A card document kept beside each agent that has one."""

from django.db import models

from registry.agents.models import Agent


class CardDocument(models.Model):
    """The exact bytes served at /a2a/agents/<id>.

    ``submitted``: the card as posted (JSON-equal to it, signatures and unknown
    members kept). ``generated``: built from the registry model at write time
    for a natively registered agent, so serving never rebuilds it.
    """

    class Origin(models.TextChoices):
        SUBMITTED = "submitted", "Submitted card"
        GENERATED = "generated", "Generated from the model"

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="a2a_card"
    )
    body = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    origin = models.CharField(max_length=10, choices=Origin.choices)
    spec_version = models.CharField(max_length=10, help_text="1.0, 0.3 or hybrid")
    naming = models.CharField(max_length=12, default="camelCase")
    signed = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)
    # Headers served with the card, tab-separated "Name: value": a deprecated agent's
    # Deprecation, Sunset and successor Link (protocols.a2a.receivers keeps them).
    lifecycle_headers = models.TextField(blank=True, default="", db_default="")
    # The agent's ``listed`` (registry.agents.listing), copied so that the card read stays
    # one primary-key read: an unlisted agent's card is not served (protocols.a2a.receivers).
    listed = models.BooleanField(default=True, db_default=True)

    class Meta:
        verbose_name = "A2A card"

    def __str__(self) -> str:
        return f"card of {self.agent_id} ({self.origin}, A2A {self.spec_version})"


class CardProvenance(models.Model):
    """Where an agent's card came from and what the registry could prove about it."""

    class Signature(models.TextChoices):
        VERIFIED = "verified", "Verified"
        INVALID = "invalid", "Invalid"
        UNSIGNED = "unsigned", "Unsigned"

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="a2a_provenance"
    )
    # The domain that served this very card (registration by domain, or a successful verify):
    # a host name (253 characters at most) with its port.
    verified_domain = models.CharField(max_length=262, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    source_url = models.CharField(max_length=2048, blank=True)
    discovery_path = models.CharField(max_length=30, blank=True)
    origin_problems = models.JSONField(default=list, blank=True)
    # Indexed in Meta (provenance_signature): the field's own index would add a pattern
    # index for LIKE, which no query uses, to every card stored.
    signature = models.CharField(
        max_length=10, choices=Signature.choices, default=Signature.UNSIGNED
    )
    signature_detail = models.TextField(blank=True)
    signature_kid = models.CharField(max_length=200, blank=True)
    signature_checked_at = models.DateTimeField(null=True, blank=True)
    # The refresh from source_url (protocols.a2a.registration.refresh): the validator of the last
    # fetch, when it was fetched, when it is due again (Cache-Control honoured) and what went wrong.
    refresh_etag = models.CharField(max_length=200, blank=True, default="", db_default="")
    refreshed_at = models.DateTimeField(null=True, blank=True)
    next_refresh_at = models.DateTimeField(null=True, blank=True, db_index=True)
    refresh_problem = models.TextField(blank=True, default="", db_default="")

    class Meta:
        verbose_name = "card provenance"
        indexes = [
            models.Index(fields=["verified_domain"], name="provenance_domain"),
            models.Index(fields=["signature"], name="provenance_signature"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id}: {self.verified_domain or 'unverified'}, {self.signature}"

    @property
    def verified(self) -> bool:
        return bool(self.verified_domain)


class AgentIdentity(models.Model):
    """One agent per owner and preferred interface URL: registering again updates it."""

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="a2a_identity"
    )
    owner = models.CharField(max_length=200)
    preferred_url = models.CharField(max_length=2048)

    class Meta:
        verbose_name_plural = "agent identities"
        constraints = [
            models.UniqueConstraint(fields=["owner", "preferred_url"], name="one_agent_per_card")
        ]

    def __str__(self) -> str:
        return f"{self.owner}: {self.preferred_url}"


class AgentTask(models.Model):
    """A task of the registry's own A2A agent (``protocols.a2a.face.task_store``): the SDK's
    ``Task``,
    as its JSON, with the scope of the caller that created it (the hash of its API key, or
    empty for callers without one)."""

    id = models.CharField(primary_key=True, max_length=200)
    scope = models.CharField(max_length=64, blank=True)
    context_id = models.CharField(max_length=200)
    state = models.CharField(max_length=40)
    body = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["scope", "-updated_at"], name="a2a_task_scope_recent")]

    def __str__(self) -> str:
        return f"{self.id} ({self.state})"


class RelayTask(models.Model):
    """A task relayed to a queue endpoint's agent (``protocols.a2a.relay.service``): the A2A
    ``Task`` as its
    JSON, built from the agent's replies, with the scope of the credentials that created it
    (the hash of a registry API key, else of the caller's Authorization value; empty with
    neither). ``state`` is the task's state, or ``pending`` until the broker confirmed the
    request (a pending task is no task yet: never served)."""

    PENDING = "pending"

    id = models.CharField(primary_key=True, max_length=200)
    endpoint = models.ForeignKey(
        "registry.Endpoint", on_delete=models.CASCADE, related_name="relay_tasks"
    )
    scope = models.CharField(max_length=64, blank=True)
    context_id = models.CharField(max_length=200)
    state = models.CharField(max_length=40)
    body = models.JSONField()
    # The last request relayed for the task (SendMessage or CancelTask): an error reply
    # fails a sent message's task, not a refused cancel's.
    last_method = models.CharField(max_length=40, default="SendMessage")
    # Sent with each request published for the task; a reply that does not echo it is
    # not the agent's and changes nothing (compared in constant time).
    reply_secret = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["endpoint", "scope", "-updated_at"], name="a2a_relay_scope_recent"
            ),
            models.Index(fields=["updated_at"], name="a2a_relay_updated"),
            # The anonymous tasks open now (scope "": the relay's limit in all).
            models.Index(fields=["scope", "state"], name="a2a_relay_scope_state"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.state})"


class QueueClaim(models.Model):
    """A queue name on the relay's broker, given to the first owner whose relayed endpoint
    (A2A over AMQP) names it (``protocols.a2a.relay.queues``): another owner's endpoint may
    not name it. Released when its owner has no relayed endpoint on it any more (at that
    owner's next write, or when another owner asks for it), or by an admin."""

    name = models.CharField(primary_key=True, max_length=255)
    owner = models.CharField(max_length=200)
    claimed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["owner"], name="a2a_queue_claim_owner")]

    def __str__(self) -> str:
        return f"{self.name} ({self.owner})"


class CardVersion(models.Model):
    """One immutable version of an agent's card: the exact bytes served then, numbered from
    1 (the registration) without gaps (``protocols.a2a.versions.history``: the next number is taken
    under the
    agent's row lock, and the constraint holds it)."""

    # No index of its own: card_version_seq and card_version_named begin with it.
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="card_versions", db_index=False
    )
    seq = models.PositiveIntegerField()
    card_version = models.CharField(max_length=100, blank=True)
    body = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    # Who stored it: the API key (its owner and prefix), a command or a job.
    actor = models.CharField(max_length=200, blank=True)
    key_prefix = models.CharField(max_length=20, blank=True)
    change = models.CharField(max_length=20, help_text="register, replace, update, refresh …")
    # What changed since the version before (protocols.a2a.versions.diff); null for the first.
    summary = models.JSONField(null=True, blank=True)
    breaking = models.BooleanField(default=False)
    # The agent's ``listed``, copied as CardDocument's is: an unlisted agent's versions are
    # not served either.
    listed = models.BooleanField(default=True, db_default=True)
    # The moderation scanners' findings of this version (registry.moderation.scanning):
    # shown with it to its owner and the admins.
    findings = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "seq"], name="card_version_seq"),
        ]
        indexes = [
            models.Index(fields=["agent", "card_version", "-seq"], name="card_version_named"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} v{self.seq} ({self.card_version or 'no version'})"
