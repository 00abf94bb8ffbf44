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


def test_a_keyed_callers_rows_are_compared_with_the_same_rounds_anonymous_row():
    public = [{"card": 100.0, "distinct text": 10.0}, {"card": 50.0, "distinct text": 5.0}]
    withheld = [
        {"card": 100.0, "distinct text": 10.0, "distinct text [admin]": 8.0},
        {"card": 50.0, "distinct text": 5.0, "distinct text [admin]": 3.0},
    ]
    found = alternate_summary({"public": public, "withheld": withheld})
    assert found["callers_ratio"] == {"distinct text [admin]": 0.7}  # (0.8 + 0.6) / 2
    assert found["ratio"] == {"card": 1.0, "distinct text": 1.0}
    assert found["median"]["withheld"]["distinct text [admin]"] == 6
    # Without keyed callers the summary is as it was.
    assert "callers_ratio" not in alternate_summary({"public": public, "withheld": public})
