"""The public pages: home, browse (discovery's search as HTML) and an agent's page."""

import functools
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_safe

from registry.access.throttles import client_ip, window_allows
from registry.http.problems import ProblemError, page_answer
from web import selectors


def _context(request: HttpRequest, **extra) -> dict:
    return {"registry_name": settings.REGISTRY_NAME, "request": request, **extra}


def _link(params: dict[str, str], **changes: str | None) -> str:
    """/browse with ``params`` changed (a None value drops the parameter)."""
    merged = {k: v for k, v in {**params, **changes}.items() if v}
    return "/browse" + (f"?{urlencode(merged)}" if merged else "")


def read_limited(view):
    """The API's per-client read limit (RATE_LIMIT_READ) on a page: a 429 page beyond it."""

    @functools.wraps(view)
    def limited(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        wait = window_allows("read", f"ip:{client_ip(request)}", settings.RATE_LIMIT_READ)
        if wait is None:
            return view(request, *args, **kwargs)
        response = page_answer(render(request, "web/429.html", _context(request), status=429))
        response["Retry-After"] = str(int(wait + 0.999))
        return response

    return limited


@require_safe
@read_limited
def home(request: HttpRequest) -> HttpResponse:
    serializer_context = {"request": request}
    return render(
        request,
        "web/home.html",
        _context(
            request,
            counts=selectors.home_counts(),
            recent=selectors.recent_agents(serializer_context),
        ),
    )


@require_safe
@read_limited
def browse(request: HttpRequest) -> HttpResponse:
    context = _context(
        request,
        flags=selectors.flag_list(),
        flag_names=[name for name, _ in selectors.flag_list()],
        sorts=selectors.SORTS,
        modes=selectors.MODES,
        params=selectors.page_params(request.GET),
    )
    try:
        result = selectors.search(request.GET, {"request": request})
    except selectors.SearchError as error:
        context["error"] = str(error)
        return page_answer(render(request, "web/browse.html", context, status=400))
    params = {k: v for k, v in result.params.items() if k != "cursor"}
    for facet in result.facets:
        for value in facet["values"]:
            value["active"] = params.get(facet["param"]) == value["value"]
            value["link"] = _link(
                params, **{facet["param"]: None if value["active"] else value["value"]}
            )
    context.update(
        result=result,
        facets=result.facets,
        active=[
            {"name": k, "value": v, "link": _link(params, **{k: None})}
            for k, v in params.items()
            if k not in ("q", "sort")
        ],
        next_link=_link(params, cursor=result.next_cursor) if result.next_cursor else None,
        first_link=_link(params) if "cursor" in result.params else None,
    )
    return render(request, "web/browse.html", context)


@require_safe
@read_limited
def agent_page(request: HttpRequest, agent_id: str) -> HttpResponse:
    found = selectors.agent_page(agent_id, {"request": request})
    if found is None:
        return page_answer(
            render(request, "web/404.html", _context(request, agent_id=agent_id), status=404)
        )
    agent, panels = found
    skills = next((p["skills"] for p in panels if p.get("skills") is not None), None)
    response = render(
        request, "web/agent.html", _context(request, agent=agent, panels=panels, skills=skills)
    )
    if agent["unlisted"]:  # a staff member's view of an unlisted agent: kept by no cache
        response["Cache-Control"] = "private, no-store"
    return response


REPORT_REASONS = [
    ("spam", "Spam"),
    ("impersonation", "Impersonates someone"),
    ("malicious", "Malicious (phishing, malware, hidden instructions)"),
    ("broken", "Broken (does not answer, wrong endpoints)"),
    ("other", "Something else"),
]


@require_http_methods(["GET", "HEAD", "POST"])
@read_limited
def report_page(request: HttpRequest, agent_id: str) -> HttpResponse:
    """Report an agent to the moderators (the API's POST /agents/<id>/reports, as a form)."""
    found = selectors.agent_page(agent_id, {"request": request})
    if found is None:
        return page_answer(
            render(request, "web/404.html", _context(request, agent_id=agent_id), status=404)
        )
    agent = found[0]
    context = _context(request, agent=agent, reasons=REPORT_REASONS, sent=False, error="")
    if request.method == "POST":
        reason, detail = request.POST.get("reason", ""), request.POST.get("detail", "")[:2000]
        if reason not in dict(REPORT_REASONS):
            context["error"] = "Choose a reason."
            return page_answer(render(request, "web/report.html", context, status=400))
        try:
            selectors.agent_report(agent["id"], reason, detail, client_ip(request))
        except ProblemError as exc:
            context["error"] = str(exc.detail)
            status = exc.status_code
            return page_answer(render(request, "web/report.html", context, status=status))
        context["sent"] = True
    return render(request, "web/report.html", context)
