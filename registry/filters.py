"""Discovery filters for /discover/agents."""

import django_filters
from django.db.models import Exists, OuterRef, Q

from registry.models import Agent, Capability, CapabilityTag, Endpoint


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
    q = django_filters.CharFilter(method="filter_text", help_text="Text in name or description.")
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
        caps = Capability.objects.filter(agent=OuterRef("pk"), name__iexact=value.strip())
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
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(Q(name__icontains=value) | Q(description__icontains=value))

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
