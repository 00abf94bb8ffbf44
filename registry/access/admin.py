"""The admin's pages for API keys (listed, revoked, given an expiry) and the audit log
(read only)."""

from django.contrib import admin

from registry.access.audit import audit_actor, audit_record
from registry.access.models import ApiKey, AuditEntry


def as_admin_user(request) -> None:
    """Audit what follows in this request as the admin user's doing."""
    audit_actor.set((f"admin:{request.user.get_username()}", ""))


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
    # Groups are given over the API (PATCH /api-keys/<id>), which checks and audits them.
    readonly_fields = ["id", "prefix", "owner", "scope", "groups", "created_at", "last_used_at"]
    fields = [
        "id",
        "prefix",
        "owner",
        "scope",
        "groups",
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
            as_admin_user(request)
            audit_record(
                "api-key.revoke" if obj.revoked_at else "api-key.restore",
                object_repr=f"{obj.prefix}… ({obj.owner})",
                after={"revokedAt": obj.revoked_at.isoformat() if obj.revoked_at else None},
            )
        if "expires_at" in form.changed_data:
            as_admin_user(request)
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
