from django.contrib import admin

from protocols.entities.models import Entity, EntityCard, Provider, ProviderClaim


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    """Read only: an entity follows its card (or its provider's claim); the crawl and the
    API write it through the entities services."""

    list_display = ["name", "domain", "path", "format", "category", "verification_level", "flagged"]
    list_filter = ["format", "verification_level", "flagged", "category"]
    search_fields = ["name", "domain", "=agent__id"]
    list_select_related = ["agent"]
    readonly_fields = [f.name for f in Entity._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(EntityCard)
class EntityCardAdmin(admin.ModelAdmin):
    list_display = ["domain", "format", "status", "fetched_at", "next_crawl_at"]
    list_filter = ["format", "status"]
    search_fields = ["domain"]
    exclude = ["body"]
    readonly_fields = [f.name for f in EntityCard._meta.fields if f.name != "body"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ClaimInline(admin.TabularInline):
    model = ProviderClaim
    extra = 0
    fields = ["entity_id", "name", "domain", "category", "city", "country"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ["provider_id", "name", "endpoint", "owner", "updated_at"]
    search_fields = ["provider_id", "name"]
    readonly_fields = [f.name for f in Provider._meta.fields]
    inlines = [ClaimInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
