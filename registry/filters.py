"""Discovery filters for /discover/agents."""

import contextlib
import uuid

import django_filters
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Lower

from registry.models import Agent, AgentFacet, Capability, CapabilityTag, Endpoint
from registry.search import text_filter

BOOLEAN = [("true", "true"), ("false", "false")]


def _facet(kind: str, help_text: str, lookup: str = "value") -> django_filters.CharFilter:
    def method(queryset, name, value):
        facts = AgentFacet.objects.filter(
            agent=OuterRef("pk"), kind=kind, **{lookup: value.strip()}
        )
        return queryset.filter(Exists(facts))

    return django_filters.CharFilter(method=method, help_text=help_text)


def _flag(kind: str, help_text: str) -> django_filters.ChoiceFilter:
    def method(queryset, name, value):
        facts = AgentFacet.objects.filter(agent=OuterRef("pk"), kind=kind, value=value)
        return queryset.filter(Exists(facts))

    return django_filters.ChoiceFilter(choices=BOOLEAN, method=method, help_text=help_text)


class AgentFilter(django_filters.FilterSet):
    capability = django_filters.CharFilter(
        method="filter_capability", help_text="Capability (skill) name, case-insensitive."
    )
    tag = django_filters.CharFilter(method="filter_tag", help_text="Capability tag.")
    protocol = django_filters.ChoiceFilter(
        choices=Endpoint.Protocol.choices,
        method="filter_protocol",
        help_text="Has an endpoint speaking this protocol.",
    )
    transport = django_filters.ChoiceFilter(
        choices=Endpoint.Transport.choices,
        method="filter_transport",
        help_text="Has an endpoint over this transport.",
    )
    q = django_filters.CharFilter(
        method="filter_text",
        help_text="Words in the name, description, skill names, skill descriptions or tags "
        "(each word matches the start of a word).",
    )
    skill = django_filters.CharFilter(
        method="filter_skill", help_text="Skill id (an A2A skill id, or a capability id)."
    )
    protocolBinding = _facet("protocolBinding", "An A2A interface binding: JSONRPC, GRPC, …")
    protocolVersion = _facet("protocolVersion", "An A2A interface protocol version: 1.0, 0.3 …")
    provider = _facet("provider", "Provider organization (case-insensitive).", "value__iexact")
    extension = _facet("extension", "An A2A extension URI the card declares.")
    securityScheme = _facet(
        "securityScheme", "A security scheme type: apiKey, http, oauth2, openIdConnect, mutualTLS."
    )
    streaming = _flag("streaming", "The card declares streaming.")
    pushNotifications = _flag("pushNotifications", "The card declares push notifications.")
    owner = django_filters.CharFilter(field_name="owner")
    aap = django_filters.ChoiceFilter(
        choices=[("true", "true"), ("false", "false")],
        method="filter_aap",
        help_text="true: compliant AAP v0.1 dealer agents (by their card); false: all others.",
    )
    aapSkill = django_filters.CharFilter(
        method="filter_aap_skill", help_text="Implements this AAP skill (e.g. lead.submit)."
    )

    verified = django_filters.ChoiceFilter(
        choices=[("true", "true"), ("false", "false")],
        method="filter_verified",
        help_text="true: the agent's domain served its card (registered by domain, or verified).",
    )
    signed = django_filters.ChoiceFilter(
        choices=[("true", "true"), ("false", "false")],
        method="filter_signed",
        help_text="true: the card's signature verified; false: unsigned or invalid.",
    )

    class Meta:
        model = Agent
        fields = [
            "capability",
            "tag",
            "protocol",
            "transport",
            "q",
            "owner",
            "aap",
            "aapSkill",
            "verified",
            "signed",
            "skill",
            "protocolBinding",
            "protocolVersion",
            "provider",
            "extension",
            "securityScheme",
            "streaming",
            "pushNotifications",
        ]

    def filter_verified(self, queryset, name, value):
        from a2a.models import CardProvenance

        verified = CardProvenance.objects.filter(agent=OuterRef("pk")).exclude(verified_domain="")
        return queryset.filter(Exists(verified) if value == "true" else ~Exists(verified))

    def filter_signed(self, queryset, name, value):
        from a2a.models import CardProvenance

        signed = CardProvenance.objects.filter(agent=OuterRef("pk"), signature="verified")
        return queryset.filter(Exists(signed) if value == "true" else ~Exists(signed))

    def filter_capability(self, queryset, name, value):
        # lower(name) = …, the expression of the capability_name_lower index (iexact is UPPER).
        caps = Capability.objects.annotate(lower_name=Lower("name")).filter(
            agent=OuterRef("pk"), lower_name=value.strip().lower()
        )
        return queryset.filter(Exists(caps))

    def filter_tag(self, queryset, name, value):
        tags = CapabilityTag.objects.filter(agent=OuterRef("pk"), value=value.strip().lower())
        return queryset.filter(Exists(tags))

    def filter_protocol(self, queryset, name, value):
        return queryset.filter(
            Exists(Endpoint.objects.filter(agent=OuterRef("pk"), protocol=value))
        )

    def filter_transport(self, queryset, name, value):
        return queryset.filter(
            Exists(Endpoint.objects.filter(agent=OuterRef("pk"), transport=value))
        )

    def filter_text(self, queryset, name, value):
        return text_filter(queryset, value)

    def filter_skill(self, queryset, name, value):
        value = value.strip()
        match = Q(external_id=value)
        with contextlib.suppress(ValueError):  # a native capability is named by its UUID
            match |= Q(pk=uuid.UUID(value), external_id="")
        return queryset.filter(Exists(Capability.objects.filter(match, agent=OuterRef("pk"))))

    # The AAP filters live here so /discover/agents has one FilterSet; the import is
    # lazy so the core does not depend on the aap app at import time.
    def filter_aap(self, queryset, name, value):
        from aap.models import AAPStatus

        dealers = AAPStatus.objects.filter(
            agent=OuterRef("pk"), is_dealer_agent=True, compliant=True
        )
        return queryset.filter(Exists(dealers) if value == "true" else ~Exists(dealers))

    def filter_aap_skill(self, queryset, name, value):
        from aap.models import AAPSkill

        skills = AAPSkill.objects.filter(agent=OuterRef("pk"), skill_id=value.strip())
        return queryset.filter(Exists(skills))
