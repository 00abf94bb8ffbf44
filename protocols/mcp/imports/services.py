"""Imports from MCP Registries: each server listed becomes an agent (source
``mcp-registry``) whose MCP endpoints are the server's ``remotes`` (transport and URL, the
names of the headers they ask for, never values), with the server.json's ``packages``,
``repository`` and ``websiteUrl`` kept as the endpoints' protocol metadata, its name and
version as the registry gave them. A first import of thousands is written in bulk
(``agents_bulk_create``); a server listed again is updated only when its document or status
changed. The listed status is the lifecycle: ``deprecated`` deprecates the agent,
``deleted`` retires it, ``active`` again undeprecates it (a retired agent takes no writes: a
server listed again after its deletion is a new agent)."""

import hashlib
import json
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from protocols.mcp.imports.conf import setting
from protocols.mcp.imports.fetch import ImportStopped, Page, api_find, deadline_start, pages
from protocols.mcp.imports.validation import server_problems
from protocols.mcp.models import ImportedServer, RegistrySource
from protocols.mcp.servers.names import IMPORT_SOURCE
from registry.agents import lifecycle
from registry.agents import services as core
from registry.agents.models import Agent, Endpoint
from registry.http.problems import ProblemError
from registry.signals import writes_batched

WRITER = "mcp"
OFFICIAL = "io.modelcontextprotocol.registry/official"
STATUSES = ("active", "deprecated", "deleted")
MAX_REMOTES = 10
MAX_HEADERS = 20
REPORT_MOST = 50


def source_add(*, url: str, owner: str) -> RegistrySource:
    """An MCP Registry to import from, by its base URL (https)."""
    base = url.rstrip("/")
    parts = urlsplit(base)
    if parts.scheme != "https" or not parts.hostname or parts.query or len(base) > 2048:
        raise ValueError("an MCP Registry's base URL is an https URL without a query")
    source, _ = RegistrySource.objects.get_or_create(url=base, defaults={"owner": owner})
    return source


def _official(item: dict, server: dict) -> dict:
    for holder in (item, server):  # the envelope's _meta; the first drafts' server._meta
        meta = holder.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get(OFFICIAL), dict):
            return meta[OFFICIAL]
    return {}


def _remote_endpoints(server: dict) -> list[core.EndpointInput]:
    kept = {k: server[k] for k in ("packages", "repository", "websiteUrl") if k in server}
    listed = {"name": server["name"], "version": server["version"]}
    endpoints = []
    remotes = [r for r in server.get("remotes") or [] if isinstance(r, dict)][:MAX_REMOTES]
    for index, remote in enumerate(remotes):
        url = remote.get("url")
        if not isinstance(url, str) or urlsplit(url).scheme != "https" or len(url) > 2048:
            continue
        headers = [
            {"name": h["name"][:200], **({"isRequired": True} if h.get("isRequired") else {})}
            for h in remote.get("headers") or []
            if isinstance(h, dict) and isinstance(h.get("name"), str)
        ][:MAX_HEADERS]
        metadata = {"transport": remote.get("type"), "mcpRegistry": listed, **kept}
        if headers:
            metadata["headers"] = headers
        endpoints.append(
            core.EndpointInput(
                name=remote["type"] if len(remotes) == 1 else f"{remote['type']}-{index + 1}",
                transport=Endpoint.Transport.HTTP,
                protocol=Endpoint.Protocol.MCP,
                address=url,
                protocol_metadata=metadata,
            )
        )
    return endpoints


def agent_input(server: dict) -> core.AgentInput:
    title = server.get("title") if isinstance(server.get("title"), str) else ""
    return core.AgentInput(
        name=(title.strip() or server["name"].split("/", 1)[1])[:200],
        description=server["description"][:2000],
        version=server["version"][:100],
        endpoints=_remote_endpoints(server),
    )


def _fingerprint(server: dict) -> str:
    text = json.dumps(server, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _when(value: Any) -> datetime | None:
    try:
        found = parse_datetime(value) if isinstance(value, str) else None
    except ValueError:
        return None
    return found if found is not None and found.tzinfo is not None else None


def _listed(items: list, report: dict) -> dict[str, tuple[dict, dict]]:
    """The page's latest server documents by name, with their official metadata; the
    invalid ones refused in the report with their reason."""
    found: dict[str, tuple[dict, dict]] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        server = item.get("server", item if "name" in item else None)
        report["seen"] += 1
        problems = server_problems(server)
        if problems:
            name = server.get("name") if isinstance(server, dict) else None
            _refuse(report, str(name)[:200] if name else None, "; ".join(problems))
            continue
        official = _official(item, server)
        if official.get("isLatest") is False:
            report["olderVersions"] += 1
            continue
        found[server["name"]] = (server, official)
    return found


def _status_apply(agent: Agent, status: str, official: dict, source: RegistrySource) -> str:
    if status == "deleted" and agent.status != Agent.Status.RETIRED:
        lifecycle.agent_retire(agent=agent)
        return "retired"
    if status == "deprecated" and agent.status == Agent.Status.ACTIVE:
        message = official.get("statusMessage")
        reason = message if isinstance(message, str) and message else f"Deprecated in {source}"
        lifecycle.agent_deprecate(agent=agent, reason=reason[:500])
        return "deprecated"
    if status == "active" and agent.status == Agent.Status.DEPRECATED:
        lifecycle.agent_undeprecate(agent=agent)
        return "updated"
    return ""


def _refuse(report: dict, name: str | None, reason: str) -> None:
    if len(report["refused"]) < REPORT_MOST:
        report["refused"].append({"name": name, "reason": reason[:1000]})


def _server_update(source, row, agent, server: dict, official: dict, status: str) -> str:
    if row.fingerprint != _fingerprint(server) and agent.status != Agent.Status.RETIRED:
        data = agent_input(server)
        agent = core.agent_update(
            agent=agent,
            name=data.name,
            description=data.description,
            version=data.version,
            endpoints=data.endpoints,
            writer=WRITER,
        )
    return _status_apply(agent, status, official, source)


def servers_apply(source: RegistrySource, items: list, report: dict) -> datetime | None:
    """Write one page's servers; the newest ``updatedAt`` it listed."""
    listed = _listed(items, report)
    now = timezone.now()
    newest = max(
        (w for w in (_when(o.get("updatedAt")) for _, o in listed.values()) if w), default=None
    )
    known = {
        row.name: row
        for row in ImportedServer.objects.filter(
            source=source, name__in=list(listed)
        ).select_related("agent")
    }
    fresh: list[tuple[str, dict, str]] = []
    with transaction.atomic(), writes_batched():
        for name, (server, official) in listed.items():
            status = official.get("status") if official.get("status") in STATUSES else "active"
            row = known.get(name)
            agent = row.agent if row is not None else None
            if agent is None or (agent.status == Agent.Status.RETIRED and status != "deleted"):
                if status == "deleted":  # gone before it came: nothing to write
                    report["unchanged"] += 1
                    continue
                fresh.append((name, server, status))
                continue
            fingerprint = _fingerprint(server)
            if row.fingerprint == fingerprint and row.status == status:
                report["unchanged"] += 1
                continue
            try:
                with transaction.atomic():  # one server refused leaves the page's others
                    done = _server_update(source, row, agent, server, official, status)
            except ProblemError as exc:
                _refuse(report, name, exc.problem_detail)
                continue
            report[done or "updated"] += 1
            row.version, row.status, row.document = server["version"], status, server
            row.fingerprint, row.seen_at = fingerprint, now
            row.save(update_fields=["version", "status", "document", "fingerprint", "seen_at"])
        if fresh:
            _bulk_add(source, fresh, listed, report, now)
    return newest


def _bulk_add(source, fresh, listed, report, now) -> None:
    created = core.agents_bulk_create(
        owner=source.owner,
        items=[agent_input(server) for _, server, _ in fresh],
        source=IMPORT_SOURCE,
        writer=WRITER,
    )
    rows = []
    for agent, (name, server, status) in zip(created, fresh, strict=True):
        report["added"] += 1
        if status != "active":
            report[_status_apply(agent, status, listed[name][1], source) or "updated"] += 1
        rows.append((name, agent, server, status))
    ImportedServer.objects.filter(source=source, name__in=[r[0] for r in rows]).delete()
    ImportedServer.objects.bulk_create(
        [
            ImportedServer(
                source=source,
                name=name,
                agent=agent,
                version=server["version"],
                status=status,
                document=server,
                fingerprint=_fingerprint(server),
                seen_at=now,
            )
            for name, agent, server, status in rows
        ],
        batch_size=500,
    )


def import_report() -> dict:
    return {
        "pages": 0,
        "seen": 0,
        "added": 0,
        "updated": 0,
        "unchanged": 0,
        "deprecated": 0,
        "retired": 0,
        "olderVersions": 0,
        "refused": [],
    }


def source_import(source: RegistrySource) -> dict:
    """One run: the source's pages from where the last run stopped (its cursor), or from
    the start with ``updated_since`` the newest change seen so far; its report."""
    report = import_report()
    deadline = deadline_start()
    since, newest = source.synced_until, _when(source.synced_until)
    first: Page | None = None
    try:
        if not source.api:
            source.api, first = api_find(source.url, since, deadline)
        for page in pages(
            source.url,
            source.api,
            since,
            first=first,
            cursor=source.cursor or None,
            deadline=deadline,
        ):
            report["pages"] += 1
            seen = servers_apply(source, page.items, report)
            if seen is not None and (newest is None or seen > newest):
                newest = seen
            source.cursor = page.cursor or ""
            RegistrySource.objects.filter(pk=source.pk).update(cursor=source.cursor)
        source.status, source.last_problem = RegistrySource.Status.OK, ""
        if newest is not None:
            source.synced_until = newest.isoformat().replace("+00:00", "Z")
    except (ImportStopped, ProblemError) as exc:
        source.status = RegistrySource.Status.FAILED
        source.last_problem = str(getattr(exc, "problem_detail", exc))[:2000]
        report["problem"] = source.last_problem
    now = timezone.now()
    source.report, source.last_run_at = report, now
    source.next_run_at = now + timedelta(seconds=setting("MCP_IMPORT_INTERVAL_SECONDS"))
    source.save()
    return report


def sources_import(url: str = "") -> list[tuple[RegistrySource, dict]]:
    """Import from the sources that are due (or the one at ``url``, due or not)."""
    if url:
        sources = RegistrySource.objects.filter(url=url.rstrip("/"))
    else:
        now = timezone.now()
        sources = RegistrySource.objects.filter(next_run_at__isnull=True) | (
            RegistrySource.objects.filter(next_run_at__lte=now)
        )
    return [(source, source_import(source)) for source in sources.order_by("pk")]
