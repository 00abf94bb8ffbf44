from django.urls import path

from web import views

urlpatterns = [
    path("", views.home, name="home"),
    path("browse", views.browse, name="browse"),
    path("browse/agents/<str:agent_id>", views.agent_page, name="browse-agent"),
    path("browse/agents/<str:agent_id>/report", views.report_page, name="browse-agent-report"),
]
