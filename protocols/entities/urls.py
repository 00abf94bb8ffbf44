from django.urls import path

from protocols.entities.resolution import api, views

urlpatterns = [
    path("entities", api.EntityListView.as_view(), name="entities"),
    path("entities/validate", api.ValidateView.as_view(), name="entities-validate"),
    path("entities/<str:entity_id>", api.EntityDetailView.as_view(), name="entity"),
    path("v1/provider/register", api.ProviderRegisterView.as_view(), name="entities-provider"),
    path(
        "v1/provider/register/jobs/<str:job_id>",
        api.ProviderJobView.as_view(),
        name="entities-provider-job",
    ),
    path("v1/resolve", api.ResolveView.as_view(), name="entities-resolve"),
    path(
        "v1/resolve/domain/<str:domain>",
        api.ResolveDomainView.as_view(),
        name="entities-resolve-domain",
    ),
    path("v1/nearby", api.NearbyView.as_view(), name="entities-nearby"),
    path("browse/entities/<str:entity_id>", views.entity_page, name="browse-entity"),
]
