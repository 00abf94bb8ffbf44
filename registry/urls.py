from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from registry import extensions, health
from registry.access import api as keys_api
from registry.access import staff_urls
from registry.agents import api as agents_api
from registry.agents import ownership_api
from registry.discovery import api as discovery_api
from registry.events import api as events_api
from registry.events.stream import events_view
from registry.http import docs_site, problems
from registry.liveness import api as liveness_api
from registry.moderation import api as moderation_api
from registry.moderation import publishers_api, reports_api
from registry.observability import scrape


def app_routes(*, first: bool) -> list:
    """The URLconfs the protocol apps registered (registry.extensions.register_urls)."""
    return [path("", include(r.module)) for r in extensions.routes.read() if r.first == first]


urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", scrape.metrics_view, name="metrics"),
    *app_routes(first=True),
    path("agents", discovery_api.AgentListView.as_view(), name="agents"),
    path("agents/<str:agent_id>", agents_api.AgentDetailView.as_view(), name="agent"),
    path(
        "agents/<str:agent_id>/endpoints", agents_api.EndpointListView.as_view(), name="endpoints"
    ),
    path(
        "agents/<str:agent_id>/endpoints/<str:endpoint_id>",
        agents_api.EndpointDetailView.as_view(),
        name="endpoint",
    ),
    path(
        "agents/<str:agent_id>/endpoints/<str:endpoint_id>/heartbeat",
        liveness_api.EndpointHeartbeatView.as_view(),
        name="endpoint-heartbeat",
    ),
    path(
        "agents/<str:agent_id>/endpoints/<str:endpoint_id>/renew",
        liveness_api.EndpointHeartbeatView.as_view(),
        name="endpoint-renew",
    ),
    path(
        "agents/<str:agent_id>/heartbeat",
        liveness_api.AgentHeartbeatView.as_view(),
        name="heartbeat",
    ),
    path(
        "agents/<str:agent_id>/liveness", liveness_api.AgentLivenessView.as_view(), name="liveness"
    ),
    path(
        "agents/<str:agent_id>/deprecate",
        agents_api.AgentDeprecateView.as_view(),
        name="agent-deprecate",
    ),
    path(
        "agents/<str:agent_id>/undeprecate",
        agents_api.AgentUndeprecateView.as_view(),
        name="agent-undeprecate",
    ),
    path(
        "agents/<str:agent_id>/transfers",
        ownership_api.AgentTransferListView.as_view(),
        name="agent-transfers",
    ),
    path(
        "agents/<str:agent_id>/quarantine",
        moderation_api.AgentQuarantineView.as_view(),
        name="agent-quarantine",
    ),
    path(
        "agents/<str:agent_id>/moderation",
        moderation_api.AgentModerationView.as_view(),
        name="agent-moderation",
    ),
    path(
        "agents/<str:agent_id>/approve",
        moderation_api.AgentApproveView.as_view(),
        name="agent-approve",
    ),
    path(
        "agents/<str:agent_id>/reject",
        moderation_api.AgentRejectView.as_view(),
        name="agent-reject",
    ),
    path(
        "agents/<str:agent_id>/reports",
        reports_api.AgentReportListView.as_view(),
        name="agent-reports",
    ),
    path("reports", reports_api.ReportListView.as_view(), name="reports"),
    path(
        "reports/<str:report_id>/resolve",
        reports_api.ReportResolveView.as_view(),
        name="report-resolve",
    ),
    path("moderation", moderation_api.ModerationQueueView.as_view(), name="moderation"),
    path("publishers", publishers_api.PublisherListView.as_view(), name="publishers"),
    path(
        "publishers/<str:name>/verified",
        publishers_api.PublisherVerifiedView.as_view(),
        name="publisher-verified",
    ),
    path("blocklist", moderation_api.BlocklistView.as_view(), name="blocklist"),
    path("blocklist/<str:entry_id>", moderation_api.BlockEntryView.as_view(), name="block-entry"),
    path("transfers", ownership_api.TransferListView.as_view(), name="transfers"),
    path(
        "transfers/<str:transfer_id>", ownership_api.TransferDetailView.as_view(), name="transfer"
    ),
    path(
        "transfers/<str:transfer_id>/accept",
        ownership_api.TransferAcceptView.as_view(),
        name="transfer-accept",
    ),
    path(
        "transfers/<str:transfer_id>/cancel",
        ownership_api.TransferCancelView.as_view(),
        name="transfer-cancel",
    ),
    path("claims", ownership_api.ClaimListView.as_view(), name="claims"),
    path("claims/<str:claim_id>", ownership_api.ClaimDetailView.as_view(), name="claim"),
    path(
        "claims/<str:claim_id>/verify", ownership_api.ClaimVerifyView.as_view(), name="claim-verify"
    ),
    path("api-keys", keys_api.ApiKeyListView.as_view(), name="api-keys"),
    path("api-keys/<str:key_id>", keys_api.ApiKeyDetailView.as_view(), name="api-key"),
    path(
        "api-keys/<str:key_id>/rotate", keys_api.ApiKeyRotateView.as_view(), name="api-key-rotate"
    ),
    path("discover/agents", discovery_api.DiscoverAgentsView.as_view(), name="discover-agents"),
    path("events", events_view, name="events"),
    path("subscriptions", events_api.SubscriptionListView.as_view(), name="subscriptions"),
    path(
        "subscriptions/<str:subscription_id>",
        events_api.SubscriptionDetailView.as_view(),
        name="subscription",
    ),
    path(
        "subscriptions/<str:subscription_id>/deliveries",
        events_api.DeliveryListView.as_view(),
        name="subscription-deliveries",
    ),
    path(
        "subscriptions/<str:subscription_id>/redeliver",
        events_api.RedeliverView.as_view(),
        name="subscription-redeliver",
    ),
    path(
        "subscriptions/<str:subscription_id>/rotate-secret",
        events_api.SecretRotateView.as_view(),
        name="subscription-secret-rotate",
    ),
    *app_routes(first=False),
    path("admin/login/", staff_urls.admin_login),
    path("admin/", admin.site.urls),
    path("oidc/", include(staff_urls)),
    path("api/schema", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI from the project's static files, with no inline code (its start-up script
    # is /api/docs?script): it works offline and under a strict Content-Security-Policy.
    path(
        "api/docs",
        SpectacularSwaggerSplitView.as_view(
            url_name="schema", template_name="registry/swagger_ui.html"
        ),
        name="docs",
    ),
    path("problems/<slug:slug>", problems.problem_type_view, name="problem-type"),
    # The documentation site, once `make docs` built it (registry/http/docs_site.py).
    path("docs", RedirectView.as_view(url="/docs/")),
    path("docs/", docs_site.docs_site, name="docs-site"),
    re_path(r"^docs/(?P<path>.+)$", docs_site.docs_site),
]

handler400 = "registry.http.problems.handler400"
handler403 = "registry.http.problems.handler403"
handler404 = "registry.http.problems.handler404"
handler500 = "registry.http.problems.handler500"
