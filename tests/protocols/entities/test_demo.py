"""The demo entities of `make run`: stored without network, once."""

import pytest
from django.core.management import call_command

from protocols.entities.models import Entity

pytestmark = pytest.mark.django_db


def test_load_demo_stores_the_demo_entities_once(capsys, anon):
    call_command("load_demo")
    call_command("load_demo")
    capsys.readouterr()
    assert sorted(Entity.objects.values_list("name", "format", "verification_level")) == [
        ("Demo Bistro Lyon", "edp-0.2", 1),
        ("Demo Bistro Marseille", "edp-0.2", 1),
        ("Demo Trattoria", "a2e-0.1", 1),
    ]
    found = anon.get("/v1/nearby?lat=48.853&lng=2.333").json()["results"]
    assert [r["entity"]["name"] for r in found] == ["Demo Trattoria"]


def test_an_entitys_page_shows_its_mcp_servers_and_level(client):
    call_command("load_demo")
    entity = Entity.objects.get(name="Demo Trattoria")
    html = client.get(f"/browse/agents/{entity.pk}").content.decode()
    assert "Verification level" in html
    assert "https://mcp.demo-bookings.example.com" in html
    assert "Entity, level 1" in html
    listing = client.get("/browse?q=trattoria").content.decode()
    assert "Entity, level 1" in listing
