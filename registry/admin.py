from django.contrib import admin

from registry.models import Agent, ApiKey, Capability, Endpoint


class EndpointInline(admin.TabularInline):
    model = Endpoint
    extra = 0
    fields = ["name", "protocol", "transport", "address", "liveness_model", "last_alive_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True


class CapabilityInline(admin.TabularInline):
    model = Capability
    extra = 0
    fields = ["name", "description", "tags", "external_id"]
    readonly_fields = fields
    can_delete = False


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    """Browse and moderate agents. Content changes go through the API so cards stay true."""

    list_display = ["name", "owner", "source", "version", "created_at", "updated_at"]
    list_filter = ["source", "endpoints__protocol", "endpoints__transport", "created_at"]
    search_fields = ["name", "description", "owner", "=id", "capabilities__name"]
    readonly_fields = ["id", "name", "description", "version", "source", "created_at", "updated_at"]
    fields = ["id", "name", "description", "owner", "version", "source", "created_at", "updated_at"]
    inlines = [EndpointInline, CapabilityInline]
    date_hierarchy = "created_at"
    list_per_page = 50

    def get_queryset(self, request):
        return super().get_queryset(request).distinct()


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "agent", "protocol", "transport", "address", "liveness_model"]
    list_filter = ["protocol", "transport", "liveness_model"]
    search_fields = ["name", "address", "agent__name", "=id"]
    readonly_fields = [f.name for f in Endpoint._meta.fields]
    list_select_related = ["agent"]


@admin.register(Capability)
class CapabilityAdmin(admin.ModelAdmin):
    list_display = ["name", "agent", "external_id"]
    search_fields = ["name", "description", "external_id", "agent__name"]
    readonly_fields = [f.name for f in Capability._meta.fields]
    list_select_related = ["agent"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created with `manage.py create_api_key`; here they are listed and revoked."""

    list_display = ["prefix", "owner", "scope", "label", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["scope", "revoked_at"]
    search_fields = ["owner", "prefix", "label"]
    readonly_fields = ["id", "prefix", "owner", "scope", "created_at", "last_used_at"]
    fields = ["id", "prefix", "owner", "scope", "label", "created_at", "last_used_at", "revoked_at"]

    def has_add_permission(self, request):
        return False
