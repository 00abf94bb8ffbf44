from django.contrib import admin, messages

from registry import services
from registry.audit import audit_actor, audit_record
from registry.models import Agent, ApiKey, AuditEntry, Capability, Endpoint
from registry.problems import ProblemError


def _as_admin_user(request) -> None:
    audit_actor.set((f"admin:{request.user.get_username()}", ""))


class NoAddMixin:
    """Agents, endpoints and capabilities are created through the API (validation, cards,
    audit): the admin browses, moderates (owner changes, deletes) and has no Add pages."""

    def has_add_permission(self, request, obj=None):
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

    def save_model(self, request, obj, form, change):
        # Writes go through the services, so they are audited and cards stay current.
        _as_admin_user(request)
        if change and "owner" in form.changed_data:
            agent = Agent.objects.get(pk=obj.pk)
            try:
                services.agent_update(agent=agent, owner=obj.owner)
            except ProblemError as exc:  # a protocol app refused the move; nothing changed
                self.message_user(request, exc.problem_detail, level=messages.ERROR)

    def delete_model(self, request, obj):
        _as_admin_user(request)
        services.agent_delete(agent=obj)

    def delete_queryset(self, request, queryset):
        _as_admin_user(request)
        for agent in queryset:
            services.agent_delete(agent=agent)


@admin.register(Endpoint)
class EndpointAdmin(NoAddMixin, admin.ModelAdmin):
    list_display = ["name", "agent", "protocol", "transport", "address", "liveness_model"]
    list_filter = ["protocol", "transport", "liveness_model"]
    search_fields = ["name", "address", "agent__name", "=id"]
    readonly_fields = [f.name for f in Endpoint._meta.fields]
    list_select_related = ["agent"]


@admin.register(Capability)
class CapabilityAdmin(NoAddMixin, admin.ModelAdmin):
    list_display = ["name", "agent", "external_id"]
    search_fields = ["name", "description", "external_id", "agent__name"]
    readonly_fields = [f.name for f in Capability._meta.fields]
    list_select_related = ["agent"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created with `POST /api-keys` or `manage.py create_api_key`; here they are
    listed, revoked and given an expiry."""

    list_display = [
        "prefix",
        "owner",
        "scope",
        "label",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = ["scope", "revoked_at", "expires_at"]
    search_fields = ["owner", "prefix", "label"]
    readonly_fields = ["id", "prefix", "owner", "scope", "created_at", "last_used_at"]
    fields = [
        "id",
        "prefix",
        "owner",
        "scope",
        "label",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if "revoked_at" in form.changed_data:
            _as_admin_user(request)
            audit_record(
                "api-key.revoke" if obj.revoked_at else "api-key.restore",
                object_repr=f"{obj.prefix}… ({obj.owner})",
                after={"revokedAt": obj.revoked_at.isoformat() if obj.revoked_at else None},
            )
        if "expires_at" in form.changed_data:
            _as_admin_user(request)
            audit_record(
                "api-key.expire",
                object_repr=f"{obj.prefix}… ({obj.owner})",
                after={"expiresAt": obj.expires_at.isoformat() if obj.expires_at else None},
            )


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ["at", "actor", "action", "object_repr", "agent_id"]
    list_filter = ["action", "at"]
    search_fields = ["actor", "object_repr", "=agent_id", "key_prefix"]
    date_hierarchy = "at"
    readonly_fields = [
        "at",
        "actor",
        "key_prefix",
        "action",
        "agent_id",
        "object_repr",
        "before",
        "after",
    ]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
