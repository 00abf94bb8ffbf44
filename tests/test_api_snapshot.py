"""The API as users see it, pinned: the OpenAPI schema and typical discovery answers.

A change to either snapshot is a change of the public API: regenerate them on purpose
(``UPDATE_SNAPSHOTS=1 pytest tests/test_api_snapshot.py``) and review the diff.
"""

import json
import os
import re
from pathlib import Path

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

SNAPSHOTS = Path(__file__).with_name("snapshots")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
CURSOR = re.compile(r"cursor=[^&\"]+")

DISCOVERY_QUERIES = [
    "/discover/agents",
    "/discover/agents?sort=name&limit=2",
    "/discover/agents?q=weather&sort=name&facets=tag,protocol,transport,protocolBinding,"
    "protocolVersion,provider,streaming,pushNotifications,extension,securityScheme,"
    "specVersion,aap",
    "/discover/agents?sort=name&facets=aap,tag,provider",
    "/discover/agents?aap=true",
    "/discover/agents?aap=false&sort=name",
    "/discover/agents?aapSkill=lead.submit",
    "/discover/agents?verified=false&signed=false&sort=name",
    "/discover/agents?verified=true",
    "/discover/agents?capability=forecast&streaming=true",
    "/discover/agents?protocolBinding=JSONRPC&provider=demo%20motors",
    "/discover/agents?updated_since=2000-01-01T00:00:00Z",
    "/discover/agents?facets=nope",
    "/discover/agents?aap=maybe",
    "/aap/dealers?facets=provider",
]


def _normalized(text: str, ids: dict[str, str]) -> str:
    def uuid_name(match: re.Match) -> str:
        return ids.setdefault(match.group(0), f"<id-{len(ids) + 1}>")

    text = CURSOR.sub("cursor=<cursor>", text)
    text = TIME.sub("<time>", text)
    return UUID.sub(uuid_name, text)


def _check(name: str, actual) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(actual, indent=1, sort_keys=False) + "\n")
    expected = json.loads(path.read_text())
    assert actual == expected, f"{name} changed: regenerate it on purpose and review the diff"


def test_openapi_schema_matches_the_snapshot(anon):
    response = anon.get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    _check("openapi.json", json.loads(response.content))


def test_discovery_answers_match_the_snapshot(anon, capsys):
    call_command("load_demo")
    capsys.readouterr()
    ids: dict[str, str] = {}
    answers = {}
    for query in DISCOVERY_QUERIES:
        response = anon.get(query, HTTP_X_REQUEST_ID="snapshot")  # problems name it
        answers[query] = {
            "status": response.status_code,
            "contentType": response["Content-Type"],
            "body": json.loads(_normalized(response.content.decode(), ids)),
        }
    dealer = next(
        a["id"] for a in json.loads(anon.get("/discover/agents?aap=true").content)["results"]
    )
    for query in (f"/agents/{dealer}", f"/a2a/agents/{dealer}"):
        response = anon.get(query)
        answers[_normalized(query, ids)] = {
            "status": response.status_code,
            "contentType": response["Content-Type"],
            "body": json.loads(_normalized(response.content.decode(), ids)),
        }
    _check("discovery.json", answers)
