"""The liveness probe of MCP endpoints (any agent's, entities' too): the core's HTTP probe,
and the server card at the endpoint's origin read with it (at most once per
``ENTITY_SERVER_CARD_TTL_SECONDS`` per origin). The server's tools are never called."""

import dataclasses
import logging

from django.utils import timezone

from protocols.entities.servers.server_cards import server_card_read
from registry.agents.models import Endpoint
from registry.liveness.probes import ProbeOutcome, http_probe, task_probe_due

logger = logging.getLogger(__name__)


def mcp_probe(endpoint: Endpoint) -> ProbeOutcome:
    outcome = http_probe(endpoint)
    try:
        server_card_read(endpoint.address)
    except Exception:  # the card is a bonus: the probe's outcome stands without it
        logger.exception("Reading the server card of endpoint %s failed.", endpoint.pk)
    if not task_probe_due(endpoint, timezone.now()):
        return outcome
    from protocols.entities.servers.task_probe import mcp_task_probe  # (the mcp SDK)

    checks, expiry = mcp_task_probe(endpoint)
    return dataclasses.replace(
        outcome, checks=checks, cert_expires_at=expiry or outcome.cert_expires_at
    )
