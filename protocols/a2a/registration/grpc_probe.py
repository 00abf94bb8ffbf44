"""The task probe of an endpoint of the gRPC binding (registry/outbound/channels.py): its
card through the safe fetcher from its host (on HTTPS's own port: gRPC's port serves no
card), then its target checked by the fetcher's address rules and one TLS handshake (the
certificate's expiry), then a2a-sdk's gRPC transport on a channel pinned to the checked
addresses: ``SendMessage``, and ``GetTask`` where a task came back, each call within the
probe's time left (grpc's deadline), the whole within the caller's."""

import asyncio
import time
import uuid

import grpc
import httpx
from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver, parse_agent_card
from a2a.client.errors import A2AClientError
from a2a.helpers.proto_helpers import new_text_part
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Role, SendMessageRequest
from a2a.utils.errors import A2AError
from django.conf import settings
from django.utils import timezone
from google.protobuf.json_format import MessageToDict

from protocols.a2a.registration.probe_checks import answer_checks, declares_auth
from registry.agents.models import Endpoint
from registry.liveness.probes import TaskCheck
from registry.outbound.channels import grpc_channel, grpc_target, tls_expiry
from registry.outbound.fetch import FetchError
from registry.outbound.transport import FetcherTransport

# The statuses that say the server answered the call but not with A2A (it answered all the
# same: the binding is there).
NO_ANSWER = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
AUTH_REQUIRED = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED}


def _status_of(exc: BaseException) -> grpc.StatusCode | None:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, grpc.aio.AioRpcError):
            return cause.code()
        cause = cause.__cause__ or cause.__context__
    return None


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.001)


async def grpc_converse(
    endpoint: Endpoint,
    transport: FetcherTransport,
    stored: dict | None,
    deadline: float,
    card_for,
    text: str,
    seen: dict,
) -> None:
    """Note in ``seen`` what the exchange saw, for ``grpc_checks`` (no database here; what
    it noted stays when the caller cuts it). ``card_for``: the card to call the endpoint by
    (task_probe's); ``deadline``: ``time.monotonic()``'s, each call's own."""
    seen.update(card=None, answer=None, task=None, fetched=None)
    async with httpx.AsyncClient(transport=transport, timeout=_left(deadline)) as http:
        try:
            target = await asyncio.to_thread(grpc_target, endpoint.address, deadline)
        except FetchError as exc:
            seen.update(reason=exc.reason, error=exc.detail[:200])
            return
        try:
            card = await A2ACardResolver(http, f"https://{target.host}").get_agent_card()
            seen["card"] = card
        except Exception as exc:  # unreachable, not JSON, not a card: all the same here
            seen["card_error"] = str(exc)[:200]
    card_json = MessageToDict(seen["card"]) if seen["card"] is not None else None
    call_card = card_for(endpoint, "GRPC", card_json, stored)
    seen["declared"] = declares_auth(card_json or call_card)
    try:
        seen["expiry"] = await asyncio.to_thread(tls_expiry, target, deadline)
    except FetchError as exc:
        seen.update(reason=exc.reason, error=exc.detail[:200])
        return
    if call_card is None:
        seen["error"] = "no card to call the agent by"
        return
    channel = grpc_channel(target)
    try:
        config = ClientConfig(
            grpc_channel_factory=lambda url: channel,
            supported_protocol_bindings=["GRPC"],
            streaming=False,
        )
        client = ClientFactory(config).create(parse_agent_card(call_card))
        message = Message(
            role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[new_text_part(text)]
        )
        request = SendMessageRequest(message=message)
        async for event in client.send_message(
            request, context=ClientCallContext(timeout=_left(deadline))
        ):
            seen["answer"] = event
            break
        event = seen["answer"]
        if event is not None and event.HasField("task"):
            seen["task"] = event.task
            seen["fetched"] = await client.get_task(
                GetTaskRequest(id=event.task.id), context=ClientCallContext(timeout=_left(deadline))
            )
    except A2AError as exc:  # an A2A error answer: well formed
        seen["a2a_error"] = f"{type(exc).__name__}: {exc}"[:200]
        seen["status"] = _status_of(exc) or grpc.StatusCode.UNKNOWN
    except A2AClientError as exc:
        seen["status"] = _status_of(exc)
        seen["error"] = f"client: {exc}"[:200]
    finally:
        await channel.close(grace=None)
    if seen["answer"] is not None and "status" not in seen:
        seen["status"] = grpc.StatusCode.OK


def grpc_checks(seen: dict) -> tuple[TaskCheck, ...]:
    """The task probe's checks of a gRPC exchange, named as for the HTTP bindings."""
    card = seen.get("card") is not None
    checks = [
        TaskCheck(
            "card",
            card,
            "its host serves its card"
            if card
            else f"no card at its host: {seen.get('card_error', 'not fetched')}",
        )
    ]
    expiry, reason = seen.get("expiry"), seen.get("reason")
    if expiry is not None:
        days = int((expiry - timezone.now()).total_seconds() // 86400)
        checks.append(TaskCheck("tls", True, f"valid, expires in {days} days"))
    elif reason == "tls-error":
        checks.append(TaskCheck("tls", False, "the TLS handshake failed (certificate)"))
    else:
        checks.append(TaskCheck("tls", False, "no TLS connection was made"))
    status = seen.get("status")
    if status is None or status in NO_ANSWER:
        why = seen.get("error") or reason or "no call was made"
        if seen.get("timeout") or status == grpc.StatusCode.DEADLINE_EXCEEDED:
            why = f"no answer within the probe's {settings.TRUST_TASK_PROBE_SECONDS} s"
        checks.append(TaskCheck("binding", False, f"no answer: {why}"))
        return tuple(checks)
    checks.append(TaskCheck("binding", True, f"answered with gRPC status {status.name}"))
    return (*checks, *answer_checks(seen, status in AUTH_REQUIRED))
