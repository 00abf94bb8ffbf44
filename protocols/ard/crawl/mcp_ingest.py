"""A crawled MCP server card entry becomes an agent with one MCP endpoint at the entry's
``url`` (where the catalog says the server is), with the entry's name, description,
capabilities and tags, and the same provenance as a crawled A2A card. The card behind the
URL is fetched only to check a ``digest`` the entry gives."""

import hashlib
import json
from urllib.parse import urljoin, urlsplit

from django.db import transaction
from django.utils import timezone

from protocols.ard.crawl.fetch import digest_check
from protocols.ard.crawl.walk import Found, Walk
from protocols.ard.models import CatalogSource, EntryProvenance
from registry.agents import services as core
from registry.agents.models import Endpoint
from registry.outbound.fetch import FetchError, fetch
from registry.signals import agents_written_send, writes_batched

MCP_SOURCE = "ard-catalog"
WRITER = "ard"


def _strings(value, most: int, length: int) -> list[str]:
    items = value if isinstance(value, list) else []
    return [item.strip()[:length] for item in items if isinstance(item, str) and item.strip()][
        :most
    ]


def _input(found: Found, url: str) -> core.AgentInput:
    entry = found.entry
    name = entry.get("displayName") if isinstance(entry.get("displayName"), str) else ""
    description = entry.get("description") if isinstance(entry.get("description"), str) else ""
    tags = _strings(entry.get("tags"), 32, 100)
    capabilities = [
        core.CapabilityInput(name=token, tags=tags, external_id=token)
        for token in _strings(entry.get("capabilities"), 64, 200)
    ]
    endpoint = core.EndpointInput(
        name="mcp", transport=Endpoint.Transport.HTTP, protocol=Endpoint.Protocol.MCP, address=url
    )
    return core.AgentInput(
        name=(name.strip() or found.identifier.rsplit(":", 1)[-1])[:200],
        description=description[:2000],
        capabilities=capabilities,
        endpoints=[endpoint],
    )


def mcp_entry_ingest(source: CatalogSource, found: Found, walk: Walk, flagged: str, refuse) -> str:
    raw = found.entry.get("url")
    url = urljoin(found.catalog, raw) if isinstance(raw, str) else ""
    if urlsplit(url).scheme != "https" or not urlsplit(url).hostname or len(url) > 2048:
        return refuse("an MCP server card entry needs an https url")
    if "digest" in found.entry:
        try:
            body = fetch(url).body
        except FetchError as exc:
            return refuse(f"the server card could not be fetched: {exc.detail}")
        problem = digest_check(found.entry["digest"], body)
        if problem:
            return refuse(problem)
    listed = json.dumps(found.entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    fingerprint = hashlib.sha256(listed.encode()).hexdigest()
    # A retired agent takes no more writes: an entry listed again is a new agent.
    known = EntryProvenance.objects.filter(
        source=source, identifier=found.identifier, retired=False
    ).first()
    if known is not None and known.fingerprint == fingerprint:
        EntryProvenance.objects.filter(pk=known.pk).update(seen_at=timezone.now())
        return "unchanged"
    data = _input(found, url)
    with transaction.atomic(), writes_batched():
        if known is None:
            agent = core.agent_create(
                owner=source.owner, data=data, source=MCP_SOURCE, writer=WRITER
            )
        else:
            agent = core.agent_update(
                agent=known.agent,
                name=data.name,
                description=data.description,
                capabilities=data.capabilities,
                endpoints=data.endpoints,
                writer=WRITER,
            )
        EntryProvenance.objects.update_or_create(
            agent=agent,
            defaults={
                "source": source,
                "catalog": found.catalog,
                "identifier": found.identifier,
                "digest": str(found.entry.get("digest") or "")[:200],
                "fingerprint": fingerprint,
                "flagged": flagged[:300],
                "retired": False,
                "seen_at": timezone.now(),
            },
        )
        agents_written_send([agent.pk])
    return "added" if known is None else "updated"
