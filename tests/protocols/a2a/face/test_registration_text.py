"""A card registered through the registry's A2A face is stored as its JSON text was sent
(read again from the request's body, not from the SDK's Struct), on both bindings; the
same card again makes no version."""

import hashlib
import json

import httpx
import pytest
from a2a.helpers.proto_helpers import new_data_part

from protocols.a2a.models import CardDocument, CardVersion
from tests.protocols.a2a.face.conftest import BINDINGS, answer, converse

pytestmark = pytest.mark.django_db(transaction=True)


def stored(agent_id: str) -> bytes:
    return bytes(CardDocument.objects.get(agent_id=agent_id).body)


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_card_sent_by_the_sdk_client_is_stored_as_sent_and_once(
    make_key, make_card, registry_url, binding
):
    key = make_key("carol")
    card = make_card(x_limits={"zeta": 3, "alpha": [1, 2.5]}, x_note="d\u00e9j\u00e0 vu")
    sent = []
    task, _, _ = converse(
        registry_url, binding, [new_data_part({"card": card})], key=key, sent=sent
    )
    agent_id = answer(task)[0]["agentId"]
    body = stored(agent_id)
    # The card's text, byte for byte, as a2a-sdk's client wrote it (the first request).
    assert body in sent[0]
    sent_value = json.loads(sent[0])
    message = sent_value.get("params", sent_value)["message"]
    assert json.loads(body) == message["parts"][0]["data"]["card"]
    document = CardDocument.objects.get(agent_id=agent_id)
    assert document.sha256 == hashlib.sha256(body).hexdigest()
    with httpx.Client() as http:
        assert http.get(f"{registry_url}/a2a/agents/{agent_id}").content == body

    again, _, _ = converse(registry_url, binding, [new_data_part({"card": card})], key=key)
    assert answer(again)[0]["agentId"] == agent_id
    assert stored(agent_id) == body
    assert CardVersion.objects.filter(agent_id=agent_id).count() == 1


def raw_body(binding: str, card_text: str) -> tuple[str, str]:
    message = (
        '{"messageId": "m-1", "role": "ROLE_USER", '
        f'"parts": [{{"text": "register"}}, {{"data": {{"card": {card_text}}}}}]}}'
    )
    if binding == "JSONRPC":
        return (
            "/a2a/jsonrpc",
            '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", '
            f'"params": {{"message": {message}}}}}',
        )
    return "/a2a/rest/message:send", f'{{"message": {message}}}'


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_cards_numbers_escapes_and_order_are_kept_byte_for_byte(
    make_key, make_card, registry_url, binding
):
    card = json.dumps(make_card(), indent=1)[:-2]
    card_text = card + ',\n "x_big": 12345678901234567890, "x_text": "\\u00e9\\/", "x_f": 1.50}'
    path, body = raw_body(binding, card_text)
    headers = {
        "Authorization": f"Bearer {make_key('carol')}",
        "Content-Type": "application/json",
        "A2A-Version": "1.0",
    }
    with httpx.Client(timeout=30) as http:
        for _ in range(2):
            answered = http.post(f"{registry_url}{path}", content=body.encode(), headers=headers)
            assert answered.status_code == 200, answered.text
    (document,) = CardDocument.objects.all()
    assert bytes(document.body) == card_text.encode()
    assert document.sha256 == hashlib.sha256(card_text.encode()).hexdigest()
    assert CardVersion.objects.filter(agent_id=document.agent_id).count() == 1


def test_the_same_card_in_another_order_or_with_doubles_makes_no_version(
    make_key, make_card, registry_url
):
    """a2a-sdk's client writes a data part's members in an order of its own (another in
    another process) and whole numbers as doubles: the card is still the stored one."""
    card = make_card(x_limits={"zeta": 3, "alpha": 1})
    text = json.dumps(card)
    reordered = json.dumps(dict(reversed(card.items())) | {"x_limits": {"alpha": 1.0, "zeta": 3.0}})
    headers = {"Authorization": f"Bearer {make_key('carol')}", "A2A-Version": "1.0"}
    with httpx.Client(timeout=30, headers=headers) as http:
        for card_text in (text, reordered):
            path, body = raw_body("HTTP+JSON", card_text)
            answered = http.post(f"{registry_url}{path}", content=body.encode())
            assert answered.status_code == 200, answered.text
    (document,) = CardDocument.objects.all()
    assert bytes(document.body) == text.encode()
    assert CardVersion.objects.filter(agent_id=document.agent_id).count() == 1
