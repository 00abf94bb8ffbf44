"""Visibility over every route of the URL configuration (registry.agents.visibility).

The test walks ``get_resolver()`` with every app installed: each route must be in
``ROUTES`` (a new read endpoint cannot be forgotten: an unknown route fails the test). Each
route is called as the anonymous caller, the owner, a member of the agent's group and a
caller of another group, over a public, a private and a group agent: a caller who may not
read a restricted agent never sees its id or name, and where the URL names the agent its
answer is an unknown id's; a caller who may read it finds it where the route serves it.
"""

import json
import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from registry.access.models import ApiKey
from registry.agents.models import Agent
from registry.events.models import Event

UNKNOWN = "0f0e0d0c-0b0a-4908-8706-050403020100"
# Names found nowhere else, so that a leak of a restricted agent shows in any answer.
NAMES = {"public": "Publicus Agent", "private": "Zephyrine Agent", "groups": "Quillmate Agent"}
CALLERS = ("anonymous", "owner", "member", "other")

# How a route treats agents, for visibility:
# - READS: it serves a restricted agent to a caller who may read it (checked: it appears),
#   and nothing of it to anyone else (an unknown id's answer where the URL names it);
# - WITHHOLDS: it serves public data only (the faces, catalogs, pages, entities): nothing
#   of a restricted agent to anyone who may not read it, an unknown id's answer by URL;
# - WRITES: a write naming the agent: to a caller who may not read it, an unknown id's
#   answer (no 403 that tells it exists); readers are not called (it would write);
# - NONE: no agent data (the caller's own keys, subscriptions, transfers; the admins'
#   queues; documentation). Called when it takes no parameter, to check that still.
READS, WITHHOLDS, WRITES, NONE = "reads", "withholds", "writes", "none"
# OWNER: an owner's read of its agent (its moderation): READS for the owner alone.
OWNER = "owner"
# The placeholders that name the agent in a URL or body.
NAMING = ("id", "endpoint", "urn")

DISCOVER_MESSAGE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {
        "message": {
            "role": "ROLE_USER",
            "messageId": "m1",
            "parts": [{"data": {"q": "{word}"}}],
        }
    },
}


def _mcp(tool: str, arguments: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


# Each route (as the resolver spells it) and its calls: (kind, method, path template, body).
# Templates take {id}, {word}, {endpoint}, {urn} of the agent under test.
ROUTES: dict[str, list[tuple]] = {
    "healthz": [(NONE, "GET", "/healthz", None)],
    "readyz": [(NONE, "GET", "/readyz", None)],
    "metrics": [(NONE, "GET", "/metrics", None)],
    "a2a/agents": [(WRITES, "POST", "/a2a/agents", None)],  # registers: no agent named
    "a2a/agents/<str:agent_id>": [
        (READS, "GET", "/a2a/agents/{id}", None),
        (READS, "GET", "/a2a/agents/{id}?version=1", None),
        (READS, "GET", "/a2a/agents/{id}?version=2.2.0", None),
        (WRITES, "PUT", "/a2a/agents/{id}", {"card": {}}),
    ],
    "a2a/agents/<str:agent_id>/verify": [(WRITES, "POST", "/a2a/agents/{id}/verify", {})],
    "a2a/queue/<str:endpoint_id>": [(WITHHOLDS, "GET", "/a2a/queue/{endpoint}", None)],
    "^a2a/queue/(?P<endpoint_id>[^/]+)/(?P<path>.+)$": [
        (WITHHOLDS, "GET", "/a2a/queue/{endpoint}/tasks", None)
    ],
    "a2a/jsonrpc": [(WITHHOLDS, "POST", "/a2a/jsonrpc", DISCOVER_MESSAGE)],
    "^a2a/rest/(?P<path>.+)$": [
        (WITHHOLDS, "POST", "/a2a/rest/message:send", {"message": DISCOVER_MESSAGE["params"]})
    ],
    "agents/<str:agent_id>/versions": [(READS, "GET", "/agents/{id}/versions", None)],
    "agents/<str:agent_id>/versions/<str:seq>": [(READS, "GET", "/agents/{id}/versions/2", None)],
    "agents/<str:agent_id>/versions/<str:a>/diff/<str:b>": [
        (READS, "GET", "/agents/{id}/versions/1/diff/2", None)
    ],
    "agents/<str:agent_id>/refresh": [(WRITES, "POST", "/agents/{id}/refresh", {})],
    ".well-known/agent-card.json": [(NONE, "GET", "/.well-known/agent-card.json", None)],
    ".well-known/agent.json": [(NONE, "GET", "/.well-known/agent.json", None)],
    "agents": [
        (READS, "GET", "/agents?limit=100", None),
        (WRITES, "POST", "/agents", None),
    ],
    "agents/<str:agent_id>": [
        (READS, "GET", "/agents/{id}", None),
        (WRITES, "PATCH", "/agents/{id}", {"description": "x"}),
        (WRITES, "DELETE", "/agents/{id}", None),
    ],
    "agents/<str:agent_id>/endpoints": [(WRITES, "POST", "/agents/{id}/endpoints", {})],
    "agents/<str:agent_id>/endpoints/<str:endpoint_id>": [
        (READS, "GET", "/agents/{id}/endpoints/{endpoint}", None),
        (WRITES, "DELETE", "/agents/{id}/endpoints/{endpoint}", None),
    ],
    "agents/<str:agent_id>/endpoints/<str:endpoint_id>/heartbeat": [
        (WRITES, "POST", "/agents/{id}/endpoints/{endpoint}/heartbeat", {})
    ],
    "agents/<str:agent_id>/endpoints/<str:endpoint_id>/renew": [
        (WRITES, "POST", "/agents/{id}/endpoints/{endpoint}/renew", {})
    ],
    "agents/<str:agent_id>/heartbeat": [(WRITES, "POST", "/agents/{id}/heartbeat", {})],
    "agents/<str:agent_id>/liveness": [(READS, "GET", "/agents/{id}/liveness", None)],
    "agents/<str:agent_id>/deprecate": [(WRITES, "POST", "/agents/{id}/deprecate", {})],
    "agents/<str:agent_id>/undeprecate": [(WRITES, "POST", "/agents/{id}/undeprecate", {})],
    "agents/<str:agent_id>/transfers": [(WRITES, "POST", "/agents/{id}/transfers", {"to": "bob"})],
    "agents/<str:agent_id>/quarantine": [
        (WRITES, "POST", "/agents/{id}/quarantine", {"reason": "x"})
    ],
    "agents/<str:agent_id>/moderation": [(OWNER, "GET", "/agents/{id}/moderation", None)],
    "agents/<str:agent_id>/approve": [(WRITES, "POST", "/agents/{id}/approve", {})],
    "agents/<str:agent_id>/reject": [(WRITES, "POST", "/agents/{id}/reject", {"reason": "x"})],
    "agents/<str:agent_id>/reports": [
        (WRITES, "POST", "/agents/{id}/reports", {"reason": "spam", "detail": "x"})
    ],
    "reports": [(NONE, "GET", "/reports", None)],
    "reports/<str:report_id>/resolve": [(NONE,)],
    "moderation": [(NONE, "GET", "/moderation", None)],
    "publishers": [(NONE, "GET", "/publishers", None)],
    "publishers/<str:name>/verified": [(NONE,)],
    "blocklist": [(NONE, "GET", "/blocklist", None)],
    "blocklist/<str:entry_id>": [(NONE,)],
    "transfers": [(NONE, "GET", "/transfers", None)],
    "transfers/<str:transfer_id>": [(NONE,)],
    "transfers/<str:transfer_id>/accept": [(NONE,)],
    "transfers/<str:transfer_id>/cancel": [(NONE,)],
    "claims": [(NONE, "GET", "/claims", None)],
    "claims/<str:claim_id>": [(NONE,)],
    "claims/<str:claim_id>/verify": [(NONE,)],
    "api-keys": [(NONE, "GET", "/api-keys", None)],
    "api-keys/<str:key_id>": [(NONE,)],
    "api-keys/<str:key_id>/rotate": [(NONE,)],
    "discover/agents": [
        (READS, "GET", "/discover/agents?limit=100", None),
        (READS, "GET", "/discover/agents?limit=100&facets=tag,protocol,status", None),
        (READS, "GET", "/discover/agents?limit=100&sort=name", None),
        (READS, "GET", "/discover/agents?limit=100&tag=hush-{kind}", None),
        (WITHHOLDS, "GET", "/discover/agents?q={word}", None),  # words: public text only
        (WITHHOLDS, "GET", "/discover/agents?q={word}&mode=semantic", None),
        (WITHHOLDS, "GET", "/discover/agents?updated_since=2000-01-01T00:00:00Z", None),
    ],
    # The change events: an Event row (the outbox the webhooks and the stream read) is
    # written for public agents only: test_no_event_tells_of_a_restricted_agent.
    "events": [(NONE,)],
    "subscriptions": [(NONE, "GET", "/subscriptions", None)],
    "subscriptions/<str:subscription_id>": [(NONE,)],
    "subscriptions/<str:subscription_id>/deliveries": [(NONE,)],
    "subscriptions/<str:subscription_id>/redeliver": [(NONE,)],
    "subscriptions/<str:subscription_id>/rotate-secret": [(NONE,)],
    "": [(WITHHOLDS, "GET", "/", None)],
    "browse": [
        (WITHHOLDS, "GET", "/browse", None),
        (WITHHOLDS, "GET", "/browse?q={word}", None),
    ],
    "browse/agents/<str:agent_id>": [(WITHHOLDS, "GET", "/browse/agents/{id}", None)],
    "browse/agents/<str:agent_id>/report": [(WITHHOLDS, "GET", "/browse/agents/{id}/report", None)],
    "aap/check": [(WITHHOLDS, "GET", "/aap/check?agent={id}", None)],
    "aap/dealers": [(WITHHOLDS, "GET", "/aap/dealers", None)],
    "mcp": [
        (WITHHOLDS, "POST", "/mcp", _mcp("discover_agents", {"q": "{word}"})),
        (WITHHOLDS, "POST", "/mcp", _mcp("discover_agents", {})),
        (READS, "POST", "/mcp", _mcp("get_agent_card", {"agent_id": "{id}"})),
    ],
    "mcp/servers/<str:endpoint_id>/server-card.json": [
        (WITHHOLDS, "GET", "/mcp/servers/{endpoint}/server-card.json", None)
    ],
    "v0.1/servers": [
        (WITHHOLDS, "GET", "/v0.1/servers", None),
        (WITHHOLDS, "GET", "/v0.1/servers?updated_since=2000-01-01T00:00:00Z", None),
    ],
    "^v0\\.1/servers/(?P<serverName>[^/]+/[^/]+)/versions$": [
        (WITHHOLDS, "GET", "/v0.1/servers/testserver/{id}/versions", None)
    ],
    "^v0\\.1/servers/(?P<serverName>[^/]+/[^/]+)/versions/(?P<version>.+)$": [
        (WITHHOLDS, "GET", "/v0.1/servers/testserver/{id}/versions/latest", None)
    ],
    "entities": [(WITHHOLDS, "GET", "/entities", None)],
    "entities/validate": [(NONE,)],  # validates a posted card, reads no agent
    "entities/<str:entity_id>": [(WITHHOLDS, "GET", "/entities/{id}", None)],
    "v1/provider/register": [(NONE,)],
    "v1/provider/register/jobs/<str:job_id>": [(NONE,)],
    "v1/resolve": [(WITHHOLDS, "GET", "/v1/resolve?q={word}", None)],
    "v1/resolve/domain/<str:domain>": [
        (WITHHOLDS, "GET", "/v1/resolve/domain/weather.example.com", None)
    ],
    "v1/nearby": [(WITHHOLDS, "GET", "/v1/nearby?lat=48.85&lng=2.35", None)],
    "browse/entities/<str:entity_id>": [(WITHHOLDS, "GET", "/browse/entities/{id}", None)],
    ".well-known/ai-catalog.json": [(WITHHOLDS, "GET", "/.well-known/ai-catalog.json", None)],
    ".well-known/ard.json": [(WITHHOLDS, "GET", "/.well-known/ard.json", None)],
    "ard/catalog/<int:number>": [(WITHHOLDS, "GET", "/ard/catalog/1", None)],
    "ard/search": [(WITHHOLDS, "POST", "/ard/search", {"query": {"text": "{word}"}})],
    "ard/explore": [(WITHHOLDS, "GET", "/ard/explore", None)],
    "ard/agents": [(WITHHOLDS, "GET", "/ard/agents", None)],
    "ard/agents/<str:identifier>": [(WITHHOLDS, "GET", "/ard/agents/{urn}", None)],
    "ard/sources": [(NONE, "GET", "/ard/sources", None)],
    "ard/sources/<str:source_id>": [(NONE,)],
    "oidc/callback/": [(NONE,)],
    "oidc/authenticate/": [(NONE,)],
    "oidc/logout/": [(NONE,)],
    "api/schema": [(NONE,)],
    "api/docs": [(NONE,)],
    "problems/<slug:slug>": [(NONE,)],
    "docs": [(NONE,)],
    "docs/": [(NONE,)],
    "^docs/(?P<path>.+)$": [(NONE,)],
}
# The Django admin: staff sessions only (an API key is no login there): every route under
# it, checked by test_the_admin_is_no_way_around_visibility.
ADMIN_PREFIX = "admin/"


def all_routes(patterns=None, prefix: str = "") -> list[str]:
    patterns = get_resolver().url_patterns if patterns is None else patterns
    routes = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            routes += all_routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            routes.append(prefix + str(pattern.pattern))
    return routes


pytestmark = pytest.mark.apps("a2a", "aap", "mcp_face", "entities", "ard")


def test_every_route_of_the_url_configuration_is_classified():
    unknown = [r for r in all_routes() if r not in ROUTES and not r.startswith(ADMIN_PREFIX)]
    assert unknown == [], f"classify these routes for visibility in ROUTES: {unknown}"


def _key(owner: str, groups: list[str]) -> str:
    from registry.access.auth import api_key_generate, api_key_hash

    raw = api_key_generate()
    ApiKey.objects.create(
        owner=owner, scope="agent", key_hash=api_key_hash(raw), prefix=raw[:10], groups=groups
    )
    return raw


@pytest.fixture
def world(make_card):
    """Three agents of alice (public, private, groups: team-a) registered by card, each
    with a second version; the four callers' keys."""
    from rest_framework.test import APIClient

    keys = {
        "owner": _key("alice", []),
        "member": _key("carol", ["team-a"]),
        "other": _key("dave", ["team-b"]),
    }
    clients = {"anonymous": APIClient()}
    for caller, key in keys.items():
        clients[caller] = APIClient()
        clients[caller].credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    owner = clients["owner"]
    agents = {}
    for kind, name in NAMES.items():
        interfaces = [
            {
                "url": f"https://{kind}.weather.example.com/a2a/v1",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ]
        skills = [
            {
                "id": "forecast",
                "name": "Forecast",
                "description": f"Forecast for a city by {name}.",
                "tags": ["weather", f"hush-{kind}"],
            }
        ]
        body = {"card": make_card(name=name, supportedInterfaces=interfaces, skills=skills)}
        if kind != "public":
            body["visibility"] = kind
        if kind == "groups":
            body["visibilityGroups"] = ["team-a"]
        created = owner.post("/a2a/agents", body, format="json")
        assert created.status_code == 201, created.content
        agent_id = created.json()["id"]
        card = make_card(name=name, supportedInterfaces=interfaces, skills=skills, version="2.2.0")
        replaced = owner.put(f"/a2a/agents/{agent_id}", {"card": card}, format="json")
        assert replaced.status_code == 200, replaced.content
        agent = Agent.objects.get(pk=agent_id)
        agents[kind] = {
            "id": agent_id,
            "name": name,
            "word": name.split()[0],
            "kind": kind,
            "endpoint": str(agent.endpoints.first().pk),
            "urn": f"urn:air:testserver:agent:{agent_id}",
        }
    return clients, agents


def _may_read(caller: str, kind: str) -> bool:
    return kind == "public" or caller == "owner" or (caller == "member" and kind == "groups")


def _fill(value, agent: dict):
    """The template (a string, or a body of strings) for the agent."""
    if isinstance(value, str):
        return value.format(**agent)
    if isinstance(value, dict):
        return {k: _fill(v, agent) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, agent) for v in value]
    return value


def _call(client, method: str, path: str, body) -> tuple[int, str]:
    extra = {}
    if path == "/mcp":
        extra = {"HTTP_ACCEPT": "application/json, text/event-stream"}
        extra["HTTP_MCP_PROTOCOL_VERSION"] = "2025-06-18"
    if body is None and method in ("GET", "DELETE"):
        response = getattr(client, method.lower())(path, **extra)
    else:
        response = getattr(client, method.lower())(
            path, json.dumps(body or {}), content_type="application/json", **extra
        )
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, content.decode(errors="replace")


def _as_unknown(text: str, agent: dict) -> str:
    """An answer with the agent's id (and endpoint) written as the unknown id's, its
    request id left out: what an unknown id's answer must equal."""
    text = text.replace(agent["id"], UNKNOWN).replace(agent["endpoint"], UNKNOWN)
    text = re.sub(r'"requestId":\s*"[0-9a-f]*"', '"requestId": ""', text)
    try:
        body = json.loads(text)
    except ValueError:
        return "(html)"  # pages: the status tells (their nonces differ per answer)
    return json.dumps(body, sort_keys=True)


def _walk(world) -> list[str]:
    clients, agents = world
    unknown = {"id": UNKNOWN, "name": "Nobody", "word": "Nobody", "kind": "none"}
    unknown.update(endpoint=UNKNOWN, urn=f"urn:air:testserver:agent:{UNKNOWN}")
    failures = []
    present = set(all_routes())
    for route, calls in ROUTES.items():
        if route not in present:
            continue  # an app that is not installed
        for entry in calls:
            if len(entry) == 1:
                continue  # no agent data, takes parameters: not called
            kind, method, template, body = entry
            if kind == NONE:
                for caller, client in clients.items():
                    _, text = _call(client, method, template, body)
                    for agent in agents.values():
                        if agent["kind"] != "public" and agent["name"] in text:
                            failures.append(f"{route}: {caller} sees {agent['name']}")
                continue
            for agent in agents.values():
                names_agent = any(f"{{{k}}}" in template + json.dumps(body) for k in NAMING)
                for caller, client in clients.items():
                    may = _may_read(caller, agent["kind"])
                    if kind in (WRITES, OWNER) and may and caller != "owner":
                        continue  # a group member reads it; the owner's business
                    if kind == WRITES and may:
                        continue  # would write
                    path, data = _fill(template, agent), _fill(body, agent)
                    status, text = _call(client, method, path, data)
                    where = f"{method} {path} as {caller}"
                    if not may:
                        # Where the URL names it, the answer may say the id it was given.
                        told = agent["name"] in text or (agent["id"] in text and not names_agent)
                        if told:
                            failures.append(f"{where}: tells of the {agent['kind']} agent")
                        if names_agent:
                            got = (status, _as_unknown(text, agent))
                            u_path, u_data = _fill(template, unknown), _fill(body, unknown)
                            u_status, u_text = _call(client, method, u_path, u_data)
                            expected = (u_status, _as_unknown(u_text, unknown))
                            if got != expected:
                                failures.append(f"{where}: {got} is not an unknown id's {expected}")
                    elif (
                        kind in (READS, OWNER)
                        and agent["kind"] != "public"
                        and (status != 200 or not (names_agent or agent["name"] in text))
                    ):
                        failures.append(f"{where}: {status}, the agent not served")
    return failures


@pytest.mark.django_db
def test_every_route_honours_visibility(world):
    failures = _walk(world)
    assert failures == [], "\n".join(failures)


@pytest.mark.django_db
def test_no_event_tells_of_a_restricted_agent(world):
    _, agents = world
    restricted = [agents["private"]["id"], agents["groups"]["id"]]
    assert Event.objects.filter(subject__in=restricted).count() == 0
    assert Event.objects.filter(subject=agents["public"]["id"]).exists()
    for data in Event.objects.values_list("data", flat=True):
        text = bytes(data).decode()
        assert not any(a in text for a in [*restricted, NAMES["private"], NAMES["groups"]])


@pytest.mark.django_db
def test_the_admin_is_no_way_around_visibility(world):
    """An API key is no login to the admin: its pages send every caller of the API to the
    login page, whatever the route."""
    clients, agents = world
    admin_routes = [r for r in all_routes() if r.startswith(ADMIN_PREFIX)]
    assert "admin/registry/agent/<path:object_id>/change/" in admin_routes
    for client in clients.values():
        response = client.get(f"/admin/registry/agent/{agents['private']['id']}/change/")
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")
