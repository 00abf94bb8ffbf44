"""Reading GET /metrics as Prometheus would."""

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families


def samples_of(text: str) -> dict[tuple, float]:
    """Every sample of a scrape: (name, sorted labels) -> value."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def scrape_all(db, client) -> Callable[[], dict[tuple, float]]:
    """The samples of a scrape from 127.0.0.1 (allowed by default): every process's counts
    in the run's folder added up."""

    def read() -> dict[tuple, float]:
        response = client.get("/metrics")
        assert response.status_code == 200, response.content
        return samples_of(response.content.decode())

    return read


def own_counts(folder: Path) -> dict[tuple, float]:
    """The counts this process wrote to the metrics folder, read as a scrape reads them."""
    with tempfile.TemporaryDirectory() as mine:
        for path in folder.glob(f"*_{os.getpid()}.db"):
            shutil.copy(path, mine)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=mine)
        return samples_of(generate_latest(registry).decode())


@pytest.fixture
def scrape(scrape_all, settings) -> Callable[[], dict[tuple, float]]:
    """A scrape (GET /metrics, which writes this process's pending counts first) with the
    counted series as this process counted them: the other processes of the run's folder
    (servers other tests of this worker started) count beside the test, and would make its
    differences wrong. The gauges, read from the database, are the scrape's."""
    from registry.http import metrics

    counted = tuple(metrics.PREFIX + name for name in metrics.series)

    def read() -> dict[tuple, float]:
        scraped = scrape_all()
        mine = own_counts(Path(settings.PROMETHEUS_MULTIPROC_DIR))
        kept = {key: v for key, v in scraped.items() if not key[0].startswith(counted)}
        return {**kept, **mine}

    return read


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)
