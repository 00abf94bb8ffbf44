"""A business whose agent is not publicly listed (quarantined, waiting for review) leaves
the entity reads: /v1/resolve, /v1/nearby, /v1/resolve/domain and its page; back when
listed again."""

import pytest

from protocols.entities.models import Entity
from protocols.entities.registration.bulk import cards_bulk_store
from tests.protocols.entities.resolution.test_resolve import a2e, names

pytestmark = pytest.mark.django_db


def test_a_quarantined_business_leaves_resolve_nearby_and_its_page(admin_client, anon):
    cards_bulk_store(
        owner="alice",
        cards=[
            a2e("zinc.example", "Le Petit Zinc", 48.8534, 2.3328, "Paris", ["reservations"]),
            a2e("flore.example", "Cafe Zinc", 48.8541, 2.3326, "Paris", ["menu"]),
        ],
    )
    zinc = Entity.objects.get(domain="zinc.example")
    assert sorted(names(anon.get("/v1/resolve?query=zinc"))) == ["Cafe Zinc", "Le Petit Zinc"]
    page = anon.get(f"/browse/entities/{zinc.pk}").content.decode()
    assert f'href="/browse/agents/{zinc.pk}/report"' in page
    admin_client.post(f"/agents/{zinc.pk}/quarantine", {"reason": "fake"}, format="json")
    assert names(anon.get("/v1/resolve?query=zinc")) == ["Cafe Zinc"]
    nearby = anon.get("/v1/nearby?lat=48.8534&lng=2.3328&radius=500").json()["results"]
    assert [r["entity"]["name"] for r in nearby] == ["Cafe Zinc"]
    assert anon.get("/v1/resolve/domain/zinc.example").status_code == 404
    assert anon.get(f"/entities/{zinc.pk}").status_code == 404
    assert anon.get(f"/browse/entities/{zinc.pk}").status_code == 404
    admin_client.delete(f"/agents/{zinc.pk}/quarantine")
    assert sorted(names(anon.get("/v1/resolve?query=zinc"))) == ["Cafe Zinc", "Le Petit Zinc"]


def test_under_review_new_businesses_wait(settings, anon):
    settings.REGISTRY_ADMISSION = "review"
    cards_bulk_store(
        owner="alice",
        cards=[a2e("new.example", "New Bistro", 48.85, 2.33, "Paris", ["menu"])],
    )
    assert names(anon.get("/v1/resolve?query=bistro")) == []
    assert Entity.objects.get().listed is False
