"""The task probe of an MCP endpoint (where its owner opted in, or TRUST_TASK_PROBE=all):
the ``mcp`` SDK's own client, every request through the safe fetcher, makes the
``initialize`` handshake and asks ``tools/list``, never a tool call. Its checks go into the
probe history as the A2A task probe's do: ``tls``, ``binding`` (the handshake answered),
``wellFormed`` (the handshake and the tool list are MCP)."""

import asyncio
import time
from datetime import datetime

from django.conf import settings
from django.utils import timezone
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from registry.agents.models import Endpoint
from registry.liveness.probes import TaskCheck
from registry.outbound.transport import fetcher_transport_httpx2


async def _converse(endpoint: Endpoint, transport) -> dict:
    import httpx2

    seen: dict = {"initialized": False, "tools": None, "error": None}
    async with httpx2.AsyncClient(
        transport=transport, timeout=settings.TRUST_TASK_PROBE_SECONDS
    ) as http:
        try:
            async with Client(streamable_http_client(endpoint.address, http_client=http)) as client:
                seen["initialized"] = True
                listed = await client.list_tools()
                seen["tools"] = [tool.name for tool in listed.tools]
        except Exception as exc:  # whatever the SDK makes of a bad answer: not MCP
            seen["error"] = f"{type(exc).__name__}: {exc}"[:200]
    return seen


def mcp_task_probe(endpoint: Endpoint) -> tuple[tuple[TaskCheck, ...], datetime | None]:
    deadline = settings.TRUST_TASK_PROBE_SECONDS
    transport = fetcher_transport_httpx2(
        timeout=settings.PROBE_TIMEOUT_SECONDS, deadline=time.monotonic() + deadline
    )
    try:
        seen = asyncio.run(asyncio.wait_for(_converse(endpoint, transport), deadline))
    except TimeoutError:
        seen = {"initialized": False, "tools": None, "error": f"ran out of its {deadline} s"}
    posts = [e for e in transport.exchanges if e.method == "POST"]
    reasons = {e.reason for e in transport.exchanges if e.reason}
    expiries = [e.cert_expires_at for e in transport.exchanges if e.cert_expires_at]
    expiry = min(expiries) if expiries else None
    checks = []
    if "tls-error" in reasons:
        checks.append(TaskCheck("tls", False, "the TLS handshake failed (certificate)"))
    elif expiry is not None:
        days = int((expiry - timezone.now()).total_seconds() // 86400)
        checks.append(TaskCheck("tls", True, f"valid, expires in {days} days"))
    else:
        checks.append(TaskCheck("tls", False, "no TLS connection was made"))
    answered = [e for e in posts if e.status is not None]
    if not answered:
        why = seen["error"] or ", ".join(sorted(reasons)) or "no request was sent"
        checks.append(TaskCheck("binding", False, f"no answer: {why}"))
        return tuple(checks), expiry
    checks.append(TaskCheck("binding", True, f"answered with HTTP status {answered[0].status}"))
    if seen["tools"] is not None:
        names = ", ".join(seen["tools"][:10]) or "none"
        detail = f"initialize and tools/list answered: {len(seen['tools'])} tools ({names})"
        checks.append(TaskCheck("wellFormed", True, detail[:300]))
    else:
        checks.append(TaskCheck("wellFormed", False, f"not MCP: {seen['error'] or 'no answer'}"))
    return tuple(checks), expiry
