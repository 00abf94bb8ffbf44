"""GET /mcp/servers/<endpoint id>/server-card.json: an MCP endpoint's server card, public,
with its digest as ETag (a conditional GET answers 304)."""

import uuid

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.views.decorators.http import require_GET

from protocols.mcp.servers.cards import MEDIA_TYPE, digest, served_cards
from registry.access.throttles import read_limited
from registry.agents.models import Agent, Endpoint
from registry.agents.selectors import agent_queryset, unlisted_problem
from registry.agents.visibility import may_read, request_reader
from registry.http.problems import problem_response

CACHE_CONTROL = "public, max-age=300"


@require_GET
def server_card_serve(request: HttpRequest, endpoint_id: str) -> HttpResponse:
    limited = read_limited(request)
    if limited is not None:
        return limited
    try:
        pk = uuid.UUID(endpoint_id)
    except ValueError:
        return problem_response(404, "not-found", f"There is no endpoint '{endpoint_id}'.")
    agent = agent_queryset().filter(endpoints__pk=pk).first()
    endpoint = next((e for e in agent.endpoints.all() if e.pk == pk), None) if agent else None
    if endpoint is None or endpoint.protocol != Endpoint.Protocol.MCP:
        return problem_response(404, "not-found", f"There is no MCP endpoint {endpoint_id}.")
    if not agent.listed:  # registry.agents.listing: as the card URL's (a restricted agent's
        reader = request_reader(request)  # is an unknown endpoint to who may not read it)
        if not may_read(reader, agent):
            if agent.visibility != Agent.Visibility.PUBLIC:
                return problem_response(
                    404, "not-found", f"There is no MCP endpoint {endpoint_id}."
                )
            response = problem_response(404, "unlisted", str(unlisted_problem(agent.pk).detail))
            response["Cache-Control"] = "no-store"
            return response
    if agent.status == Agent.Status.RETIRED:
        return problem_response(
            410, "retired", f"The agent of MCP endpoint {endpoint_id} was retired."
        )
    served = served_cards([agent]).get(pk)
    if served is None:  # no unique name to give it (servers.names.names_settle)
        return problem_response(404, "not-found", f"There is no MCP endpoint {endpoint_id}.")
    _, body = served
    etag = f'"{digest(body)}"'
    if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(body, content_type=MEDIA_TYPE)
    response["ETag"] = etag
    response["Cache-Control"] = CACHE_CONTROL if agent.listed else "private, no-store"
    return response
