"""Discovery filters for /discover/agents: the core's, and one per registered fact kind."""

import contextlib
import functools
import uuid

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db import connections
from django.db.models import BooleanField, Exists, F, Func, OuterRef, Q, Subquery, Value
from django.db.models.functions import Lower
from django.utils import timezone
from django_filters.constants import EMPTY_VALUES

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


def _kept(found: django_filters.Filter, ids) -> django_filters.Filter:
    """``found``, which keeps the agents whose id ``ids(value)`` selects (a queryset of
    ``agent_id`` values, or None where it is no set of ids): ``filters_apply`` finds the
    ids in all such sets first when a query has several."""
    found.agent_ids = ids
    return found


def _fact_filter(kind: extensions.FactKind) -> django_filters.Filter:
    """The discovery filter of a fact kind (see registry.extensions.FactFilter)."""

    def ids(value):
        facts = AgentFacet.objects.filter(kind=kind.name)
        if kind.filter == "present":
            return _ids(facts.filter(value="true")) if value == "true" else None
        if kind.filter == "iexact":
            # lower() on both sides, in the database: the agent_facet_kind_lower index.
            lowered = facts.annotate(lower_value=Lower("value"))
            return _ids(lowered.filter(lower_value=Lower(Value(value.strip()))))
        return _ids(facts.filter(value=value.strip()))

    def method(queryset, name, value):
        if kind.filter == "present" and value != "true":  # no fact "true": not a set of ids
            return queryset.filter(~_having(ids("true")))
        return queryset.filter(_having(ids(value)))

    if kind.filter in ("flag", "present"):
        found = django_filters.ChoiceFilter(
            choices=BOOLEAN, method=method, help_text=kind.help_text
        )
    else:
        found = django_filters.CharFilter(method=method, help_text=kind.help_text)
    return _kept(found, ids)


class _AmongIds(Func):
    """``id = ANY(ARRAY(<subquery>))``: the subquery runs once, before the agents are read,
    and each agent of its ids is read by its primary key."""

    template = "%(expressions)s))"
    arg_joiner = " = ANY(ARRAY("
    output_field = BooleanField()
    conditional = True


# The sets that are usually the smallest first: the ids of the others are looked up per id
# of the first (skills and capabilities name few agents, a protocol many).
_SET_ORDER = {"skill": 0, "capability": 1, "tag": 2, "protocol": 9, "transport": 9}


def filters_apply(filters: dict, values: dict, queryset):
    """Apply the discovery ``filters`` with their cleaned ``values`` (name -> value) as a
    FilterSet's form does, but with two or more filters that each keep a set of agent ids
    (tags, capabilities, skills, endpoints, facts) as one list of the ids in all of them,
    found first: the ids of one set whose id is in each other set. PostgreSQL then reads
    those ids from the indexes and the few agents by their key, where it would walk or
    scan every agent and test each filter on each (measured at 100,000 agents: 2-15 ms
    against 20-260 ms). One such filter, or none, is applied as it is: walking the agents
    in the page's order and testing one filter stops as soon as the page is full."""
    sets, others = [], []
    for name, value in values.items():
        ids = getattr(filters[name], "agent_ids", None)
        found = ids(value) if ids is not None and value not in EMPTY_VALUES else None
        (sets if found is not None else others).append((name, value, found))
    if len(sets) < 2:
        others = [(name, value, None) for name, value in values.items()]
    else:
        sets.sort(key=lambda entry: _SET_ORDER.get(entry[0], 5))
        (_, _, among), *rest = sets
        for _, _, found in rest:
            among = among.filter(agent_id__in=found)
        if connections[queryset.db].vendor == "postgresql":
            # As an array found first: the planner's guess at how many ids are in all the
            # sets made it hash-join a scan of every agent with them.
            queryset = queryset.filter(_AmongIds(F("pk"), Subquery(among)))
        else:
            queryset = queryset.filter(pk__in=among)
    for name, value, _ in others:
        queryset = filters[name].filter(queryset, value)
    return queryset


def _ids(rows):
    return rows.order_by().values("agent_id")


def _having(ids) -> Exists:
    """The agents among a filter's ids (``_ids``), tested one agent at a time."""
    return Exists(ids.filter(agent_id=OuterRef("pk")))


def _capability_ids(value):
    # lower(name) = …, the expression of the capability_name_lower index (iexact is UPPER).
    named = Capability.objects.annotate(lower_name=Lower("name"))
    return _ids(named.filter(lower_name=value.strip().lower()))


def _tag_ids(value):
    return _ids(CapabilityTag.objects.filter(value=value.strip().lower()))


def _skill_ids(value):
    value = value.strip()
    match = Q(external_id=value)
    with contextlib.suppress(ValueError):  # a native capability is named by its UUID
        match |= Q(pk=uuid.UUID(value), external_id="")
    return _ids(Capability.objects.filter(match))


def _endpoint_filter(column: str, help_text: str) -> django_filters.Filter:
    """Agents with an endpoint of this protocol or transport (``column``)."""

    def ids(value):
        return _ids(Endpoint.objects.filter(**{column: value}))

    def method(queryset, name, value):
        return queryset.filter(_having(ids(value)))

    choices = Endpoint._meta.get_field(column).choices
    found = django_filters.ChoiceFilter(choices=choices, method=method, help_text=help_text)
    return _kept(found, ids)


class _WholeNumberFilter(django_filters.NumberFilter):
    field_class = forms.IntegerField


class AgentFilter(django_filters.FilterSet):
    capability = _kept(
        django_filters.CharFilter(
            method="filter_capability", help_text="Capability (skill) name, case-insensitive."
        ),
        _capability_ids,
    )
    tag = _kept(
        django_filters.CharFilter(method="filter_tag", help_text="Capability tag."), _tag_ids
    )
    protocol = _endpoint_filter("protocol", "Has an endpoint speaking this protocol.")
    transport = _endpoint_filter("transport", "Has an endpoint over this transport.")
    q = django_filters.CharFilter(
        method="filter_text",
        validators=[search_words_check],
        help_text="Words in the name, description, skill names, skill descriptions or tags "
        "(each word matches the start of a word).",
    )
    skill = _kept(
        django_filters.CharFilter(
            method="filter_skill", help_text="Skill id (an A2A skill id, or a capability id)."
        ),
        _skill_ids,
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

    minTrust = _WholeNumberFilter(
        field_name="trust_score",
        lookup_expr="gte",
        min_value=0,
        max_value=100,
        help_text="Only agents whose trust score (0-100) is at least this.",
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

    def filter_queryset(self, queryset):
        return filters_apply(self.filters, self.form.cleaned_data, queryset)

    def filter_capability(self, queryset, name, value):
        return queryset.filter(_having(_capability_ids(value)))

    def filter_tag(self, queryset, name, value):
        return queryset.filter(_having(_tag_ids(value)))

    def filter_text(self, queryset, name, value):
        # In mode semantic or hybrid the text orders the filtered agents (discovery.hybrid)
        # instead of keeping those whose words match it.
        if (self.data.get("mode") or hybrid.DEFAULT_MODE).strip() != "keyword":
            return queryset
        return text_filter(queryset, value)

    def filter_skill(self, queryset, name, value):
        return queryset.filter(_having(_skill_ids(value)))


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
