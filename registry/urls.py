from django.contrib import admin
from django.http import JsonResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from registry import api, problems


def healthz(request) -> JsonResponse:
    """Liveness for load balancers: answers without touching the database."""
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # First: card reads (/a2a/agents/<id>) are the most frequent requests.
    path("", include("a2a.urls")),
    path("agents", api.AgentListView.as_view(), name="agents"),
    path("agents/<str:agent_id>", api.AgentDetailView.as_view(), name="agent"),
    path("agents/<str:agent_id>/endpoints", api.EndpointListView.as_view(), name="endpoints"),
    path(
        "agents/<str:agent_id>/endpoints/<str:endpoint_id>",
        api.EndpointDetailView.as_view(),
        name="endpoint",
    ),
    path("discover/agents", api.DiscoverAgentsView.as_view(), name="discover-agents"),
    path("", include("aap.urls")),
    path("admin/", admin.site.urls),
    path("api/schema", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("problems/<slug:slug>", problems.problem_type_view, name="problem-type"),
]

handler400 = "registry.problems.handler400"
handler403 = "registry.problems.handler403"
handler404 = "registry.problems.handler404"
handler500 = "registry.problems.handler500"
