"""Card versions: every change of a card is an immutable version, numbered without gaps,
served byte for byte at /a2a/agents/<id>?version=, listed and diffed at /agents/<id>/versions."""

import copy
import hashlib
import json
import threading

import httpx
import pytest
from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer
from django.core.management import call_command
from google.protobuf.json_format import MessageToDict, ParseDict

from protocols.a2a.models import CardVersion
from registry.fastpath.lean import LeanApplication
from tests.conftest import BASE_CARD
from tests.protocols.a2a.sample_cards import ec_key_pair, signature_verifies
from tests.registry.fastpath.test_lean import Recorder, call

pytestmark = pytest.mark.django_db


def register(client, card) -> str:
    answer = client.post("/a2a/agents", {"card": card}, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()["id"]


def put(client, agent_id, card, **extra):
    return client.put(f"/a2a/agents/{agent_id}", {"card": card}, format="json", **extra)


def test_each_card_change_is_a_version_with_its_exact_bytes(alice, anon, make_card):
    agent_id = register(alice, make_card(version="1.0.0"))
    assert put(alice, agent_id, make_card(version="1.1.0", name="Weather 2")).status_code == 200
    assert put(alice, agent_id, make_card(version="1.2.0", name="Weather 3")).status_code == 200
    assert put(alice, agent_id, make_card(version="1.2.0", name="Weather 3")).status_code == 200

    listed = anon.get(f"/agents/{agent_id}/versions").json()
    assert [v["seq"] for v in listed["items"]] == [3, 2, 1]  # the same card again: no version
    assert [v["version"] for v in listed["items"]] == ["1.2.0", "1.1.0", "1.0.0"]
    assert [v["change"] for v in listed["items"]] == ["replace", "replace", "register"]
    assert [v["latest"] for v in listed["items"]] == [True, False, False]
    assert listed["items"][2]["by"] == "alice" and listed["next"] is None

    for item in listed["items"]:
        served = anon.get(f"/a2a/agents/{agent_id}?version={item['seq']}")
        assert served.status_code == 200
        assert hashlib.sha256(served.content).hexdigest() == item["sha256"]
        assert served["ETag"] == f'"{item["sha256"]}"'
        assert served["Cache-Control"] == "public, max-age=31536000, immutable"
    assert json.loads(anon.get(f"/a2a/agents/{agent_id}?version=1").content)["version"] == "1.0.0"
    latest = anon.get(f"/a2a/agents/{agent_id}")
    assert latest.content == anon.get(f"/a2a/agents/{agent_id}?version=3").content
    assert latest["Cache-Control"] == "public, max-age=60"


def test_a_card_version_string_names_its_newest_version(alice, anon, make_card):
    agent_id = register(alice, make_card(version="2.0"))
    put(alice, agent_id, make_card(version="2.0", description="Same version, new text."))
    put(alice, agent_id, make_card(version="2.1"))
    by_name = anon.get(f"/a2a/agents/{agent_id}?version=2.0")
    assert by_name.content == anon.get(f"/a2a/agents/{agent_id}?version=2").content
    assert json.loads(by_name.content)["description"] == "Same version, new text."
    missing = anon.get(f"/a2a/agents/{agent_id}?version=9.9")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/problem+json"
    assert anon.get(f"/a2a/agents/{agent_id}?version=7").status_code == 404


def test_the_lean_lane_serves_a_pinned_version_as_the_view_does(alice, anon, make_card):
    agent_id = register(alice, make_card(version="1"))
    put(alice, agent_id, make_card(version="2", name="Two"))
    app, django = LeanApplication(Recorder()), None
    path = f"/a2a/agents/{agent_id}?version=1"
    status, headers, body = call(app, "GET", path, HTTP_X_REQUEST_ID="same-id")
    expected = anon.get(path, HTTP_X_REQUEST_ID="same-id")
    assert (status, body) == (200, expected.content)
    assert headers == dict(expected.headers.items())
    status, _, body = call(app, "GET", path, HTTP_IF_NONE_MATCH=expected["ETag"])
    assert (status, body) == (304, b"")
    assert django is None


def test_native_writes_version_the_generated_card_and_heartbeats_do_not(alice, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    url = f"/agents/{agent['id']}"
    endpoint = agent["endpoints"][0]["id"]
    assert alice.post(f"{url}/endpoints/{endpoint}/heartbeat").status_code == 200
    assert (
        alice.patch(url, {"description": "Now with a description."}, format="json").status_code
        == 200
    )
    assert alice.patch(url, {"compatibility": "backward"}, format="json").status_code == 200
    versions = alice.get(f"{url}/versions").json()["items"]
    assert [(v["seq"], v["change"]) for v in versions] == [(2, "update"), (1, "update")]
    assert versions[0]["summary"]["changes"] == []  # the description is no card change rule


def signed(private_key, **overrides) -> dict:
    card = copy.deepcopy(BASE_CARD) | overrides
    signer = create_agent_card_signer(
        signing_key=private_key,
        protected_header={"kid": "key-1", "alg": "ES256", "typ": "JOSE", "jku": None},
    )
    return MessageToDict(signer(ParseDict(card, AgentCard())))


def test_old_versions_of_a_signed_card_still_verify_byte_exact(alice, anon):
    private, public = ec_key_pair()
    agent_id = register(alice, signed(private, version="1.0"))
    assert put(alice, agent_id, signed(private, version="1.1", name="Signed 2")).status_code == 200
    assert put(alice, agent_id, signed(private, version="1.2", name="Signed 3")).status_code == 200
    for seq in (1, 2, 3):
        served = anon.get(f"/a2a/agents/{agent_id}?version={seq}")
        meta = anon.get(f"/agents/{agent_id}/versions/{seq}").json()
        assert hashlib.sha256(served.content).hexdigest() == meta["sha256"]
        assert signature_verifies(json.loads(served.content), public)
        assert json.loads(served.content)["version"] == f"1.{seq - 1}"


def test_versions_page_newest_first(alice, anon, make_card):
    agent_id = register(alice, make_card(version="0"))
    for n in range(1, 5):
        put(alice, agent_id, make_card(version=str(n)))
    first = anon.get(f"/agents/{agent_id}/versions?limit=2").json()
    assert [v["seq"] for v in first["items"]] == [5, 4]
    second = anon.get(first["next"]).json()
    assert [v["seq"] for v in second["items"]] == [3, 2]
    assert [v["seq"] for v in anon.get(second["next"]).json()["items"]] == [1]


@pytest.mark.parametrize(
    "path, status, field",
    [
        ("/versions?limit=0", 400, "limit"),
        ("/versions?before=x", 400, "before"),
        ("/versions?sort=old", 400, "sort"),
        ("/versions/abc", 400, "seq"),
        ("/versions/0", 400, "seq"),
        ("/versions/99", 404, None),
        ("/versions/1/diff/x", 400, "b"),
        ("/versions/1/diff/5", 404, None),
    ],
)
def test_bad_version_requests_are_problems_naming_the_field(
    alice, anon, make_card, path, status, field
):
    agent_id = register(alice, make_card())
    answer = anon.get(f"/agents/{agent_id}{path}")
    assert answer.status_code == status
    assert answer["Content-Type"] == "application/problem+json"
    if field:
        assert [e["path"] for e in answer.json()["errors"]] == [field]


def test_versions_of_an_unknown_agent_are_404(anon):
    assert anon.get("/agents/00000000-0000-0000-0000-000000000000/versions").status_code == 404
    assert anon.get("/agents/nope/versions/1").status_code == 404


def test_versions_prune_keeps_the_newest_and_never_the_latest(alice, anon, make_card, settings):
    agent_id = register(alice, make_card(version="0"))
    for n in range(1, 4):
        put(alice, agent_id, make_card(version=str(n)))
    other = register(
        alice,
        make_card(
            supportedInterfaces=[
                {
                    "url": "https://other.example.com/a2a",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ]
        ),
    )
    settings.CARD_VERSIONS_KEEP = 0
    call_command("versions_prune")
    assert CardVersion.objects.count() == 5  # 0: every version kept
    settings.CARD_VERSIONS_KEEP = 2
    call_command("versions_prune")
    kept = anon.get(f"/agents/{agent_id}/versions").json()["items"]
    assert [v["seq"] for v in kept] == [4, 3]
    assert [v["seq"] for v in anon.get(f"/agents/{other}/versions").json()["items"]] == [1]
    assert anon.get(f"/a2a/agents/{agent_id}?version=1").status_code == 404
    call_command("versions_prune", keep=1)
    assert [v["seq"] for v in anon.get(f"/agents/{agent_id}/versions").json()["items"]] == [4]


def test_bulk_imports_store_version_one(make_card):
    from protocols.a2a.registration.bulk import cards_bulk_import

    assert cards_bulk_import(owner="alice", cards=[make_card()]) == 1
    version = CardVersion.objects.get()
    assert (version.seq, version.change) == (1, "import")


@pytest.mark.django_db(transaction=True)
def test_concurrent_updates_number_versions_without_gaps_or_duplicates(
    live_server, make_key, make_card
):
    auth = {"Authorization": f"Bearer {make_key('alice')}"}
    with httpx.Client(base_url=live_server.url, headers=auth, timeout=60) as client:
        created = client.post("/a2a/agents", json={"card": make_card(version="0")})
        agent_id = created.json()["id"]
        answers = []

        def write(n: int) -> None:
            card = make_card(version=str(n), description=f"write {n}")
            answers.append(client.put(f"/a2a/agents/{agent_id}", json={"card": card}))

        threads = [threading.Thread(target=write, args=(n,)) for n in range(1, 9)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [a.status_code for a in answers] == [200] * 8
        items = client.get(f"/agents/{agent_id}/versions", params={"limit": 100}).json()["items"]
    assert sorted(v["seq"] for v in items) == list(range(1, 10))
    assert len({v["sha256"] for v in items}) == 9  # every write its own version
    served = httpx.get(f"{live_server.url}/a2a/agents/{agent_id}").content
    assert hashlib.sha256(served).hexdigest() == items[0]["sha256"]


def test_each_card_versions_event_says_its_number_and_change_summary(alice, make_card):
    from registry.events.envelope import event_bytes
    from registry.events.models import Event

    agent_id = register(alice, make_card(version="1.0.0"))
    assert put(alice, agent_id, make_card(version="1.1.0", name="Weather 2")).status_code == 200
    events = [
        json.loads(event_bytes(e))
        for e in Event.objects.filter(subject=agent_id, type__startswith="agent.").order_by("id")
    ]
    created, updated = events[0], events[-1]
    assert created["type"].endswith("agent.created") and created["cardversionseq"] == "1"
    assert "cardversionchanges" not in created
    assert updated["type"].endswith("agent.updated")
    assert updated["cardversionseq"] == "2"
    assert updated["cardversionbreaking"] == "false"
    assert "version-changed" in updated["cardversionchanges"].split(",")
    versions = alice.get(f"/agents/{agent_id}/versions").json()["items"]
    assert [v["seq"] for v in versions] == [2, 1]
