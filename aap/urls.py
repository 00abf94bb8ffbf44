from django.urls import path

from aap import api

urlpatterns = [
    path("aap/check", api.CheckView.as_view(), name="aap-check"),
    path("aap/dealers", api.DealerListView.as_view(), name="aap-dealers"),
]
