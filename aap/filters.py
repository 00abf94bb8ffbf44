"""Filters of /aap/dealers: discovery's, without ``aap`` (every dealer listed is compliant)."""

from registry.filters import AgentFilter


class DealerFilter(AgentFilter):
    aap = None

    class Meta(AgentFilter.Meta):
        fields = [f for f in AgentFilter.Meta.fields if f != "aap"]
