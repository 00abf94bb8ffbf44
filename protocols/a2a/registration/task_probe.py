"""The task probe: where its owner opted in (``taskProbe``) or ``TRUST_TASK_PROBE=all``, the
A2A probe of an endpoint sends the agent a real A2A 1.0 request with a2a-sdk's own client,
every request through the safe fetcher (``registry.outbound.transport``): its card from its
host, a harmless ``SendMessage`` with one text part naming the registry, then ``GetTask``
where a task came back. Each check is kept in the probe history (``TASK_CHECKS``): the card
is reachable, TLS valid (with the certificate's expiry), the binding answers, in a well-
formed answer, the task's lifecycle holds, the authentication it declares is the one it
requires. At most once an endpoint every ``TRUST_TASK_PROBE_INTERVAL_SECONDS``, within
``TRUST_TASK_PROBE_SECONDS`` in all."""

import asyncio
import copy
import time
import uuid
from datetime import datetime

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver, parse_agent_card
from a2a.client.errors import A2AClientError
from a2a.helpers.proto_helpers import new_text_part
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Role, SendMessageRequest
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, VERSION_HEADER
from a2a.utils.errors import A2AError
from django.conf import settings
from django.utils import timezone
from google.protobuf.json_format import MessageToDict

from protocols.a2a.cards.documents import cards_stored
from protocols.a2a.registration.probe_checks import answer_checks, declares_auth
from registry.agents.models import Endpoint
from registry.liveness.probes import TaskCheck
from registry.outbound.hosts import url_authority
from registry.outbound.transport import FetcherTransport

# The bindings a2a-sdk's client speaks over HTTP, through the safe fetcher; gRPC opens a
# channel of its own, pinned to the addresses the fetcher's rules checked (grpc_probe).
HTTP_BINDINGS = ("JSONRPC", "HTTP+JSON")
GRPC_BINDING = "GRPC"
# Seconds the whole gRPC exchange may run past its calls' deadline (closing the channel).
GRACE = 1.0
PROBE_TEXT = (
    "A2A registry probe ({base}): a test message to check that this agent answers A2A. "
    "Nothing needs to be done; a short reply is enough."
)


def _card_for(endpoint: Endpoint, binding: str, found: dict | None, stored) -> dict | None:
    """The card to call the endpoint by: the one its host serves, else the stored one, with
    this endpoint's interface alone (the probe calls this endpoint, not another)."""
    card = found if found is not None else stored
    if not isinstance(card, dict):
        return None
    card = copy.deepcopy(card)
    version = (endpoint.protocol_metadata or {}).get("protocolVersion") or "1.0"
    card["supportedInterfaces"] = [
        {"url": endpoint.address, "protocolBinding": binding, "protocolVersion": version}
    ]
    return card


async def _converse(
    endpoint: Endpoint, binding: str, transport: FetcherTransport, stored: dict | None
) -> dict:
    """The exchange itself (no database here: ``stored`` is the stored card, read before);
    what it saw, for ``_checks``."""
    seen: dict = {"card": None, "answer": None, "error": None, "task": None, "fetched": None}
    # The fetcher bounds each request (PROBE_TIMEOUT_SECONDS), the caller the whole probe.
    timeout = settings.TRUST_TASK_PROBE_SECONDS
    version = {VERSION_HEADER: PROTOCOL_VERSION_CURRENT}  # the card's request too
    async with httpx.AsyncClient(transport=transport, timeout=timeout, headers=version) as http:
        authority = url_authority(endpoint.address)
        if authority:
            try:
                card = await A2ACardResolver(http, f"https://{authority}").get_agent_card()
                seen["card"] = card
            except Exception as exc:  # unreachable, not JSON, not a card: all the same here
                seen["card_error"] = str(exc)[:200]
        card_json = None
        if seen["card"] is not None:
            card_json = MessageToDict(seen["card"])
        call_card = _card_for(endpoint, binding, card_json, stored)
        seen["declared"] = declares_auth(card_json or call_card)
        if call_card is None:
            seen["error"] = "no card to call the agent by"
            return seen
        config = ClientConfig(
            httpx_client=http, supported_protocol_bindings=[binding], streaming=False
        )
        client = ClientFactory(config).create(parse_agent_card(call_card))
        text = PROBE_TEXT.format(base=settings.REGISTRY_BASE_URL)
        message = Message(
            role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[new_text_part(text)]
        )
        try:
            async for event in client.send_message(SendMessageRequest(message=message)):
                seen["answer"] = event
                break
            event = seen["answer"]
            if event is not None and event.HasField("task"):
                seen["task"] = event.task
                seen["fetched"] = await client.get_task(GetTaskRequest(id=event.task.id))
        except A2AClientError as exc:
            seen["error"] = f"client: {exc}"[:200]
        except A2AError as exc:  # an A2A error answer: well formed
            seen["a2a_error"] = f"{type(exc).__name__}: {exc}"[:200]
    return seen


def task_probe(endpoint: Endpoint) -> tuple[tuple[TaskCheck, ...], datetime | None]:
    """Probe the endpoint with a real request; its checks and the certificate's expiry."""
    binding = (endpoint.protocol_metadata or {}).get("protocolBinding") or "JSONRPC"
    if binding not in (*HTTP_BINDINGS, GRPC_BINDING):
        detail = f"{binding} is not probed with a request (not an A2A binding it speaks)"
        return (TaskCheck("binding", False, detail),), None
    deadline = settings.TRUST_TASK_PROBE_SECONDS
    ends_at = time.monotonic() + deadline
    transport = FetcherTransport(timeout=settings.PROBE_TIMEOUT_SECONDS, deadline=ends_at)
    found = cards_stored([endpoint.agent_id]).get(endpoint.agent_id)
    stored = found.card if found is not None else None
    if binding == GRPC_BINDING:
        return _grpc_probe(endpoint, transport, stored, ends_at)
    try:
        conversation = _converse(endpoint, binding, transport, stored)
        seen = asyncio.run(asyncio.wait_for(conversation, deadline))
    except TimeoutError:
        seen = {"card": None, "answer": None, "task": None, "fetched": None, "timeout": True}
        seen["error"] = f"the probe ran out of its {deadline} s"
    return _checks(endpoint, seen, transport), _cert_expiry(transport)


def _grpc_probe(endpoint: Endpoint, transport, stored, ends_at: float) -> tuple:
    from protocols.a2a.registration.grpc_probe import grpc_checks, grpc_converse

    text = PROBE_TEXT.format(base=settings.REGISTRY_BASE_URL)
    seen: dict = {}
    try:
        conversation = grpc_converse(endpoint, transport, stored, ends_at, _card_for, text, seen)
        # Each call ends by its own deadline (grpc's); this one cuts what grpc did not.
        asyncio.run(asyncio.wait_for(conversation, settings.TRUST_TASK_PROBE_SECONDS + GRACE))
    except TimeoutError:
        seen["timeout"] = True
    return grpc_checks(seen), seen.get("expiry")


def _cert_expiry(transport: FetcherTransport) -> datetime | None:
    seen = [e.cert_expires_at for e in transport.exchanges if e.cert_expires_at is not None]
    return min(seen) if seen else None


def _checks(endpoint: Endpoint, seen: dict, transport: FetcherTransport) -> tuple:
    calls = [e for e in transport.exchanges if e.method == "POST"]
    reasons = {e.reason for e in transport.exchanges if e.reason}
    statuses = [e.status for e in calls if e.status is not None]
    checks = [
        TaskCheck(
            "card",
            seen.get("card") is not None,
            "its host serves its card"
            if seen.get("card") is not None
            else f"no card at its host: {seen.get('card_error', 'not fetched')}",
        )
    ]
    expiry = _cert_expiry(transport)
    if "tls-error" in reasons:
        checks.append(TaskCheck("tls", False, "the TLS handshake failed (certificate)"))
    elif endpoint.address.startswith("https:") and expiry is not None:
        days = int((expiry - timezone.now()).total_seconds() // 86400)
        checks.append(TaskCheck("tls", True, f"valid, expires in {days} days"))
    else:
        checks.append(TaskCheck("tls", False, "no TLS connection was made"))
    if not statuses:
        why = seen.get("error") or ", ".join(sorted(reasons)) or "no request was sent"
        checks.append(TaskCheck("binding", False, f"no answer: {why}"))
        return tuple(checks)
    checks.append(TaskCheck("binding", True, f"answered with HTTP status {statuses[0]}"))
    required = any(status in (401, 403) for status in statuses)
    return (*checks, *answer_checks(seen, required))
