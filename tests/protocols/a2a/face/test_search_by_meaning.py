"""What a card adds to the text that search by meaning embeds: its skills' examples."""

import pytest

from protocols.a2a.extensions import skill_examples
from registry.semantic.text import meaning_texts

pytestmark = pytest.mark.django_db


def test_a_cards_skill_examples_are_part_of_its_agents_meaning(alice, make_card):
    card = make_card()
    card["skills"][0]["examples"] = ["Do I need an umbrella on Saturday?"]
    agent_id = alice.post("/a2a/agents", {"card": card}, format="json").json()["id"]
    (examples,) = skill_examples([agent_id]).values()
    assert examples == "Do I need an umbrella on Saturday?"
    (text,) = meaning_texts([agent_id]).values()
    assert "umbrella" in text
