"""Request and response shapes of the native API (camelCase, as agents send them)."""

import functools
from datetime import datetime

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from registry import extensions
from registry.agents.liveness_state import agent_live, agent_uptime, endpoint_liveness
from registry.agents.members import (
    DEPRECATION_SCHEMA,
    TRUST_SCHEMA,
    UPTIME_SCHEMA,
    agent_deprecation,
    agent_trust,
)
from registry.agents.models import (
    CAPABILITIES_MAX,
    ENDPOINTS_MAX,
    TEXT_MAX_CHARS,
    Agent,
    Capability,
    CapabilityTag,
    Endpoint,
)
from registry.agents.services import AgentInput, CapabilityInput, EndpointInput, tags_clean
from registry.http.inputs import ChoiceField, InputSerializer
from registry.outbound.hosts import https_url_problem, url_credentials_problem


def whole_required(attrs: dict, names: tuple[str, ...]) -> None:
    missing = {name: "This field is required." for name in names if name not in attrs}
    if missing:
        raise serializers.ValidationError(missing)


@functools.cache
def output_members(serializer_class) -> frozenset[str]:
    """The members of a resource as it is read (its serializer's fields, the apps' members
    among them): a write body may carry them back, and they are ignored."""
    return frozenset(serializer_class().fields)


@extend_schema_serializer(component_name="Capability")  # CapabilityRequest in the schema
class CapabilityInputSerializer(InputSerializer):
    def output_members(self):
        return output_members(CapabilitySerializer)

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=TEXT_MAX_CHARS
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, default=list, max_length=100
    )

    def validate(self, attrs):
        whole_required(attrs, ("name",))  # as an endpoint's (below)
        return attrs

    def validate_tags(self, value):
        # Tags are indexed lower-cased, and "\u0130".lower() is two characters long.
        limit = CapabilityTag._meta.get_field("value").max_length
        errors = {
            index: [f"Ensure this field has no more than {limit} characters when lower-cased."]
            for index, tag in enumerate(value)
            if len(tag.lower()) > limit
        }
        if errors:
            raise serializers.ValidationError(errors)
        return value


@extend_schema_serializer(component_name="Endpoint")  # EndpointRequest in the schema
class EndpointInputSerializer(InputSerializer):
    def output_members(self):
        return output_members(EndpointSerializer)

    name = serializers.CharField(max_length=200)
    transport = ChoiceField(choices=Endpoint.Transport.choices)
    protocol = ChoiceField(choices=Endpoint.Protocol.values)
    address = serializers.CharField(max_length=2048)
    livenessModel = ChoiceField(
        choices=Endpoint.Liveness.choices, required=False, default=Endpoint.Liveness.PERSISTENT
    )
    heartbeatIntervalSeconds = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=86400
    )
    ttlSeconds = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=86400
    )
    protocolMetadata = serializers.DictField(required=False, default=dict)

    def validate(self, attrs):
        # A PATCH's endpoints replace the agent's: each is whole (a partial root skips
        # the required members of nested serializers).
        whole_required(attrs, ("name", "transport", "protocol", "address"))
        errors = {}
        if url_credentials_problem(attrs["address"]):
            errors["address"] = url_credentials_problem(attrs["address"])
        elif attrs["transport"] == Endpoint.Transport.HTTP:
            allow_http = settings.A2A_ALLOW_HTTP_URLS
            if https_url_problem(attrs["address"], allow_http=allow_http):
                errors["address"] = (
                    "must be an absolute http(s) URL for an Http endpoint"
                    if allow_http
                    else "must be an absolute https URL for an Http endpoint"
                )
        liveness = attrs.get("livenessModel")
        if liveness == Endpoint.Liveness.PERSISTENT and attrs.get("ttlSeconds") is not None:
            errors["ttlSeconds"] = "applies to Ephemeral endpoints; Persistent ones take "
            errors["ttlSeconds"] += "heartbeatIntervalSeconds"
        if liveness == Endpoint.Liveness.EPHEMERAL and attrs.get("heartbeatIntervalSeconds"):
            errors["heartbeatIntervalSeconds"] = (
                "applies to Persistent endpoints; Ephemeral ones take ttlSeconds"
            )
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def to_input(self, attrs=None) -> EndpointInput:
        attrs = attrs if attrs is not None else self.validated_data
        return endpoint_input(attrs)


def endpoint_input(attrs: dict) -> EndpointInput:
    return EndpointInput(
        name=attrs["name"],
        transport=attrs["transport"],
        protocol=attrs["protocol"],
        address=attrs["address"],
        liveness_model=attrs.get("livenessModel", Endpoint.Liveness.PERSISTENT),
        heartbeat_interval_seconds=attrs.get("heartbeatIntervalSeconds"),
        ttl_seconds=attrs.get("ttlSeconds"),
        protocol_metadata=attrs.get("protocolMetadata") or {},
    )


def capability_input(attrs: dict) -> CapabilityInput:
    return CapabilityInput(
        name=attrs["name"],
        description=attrs.get("description", ""),
        tags=tags_clean(attrs.get("tags", [])),
    )


@extend_schema_serializer(component_name="Agent")  # AgentRequest in the schema
class AgentInputSerializer(InputSerializer):
    """A native registration. With ``partial=True`` (PATCH) every member is optional."""

    def output_members(self):
        return output_members(AgentSerializer)

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=TEXT_MAX_CHARS
    )
    version = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    owner = serializers.CharField(
        required=False, max_length=200, help_text="Admin keys only: register for another owner."
    )
    capabilities = CapabilityInputSerializer(
        many=True, required=False, default=list, max_length=CAPABILITIES_MAX
    )
    endpoints = EndpointInputSerializer(
        many=True, required=False, default=list, max_length=ENDPOINTS_MAX
    )
    compatibility = ChoiceField(
        choices=Agent.Compatibility.values,
        required=False,
        help_text="backward: card changes that break consumers are refused (409 breaking-change).",
    )
    taskProbe = serializers.BooleanField(
        required=False, help_text="true: the registry may send the agent a real request."
    )
    visibility = ChoiceField(
        choices=Agent.Visibility.choices,
        required=False,
        help_text="Who may read it: public (default), private (its owner and admins), groups.",
    )
    visibilityGroups = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="The groups (visibility groups)."
    )

    def validate_endpoints(self, value):
        seen: dict[str, int] = {}
        errors: list[dict] = [{} for _ in value]
        for index, endpoint in enumerate(value):
            if endpoint["name"] in seen:
                errors[index] = {
                    "name": f"duplicate endpoint name (also endpoints[{seen[endpoint['name']]}])"
                }
            seen.setdefault(endpoint["name"], index)
        if any(errors):
            raise serializers.ValidationError(errors)
        return value

    def to_input(self) -> AgentInput:
        data = self.validated_data
        return AgentInput(
            name=data["name"],
            description=data.get("description", ""),
            version=data.get("version", ""),
            capabilities=[capability_input(c) for c in data.get("capabilities", [])],
            endpoints=[endpoint_input(e) for e in data.get("endpoints", [])],
        )


class CapabilitySerializer(serializers.ModelSerializer):
    class Meta:
        model = Capability
        fields = ["id", "name", "description", "tags"]


PROBE_CATEGORIES = [
    "ok",
    "not_a2a",
    "http_error",
    "timeout",
    "dns",
    "tls",
    "connect",
    "refused",
    "failed",
]
LIVENESS_SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["live", "stale", "down", "unknown"]},
        "lastSeenAt": {"type": "string", "format": "date-time", "nullable": True},
        "aliveUntil": {"type": "string", "format": "date-time", "nullable": True},
        "checkedBy": {"type": "string", "enum": ["heartbeat", "probe"], "nullable": True},
        "lastProbe": {
            "type": "object",
            "nullable": True,
            "properties": {
                "at": {"type": "string", "format": "date-time"},
                "up": {"type": "boolean"},
                "category": {"type": "string", "enum": PROBE_CATEGORIES},
            },
        },
    },
}


def response_now(context: dict) -> datetime:
    """One "now" for a whole response, so that every agent of a page is judged alike."""
    return context.setdefault("now", timezone.now())


class MemberField(serializers.Field):
    """A member of the agent or endpoint JSON that a protocol app registered
    (registry.extensions): read-only, read from the instance by the member's function."""

    def __init__(self, member: extensions.Member, **kwargs):
        self.member = member
        super().__init__(source="*", read_only=True, help_text=member.help_text or None, **kwargs)

    def to_representation(self, instance):
        return self.member.value(instance)


def _with_members(fields: dict, members: list[extensions.Member]) -> dict:
    for member in members:
        fields[member.name] = MemberField(member)
    return fields


# Stateless: one instance writes every liveness time (discovery pages write thousands).
_TIMES = serializers.DateTimeField()


def time_shown(value: datetime | None) -> str | None:
    """A time as the API's serializers write it (RFC 3339, in the current time zone)."""
    return None if value is None else _TIMES.to_representation(value)


def liveness_shown(liveness: dict) -> dict:
    """An endpoint's liveness (registry.agents.liveness_state.endpoint_liveness) as the API
    shows it: its times in RFC 3339, as DRF writes them."""
    times = _TIMES
    shown = {
        key: times.to_representation(value) if key in ("lastSeenAt", "aliveUntil") else value
        for key, value in liveness.items()
    }
    if shown["lastProbe"] is not None:
        probe = shown["lastProbe"]
        shown["lastProbe"] = {**probe, "at": times.to_representation(probe["at"])}
    return shown


class EndpointSerializer(serializers.ModelSerializer):
    livenessModel = serializers.CharField(source="liveness_model")
    heartbeatIntervalSeconds = serializers.IntegerField(
        source="heartbeat_interval_seconds", allow_null=True
    )
    ttlSeconds = serializers.IntegerField(source="ttl_seconds", allow_null=True)
    protocolMetadata = serializers.JSONField(source="protocol_metadata")
    lastAliveAt = serializers.DateTimeField(source="last_alive_at", allow_null=True)
    liveness = serializers.SerializerMethodField(
        help_text="live: seen (heartbeat, renewal) within its grace, until aliveUntil; "
        "stale: seen, grace over; unknown: never seen."
    )

    class Meta:
        model = Endpoint
        fields = [
            "id",
            "name",
            "transport",
            "protocol",
            "address",
            "livenessModel",
            "heartbeatIntervalSeconds",
            "ttlSeconds",
            "protocolMetadata",
            "lastAliveAt",
            "liveness",
        ]

    def get_fields(self):
        return _with_members(super().get_fields(), extensions.endpoint_members.read())

    @extend_schema_field(LIVENESS_SCHEMA)
    def get_liveness(self, endpoint: Endpoint) -> dict:
        return liveness_shown(endpoint_liveness(endpoint, response_now(self.context)))


class AgentSerializer(serializers.ModelSerializer):
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
    source = ChoiceField(choices=[], required=False)
    capabilities = CapabilitySerializer(many=True)
    endpoints = EndpointSerializer(many=True)
    live = serializers.SerializerMethodField(help_text="Any endpoint of the agent is live.")
    deprecation = serializers.SerializerMethodField(
        help_text="A deprecated agent's reason, successor and sunset; null otherwise."
    )
    uptime = serializers.SerializerMethodField(
        help_text="Share of successful probes over a day and a week; null without probes."
    )
    trust = serializers.SerializerMethodField(help_text="Trust score (0-100), its signals.")
    duplicateOf = serializers.UUIDField(source="duplicate_of", read_only=True, allow_null=True)
    taskProbe = serializers.BooleanField(source="task_probe", read_only=True)
    visibilityGroups = serializers.ListField(
        source="visibility_groups", child=serializers.CharField(), read_only=True
    )

    class Meta:
        model = Agent
        fields = [
            "id",
            "name",
            "description",
            "owner",
            "version",
            "source",
            "createdAt",
            "updatedAt",
            "capabilities",
            "endpoints",
            "live",
            "uptime",
            "status",
            "compatibility",
            "deprecation",
            "trust",
            "duplicateOf",
            "taskProbe",
            "visibility",
            "visibilityGroups",
        ]

    @extend_schema_field(TRUST_SCHEMA)
    def get_trust(self, agent: Agent) -> dict:
        return agent_trust(agent)

    @extend_schema_field(DEPRECATION_SCHEMA)
    def get_deprecation(self, agent: Agent) -> dict | None:
        return agent_deprecation(agent)

    def get_live(self, agent: Agent) -> bool:
        return agent_live(agent, response_now(self.context))

    @extend_schema_field(UPTIME_SCHEMA)
    def get_uptime(self, agent: Agent) -> dict | None:
        return agent_uptime(agent)

    def get_fields(self):
        fields = super().get_fields()
        fields["source"].choices = extensions.sources.read()
        return _with_members(fields, extensions.agent_members.read())


def registry_url(path: str) -> str:
    """An absolute URL of the registry (REGISTRY_BASE_URL): in cards, links and answers."""
    return settings.REGISTRY_BASE_URL + path
