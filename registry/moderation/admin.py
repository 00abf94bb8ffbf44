"""The moderation queue in the Django admin (staff): the agents waiting for review and those
in quarantine, newest first; quarantine (with its reason) and release through the same
services as the API, so every decision is audited and announced."""

from django import forms
from django.contrib import admin, messages

from registry.access.admin import as_admin_user
from registry.moderation import services
from registry.moderation.models import Moderation


class QuarantinedFilter(admin.SimpleListFilter):
    title = "quarantine"
    parameter_name = "quarantined"

    def lookups(self, request, model_admin):
        return [("yes", "Quarantined"), ("no", "Not quarantined")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(quarantined_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(quarantined_at__isnull=True)
        return queryset


class ModerationForm(forms.ModelForm):
    quarantined = forms.BooleanField(
        required=False, help_text="Hidden from every public read; kept for its owner and admins."
    )

    class Meta:
        model = Moderation
        fields = ["agent", "quarantine_reason"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["quarantined"].initial = bool(self.instance.quarantined_at)

    def clean(self):
        data = super().clean()
        if data.get("quarantined") and not (data.get("quarantine_reason") or "").strip():
            self.add_error("quarantine_reason", "Say why: the owner and the audit log read it.")
        return data


@admin.register(Moderation)
class ModerationAdmin(admin.ModelAdmin):
    form = ModerationForm
    list_display = ["agent", "owner", "admission", "is_quarantined", "decided_by", "updated_at"]
    list_filter = ["admission", QuarantinedFilter]
    search_fields = ["agent__name", "agent__owner", "=agent__id"]
    list_select_related = ["agent"]
    raw_id_fields = ["agent"]
    readonly_fields = ["admission", "admission_reason", "quarantined_at", "decided_by"]
    actions = ["release"]
    ordering = ["-updated_at", "agent"]

    @admin.display(description="owner")
    def owner(self, obj: Moderation) -> str:
        return obj.agent.owner

    @admin.display(boolean=True, description="quarantined")
    def is_quarantined(self, obj: Moderation) -> bool:
        return obj.quarantined_at is not None

    def get_fields(self, request, obj=None):
        return ["agent", "quarantined", "quarantine_reason", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        return [*self.readonly_fields, "agent"] if obj is not None else self.readonly_fields

    def has_delete_permission(self, request, obj=None):
        return False  # decisions are undone by new decisions, each audited

    def save_model(self, request, obj, form, change):
        as_admin_user(request)
        agent = form.cleaned_data.get("agent") or obj.agent
        if form.cleaned_data.get("quarantined"):
            services.agent_quarantine(agent=agent, reason=form.cleaned_data["quarantine_reason"])
        else:
            services.agent_release(agent=agent)
            services.moderation_of(agent)  # the row the admin's page goes back to
        obj.refresh_from_db()  # as the services left it

    @admin.action(description="Release the selected agents from quarantine")
    def release(self, request, queryset):
        as_admin_user(request)
        released = 0
        for moderation in queryset.select_related("agent"):
            if moderation.quarantined_at is not None:
                services.agent_release(agent=moderation.agent)
                released += 1
        self.message_user(request, f"{released} released.", level=messages.SUCCESS)
