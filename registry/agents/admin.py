from django.contrib import admin, messages

from registry.access.admin import as_admin_user
from registry.agents import removal, services
from registry.agents.models import Agent, Capability, Endpoint
from registry.http.problems import ProblemError


class NoAddMixin:
    """Agents, endpoints and capabilities are created through the API (validation, cards,
    audit): the admin browses, moderates (owner changes, deletes) and has no Add pages."""

    def has_add_permission(self, request, obj=None):
        return False


class ReadOnlyMixin(NoAddMixin):
    """Endpoints and capabilities change through the API's services only (listings, the
    served card, the data generation, the apps' checks): here they are read, never deleted."""

    def has_delete_permission(self, request, obj=None):
        return False


class EndpointInline(NoAddMixin, admin.TabularInline):
    model = Endpoint
    extra = 0
    fields = ["name", "protocol", "transport", "address", "liveness_model", "last_alive_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True


class CapabilityInline(NoAddMixin, admin.TabularInline):
    model = Capability
    extra = 0
    fields = ["name", "description", "tags", "external_id"]
    readonly_fields = fields
    can_delete = False


@admin.register(Agent)
class AgentAdmin(NoAddMixin, admin.ModelAdmin):
    """Browse and moderate agents. Content changes go through the API so cards stay true."""

    list_display = ["name", "owner", "source", "version", "visibility", "created_at", "updated_at"]
    list_filter = [
        "source",
        "visibility",
        "endpoints__protocol",
        "endpoints__transport",
        "created_at",
    ]
    search_fields = ["name", "description", "owner", "=id", "capabilities__name"]
    fields = [
        "id",
        "name",
        "description",
        "owner",
        "version",
        "source",
        "visibility",
        "visibility_groups",
        "created_at",
        "updated_at",
    ]
    # Only the owner is edited here (a transfer, through the service); who may read the
    # agent is its owner's choice, through the API (validated and audited there).
    readonly_fields = [name for name in fields if name != "owner"]
    inlines = [EndpointInline, CapabilityInline]
    date_hierarchy = "created_at"
    list_per_page = 50

    def get_queryset(self, request):
        return super().get_queryset(request).distinct()

    def save_model(self, request, obj, form, change):
        # Writes go through the services, so they are audited and cards stay current.
        as_admin_user(request)
        if change and "owner" in form.changed_data:
            agent = Agent.objects.get(pk=obj.pk)
            try:
                services.agent_update(agent=agent, owner=obj.owner)
            except ProblemError as exc:  # a protocol app refused the move; nothing changed
                self.message_user(request, exc.problem_detail, level=messages.ERROR)

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        # An agent's endpoints and capabilities go with it, through the service.
        perms_needed -= {Endpoint._meta.verbose_name, Capability._meta.verbose_name}
        return deleted, counts, perms_needed, protected

    def delete_model(self, request, obj):
        as_admin_user(request)
        removal.agent_delete(agent=obj)

    def delete_queryset(self, request, queryset):
        as_admin_user(request)
        for agent in queryset:
            removal.agent_delete(agent=agent)


@admin.register(Endpoint)
class EndpointAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["name", "agent", "protocol", "transport", "address", "liveness_model"]
    list_filter = ["protocol", "transport", "liveness_model"]
    search_fields = ["name", "address", "agent__name", "=id"]
    readonly_fields = [f.name for f in Endpoint._meta.fields]
    list_select_related = ["agent"]


@admin.register(Capability)
class CapabilityAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["name", "agent", "external_id"]
    search_fields = ["name", "description", "external_id", "agent__name"]
    readonly_fields = [f.name for f in Capability._meta.fields]
    list_select_related = ["agent"]
