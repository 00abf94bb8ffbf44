"""The liveness probe of MCP endpoints (any agent's, entities' too): the core's HTTP probe,
and the server card at the endpoint's origin read with it (at most once per
``ENTITY_SERVER_CARD_TTL_SECONDS`` per origin). The server's tools are never called."""

import logging

from protocols.entities.servers.server_cards import server_card_read
from registry.agents.models import Endpoint
from registry.liveness.probes import ProbeOutcome, http_probe

logger = logging.getLogger(__name__)


def mcp_probe(endpoint: Endpoint) -> ProbeOutcome:
    outcome = http_probe(endpoint)
    try:
        server_card_read(endpoint.address)
    except Exception:  # the card is a bonus: the probe's outcome stands without it
        logger.exception("Reading the server card of endpoint %s failed.", endpoint.pk)
    return outcome
