"""Which protocol apps this registry runs (REGISTRY_PROTOCOL_APPS), checked at start-up."""

from django.core.exceptions import ImproperlyConfigured

from registry.settings.env import env_list

# The protocol apps, in dependency order; each extends the core from its AppConfig.ready().
# A registry may run with fewer (the core runs alone); AAP extends A2A, so needs it, and so
# does the MCP face (mcp_face: discovery, cards and registration as MCP tools); entity cards
# (entities: A2E and EDP businesses and their MCP servers) need only the core.
# Each by its label (the value REGISTRY_PROTOCOL_APPS names) and its package.
PROTOCOL_APPS = {
    "a2a": "protocols.a2a",
    "aap": "protocols.aap",
    "mcp_face": "protocols.mcp",
    "entities": "protocols.entities",
    "ard": "protocols.ard",
}
REGISTRY_PROTOCOL_APPS = env_list("REGISTRY_PROTOCOL_APPS", ",".join(PROTOCOL_APPS))
if unknown := set(REGISTRY_PROTOCOL_APPS) - set(PROTOCOL_APPS):
    raise ImproperlyConfigured(
        f"REGISTRY_PROTOCOL_APPS: unknown apps {sorted(unknown)}; known: {list(PROTOCOL_APPS)}"
    )
if "aap" in REGISTRY_PROTOCOL_APPS and "a2a" not in REGISTRY_PROTOCOL_APPS:
    raise ImproperlyConfigured("REGISTRY_PROTOCOL_APPS: aap extends a2a and needs it")
if "mcp_face" in REGISTRY_PROTOCOL_APPS and "a2a" not in REGISTRY_PROTOCOL_APPS:
    raise ImproperlyConfigured("REGISTRY_PROTOCOL_APPS: mcp_face builds on a2a and needs it")
