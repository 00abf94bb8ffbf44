"""Reading GET /metrics as Prometheus would."""

from collections.abc import Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families


def samples_of(text: str) -> dict[tuple, float]:
    """Every sample of a scrape: (name, sorted labels) -> value."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def scrape(db, client) -> Callable[[], dict[tuple, float]]:
    """The samples of a scrape from 127.0.0.1 (allowed by default)."""

    def read() -> dict[tuple, float]:
        response = client.get("/metrics")
        assert response.status_code == 200, response.content
        return samples_of(response.content.decode())

    return read


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)
