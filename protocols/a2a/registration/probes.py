"""How the registry probes an A2A endpoint: reachable, answering A2A, its card current.

Up when its host serves a card at the well-known paths whose interfaces include the
endpoint's URL, or else when the endpoint itself answers below 500 (registry.liveness.probes). Then,
for a JSON-RPC endpoint, one side-effect-free A2A call: ``GetTask`` for a random task id,
which a conformant agent answers with a JSON-RPC error (task not found). The category says
what was found: ``ok`` (it answered in JSON-RPC 2.0), ``not_a2a`` (it answered, but not
so), ``http_error`` (with its status), or the transport failure. Bindings without a call
here (HTTP+JSON, gRPC) are judged on reachability alone.

For an agent registered by domain or URL, the probe also fetches its card again from where
it was found: a card whose bytes changed is recorded (``card_changed``, the new digest), and
with ``A2A_PROBE_REIMPORT`` re-imported when it validates (a signed card, or one replacing a
signed card, only when its signature verifies).
"""

import dataclasses
import hashlib
import json
import logging
import time
import uuid

from django.conf import settings
from django.utils import timezone

from protocols.a2a.models import CardDocument, CardProvenance
from protocols.a2a.registration.bootstrap import (
    LEGACY_WELL_KNOWN_PATH,
    WELL_KNOWN_PATH,
    card_interface_urls,
)
from protocols.a2a.registration.provenance import CardSource, card_signature_check
from protocols.a2a.registration.services import agent_replace_card
from protocols.a2a.registration.task_probe import task_probe
from registry.access.audit import audit_actor
from registry.agents.models import Agent, Endpoint
from registry.http.problems import ProblemError
from registry.liveness.probes import ProbeOutcome, http_probe, outcome_of_error, task_probe_due
from registry.outbound.channels import grpc_target, tls_expiry
from registry.outbound.fetch import FetchError, FetchResult, fetch
from registry.outbound.hosts import url_authority

logger = logging.getLogger(__name__)

CONFORMANCE_BINDINGS = {"JSONRPC"}


class _Fetches:
    """The documents one probe fetched, by URL, so no URL is fetched twice."""

    def __init__(self) -> None:
        self.seen: dict[str, FetchResult | None] = {}

    def get(self, url: str) -> FetchResult | None:
        if url not in self.seen:
            try:
                self.seen[url] = fetch(url, timeout=settings.PROBE_TIMEOUT_SECONDS)
            except FetchError:
                self.seen[url] = None
        return self.seen[url]


def a2a_probe(endpoint: Endpoint) -> ProbeOutcome:
    outcome = _a2a_probe(endpoint)
    if not task_probe_due(endpoint, timezone.now()):
        return outcome
    checks, expiry = task_probe(endpoint)
    return dataclasses.replace(
        outcome, checks=checks, cert_expires_at=expiry or outcome.cert_expires_at
    )


def _a2a_probe(endpoint: Endpoint) -> ProbeOutcome:
    if (endpoint.protocol_metadata or {}).get("protocolBinding") == "GRPC":
        return _grpc_reach(endpoint)
    fetches = _Fetches()
    named = _card_naming(endpoint, fetches)
    if named is None:
        reach = http_probe(endpoint)
        if not reach.ok:
            return reach
        found = f"it answers ({reach.detail})"
    else:
        found = "its host's card names it"
    digest, changed, change_note = _card_change(endpoint, fetches)
    digest = digest or (named or "")
    found += change_note
    binding = (endpoint.protocol_metadata or {}).get("protocolBinding") or "JSONRPC"
    if binding not in CONFORMANCE_BINDINGS:
        detail = f"up: {found}; no A2A call for {binding}"
        return ProbeOutcome(True, "ok", detail, None, digest, changed)
    call = _jsonrpc_call(endpoint)
    return ProbeOutcome(
        True, call.category, f"up: {found}; {call.detail}", call.status, digest, changed
    )


def _grpc_reach(endpoint: Endpoint) -> ProbeOutcome:
    """A gRPC endpoint (``host:port`` or a URL) is up when its target, checked by the safe
    fetcher's address rules, completes a verified TLS handshake
    (registry/outbound/channels.py); the task probe makes the A2A calls."""
    deadline = time.monotonic() + settings.PROBE_TIMEOUT_SECONDS
    try:
        expiry = tls_expiry(grpc_target(endpoint.address, deadline), deadline)
    except FetchError as exc:
        return outcome_of_error(exc)
    detail = "up: its gRPC port completes a TLS handshake; no A2A call for GRPC"
    return ProbeOutcome(True, "ok", detail, cert_expires_at=expiry)


def _body(result: FetchResult) -> bytes:
    return result.body.removeprefix(b"\xef\xbb\xbf")


def _card_naming(endpoint: Endpoint, fetches: _Fetches) -> str | None:
    """The SHA-256 of the card the endpoint's host serves when it names the endpoint."""
    authority = url_authority(endpoint.address)
    if authority is None:
        return None
    for path in (WELL_KNOWN_PATH, LEGACY_WELL_KNOWN_PATH):
        result = fetches.get(f"https://{authority}{path}")
        card = _json(result)
        if isinstance(card, dict) and endpoint.address in {u for _, u in card_interface_urls(card)}:
            return hashlib.sha256(_body(result)).hexdigest()
    return None


def _json(result: FetchResult | None):
    if result is None:
        return None
    try:
        return json.loads(_body(result))
    except ValueError:
        return None


def _card_change(endpoint: Endpoint, fetches: _Fetches) -> tuple[str, bool, str]:
    """For an agent registered by domain or URL: the digest of the card where it was found,
    whether it differs from the stored one, and a note for the probe's detail."""
    provenance = CardProvenance.objects.filter(agent_id=endpoint.agent_id).first()
    document = (
        CardDocument.objects.filter(
            agent_id=endpoint.agent_id, origin=CardDocument.Origin.SUBMITTED
        )
        .only("sha256", "signed")
        .first()
    )
    if provenance is None or document is None or not provenance.source_url:
        return "", False, ""
    result = fetches.get(provenance.source_url)
    if result is None:
        return "", False, f"; the card at {provenance.source_url} could not be fetched"
    digest = hashlib.sha256(_body(result)).hexdigest()
    if digest == document.sha256:
        return digest, False, ""
    note = f"; the card at {provenance.source_url} changed"
    if settings.A2A_PROBE_REIMPORT:
        note += f" ({_reimport(endpoint.agent_id, provenance, document, result)})"
    return digest, True, note


def _reimport(agent_id, provenance: CardProvenance, document: CardDocument, result) -> str:
    card = _json(result)
    if not isinstance(card, dict):
        return "not re-imported: not a JSON object"
    host = url_authority(provenance.source_url) or ""
    if document.signed or card.get("signatures"):
        signature = card_signature_check(card, host)
        if signature.status != "verified":
            return f"not re-imported: its signature is {signature.status}"
    source = CardSource(
        body=_body(result),
        verified_domain=host,
        source_url=provenance.source_url,
        discovery_path=provenance.discovery_path,
    )
    token = audit_actor.set(("system:probe", ""))
    try:
        agent = Agent.objects.get(pk=agent_id)
        agent_replace_card(agent=agent, card=card, source=source, change="refresh")
    except ProblemError as exc:
        return f"not re-imported: {exc.detail}"
    except Agent.DoesNotExist:
        return "not re-imported: the agent is gone"
    finally:
        audit_actor.reset(token)
    logger.info("Re-imported the changed card of agent %s from %s", agent_id, source.source_url)
    return "re-imported"


def _jsonrpc_call(endpoint: Endpoint) -> ProbeOutcome:
    request = {
        "jsonrpc": "2.0",
        "id": "registry-probe",
        "method": "GetTask",
        "params": {"id": str(uuid.uuid4())},
    }
    try:
        answer = fetch(
            endpoint.address, json_body=request, timeout=settings.PROBE_TIMEOUT_SECONDS
        ).json()
    except FetchError as exc:
        outcome = outcome_of_error(exc)
        if outcome.category == "ok":  # it answered, but not in JSON-RPC
            return ProbeOutcome(True, "not_a2a", f"GetTask: {exc.detail}", exc.status)
        return outcome
    if (
        isinstance(answer, dict)
        and answer.get("jsonrpc") == "2.0"
        and ("error" in answer or "result" in answer)
    ):
        return ProbeOutcome(True, "ok", "GetTask answered in JSON-RPC 2.0")
    return ProbeOutcome(True, "not_a2a", "GetTask was not answered in JSON-RPC 2.0")
