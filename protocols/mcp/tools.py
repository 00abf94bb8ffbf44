"""The MCP server and its tools: ``discover_agents``, ``get_agent_card`` and
``register_agent``, thin over the A2A app's skills (``protocols.a2a.face.skills``: the discovery
filters and ``POST /a2a/agents``'s registration) and its card read
(``protocols.a2a.cards.selectors.card_read``).

Results are structured content (the JSON a tool returns) with its text rendering, and
every tool declares its ``outputSchema``; a refusal (a bad filter, an invalid card, no key,
an unknown agent) is a tool error whose structured content is ``{"problem": {...}}``, the
HTTP API's problem document, every error with its path.
"""

import json
import logging
import uuid
from typing import Annotated, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from protocols.a2a.cards.selectors import card_read
from protocols.a2a.face import skills
from registry.access.auth import bearer_key
from registry.agents.models import Agent
from registry.http.problems import problem_body

logger = logging.getLogger(__name__)
INSTRUCTIONS = (
    "An A2A agent registry. discover_agents finds agents by text and filters; "
    "get_agent_card returns an agent's A2A card as published; register_agent registers an "
    "agent by its card, domain or card URL and needs the registry API key as "
    "'Authorization: Bearer <key>'."
)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class AgentFound(_Open):
    """An agent found; ``cardUrl`` is null for one without an A2A card (an agent with MCP
    endpoints only, an entity's business)."""

    id: str
    name: str
    description: str
    cardUrl: str | None
    skills: list[dict[str, Any]]


class AgentsFound(_Open):
    """What discover_agents answers (its outputSchema): with the discovery parameters, the
    agents, nextCursor and sort; with an ARD query, ARD's results, referrals and pageToken."""

    agents: list[AgentFound] | None = None
    nextCursor: str | None = None
    sort: str | None = None
    results: list[dict[str, Any]] | None = None
    referrals: list[dict[str, Any]] | None = None
    pageToken: str | None = None


class Registered(_Open):
    """What register_agent answers (its outputSchema)."""

    agentId: str
    name: str
    cardUrl: str
    created: bool
    specVersion: str | None
    warnings: list[dict[str, Any]]


def _refusal(problem: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=problem["detail"])],
        structured_content={"problem": problem},
        is_error=True,
    )


async def _answer(skill, *args) -> skills.Answer:
    """A skill's answer; an unexpected failure is logged and refused without its message
    (never a database's message on the wire)."""
    try:
        return await sync_to_async(skill)(*args)
    except Exception:
        logger.exception("The MCP tool failed")
        detail = "The registry failed to answer; see its log."
        return skills.Answer(
            "rejected", detail, {"problem": problem_body(500, "server-error", detail)}
        )


def _result(answer: skills.Answer) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=answer.text)],
        structured_content=answer.data,
        is_error=answer.state != "completed",
    )


async def discover_agents(
    q: Annotated[
        str | None, Field(description="Free text: words in names, descriptions, skills and tags.")
    ] = None,
    capability: Annotated[str | None, Field(description="Skill (capability) name.")] = None,
    tag: Annotated[str | None, Field(description="Skill tag.")] = None,
    protocol: Annotated[str | None, Field(description="A2A, MCP, ACP or Generic.")] = None,
    skill: Annotated[str | None, Field(description="Skill id.")] = None,
    transport: Annotated[str | None, Field(description="Http, Amqp or AzureServiceBus.")] = None,
    protocolBinding: Annotated[str | None, Field(description="JSONRPC, HTTP+JSON, GRPC …")] = None,
    provider: Annotated[str | None, Field(description="Provider organization.")] = None,
    liveOnly: Annotated[bool | None, Field(description="Only agents live now.")] = None,
    sort: Annotated[str | None, Field(description="relevance, recent or name.")] = None,
    mode: Annotated[
        str | None,
        Field(
            description="How q ranks: hybrid (default: by words and by meaning), semantic "
            "(by meaning: finds agents that share no word with q) or keyword (by words)."
        ),
    ] = None,
    limit: Annotated[int | None, Field(description="Agents per page, 1 to 100.")] = None,
    cursor: Annotated[str | None, Field(description="nextCursor of the previous page.")] = None,
    query: Annotated[
        dict | None,
        Field(
            description="An ARD search query, {text, filter, mode}, instead of the parameters "
            "above: answered with ARD entries (results, score, source), as POST /ard/search."
        ),
    ] = None,
    federation: Annotated[str | None, Field(description="ARD: auto, referrals or none.")] = None,
    pageSize: Annotated[int | None, Field(description="ARD: entries per page, 1 to 100.")] = None,
    pageToken: Annotated[str | None, Field(description="ARD: the previous answer's.")] = None,
) -> Annotated[CallToolResult, AgentsFound]:
    """Find agents in the registry, as GET /discover/agents does: free text (q) and filters
    combine. Returns the agents (id, name, description, cardUrl: null for an agent without
    an A2A card, skills) and nextCursor.
    With an ARD query, answers as the registry's ARD search does, where it offers one."""
    given = {k: v for k, v in locals().items() if v is not None}
    if query is not None:
        return _result(await sync_to_async(skills.discover_data)(given))
    params = skills.discovery_params(given)
    if "q" in params:
        params["q"] = skills.text_query(params["q"]) or params["q"]
    return _result(await _answer(skills.discover, params))


def _card(agent_id: str) -> tuple[dict | None, dict[str, Any] | None]:
    """The agent's card, or the problem GET /a2a/agents/<id> would answer."""
    try:
        pk = uuid.UUID(agent_id)
    except ValueError:
        detail = f"'{agent_id}' is not a valid agent id (a UUID)."
        return None, problem_body(404, "not-found", detail)
    entry = card_read(pk)
    if entry is not None:
        return json.loads(entry[0]), None
    if Agent.objects.filter(pk=pk).exists():
        detail = f"Agent {agent_id} has no A2A endpoint, so it has no A2A agent card."
        return None, problem_body(404, "no-a2a-endpoint", detail)
    return None, problem_body(404, "not-found", f"There is no agent {agent_id}.")


async def get_agent_card(
    agent_id: Annotated[
        str, Field(description="The agent's id (a UUID), as discover_agents lists it.")
    ],
) -> Annotated[CallToolResult, dict[str, Any]]:
    """The agent's A2A card, exactly as the registry serves it at /a2a/agents/<id>."""
    card, problem = await sync_to_async(_card)(agent_id)
    if card is None:
        return _refusal(problem)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(card))], structured_content=card
    )


async def register_agent(
    ctx: Context,
    card: Annotated[
        dict[str, Any] | None, Field(description="The A2A agent card (1.0, 0.3 or hybrid).")
    ] = None,
    domain: Annotated[str | None, Field(description="Fetch the card from this domain.")] = None,
    url: Annotated[str | None, Field(description="Fetch the card from this https URL.")] = None,
) -> Annotated[CallToolResult, Registered]:
    """Register an agent by its card, or by a domain or URL the registry fetches the card
    from, as POST /a2a/agents does. Needs the registry API key as a bearer token. Returns
    the agent id and card URL, or every problem of the card with its path."""
    body = {k: v for k, v in (("card", card), ("domain", domain), ("url", url)) if v is not None}
    key = bearer_key((ctx.headers or {}).get("authorization", ""))
    return _result(await _answer(skills.register, body, key))


def mcp_server() -> MCPServer:
    server = MCPServer(
        name=settings.REGISTRY_NAME, instructions=INSTRUCTIONS, version=settings.REGISTRY_VERSION
    )
    read_only = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    server.add_tool(discover_agents, annotations=read_only)
    server.add_tool(get_agent_card, annotations=read_only)
    server.add_tool(
        register_agent, annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False)
    )
    return server
