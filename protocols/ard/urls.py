from django.urls import path

from protocols.ard.catalog import api
from protocols.ard.search import api as search_api

urlpatterns = [
    path(".well-known/ai-catalog.json", api.ai_catalog_view, name="ai-catalog"),
    path(".well-known/ard.json", api.ard_manifest_view, name="ard-manifest"),
    path("ard/catalog/<int:number>", api.catalog_page_view, name="ard-catalog-page"),
    path("ard/search", search_api.SearchView.as_view(), name="ard-search"),
    path("ard/explore", search_api.ExploreView.as_view(), name="ard-explore"),
    path("ard/agents", search_api.AgentsView.as_view(), name="ard-agents"),
    path("ard/agents/<str:identifier>", search_api.AgentView.as_view(), name="ard-agent"),
    path("ard/sources", search_api.SourcesView.as_view(), name="ard-sources"),
    path("ard/sources/<str:source_id>", search_api.SourceView.as_view(), name="ard-source"),
]
