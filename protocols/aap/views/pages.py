"""The AAP check page: paste a card and manifest, or give a domain; read the checklist."""

import json
import uuid
from collections import Counter

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_protect

from protocols.a2a.cards.selectors import card_read
from protocols.aap.checks.checker import aap_check
from protocols.aap.checks.report import STATUS_MARKS, AAPReport
from protocols.aap.statuses.services import aap_check_domain
from protocols.aap.views.forms import CheckForm
from registry.access.throttles import fetch_rate_wait

STATUS_ORDER = ("pass", "fail", "warn", "skip")


def _report_context(report: AAPReport) -> dict:
    counts = Counter(r.status for r in report.results)
    return {
        "report": report,
        "rows": [{"mark": STATUS_MARKS[r.status], **r.as_dict()} for r in report.results],
        "counts": [(status, counts[status]) for status in STATUS_ORDER],
    }


def _stored_card(agent_id: str) -> object | None:
    try:
        stored = card_read(uuid.UUID(agent_id))
    except ValueError:
        return None
    return json.loads(stored[0]) if stored else None


# The URL's API view hands GETs and form posts here; it is CSRF-exempt like every
# DRF view, so the form's protection is applied on this function.
@csrf_protect
def check_page(request: HttpRequest) -> HttpResponse:
    context: dict = {"registry_name": settings.REGISTRY_NAME}
    status = 200
    if request.method == "POST":
        form = CheckForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            wait = fetch_rate_wait(request) if data["domain"] else None
            if wait is not None:
                form.add_error(
                    "domain", f"Too many domain checks from here; try again in {wait:.0f} s."
                )
                status = 429
            elif data["domain"]:
                report = aap_check_domain(data["domain"])
                context["checked"] = f"https://{data['domain']}"
                context.update(_report_context(report))
            else:
                report = aap_check(data["card"], data["manifest"])
                context["checked"] = "the pasted documents"
                context.update(_report_context(report))
    elif card := _stored_card(request.GET.get("agent", "")):
        # ?agent=<id>: the report of a registered agent's card, as its page links to it.
        form = CheckForm(initial={"card": json.dumps(card, indent=2, ensure_ascii=False)})
        context["checked"] = "the registered card of agent " + request.GET["agent"]
        context.update(_report_context(aap_check(card)))
    else:
        form = CheckForm()
    context["form"] = form
    return render(request, "aap/check.html", context, status=status)
