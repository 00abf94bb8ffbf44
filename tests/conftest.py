"""Shared fixtures: API clients with keys, and builders for valid cards and payloads."""

import copy
import os
import socket
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from registry.access.auth import api_key_generate, api_key_hash
from registry.access.models import ApiKey

# The protocol apps (by label) each test folder needs: tests/protocols/<app>/ mirrors
# protocols/<app>/; the core's tests (tests/registry) need none, so they also run with only
# the core installed (REGISTRY_PROTOCOL_APPS="", see .ci/run).
TESTS_DIR = Path(__file__).resolve().parent
FOLDER_APPS = {
    "a2a": {"a2a"},
    "aap": {"a2a", "aap"},
    "mcp": {"a2a", "mcp_face"},
    "web": {"a2a", "aap"},
    "entities": {"entities"},
    "ard": {"a2a", "ard"},
    "tests": {"a2a", "aap"},
}


def folder_of(path: Path) -> str | None:
    """The key of FOLDER_APPS a collected path belongs to (None: the core's, needs none)."""
    try:
        parts = Path(path).resolve().relative_to(TESTS_DIR).parts
    except ValueError:
        return None
    if not parts:
        return None
    if parts[0] == "protocols":
        return parts[1] if len(parts) > 1 else None
    if len(parts) == 1 and Path(path).is_file():
        return "tests"
    return parts[0]


def _installed() -> set[str]:
    from django.conf import settings

    return set(settings.REGISTRY_PROTOCOL_APPS)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a server a test starts)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def free_port_pair() -> int:
    """A TCP port P on 127.0.0.1 with P + 1 free too, both now (``make run``'s web and
    event-stream ports): an ephemeral port's next one is often another connection's."""
    for _ in range(50):
        with socket.socket() as first, socket.socket() as second:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            try:
                second.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port
    raise RuntimeError("no two free ports side by side on 127.0.0.1")


def redis_test_url() -> str:
    """The local Redis's database for the tests that use (and empty) one: 15, and under
    pytest-xdist one per worker (gw0: 15, gw1: 14, ...), so parallel workers share none.
    TEST_REDIS_DB moves the first (two checkouts testing at once on one machine: 15 and 7)."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    first = int(os.environ.get("TEST_REDIS_DB", "15"))
    return f"redis://127.0.0.1:6379/{(first - worker % 8) % 16}"


def pytest_ignore_collect(collection_path, config):
    # A folder whose apps are not installed cannot even be imported (its models are not).
    needed = FOLDER_APPS.get(folder_of(collection_path))
    return True if needed and not needed <= _installed() else None


# The longest test files (minutes, where most take seconds), handed out first to parallel
# workers (pytest-xdist gives out whole files in the order collected): started last, one of
# them would leave the other workers idle while it ends the pass alone.
LONGEST_FIRST = (
    "tests/test_fuzz.py",
    "tests/test_cluster.py",
    "tests/test_bench_smoke.py",
    "tests/test_conformance.py",
    "tests/registry/test_checkout_start.py",
    "tests/test_readme.py",
    "tests/web/test_browser.py",
    "tests/protocols/a2a/relay/test_queue_relay.py",
    "tests/protocols/a2a/relay/test_queue_relay_failures.py",
)


def longest_first(items: list) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    last = len(LONGEST_FIRST)

    def key(item) -> int:
        path = Path(str(item.path)).resolve().relative_to(TESTS_DIR.parent).as_posix()
        return rank.get(path, last)

    items.sort(key=key)  # stable: each file's tests keep their order


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        longest_first(items)
    on_postgres = connection.vendor == "postgresql"
    skip = pytest.mark.skip(reason="needs DATABASE_URL pointing at PostgreSQL")
    installed = _installed()
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(skip)
        for marker in item.iter_markers("apps"):
            missing = set(marker.args) - installed
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs the apps {sorted(missing)}"))


@pytest.fixture
def migrations_restored():
    """A migration test moves the schema back and forth: after it, every migration is
    applied again, for the tests this process runs next (a table a later migration made
    would otherwise be missing for them)."""
    yield
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture(scope="module")
def postgres_pair():
    """A PostgreSQL primary and its streaming replica of their own (bench/pgpair.py: the
    installed PostgreSQL 15's initdb and pg_basebackup, in temporary directories, on free
    ports), for the module's tests; stopped and removed after them. Skipped on a machine
    without PostgreSQL's programs, except in CI, where it must run."""
    from bench import pgpair

    if not pgpair.available():
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs PostgreSQL 15's programs (initdb, pg_basebackup)")
        pytest.skip(f"no PostgreSQL programs in {pgpair.POSTGRES_BIN}")
    pair = pgpair.PostgresPair(free_port(), free_port()).start()
    try:
        yield pair
    finally:
        pair.stop()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's test database, and at the end of the session, on PostgreSQL, every
    other connection still open to it named (a warning with its last statement: a test that
    left a thread's or a process's connection behind) and ended, so that the database can
    be dropped."""
    yield
    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, application_name, state, left(query, 200) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        left = cursor.fetchall()
        for pid, name, state, query in left:
            warnings.warn(
                f"a connection left open to the test database: {name!r} {state}: {query}",
                stacklevel=1,
            )
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    # Production storage needs collectstatic's manifest; tests render admin pages without it.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _fresh_cache():
    # Rate-limit counters and cached reads live in the cache: each test starts clean.
    from django.core.cache import cache

    from registry.access.throttles import counters_clear
    from registry.moderation.blocklist import entries_forget
    from registry.moderation.publishers import publishers_forget

    cache.clear()
    counters_clear()
    entries_forget()  # the blocklist entries this process read (a second at most)
    publishers_forget()
    yield
    cache.clear()
    counters_clear()
    entries_forget()
    publishers_forget()


@pytest.fixture(autouse=True)
def _fresh_matrix():
    # This process's matrix of vectors (registry/semantic/index.py) starts empty in each
    # test: a look reads the agents a test wrote inside its transaction, which the rollback
    # then removes with no tombstone, where in production a look reads committed rows alone.
    from registry.semantic import index

    index._index = None
    yield
    index._index = None


def listings_serialized(agents: list) -> list[bytes]:
    """The listings of these agents as ``AgentSerializer`` writes them, the API's agent JSON
    with its holes: what ``listing_bodies``, which writes them without the serializer, must
    give."""
    from registry.agents.serializers import AgentSerializer
    from registry.discovery.bodies import AGENT_HOLES, _object

    data = AgentSerializer(agents, many=True, context={}).data
    return [_object(agent, AGENT_HOLES, True) for agent in data]


def listings_stale() -> list:
    """The agents whose stored listing differs from their JSON as the API's serializer now
    writes it (those built under other settings, which are not served, aside)."""
    from registry.agents.selectors import agent_queryset
    from registry.discovery.listings import listing_context
    from registry.discovery.models import AgentListing

    current = AgentListing.objects.filter(context=listing_context())
    stored = {pk: bytes(body) for pk, body in current.values_list("pk", "body")}
    agents = list(agent_queryset().filter(pk__in=list(stored)))
    built = listings_serialized(agents)
    return [agent.pk for agent, body in zip(agents, built, strict=True) if stored[agent.pk] != body]


@pytest.fixture(autouse=True)
def _listings_current(request, _django_db_marker):
    # After every test with a database: whatever its writes were, each stored listing is
    # the agent's JSON as it is now (registry/discovery/listings.py: no write path forgets one).
    yield
    if request.node.get_closest_marker("django_db"):
        assert listings_stale() == []


def _key(owner: str, scope: str) -> str:
    raw = api_key_generate()
    ApiKey.objects.create(owner=owner, scope=scope, key_hash=api_key_hash(raw), prefix=raw[:10])
    return raw


@pytest.fixture
def make_key(db) -> Callable[..., str]:
    def make(owner: str = "alice", scope: str = "agent") -> str:
        return _key(owner, scope)

    return make


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


@pytest.fixture
def client_for(make_key) -> Callable[..., APIClient]:
    def make(owner: str = "alice", scope: str = "agent") -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(owner, scope)}")
        return client

    return make


@pytest.fixture
def alice(client_for) -> APIClient:
    return client_for("alice")


@pytest.fixture
def bob(client_for) -> APIClient:
    return client_for("bob")


@pytest.fixture
def admin_client(client_for) -> APIClient:
    return client_for("ops", "admin")


BASE_CARD: dict[str, Any] = {
    "name": "Weather Agent",
    "description": "Answers questions about the weather.",
    "supportedInterfaces": [
        {
            "url": "https://weather.example.com/a2a/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ],
    "provider": {"organization": "Example Weather Co", "url": "https://weather.example.com"},
    "version": "2.1.0",
    "capabilities": {"streaming": True, "pushNotifications": False},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain", "application/json"],
    "skills": [
        {
            "id": "forecast",
            "name": "Forecast",
            "description": "Forecast for a city.",
            "tags": ["weather", "forecast"],
            "examples": ["Weather in Paris tomorrow?"],
        }
    ],
}


@pytest.fixture
def make_card() -> Callable[..., dict[str, Any]]:
    """A valid A2A 1.0 card; keyword arguments replace top-level members."""

    def make(**overrides: Any) -> dict[str, Any]:
        card = copy.deepcopy(BASE_CARD)
        card.update(overrides)
        return card

    return make


NATIVE_PAYLOAD: dict[str, Any] = {
    "name": "Summarizer",
    "capabilities": [{"name": "summarize", "tags": ["nlp"]}],
    "endpoints": [
        {
            "name": "primary",
            "transport": "Http",
            "protocol": "A2A",
            "address": "https://summarizer.example.com/a2a",
            "livenessModel": "Persistent",
            "heartbeatIntervalSeconds": 30,
        }
    ],
}


@pytest.fixture
def native_payload() -> Callable[..., dict[str, Any]]:
    def make(**overrides: Any) -> dict[str, Any]:
        payload = copy.deepcopy(NATIVE_PAYLOAD)
        payload.update(overrides)
        return payload

    return make


@pytest.fixture
def review(settings):
    """Moderation's admission under review (``REGISTRY_ADMISSION=review``)."""
    settings.REGISTRY_ADMISSION = "review"


def public_agent(anon, agent_id) -> dict:
    """The agent's JSON as anyone reads it (200 asserted)."""
    answer = anon.get(f"/agents/{agent_id}")
    assert answer.status_code == 200
    return answer.json()


def found_ids(client, q: str) -> list[str]:
    """The ids discovery answers ``q`` with, for this client."""
    return [a["id"] for a in client.get("/discover/agents", {"q": q}).json()["results"]]
