from django.urls import path, re_path
from django.views.decorators.csrf import csrf_exempt

from protocols.a2a.face import agent
from protocols.a2a.registration import api
from protocols.a2a.relay import service as relay
from protocols.a2a.versions import api as versions_api

urlpatterns = [
    path("a2a/agents", api.A2AAgentListView.as_view(), name="a2a-agents"),
    path("a2a/agents/<str:agent_id>", api.A2AAgentCardView.as_view(), name="a2a-agent-card"),
    path("a2a/agents/<str:agent_id>/verify", api.A2AAgentVerifyView.as_view(), name="a2a-verify"),
    path("a2a/queue/<str:endpoint_id>", relay.QueueEndpointView.as_view(), name="a2a-queue"),
    re_path(
        r"^a2a/queue/(?P<endpoint_id>[^/]+)/(?P<path>.+)$",
        csrf_exempt(relay.relay_rest_view),
        name="a2a-queue-rest",
    ),
    path("a2a/jsonrpc", agent.protocol_view, name="a2a-jsonrpc"),
    re_path(r"^a2a/rest/(?P<path>.+)$", agent.protocol_view, name="a2a-rest"),
    path(
        "agents/<str:agent_id>/versions",
        versions_api.AgentVersionListView.as_view(),
        name="agent-versions",
    ),
    path(
        "agents/<str:agent_id>/versions/<str:seq>",
        versions_api.AgentVersionDetailView.as_view(),
        name="agent-version",
    ),
    path(
        "agents/<str:agent_id>/versions/<str:a>/diff/<str:b>",
        versions_api.AgentVersionDiffView.as_view(),
        name="agent-version-diff",
    ),
    path("agents/<str:agent_id>/refresh", api.AgentRefreshView.as_view(), name="agent-refresh"),
    path(".well-known/agent-card.json", api.registry_card_view, name="registry-card"),
    path(".well-known/agent.json", api.registry_card_view, name="registry-card-legacy"),
]
