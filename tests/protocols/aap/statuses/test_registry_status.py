"""Each agent's AAP status, from its card at every write; discovery filters and /aap/dealers."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from protocols.a2a.signals import StoredCard
from protocols.aap.models import AAPStatus
from protocols.aap.statuses.services import aap_statuses_store
from registry.agents.models import Agent
from registry.discovery.models import AgentFacet

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "aap"
ALL_SKILLS = [
    "dealer.information",
    "inventory.facets",
    "inventory.search",
    "inventory.vehicle",
    "lead.submit",
]


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def register(client, card) -> dict[str, Any]:
    response = client.post("/a2a/agents", {"card": card}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return sorted(agent["name"] for agent in response.json()["results"])


def without_lead_submit(card: dict[str, Any]) -> dict[str, Any]:
    """A compliant dealer card that implements every AAP skill but lead.submit."""
    card = copy.deepcopy(card)
    card["skills"] = [s for s in card["skills"] if s["id"] != "lead.submit"]
    card["capabilities"]["extensions"][0]["params"]["implemented_skills"].remove("lead.submit")
    return card


@pytest.fixture
def agents(alice, make_card, native_payload) -> dict[str, str]:
    """A compliant dealer, a dealer without lead.submit, a non-compliant dealer, others."""
    broken = load("card-public.json")
    broken["name"] = "Broken Dealer"
    # Another preferred interface: the same one would make it the first dealer, updated.
    broken["supported_interfaces"][0]["url"] = "https://broken-dealer.example.com/a2a"
    broken["capabilities"]["extensions"][0]["params"]["implemented_skills"].append("x")
    broken["skills"] = [s for s in broken["skills"] if s["id"] != "inventory.facets"]
    no_leads = without_lead_submit(load("card-bearer.json"))
    no_leads["name"] = "Showroom Dealer"
    native = alice.post("/agents", native_payload(), format="json")
    assert native.status_code == 201
    return {
        "dealer": register(alice, load("card-public.json"))["id"],
        "showroom": register(alice, no_leads)["id"],
        "broken": register(alice, broken)["id"],
        "generic": register(alice, make_card())["id"],
        "native": native.json()["id"],
    }


def aap_of(client, agent_id: str) -> Any:
    response = client.get(f"/agents/{agent_id}")
    assert response.status_code == 200
    return response.json()["aap"]


def test_registering_the_public_example_card_marks_the_agent_a_compliant_dealer(alice, anon):
    body = register(alice, load("card-public.json"))

    expected = {
        "dealer": True,
        "cardCompliant": True,
        "version": "0.1",
        "implementedSkills": ALL_SKILLS,
    }
    assert body["aap"] == expected
    listed = anon.get("/discover/agents").json()["results"]
    assert [agent["aap"] for agent in listed] == [expected]


def test_generic_and_native_agents_show_no_dealer_status(agents, anon):
    not_a_dealer = {
        "dealer": False,
        "cardCompliant": False,
        "version": None,
        "implementedSkills": [],
    }
    assert aap_of(anon, agents["generic"]) == not_a_dealer
    assert aap_of(anon, agents["native"]) == not_a_dealer


def test_an_agent_without_a_card_has_a_null_aap_status(alice, anon, native_payload):
    payload = native_payload()
    payload["endpoints"][0]["protocol"] = "MCP"
    agent_id = alice.post("/agents", payload, format="json").json()["id"]

    assert aap_of(anon, agent_id) is None


def test_a_dealer_card_that_breaks_a_rule_is_a_dealer_but_not_compliant(agents, anon):
    status = aap_of(anon, agents["broken"])

    assert status["dealer"] is True
    assert status["cardCompliant"] is False
    assert "lead.submit" in status["implementedSkills"]


def test_aap_true_lists_every_agent_declaring_aap_and_false_the_rest(agents, anon):
    assert names(anon.get("/discover/agents", {"aap": "true"})) == [
        "Broken Dealer",
        "Demo Toyota Dealer Agent",
        "Showroom Dealer",
    ]
    assert names(anon.get("/discover/agents", {"aap": "false"})) == [
        "Summarizer",
        "Weather Agent",
    ]


def test_aap_compliant_true_lists_dealers_whose_card_passes_and_false_the_rest(agents, anon):
    assert names(anon.get("/discover/agents", {"aapCompliant": "true"})) == [
        "Demo Toyota Dealer Agent",
        "Showroom Dealer",
    ]
    assert names(anon.get("/discover/agents", {"aapCompliant": "false"})) == [
        "Broken Dealer",
        "Summarizer",
        "Weather Agent",
    ]
    both = anon.get("/discover/agents", {"aap": "true", "aapCompliant": "false"})
    assert names(both) == ["Broken Dealer"]


def test_the_aap_facets_count_dealers_and_their_cards_compliance(agents, anon):
    # Three dealers: two compliant cards, one not; agents that are no dealers are not counted.
    body = anon.get("/discover/agents", {"facets": "aap,aapCompliant"}).json()
    assert body["facets"]["aap"] == [{"value": "true", "count": 3}]
    assert body["facets"]["aapCompliant"] == [
        {"value": "true", "count": 2},
        {"value": "false", "count": 1},
    ]
    narrowed = anon.get("/discover/agents", {"aapCompliant": "false", "facets": "aap"}).json()
    assert narrowed["facets"]["aap"] == [{"value": "true", "count": 1}]


def test_dealer_listing_facets_count_only_dealers(agents, anon):
    # With a text query too: the text index's rows are narrowed to the listing's dealers.
    for params in ({"facets": "aap"}, {"q": "dealer", "facets": "aap"}):
        body = anon.get("/aap/dealers", params).json()
        assert body["facets"]["aap"] == [{"value": "true", "count": 2}], params


def test_aap_skill_filter_finds_agents_implementing_the_skill(agents, anon):
    lead_agents = names(anon.get("/discover/agents", {"aapSkill": "lead.submit"}))
    assert lead_agents == ["Broken Dealer", "Demo Toyota Dealer Agent"]
    both = anon.get("/discover/agents", {"aapSkill": "lead.submit", "aapCompliant": "true"})
    assert names(both) == ["Demo Toyota Dealer Agent"]
    assert names(anon.get("/discover/agents", {"aapSkill": "lead.unknown"})) == []


def test_an_unknown_aap_value_is_a_400_naming_the_parameter(agents, anon):
    response = anon.get("/discover/agents", {"aap": "maybe"})

    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "aap"


def test_dealers_listing_shows_compliant_dealers_only(agents, anon):
    response = anon.get("/aap/dealers")

    assert names(response) == ["Demo Toyota Dealer Agent", "Showroom Dealer"]
    assert all(agent["aap"]["cardCompliant"] for agent in response.json()["results"])
    assert names(anon.get("/aap/dealers", {"aapSkill": "lead.submit"})) == [
        "Demo Toyota Dealer Agent"
    ]
    assert names(anon.get("/aap/dealers", {"q": "showroom"})) == ["Showroom Dealer"]


def test_dealers_listing_pages_with_a_cursor(alice, anon):
    for index in range(3):
        card = load("card-public.json")
        card["name"] = f"Dealer {index}"
        card["supported_interfaces"][0]["url"] = f"https://dealer-{index}.example.com/a2a"
        register(alice, card)

    first = anon.get("/aap/dealers", {"limit": 2}).json()
    second = anon.get(first["next"]).json()

    seen = [a["name"] for a in first["results"]] + [a["name"] for a in second["results"]]
    assert sorted(seen) == ["Dealer 0", "Dealer 1", "Dealer 2"]
    assert second["next"] is None


def test_listings_do_not_query_per_agent(agents, anon, django_assert_max_num_queries):
    # the page's keys, its rows, their capabilities and endpoints, the last-change time
    with django_assert_max_num_queries(5):
        discovered = anon.get("/discover/agents")
    # the page's keys, its rows, their capabilities and endpoints, the last-change time
    with django_assert_max_num_queries(5):
        dealers = anon.get("/aap/dealers")

    assert len(discovered.json()["results"]) == 5
    assert len(dealers.json()["results"]) == 2


def test_replacing_the_card_with_a_non_aap_card_clears_the_status(agents, alice, anon, make_card):
    agent_id = agents["dealer"]

    # Not the generic agent's interface, which would make it a duplicate of that agent.
    card = make_card()
    card["supportedInterfaces"][0]["url"] = "https://weather-2.example.com/a2a"
    response = alice.put(f"/a2a/agents/{agent_id}", {"card": card}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["aap"] == {
        "dealer": False,
        "cardCompliant": False,
        "version": None,
        "implementedSkills": [],
    }
    assert not skills_of(agent_id)
    assert "Weather Agent" not in names(anon.get("/aap/dealers"))
    assert names(anon.get("/discover/agents", {"aapSkill": "dealer.information"})) == [
        "Broken Dealer",
        "Showroom Dealer",
    ]


def test_replacing_a_card_updates_the_implemented_skills(agents, alice, anon):
    agent_id = agents["dealer"]

    card = without_lead_submit(load("card-public.json"))
    response = alice.put(f"/a2a/agents/{agent_id}", {"card": card}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["aap"]["implementedSkills"] == ALL_SKILLS[:4]
    assert skills_of(agent_id) == ALL_SKILLS[:4]
    assert names(anon.get("/discover/agents", {"aapSkill": "lead.submit"})) == ["Broken Dealer"]


def test_a_native_rename_of_a_dealer_rechecks_its_rewritten_card(agents, alice):
    agent_id = agents["dealer"]
    before = AAPStatus.objects.get(agent_id=agent_id).checked_at

    response = alice.patch(f"/agents/{agent_id}", {"name": "Renamed Dealer"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["aap"]["cardCompliant"] is True
    assert AAPStatus.objects.get(agent_id=agent_id).checked_at > before


def test_removing_a_native_agents_a2a_endpoint_removes_its_status(agents, alice, anon):
    agent_id = agents["native"]
    endpoint_id = anon.get(f"/agents/{agent_id}").json()["endpoints"][0]["id"]

    response = alice.delete(f"/agents/{agent_id}/endpoints/{endpoint_id}")

    assert response.status_code == 204
    assert aap_of(anon, agent_id) is None
    assert not AAPStatus.objects.filter(agent_id=agent_id).exists()


def test_a_native_agent_whose_metadata_declares_aap_is_a_dealer_of_its_generated_card(
    alice, anon, native_payload
):
    payload = native_payload()
    extension = load("card-public.json")["capabilities"]["extensions"][0]
    payload["endpoints"][0]["protocolMetadata"] = {"capabilities": {"extensions": [extension]}}

    agent_id = alice.post("/agents", payload, format="json").json()["id"]

    status = aap_of(anon, agent_id)
    assert status["dealer"] is True
    assert status["version"] == "0.1"
    # Generated skill ids are capability ids, never AAP skill ids: card.skills fails.
    assert status["cardCompliant"] is False


def test_status_refresh_is_idempotent_and_keeps_one_skill_row_each(agents):
    agent = Agent.objects.get(pk=agents["dealer"])

    aap_statuses_store([StoredCard(agent, load("card-public.json"))])
    aap_statuses_store([StoredCard(agent, load("card-public.json"))])

    assert skills_of(agent.pk) == ALL_SKILLS
    assert AgentFacet.objects.filter(agent=agent, kind="aap").count() == 1
    assert AAPStatus.objects.filter(agent=agent).count() == 1


def test_the_demo_dealer_is_listed_as_a_compliant_dealer(anon, capsys):
    call_command("load_demo")

    dealers = anon.get("/aap/dealers").json()["results"]
    assert [agent["name"] for agent in dealers] == ["Demo Motors Dealer Agent"]
    assert dealers[0]["aap"]["cardCompliant"] is True


def test_admin_lists_aap_statuses_by_compliance(agents, client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-123456789"))

    response = client.get("/admin/aap/aapstatus/", {"compliant__exact": "1"})

    assert response.status_code == 200
    html = response.content.decode()
    assert "Demo Toyota Dealer Agent" in html
    assert "Broken Dealer" not in html


def test_a_card_claiming_an_absurd_aap_version_registers_with_the_version_cut_short(alice):
    card = load("card-v1.1.json")
    version = ".".join(["1"] * 40)
    card["capabilities"]["extensions"][0]["uri"] = (
        f"https://autoagentprotocol.org/extensions/aap/v{version}"
    )

    body = register(alice, card)

    assert body["aap"]["dealer"] is True
    assert body["aap"]["cardCompliant"] is False
    assert body["aap"]["version"] == version[: AAPStatus.VERSION_MAX_LENGTH]


def test_aap_refresh_recomputes_stored_statuses(agents, capsys):
    AAPStatus.objects.filter(agent_id=agents["dealer"]).update(compliant=False)
    AgentFacet.objects.filter(agent_id=agents["dealer"], kind="aapSkill").delete()
    call_command("aap_refresh")
    assert "Rechecked the AAP status of" in capsys.readouterr().out
    status = AAPStatus.objects.get(agent_id=agents["dealer"])
    assert status.compliant is True
    assert skills_of(agents["dealer"]) == ALL_SKILLS


def skills_of(agent_id) -> list[str]:
    """The AAP skills discovery filters the agent by (its aapSkill facts), sorted."""
    facts = AgentFacet.objects.filter(agent_id=agent_id, kind="aapSkill")
    return sorted(facts.values_list("value", flat=True))
