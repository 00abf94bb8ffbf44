"""Discovery filters for /discover/agents: the core's, and one per registered fact kind."""

import contextlib
import functools
import uuid

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Lower
from django.utils import timezone

from registry import extensions
from registry.agents.liveness_state import conformant_agents, live_agents
from registry.agents.models import Agent, Capability, CapabilityTag, Endpoint
from registry.agents.text import search_words_problem
from registry.discovery import hybrid
from registry.discovery.models import AgentFacet
from registry.discovery.search import text_filter

BOOLEAN = [("true", "true"), ("false", "false")]


def search_words_check(value: str) -> None:
    """q's words are searchable: a word too long is a 400 naming q, on every face."""
    if problem := search_words_problem(value):
        raise ValidationError(problem)


def _fact_filter(kind: extensions.FactKind) -> django_filters.Filter:
    """The discovery filter of a fact kind (see registry.extensions.FactFilter)."""

    def method(queryset, name, value):
        facts = AgentFacet.objects.filter(agent=OuterRef("pk"), kind=kind.name)
        if kind.filter == "present":
            facts = facts.filter(value="true")
            return queryset.filter(Exists(facts) if value == "true" else ~Exists(facts))
        lookup = "value__iexact" if kind.filter == "iexact" else "value"
        return queryset.filter(Exists(facts.filter(**{lookup: value.strip()})))

    if kind.filter in ("flag", "present"):
        return django_filters.ChoiceFilter(choices=BOOLEAN, method=method, help_text=kind.help_text)
    return django_filters.CharFilter(method=method, help_text=kind.help_text)


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
        validators=[search_words_check],
        help_text="Words in the name, description, skill names, skill descriptions or tags "
        "(each word matches the start of a word).",
    )
    skill = django_filters.CharFilter(
        method="filter_skill", help_text="Skill id (an A2A skill id, or a capability id)."
    )
    owner = django_filters.CharFilter(field_name="owner")
    status = django_filters.ChoiceFilter(
        field_name="status",
        choices=[(s, s) for s in (Agent.Status.ACTIVE, Agent.Status.DEPRECATED)],
        help_text="active or deprecated (retired agents are never discovered).",
    )
    liveOnly = django_filters.ChoiceFilter(
        choices=BOOLEAN,
        method="filter_live_only",
        help_text="true: only agents with an endpoint live now (a heartbeat or renewal "
        "within its grace).",
    )

    conformant = django_filters.ChoiceFilter(
        choices=BOOLEAN,
        method="filter_conformant",
        help_text="true: an endpoint's last probe found it answering its protocol (A2A: a "
        "real A2A call answered in A2A).",
    )

    class Meta:
        model = Agent
        fields = ["capability", "tag", "protocol", "transport", "q", "owner", "skill", "status"]

    def filter_live_only(self, queryset, name, value):
        return queryset.filter(live_agents(timezone.now())) if value == "true" else queryset

    def filter_conformant(self, queryset, name, value):
        conformant = conformant_agents()
        return queryset.filter(conformant if value == "true" else ~conformant)

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
        # In mode semantic or hybrid the text orders the filtered agents (discovery.hybrid)
        # instead of keeping those whose words match it.
        if (self.data.get("mode") or hybrid.DEFAULT_MODE).strip() != "keyword":
            return queryset
        return text_filter(queryset, value)

    def filter_skill(self, queryset, name, value):
        value = value.strip()
        match = Q(external_id=value)
        with contextlib.suppress(ValueError):  # a native capability is named by its UUID
            match |= Q(pk=uuid.UUID(value), external_id="")
        return queryset.filter(Exists(Capability.objects.filter(match, agent=OuterRef("pk"))))


@functools.cache
def agent_filterset(without: frozenset[str] = frozenset()) -> type[AgentFilter]:
    """The discovery FilterSet: the core's filters and one per fact kind the protocol apps
    registered (registry.extensions), less the names in ``without``."""
    filters = {
        kind.name: _fact_filter(kind)
        for kind in extensions.fact_kinds.read()
        if kind.filter is not None and kind.name not in without
    }
    return type("AgentFilter", (AgentFilter,), filters)
