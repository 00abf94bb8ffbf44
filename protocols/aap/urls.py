from django.urls import path

from protocols.aap.views import api

urlpatterns = [
    path("aap/check", api.CheckView.as_view(), name="aap-check"),
    path("aap/dealers", api.DealerListView.as_view(), name="aap-dealers"),
]
