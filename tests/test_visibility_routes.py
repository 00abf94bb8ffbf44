"""Visibility over every route of the URL configuration (registry.agents.visibility).

The test walks ``get_resolver()`` with every app installed: each route must be in
``ROUTES`` (a new read endpoint cannot be forgotten: an unknown route fails the test). Each
route is called as the anonymous caller, the owner, a member of the agent's group and a
caller of another group, over a public, a private and a group agent: a caller who may not
read a restricted agent never sees its id or name, and where the URL names the agent its
answer is an unknown id's; a caller who may read it finds it where the route serves it.
The anonymous caller asks through the WSGI application as served, the lean lane first
(registry.fastpath.lean), which answers anonymous reads without the views.
"""

import json
import re

import pytest

from registry.access.models import ApiKey
from registry.agents.models import Agent
from registry.events.models import Event
from registry.fastpath.lean import LeanApplication
from tests.registry.fastpath.test_lean import Recorder, call
from tests.visibility_routes import (
    ADMIN_PREFIX,
    NAMING,
    NONE,
    OWNER,
    READS,
    ROUTES,
    WRITES,
    all_routes,
)

UNKNOWN = "0f0e0d0c-0b0a-4908-8706-050403020100"
# Names found nowhere else, so that a leak of a restricted agent shows in any answer.
NAMES = {"public": "Publicus Agent", "private": "Zephyrine Agent", "groups": "Quillmate Agent"}
CALLERS = ("anonymous", "owner", "member", "other")

pytestmark = pytest.mark.apps("a2a", "aap", "mcp_face", "entities", "ard")


def test_every_route_of_the_url_configuration_is_classified():
    unknown = [r for r in all_routes() if r not in ROUTES and not r.startswith(ADMIN_PREFIX)]
    assert unknown == [], f"classify these routes for visibility in ROUTES: {unknown}"


def _key(owner: str, groups: list[str]) -> str:
    from registry.access.auth import api_key_generate, api_key_hash

    raw = api_key_generate()
    ApiKey.objects.create(
        owner=owner, scope="agent", key_hash=api_key_hash(raw), prefix=raw[:10], groups=groups
    )
    return raw


class LaneAnswer:
    def __init__(self, status: int, headers: dict, body: bytes):
        self.status_code, self.headers, self.content, self.streaming = status, headers, body, False

    def __getitem__(self, name: str) -> str:
        return {k.lower(): v for k, v in self.headers.items()}[name.lower()]


class LaneClient:
    """Anonymous requests through the WSGI application with the lean lane before Django
    (as ``make serve`` serves them), with the test client's methods."""

    def __init__(self):
        self.app = LeanApplication(Recorder())

    def _ask(self, method: str, path: str, data=None, content_type=None, **meta) -> LaneAnswer:
        if data is not None:
            meta.update(data=data, content_type=content_type)
        return LaneAnswer(*call(self.app, method, path, **meta))

    def get(self, path: str, **meta) -> LaneAnswer:
        return self._ask("GET", path, **meta)

    def delete(self, path: str, **meta) -> LaneAnswer:
        return self._ask("DELETE", path, **meta)

    def post(self, path: str, data=None, content_type=None, **meta) -> LaneAnswer:
        return self._ask("POST", path, data, content_type, **meta)

    def put(self, path: str, data=None, content_type=None, **meta) -> LaneAnswer:
        return self._ask("PUT", path, data, content_type, **meta)

    def patch(self, path: str, data=None, content_type=None, **meta) -> LaneAnswer:
        return self._ask("PATCH", path, data, content_type, **meta)


@pytest.fixture
def world(make_card):
    """Three agents of alice (public, private, groups: team-a) registered by card, each
    with a second version; the four callers' keys."""
    from rest_framework.test import APIClient

    keys = {
        "owner": _key("alice", []),
        "member": _key("carol", ["team-a"]),
        "other": _key("dave", ["team-b"]),
    }
    clients = {"anonymous": LaneClient()}
    for caller, key in keys.items():
        clients[caller] = APIClient()
        clients[caller].credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    owner = clients["owner"]
    agents = {}
    for kind, name in NAMES.items():
        interfaces = [
            {
                "url": f"https://{kind}.weather.example.com/a2a/v1",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ]
        skills = [
            {
                "id": "forecast",
                "name": "Forecast",
                "description": f"Forecast for a city by {name}.",
                "tags": ["weather", f"hush-{kind}"],
            }
        ]
        body = {"card": make_card(name=name, supportedInterfaces=interfaces, skills=skills)}
        if kind != "public":
            body["visibility"] = kind
        if kind == "groups":
            body["visibilityGroups"] = ["team-a"]
        created = owner.post("/a2a/agents", body, format="json")
        assert created.status_code == 201, created.content
        agent_id = created.json()["id"]
        card = make_card(name=name, supportedInterfaces=interfaces, skills=skills, version="2.2.0")
        replaced = owner.put(f"/a2a/agents/{agent_id}", {"card": card}, format="json")
        assert replaced.status_code == 200, replaced.content
        agent = Agent.objects.get(pk=agent_id)
        agents[kind] = {
            "id": agent_id,
            "name": name,
            "word": name.split()[0],
            "kind": kind,
            "endpoint": str(agent.endpoints.first().pk),
            "urn": f"urn:air:testserver:agent:{agent_id}",
        }
    return clients, agents


def _may_read(caller: str, kind: str) -> bool:
    return kind == "public" or caller == "owner" or (caller == "member" and kind == "groups")


def _fill(value, agent: dict):
    """The template (a string, or a body of strings) for the agent."""
    if isinstance(value, str):
        return value.format(**agent)
    if isinstance(value, dict):
        return {k: _fill(v, agent) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, agent) for v in value]
    return value


def _call(client, method: str, path: str, body) -> tuple[int, str]:
    extra = {}
    if path == "/mcp":
        extra = {"HTTP_ACCEPT": "application/json, text/event-stream"}
        extra["HTTP_MCP_PROTOCOL_VERSION"] = "2025-06-18"
    if path.startswith(("/a2a/jsonrpc", "/a2a/rest/")):
        extra = {"HTTP_A2A_VERSION": "1.0"}  # (else a version error answers, whoever asks)
    if body is None and method in ("GET", "DELETE"):
        response = getattr(client, method.lower())(path, **extra)
    else:
        response = getattr(client, method.lower())(
            path, json.dumps(body or {}), content_type="application/json", **extra
        )
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, content.decode(errors="replace")


def _as_unknown(text: str, agent: dict) -> str:
    """An answer with the agent's id (and endpoint) written as the unknown id's, its
    request id left out: what an unknown id's answer must equal."""
    text = text.replace(agent["id"], UNKNOWN).replace(agent["endpoint"], UNKNOWN)
    text = re.sub(r'"requestId":\s*"[0-9a-f]*"', '"requestId": ""', text)
    try:
        body = json.loads(text)
    except ValueError:
        return "(html)"  # pages: the status tells (their nonces differ per answer)
    return json.dumps(body, sort_keys=True)


def _walk(world) -> list[str]:
    clients, agents = world
    unknown = {"id": UNKNOWN, "name": "Nobody", "word": "Nobody", "kind": "none"}
    unknown.update(endpoint=UNKNOWN, urn=f"urn:air:testserver:agent:{UNKNOWN}")
    failures = []
    present = set(all_routes())
    for route, calls in ROUTES.items():
        if route not in present:
            continue  # an app that is not installed
        for entry in calls:
            if len(entry) == 1:
                continue  # no agent data, takes parameters: not called
            kind, method, template, body = entry
            if kind == NONE:
                for caller, client in clients.items():
                    _, text = _call(client, method, template, body)
                    for agent in agents.values():
                        if agent["kind"] != "public" and agent["name"] in text:
                            failures.append(f"{route}: {caller} sees {agent['name']}")
                continue
            for agent in agents.values():
                names_agent = any(f"{{{k}}}" in template + json.dumps(body) for k in NAMING)
                for caller, client in clients.items():
                    may = _may_read(caller, agent["kind"])
                    if kind in (WRITES, OWNER) and may and caller != "owner":
                        continue  # a group member reads it; the owner's business
                    if kind == WRITES and may:
                        continue  # would write
                    path, data = _fill(template, agent), _fill(body, agent)
                    status, text = _call(client, method, path, data)
                    where = f"{method} {path} as {caller}"
                    if not may:
                        # Where the URL names it, the answer may say the id it was given.
                        told = agent["name"] in text or (agent["id"] in text and not names_agent)
                        if told:
                            failures.append(f"{where}: tells of the {agent['kind']} agent")
                        if names_agent:
                            got = (status, _as_unknown(text, agent))
                            u_path, u_data = _fill(template, unknown), _fill(body, unknown)
                            u_status, u_text = _call(client, method, u_path, u_data)
                            expected = (u_status, _as_unknown(u_text, unknown))
                            if got != expected:
                                failures.append(f"{where}: {got} is not an unknown id's {expected}")
                    elif (
                        kind in (READS, OWNER)
                        and agent["kind"] != "public"
                        and (status != 200 or not (names_agent or agent["name"] in text))
                    ):
                        failures.append(f"{where}: {status}, the agent not served")
    return failures


@pytest.mark.django_db
def test_every_route_honours_visibility(world):
    failures = _walk(world)
    assert failures == [], "\n".join(failures)


@pytest.mark.django_db
def test_no_public_event_tells_of_a_restricted_agent(world):
    """Its events are its readers' (tests/registry/events/test_restricted_events.py)."""
    _, agents = world
    restricted = [agents["private"]["id"], agents["groups"]["id"]]
    public = Event.objects.filter(audience="")
    assert public.filter(subject__in=restricted).count() == 0
    assert public.filter(subject=agents["public"]["id"]).exists()
    assert set(Event.objects.filter(subject__in=restricted).values_list("audience", flat=True)) == {
        "readers"
    }
    for data in public.values_list("data", flat=True):
        text = bytes(data).decode()
        assert not any(a in text for a in [*restricted, NAMES["private"], NAMES["groups"]])


@pytest.mark.django_db
def test_the_admin_is_no_way_around_visibility(world):
    """An API key is no login to the admin: its pages send every caller of the API to the
    login page, whatever the route."""
    clients, agents = world
    admin_routes = [r for r in all_routes() if r.startswith(ADMIN_PREFIX)]
    assert "admin/registry/agent/<path:object_id>/change/" in admin_routes
    for client in clients.values():
        response = client.get(f"/admin/registry/agent/{agents['private']['id']}/change/")
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")


@pytest.mark.django_db
def test_a_restricted_card_is_served_as_posted_to_who_may_read_it_and_kept_by_no_cache(
    world,
):
    clients, agents = world
    private = agents["private"]["id"]
    response = clients["owner"].get(f"/a2a/agents/{private}")
    assert response.status_code == 200
    card = json.loads(response.content)
    assert card["name"] == NAMES["private"] and card["version"] == "2.2.0"
    assert "visibility" not in card  # a registry field, never in the card
    assert response["Cache-Control"] == "private, no-store"
    public = clients["anonymous"].get(f"/a2a/agents/{agents['public']['id']}")
    assert public["Cache-Control"] == "public, max-age=60"
