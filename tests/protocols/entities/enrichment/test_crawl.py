"""The crawl of known domains: changed cards stored, gone or invalid ones flagged, ETags and
Cache-Control honoured; `manage.py crawl_entities` runs it once."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from protocols.entities.models import EntityCard
from protocols.entities.tasks import entities_crawl_task
from tests.protocols.entities.conftest import example, publish

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db

WELL_KNOWN = "/.well-known/entity-card.json"


@pytest.fixture
def registered(network, https_server, at, alice):
    publish(https_server, example("edp-v0.1-multi-mcp"), ETag='"v1"')
    response = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert response.status_code == 201
    return response.json()["entities"][0]["id"]


def crawl(domain: str = "lepetitzinc.fr") -> str:
    from io import StringIO

    out = StringIO()
    call_command("crawl_entities", domain=domain, stdout=out)
    return out.getvalue()


def test_a_changed_card_is_stored(registered, https_server, anon):
    card = example("edp-v0.1-multi-mcp")
    card["mcps"] = card["mcps"][1:2]
    publish(https_server, card)
    assert "1 updated" in crawl()
    entity = anon.get(f"/entities/{registered}").json()
    assert [m["provider"] for m in entity["mcps"]] == ["delivery-provider"]


def test_a_card_that_disappeared_is_flagged_and_kept_at_level_0(registered, https_server, anon):
    del https_server.routes[WELL_KNOWN]
    assert "1 flagged" in crawl()
    entity = anon.get(f"/entities/{registered}").json()
    assert (entity["status"], entity["flagged"], entity["verification_level"]) == (
        "missing",
        True,
        0,
    )
    assert anon.get("/v1/resolve?query=lepetitzinc").json()["results"][0]["entity"]["flagged"]
    assert anon.get("/v1/resolve?query=lepetitzinc&min_verification=1").json()["results"] == []
    # Fixed: the same card again lifts the flag.
    publish(https_server, example("edp-v0.1-multi-mcp"))
    crawl()
    entity = anon.get(f"/entities/{registered}").json()
    assert (entity["status"], entity["flagged"], entity["verification_level"]) == ("ok", False, 1)


def test_a_card_that_turned_invalid_is_flagged(registered, https_server, anon):
    card = example("edp-v0.1-multi-mcp")
    card["domain"] = "other.example"
    publish(https_server, card)
    assert "1 flagged" in crawl()
    card_row = EntityCard.objects.get(domain="lepetitzinc.fr")
    assert card_row.status == "invalid"
    assert "other.example" in card_row.status_detail
    assert anon.get(f"/entities/{registered}").json()["mcps"][0]["verification"]["level"] == 0


def test_the_crawl_sends_the_etag_and_a_304_changes_nothing(registered, https_server):
    https_server.route(WELL_KNOWN, 304, {"ETag": '"v1"'})
    assert "1 unchanged" in crawl()
    card_request = [r for r in https_server.requests if r.path == WELL_KNOWN][-1]
    assert card_request.headers["If-None-Match"] == '"v1"'
    assert EntityCard.objects.get().status == "ok"


def test_cache_control_max_age_sets_the_next_crawl(registered, https_server):
    publish(https_server, example("edp-v0.1-multi-mcp"), **{"Cache-Control": "max-age=7200"})
    before = timezone.now()
    crawl()
    due = EntityCard.objects.get().next_crawl_at
    assert before + timedelta(seconds=7100) < due < timezone.now() + timedelta(seconds=7300)


def test_the_periodic_job_crawls_only_the_due_domains(registered, https_server):
    assert entities_crawl_task.delay().get() == 0  # registered just now: due in about a day
    EntityCard.objects.update(next_crawl_at=timezone.now() - timedelta(seconds=1))
    assert entities_crawl_task.delay().get() == 1
