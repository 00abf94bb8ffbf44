from django.contrib import admin
from django.utils.html import format_html

from protocols.a2a.models import AgentTask, CardDocument, QueueClaim


@admin.register(CardDocument)
class CardDocumentAdmin(admin.ModelAdmin):
    list_display = ["agent", "origin", "spec_version", "naming", "signed", "updated_at"]
    list_filter = ["origin", "spec_version", "naming", "signed"]
    search_fields = ["agent__name", "=agent__id", "sha256"]
    readonly_fields = [
        "agent",
        "origin",
        "spec_version",
        "naming",
        "signed",
        "sha256",
        "updated_at",
        "card",
    ]
    exclude = ["body"]
    list_select_related = ["agent"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="Card as served")
    def card(self, obj: CardDocument):
        return format_html("<pre>{}</pre>", bytes(obj.body).decode("utf-8", "replace"))


@admin.register(AgentTask)
class AgentTaskAdmin(admin.ModelAdmin):
    """The registry agent's A2A tasks (a discovery or registration each): read only."""

    list_display = ["id", "state", "context_id", "updated_at"]
    list_filter = ["state"]
    search_fields = ["=id", "=context_id"]
    readonly_fields = ["id", "state", "context_id", "created_at", "updated_at", "body"]
    exclude = ["scope"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(QueueClaim)
class QueueClaimAdmin(admin.ModelAdmin):
    """Queue names held by their first owner; deleting one releases it."""

    list_display = ["name", "owner", "claimed_at"]
    search_fields = ["name", "owner"]
    readonly_fields = ["name", "owner", "claimed_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
