"""Request and response shapes of the native API (camelCase, as agents send them)."""

from urllib.parse import urlsplit

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from registry.models import Agent, Capability, CapabilityTag, Endpoint
from registry.services import AgentInput, CapabilityInput, EndpointInput, tags_clean


class CapabilityInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    tags = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, default=list, max_length=100
    )

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


class EndpointInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    transport = serializers.ChoiceField(choices=Endpoint.Transport.values)
    protocol = serializers.ChoiceField(choices=Endpoint.Protocol.values)
    address = serializers.CharField(max_length=2048)
    livenessModel = serializers.ChoiceField(
        choices=Endpoint.Liveness.values, required=False, default=Endpoint.Liveness.PERSISTENT
    )
    heartbeatIntervalSeconds = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=86400
    )
    ttlSeconds = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=30 * 86400
    )
    protocolMetadata = serializers.DictField(required=False, default=dict)

    def validate(self, attrs):
        errors = {}
        if attrs["transport"] == Endpoint.Transport.HTTP:
            parts = urlsplit(attrs["address"])
            schemes = {"https", "http"} if settings.A2A_ALLOW_HTTP_URLS else {"https"}
            if parts.scheme not in schemes or not parts.netloc:
                errors["address"] = (
                    "must be an absolute https URL for an Http endpoint"
                    if "http" not in schemes
                    else "must be an absolute http(s) URL for an Http endpoint"
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


class AgentInputSerializer(serializers.Serializer):
    """A native registration. With ``partial=True`` (PATCH) every member is optional."""

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    version = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    owner = serializers.CharField(
        required=False, max_length=200, help_text="Admin keys only: register for another owner."
    )
    capabilities = CapabilityInputSerializer(many=True, required=False, default=list)
    endpoints = EndpointInputSerializer(many=True, required=False, default=list)

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


class EndpointSerializer(serializers.ModelSerializer):
    livenessModel = serializers.CharField(source="liveness_model")
    heartbeatIntervalSeconds = serializers.IntegerField(
        source="heartbeat_interval_seconds", allow_null=True
    )
    ttlSeconds = serializers.IntegerField(source="ttl_seconds", allow_null=True)
    protocolMetadata = serializers.JSONField(source="protocol_metadata")
    lastAliveAt = serializers.DateTimeField(source="last_alive_at", allow_null=True)
    queueUrl = serializers.SerializerMethodField()

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
            "queueUrl",
        ]

    def get_queueUrl(self, endpoint: Endpoint) -> str | None:
        if not endpoint.is_queue or endpoint.protocol != Endpoint.Protocol.A2A:
            return None
        return absolute_url(self.context.get("request"), f"/a2a/queue/{endpoint.id}")


class AgentSerializer(serializers.ModelSerializer):
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
    capabilities = CapabilitySerializer(many=True)
    endpoints = EndpointSerializer(many=True)
    cardUrl = serializers.SerializerMethodField(
        help_text="Where the agent's A2A card is served; null without an A2A endpoint."
    )
    trust = serializers.SerializerMethodField(
        help_text="verified: the agent's domain served this card; signature: of the card."
    )
    aap = serializers.SerializerMethodField(
        help_text="Auto Agent Protocol status from the agent's card; null without a card."
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
            "cardUrl",
            "trust",
            "aap",
        ]

    def get_cardUrl(self, agent: Agent) -> str | None:
        if not any(e.protocol == Endpoint.Protocol.A2A for e in agent.endpoints.all()):
            return None
        return absolute_url(self.context.get("request"), f"/a2a/agents/{agent.id}")

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {
                "dealer": {"type": "boolean"},
                "compliant": {"type": "boolean"},
                "version": {"type": "string", "nullable": True},
                "implementedSkills": {"type": "array", "items": {"type": "string"}},
            },
        }
    )
    @extend_schema_field(
        {
            "type": "object",
            "properties": {
                "verified": {"type": "boolean"},
                "verifiedDomain": {"type": "string", "nullable": True},
                "signature": {"type": "string", "enum": ["verified", "invalid", "unsigned"]},
            },
        }
    )
    def get_trust(self, agent: Agent) -> dict:
        provenance = getattr(agent, "a2a_provenance", None)  # select_related by agent_queryset
        if provenance is None:
            return {"verified": False, "verifiedDomain": None, "signature": "unsigned"}
        return {
            "verified": provenance.verified,
            "verifiedDomain": provenance.verified_domain or None,
            "signature": provenance.signature,
        }

    def get_aap(self, agent: Agent) -> dict | None:
        status = getattr(agent, "aap_status", None)  # select_related by agent_queryset
        if status is None:
            return None
        return {
            "dealer": status.is_dealer_agent,
            "compliant": status.compliant,
            "version": status.aap_version or None,
            "implementedSkills": list(status.implemented_skills),
        }


def base_url(request) -> str:
    """The registry's public base URL: the setting, else the request's own origin."""
    if settings.REGISTRY_BASE_URL:
        return settings.REGISTRY_BASE_URL
    if request is None:
        return "http://127.0.0.1:8000"
    return request.build_absolute_uri("/").rstrip("/")


def absolute_url(request, path: str) -> str:
    return base_url(request) + path
