from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from registry import problems

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("problems/<slug:slug>", problems.problem_type_view, name="problem-type"),
]

handler400 = "registry.problems.handler400"
handler403 = "registry.problems.handler403"
handler404 = "registry.problems.handler404"
handler500 = "registry.problems.handler500"
