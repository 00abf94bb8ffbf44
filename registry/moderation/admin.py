"""The moderation queue in the Django admin (staff): the agents waiting for review (new, or
a change with its diff against what the agent serves) and those in quarantine, newest
first; quarantine (with its reason) and release through the same services as the API, so
every decision is audited and announced."""

import json

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.utils.html import format_html, format_html_join

from registry.access.admin import as_admin_user
from registry.moderation import services
from registry.moderation.models import Moderation, PendingChange, Report


def _pending(obj: Moderation) -> PendingChange | None:
    try:
        return obj.agent.pending_change
    except PendingChange.DoesNotExist:
        return None


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


class DecisionForm(ActionForm):
    reason = forms.CharField(
        required=False, max_length=2000, help_text="The owner reads it (required to reject)."
    )


@admin.register(Moderation)
class ModerationAdmin(admin.ModelAdmin):
    form = ModerationForm
    action_form = DecisionForm
    list_display = [
        "agent",
        "owner",
        "admission",
        "admission_reason",
        "is_quarantined",
        "open_reports",
        "rules",
        "change_diff",
        "updated_at",
    ]
    list_filter = ["admission", "change_pending", QuarantinedFilter]
    search_fields = ["agent__name", "agent__owner", "=agent__id"]
    list_select_related = ["agent", "agent__pending_change"]
    raw_id_fields = ["agent"]
    readonly_fields = [
        "admission",
        "admission_reason",
        "quarantined_at",
        "decided_by",
        "open_reports",
        "card",
        "scan_findings",
        "pending_change",
        "reports",
    ]
    actions = ["approve", "reject", "release"]
    ordering = ["-updated_at", "agent"]

    @admin.display(description="findings")
    def rules(self, obj: Moderation) -> str:
        return ", ".join(sorted({f["rule"] for f in obj.findings})) or "-"

    @admin.display(description="agent")
    def card(self, obj: Moderation) -> str:
        # Staff see an unlisted agent's page; its card versions and their diffs are in the
        # API (/agents/<id>/versions, .../versions/<a>/diff/<b>) with an admin key.
        return format_html(
            '<a href="/browse/agents/{}">its page</a> · versions: <code>/agents/{}/versions</code>',
            obj.agent_id,
            obj.agent_id,
        )

    @admin.display(description="scan findings")
    def scan_findings(self, obj: Moderation) -> str:
        if not obj.findings:
            return "-"
        return format_html_join(
            "",
            "<p><strong>{}</strong> ({}, {}) at <code>{}</code>: {}</p>",
            (
                (f["rule"], f["severity"], f["verdict"], f["path"] or "card", f["message"])
                for f in obj.findings
            ),
        )

    @admin.display(description="change")
    def change_diff(self, obj: Moderation) -> str:
        """The waiting change's diff against what the agent serves, one line per operation."""
        pending = _pending(obj)
        if pending is None or pending.state != PendingChange.State.PENDING:
            return "-"
        if pending.patch is None:
            return "(diff too large: see the API)"
        return format_html_join(
            "", "<div><code>{} {}</code></div>", ((op["op"], op["path"]) for op in pending.patch)
        )

    @admin.display(description="waiting change")
    def pending_change(self, obj: Moderation) -> str:
        pending = _pending(obj)
        if pending is None:
            return "-"
        head = format_html(
            "<p><strong>{}</strong> since {} by {}: {}</p>",
            pending.state,
            pending.submitted_at,
            pending.submitted_by,
            pending.reason,
        )
        diff = format_html_join(
            "",
            "<div><code>{} {}</code> {}</div>",
            (
                (op["op"], op["path"], json.dumps(op.get("value", op.get("from", "")))[:500])
                for op in (pending.patch or [])
            ),
        )
        found = format_html_join(
            "",
            "<p><strong>{}</strong> ({}) at <code>{}</code>: {}</p>",
            (
                (f["rule"], f["verdict"], f["path"] or "card", f["message"])
                for f in pending.findings
            ),
        )
        return head + diff + found

    @admin.display(description="open reports")
    def reports(self, obj: Moderation) -> str:
        rows = Report.objects.filter(agent_id=obj.agent_id, status=Report.Status.OPEN)[:50]
        if not rows:
            return "-"
        return format_html_join(
            "", "<p><strong>{}</strong>: {}</p>", ((r.reason, r.detail) for r in rows)
        )

    @admin.display(description="owner")
    def owner(self, obj: Moderation) -> str:
        return obj.agent.owner

    @admin.display(boolean=True, description="quarantined")
    def is_quarantined(self, obj: Moderation) -> bool:
        return obj.quarantined_at is not None

    def get_fields(self, request, obj=None):
        return ["agent", "quarantined", "quarantine_reason", *self.readonly_fields]

    @admin.action(description="Approve the selected agents (or their changes)")
    def approve(self, request, queryset):
        as_admin_user(request)
        reason = request.POST.get("reason", "")
        count = 0
        for moderation in queryset.select_related("agent"):
            services.agent_approve(agent=moderation.agent, reason=reason)
            count += 1
        self.message_user(request, f"{count} approved.", level=messages.SUCCESS)

    @admin.action(description="Reject the selected agents (or their changes), with the reason")
    def reject(self, request, queryset):
        reason = request.POST.get("reason", "").strip()
        if not reason:
            self.message_user(request, "Give the reason to reject.", level=messages.ERROR)
            return
        as_admin_user(request)
        count = 0
        for moderation in queryset.select_related("agent"):
            services.agent_reject(agent=moderation.agent, reason=reason)
            count += 1
        self.message_user(request, f"{count} rejected.", level=messages.SUCCESS)

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
