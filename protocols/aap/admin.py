from django.contrib import admin

from protocols.aap.models import AAPStatus


@admin.register(AAPStatus)
class AAPStatusAdmin(admin.ModelAdmin):
    """Read only: the status is recomputed from the agent's card at every card write."""

    list_display = ["agent", "is_dealer_agent", "compliant", "aap_version", "checked_at"]
    list_filter = ["is_dealer_agent", "compliant", "aap_version"]
    search_fields = ["agent__name", "=agent__id"]
    readonly_fields = [
        "agent",
        "is_dealer_agent",
        "compliant",
        "aap_version",
        "implemented_skills",
        "checked_at",
    ]
    list_select_related = ["agent"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
