"""Fixtures of the entity-card tests: the official examples, and fetches of several host
names from the local HTTPS test server (its certificate names them, ``local_names`` points
them at 127.0.0.1)."""

import copy
import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).with_name("fixtures")


def example(name: str) -> dict:
    return copy.deepcopy(json.loads((FIXTURES / f"{name}.json").read_text()))


def publish(server, card: dict, path: str = "/.well-known/entity-card.json", **headers) -> None:
    server.route(
        path, 200, {"Content-Type": "application/json", **headers}, json.dumps(card).encode()
    )


@pytest.fixture
def network(settings, ca_bundle, local_names):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost", *local_names]
    return settings


@pytest.fixture
def at(https_server):
    """The domain to register for a test name: host:port of the test server."""
    return lambda host: f"{host}:{https_server.port}"
