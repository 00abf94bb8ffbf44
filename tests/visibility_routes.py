"""What each route of the URL configuration is, for visibility: the table that
tests/test_visibility_routes.py walks (every route must be in it)."""

from django.urls import URLPattern, URLResolver, get_resolver

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

# Discovery by filters alone (none: every agent the caller may read).
DISCOVER_ALL = {
    **DISCOVER_MESSAGE,
    "params": {"message": {"role": "ROLE_USER", "messageId": "m2", "parts": [{"data": {}}]}},
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
    "a2a/jsonrpc": [
        (READS, "POST", "/a2a/jsonrpc", DISCOVER_MESSAGE),
        (READS, "POST", "/a2a/jsonrpc", DISCOVER_ALL),
    ],
    "^a2a/rest/(?P<path>.+)$": [
        (READS, "POST", "/a2a/rest/message:send", DISCOVER_MESSAGE["params"]),
        (READS, "POST", "/a2a/rest/message:send", DISCOVER_ALL["params"]),
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
        (READS, "GET", "/discover/agents?q={word}", None),
        (READS, "GET", "/discover/agents?q={word}&mode=keyword", None),
        (READS, "GET", "/discover/agents?q={word}&sort=name&facets=tag", None),
        # By meaning: public agents' vectors only (a restricted agent's words match).
        (WITHHOLDS, "GET", "/discover/agents?q={word}&mode=semantic", None),
        (READS, "GET", "/discover/agents?updated_since=2000-01-01T00:00:00Z", None),
    ],
    # The change events: a restricted agent's Event rows are its readers' only:
    # test_no_public_event_tells_of_a_restricted_agent, and
    # tests/registry/events/test_restricted_events.py for the stream and the webhooks.
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
        (READS, "POST", "/mcp", _mcp("discover_agents", {"q": "{word}"})),
        (READS, "POST", "/mcp", _mcp("discover_agents", {})),
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
