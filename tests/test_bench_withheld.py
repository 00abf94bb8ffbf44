"""bench.withheld --alternate's summary: each round's two servers paired, the ratios' median
(the drift between rounds falls on both states of a round alike)."""

import pytest

from bench.withheld import alternate_summary

# Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
pytestmark = pytest.mark.database_independent


def test_each_round_is_compared_with_its_own_public_round():
    # The machine slows by half from round to round; private costs 10 % in each round.
    public = [{"card": 1000.0, "distinct text": 100.0}, {"card": 500.0, "distinct text": 50.0}]
    public.append({"card": 250.0, "distinct text": 25.0})
    withheld = [{k: v * 0.9 for k, v in r.items()} for r in public]
    found = alternate_summary({"public": public, "withheld": withheld})
    assert found["rounds_ratio"] == {"card": [0.9] * 3, "distinct text": [0.9] * 3}
    assert found["ratio"] == {"card": 0.9, "distinct text": 0.9}
    assert found["median"] == {
        "public": {"card": 500, "distinct text": 50},
        "withheld": {"card": 450, "distinct text": 45},
    }


def test_rounds_missing_on_one_side_are_an_error():
    with pytest.raises(ValueError):
        alternate_summary({"public": [{"card": 1.0}] * 2, "withheld": [{"card": 1.0}]})
