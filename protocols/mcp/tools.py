"""The MCP server and its tools: ``discover_agents``, ``get_agent_card`` and
``register_agent``, thin over the A2A app's skills (``protocols.a2a.face.skills``: the discovery
filters and ``POST /a2a/agents``'s registration) and its card read
(``protocols.a2a.cards.selectors.card_read``).

Results are structured content (the JSON a tool returns) with its text rendering, and
every tool declares its ``outputSchema``; a refusal (a bad filter, an invalid card, no key,
an unknown agent) is a tool error whose structured content is ``{"problem": {...}}``, the
HTTP API's problem document, every error with its path.
"""

import inspect
import json
import logging
import uuid
from typing import Annotated, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from protocols.a2a.cards.selectors import card_read
from protocols.a2a.face import skills
from protocols.a2a.models import CardDocument
from registry import extensions
from registry.access.auth import bearer_key
from registry.agents.models import Agent
from registry.agents.selectors import unlisted_problem
from registry.agents.visibility import key_reader, may_read
from registry.http.jsonutil import Problem
from registry.http.problems import exception_problem, problem_body

logger = logging.getLogger(__name__)
_NOT_GIVEN = ("ctx", "query", "ardQuery")  # discover_agents' arguments, not its filters
INSTRUCTIONS = (
    "An A2A agent registry. discover_agents finds agents by text (q) and filters; "
    "get_agent_card returns an agent's A2A card as published; register_agent registers an "
    "agent by its card, domain or card URL and needs the registry API key as "
    "'Authorization: Bearer <key>'. Where the registry lists businesses, resolve_entity "
    "finds a business by name, words or place and answers the MCP servers that act for it."
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
    trustScore: int | None = None
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


def _invalid_all(problems: list[Problem]) -> dict[str, Any]:
    """The problem of bad arguments, each at its path, as the HTTP API's 400."""
    detail = "; ".join(f"{p.path} {p.message}" for p in problems[:3])
    more = " …" if len(problems) > 3 else ""
    return problem_body(400, "validation-error", f"{detail}{more}.", problems)


def _invalid(path: str, message: str) -> dict[str, Any]:
    return _invalid_all([Problem(path, message)])


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


DISCOVER_DESCRIPTION = """Find A2A agents (and other registered agents) by what they do, as \
GET /discover/agents does: free text in q, narrowed by filters that combine with it. Returns \
the agents (id, name, description, cardUrl: null for an agent without an A2A card, skills) \
and nextCursor for the next page. To read an agent's card, pass its id to get_agent_card; \
to find a business (a restaurant, a shop) and its MCP servers, use resolve_entity where the \
registry offers it.
For an ARD search (AI Catalog entries, federation), give ardQuery instead of q and the \
filters: an object {"text": …, "filter": {…}, "mode": …}, never text alone.
Example: {"q": "weather forecast", "tag": "weather", "limit": 5}"""


async def discover_agents(
    ctx: Context,
    q: Annotated[
        str | None,
        Field(
            description="What the agents should do, in words: 'weather forecast for Paris'. "
            "Matches names, descriptions, skills and tags."
        ),
    ] = None,
    capability: Annotated[str | None, Field(description="Skill (capability) name.")] = None,
    tag: Annotated[str | None, Field(description="Skill tag.")] = None,
    protocol: Annotated[str | None, Field(description="A2A, MCP, ACP or Generic.")] = None,
    skill: Annotated[str | None, Field(description="Skill id.")] = None,
    transport: Annotated[str | None, Field(description="Http, Amqp or AzureServiceBus.")] = None,
    protocolBinding: Annotated[str | None, Field(description="JSONRPC, HTTP+JSON, GRPC …")] = None,
    provider: Annotated[str | None, Field(description="Provider organization.")] = None,
    liveOnly: Annotated[bool | None, Field(description="Only agents live now.")] = None,
    minTrust: Annotated[
        int | None,
        Field(
            description="Only agents whose trust score (0-100: verified domain, signature, "
            "TLS, conformance, uptime, age …) is at least this."
        ),
    ] = None,
    sort: Annotated[
        str | None, Field(description="relevance, recent, name or trust (most trusted first).")
    ] = None,
    collapse: Annotated[
        bool | None,
        Field(
            description="false: every copy of an agent listed more than once; by default "
            "its canonical copy only."
        ),
    ] = None,
    mode: Annotated[
        str | None,
        Field(
            description="How q ranks: hybrid (default: by words and by meaning), semantic "
            "(by meaning: finds agents that share no word with q) or keyword (by words)."
        ),
    ] = None,
    limit: Annotated[int | None, Field(description="Agents per page, 1 to 100.")] = None,
    cursor: Annotated[str | None, Field(description="nextCursor of the previous page.")] = None,
    ardQuery: Annotated[
        dict[str, Any] | None,
        Field(
            description="An ARD search query object, instead of q and the filters: "
            '{"text": "weather", "filter": {...}, "mode": "semantic"}; answered with ARD '
            "entries (results, score, source), as POST /ard/search. Text alone goes in q."
        ),
    ] = None,
    federation: Annotated[
        str | None, Field(description="With ardQuery: auto, referrals or none.")
    ] = None,
    pageSize: Annotated[
        int | None, Field(description="With ardQuery: entries per page, 1 to 100.")
    ] = None,
    pageToken: Annotated[
        str | None, Field(description="With ardQuery: the previous answer's pageToken.")
    ] = None,
    # ardQuery's old name, accepted and not listed: an object is an ARD query, text is q.
    query: Annotated[SkipJsonSchema[dict[str, Any] | str | None], Field()] = None,
) -> Annotated[CallToolResult, AgentsFound]:
    if isinstance(query, str):
        if q is not None and q != query:
            return _refusal(_invalid("query", "is text: give it as q alone (q is given)"))
        q, query = query, None
    if query is not None:
        if ardQuery is not None:
            return _refusal(_invalid("query", "is ardQuery's old name: give ardQuery alone"))
        ardQuery = query
    given = {k: v for k, v in locals().items() if v is not None and k not in _NOT_GIVEN}
    if ardQuery is not None:
        data = {"query": ardQuery, **given}
        return _result(await _answer(skills.discover_data, data))
    ard_only = sorted({"federation", "pageSize", "pageToken"} & set(given))
    if ard_only:
        return _refusal(_invalid(ard_only[0], "applies to an ardQuery: give ardQuery too"))
    params = skills.discovery_params(given)
    if "q" in params:
        params["q"] = skills.text_query(params["q"]) or params["q"]
    key = bearer_key((ctx.headers or {}).get("authorization", ""))  # what it may read
    reader = await sync_to_async(key_reader)(key) if key else None
    return _result(await _answer(skills.discover, params, reader))


def _card(agent_id: str, key: str | None = None) -> tuple[dict | None, dict[str, Any] | None]:
    """The agent's card, or the problem GET /a2a/agents/<id> would answer."""
    try:
        pk = uuid.UUID(agent_id)
    except ValueError:
        detail = f"'{agent_id}' is not a valid agent id (a UUID)."
        return None, problem_body(404, "not-found", detail)
    entry = card_read(pk)
    if entry is not None:
        return json.loads(entry[0]), None
    agent = Agent.objects.filter(pk=pk).first()
    if agent is not None and not agent.listed:  # registry.agents.listing
        if may_read(key_reader(key), agent):
            body = CardDocument.objects.filter(agent=agent).values_list("body", flat=True).first()
            if body is not None:
                return json.loads(bytes(body)), None
        else:  # a restricted agent's is an unknown id's (registry.agents.visibility)
            problem = unlisted_problem(pk, agent.visibility)
            return None, problem_body(404, problem.slug, problem.problem_detail)
    if agent is not None:
        detail = f"Agent {agent_id} has no A2A endpoint, so it has no A2A agent card."
        return None, problem_body(404, "no-a2a-endpoint", detail)
    return None, problem_body(404, "not-found", f"There is no agent {agent_id}.")


async def get_agent_card(
    ctx: Context,
    agent_id: Annotated[
        str, Field(description="The agent's id (a UUID), as discover_agents lists it.")
    ],
) -> Annotated[CallToolResult, dict[str, Any]]:
    """Read one agent's A2A card, exactly as the registry serves it at /a2a/agents/<id>:
    its skills, interfaces (the URLs to call it at) and security schemes. Take the id from
    discover_agents' answer; an agent whose cardUrl is null has no A2A card.
    Example: {"agent_id": "7d1b9e52-3c4a-4f6e-9a0b-2c8d5e1f4a63"}"""
    key = bearer_key((ctx.headers or {}).get("authorization", ""))
    card, problem = await sync_to_async(_card)(agent_id, key)
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
    visibility: Annotated[str | None, Field(description="public, private or groups.")] = None,
    visibilityGroups: Annotated[list[str] | None, Field(description="Its groups.")] = None,
) -> Annotated[CallToolResult, Registered]:
    """Register (or update) an A2A agent in the registry, as POST /a2a/agents does: give
    exactly one of card (the agent card object), domain (the registry fetches
    https://<domain>/.well-known/agent-card.json) or url (an https URL of the card). Needs
    the registry API key as 'Authorization: Bearer <key>'. Returns the agent id and card
    URL, or every problem of the card with its path. Not for finding agents: use
    discover_agents.
    Example: {"domain": "weather.example.com"}"""
    given = {"card": card, "domain": domain, "url": url, "visibility": visibility}
    body = {
        k: v for k, v in {**given, "visibilityGroups": visibilityGroups}.items() if v is not None
    }
    key = bearer_key((ctx.headers or {}).get("authorization", ""))
    return _result(await _answer(skills.register, body, key))


# Each type error in a registry sentence (pydantic's own text for any other error).
TYPE_MESSAGES = {
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "missing": "is required",
}
# The argument that takes text, where a tool has a structured one a model may fill with it.
TEXT_ARGUMENT = {"discover_agents": "q", "resolve_entity": "query"}


def _path(location: tuple) -> str:
    path = str(location[0]) if location else ""
    for part in location[1:]:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def arguments_problems(tool: str, error: ValidationError) -> list[Problem]:
    problems = []
    for found in error.errors():
        message = TYPE_MESSAGES.get(found["type"], found["msg"][:1].lower() + found["msg"][1:])
        text = TEXT_ARGUMENT.get(tool)
        if found["type"] == "dict_type" and isinstance(found["input"], str) and text:
            message += f", not text: text goes in {text}"
        problems.append(Problem(_path(found["loc"]), message))
    return problems


class RegistryMCPServer(MCPServer):
    """The SDK's server, whose tools refuse bad arguments as every other refusal: a tool
    error with the problem document, each error at its path (an argument the tool does not
    take too, which the SDK would ignore), never pydantic's text."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        listed = {tool.name: tool for tool in await self.list_tools()}
        if name in listed:
            known = listed[name].input_schema.get("properties", {})
            # Accepted though not listed: an old name (discover_agents' query).
            accepted = set(known) | {"query"} if name == "discover_agents" else set(known)
            unknown = sorted(set(arguments) - accepted)
            if unknown:
                takes = ", ".join(known)
                return _refusal(
                    _invalid_all(
                        [
                            Problem(u, f"is not an argument of {name} (it takes {takes})")
                            for u in unknown
                        ]
                    )
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            return _refusal(_invalid_all(arguments_problems(name, exc.__cause__)))


def app_tool(tool: extensions.Tool):
    """An app's tool (``registry.extensions.Tool``) as an SDK tool: its function's
    arguments, run in a thread with the database; its refusals as problem documents."""

    async def run(**arguments) -> CallToolResult:
        given = {k: v for k, v in arguments.items() if v is not None}
        try:
            text, data = await sync_to_async(tool.answer)(**given)
        except Exception as exc:
            problem = exception_problem(exc)
            if problem is None:
                logger.exception("The MCP tool %s failed", tool.name)
                detail = "The registry failed to answer; see its log."
                problem = problem_body(500, "server-error", detail)
            return _refusal(problem)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=data
        )

    signature = inspect.signature(tool.answer)
    run.__signature__ = signature.replace(return_annotation=Annotated[CallToolResult, tool.output])
    run.__name__ = tool.name
    return run


def mcp_server() -> MCPServer:
    server = RegistryMCPServer(
        name=settings.REGISTRY_NAME, instructions=INSTRUCTIONS, version=settings.REGISTRY_VERSION
    )
    read_only = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    server.add_tool(discover_agents, description=DISCOVER_DESCRIPTION, annotations=read_only)
    server.add_tool(get_agent_card, annotations=read_only)
    server.add_tool(
        register_agent, annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False)
    )
    for tool in extensions.tools.read():
        annotations = read_only if tool.read_only else ToolAnnotations(readOnlyHint=False)
        server.add_tool(
            app_tool(tool), name=tool.name, description=tool.description, annotations=annotations
        )
    return server
