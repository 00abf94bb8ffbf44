"""The entities' bulk stores refresh their agents' filter keys once, at the end of the
write (``filter_keys_at_end``): the keys are then what the agents' tables say."""

import pytest

from protocols.entities.registration.bulk import cards_bulk_store
from tests.protocols.entities.providers.test_providers import registration
from tests.protocols.entities.resolution.test_resolve import a2e
from tests.registry.discovery.test_filter_keys import expected, stored

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_entity_cards_and_claims_stored_in_bulk_have_their_keys(alice):
    cards = [
        a2e("zinc.example", "Le Petit Zinc", 48.85, 2.33, "Paris", ["reservations"]),
        a2e("flore.example", "Café de Flore", 48.85, 2.33, "Paris", ["menu"], category="hotel"),
    ]
    assert cards_bulk_store(owner="alice", cards=cards) == 2
    assert len(stored()) == 2 and stored() == expected()
    assert any("~f entityCategory hotel" in keys for keys, *_ in stored().values())
    # A provider's new claims: its entities written in bulk too.
    assert alice.post("/v1/provider/register", registration(), format="json").status_code == 201
    assert len(stored()) > 2 and stored() == expected()
