"""A key manages only keys of its own scope or lower: an agent key reads, rotates and revokes
its owner's agent keys, never an admin key (not even its owner's: that was a way to mint an
admin key); an admin key manages any key. Route by route, scope by scope."""

import pytest
from rest_framework.test import APIClient

from registry.access.auth import api_key_hash
from registry.access.models import ApiKey

pytestmark = pytest.mark.django_db

ACTORS = [("carol", "agent"), ("carol", "admin"), ("dave", "agent")]
TARGETS = [("carol", "agent"), ("carol", "admin"), ("dave", "agent"), ("dave", "admin")]


def may_manage(actor: tuple[str, str], target: tuple[str, str]) -> bool:
    owner, scope = actor
    return scope == "admin" or (target == (owner, "agent"))


def client(raw: str) -> APIClient:
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return c


@pytest.fixture
def keys(make_key):
    """Every target key (raw secrets by (owner, scope)), and the actors' own keys."""
    made = {target: make_key(*target) for target in TARGETS}
    ids = {t: ApiKey.objects.get(key_hash=api_key_hash(raw)).pk for t, raw in made.items()}
    actors = {actor: make_key(*actor) for actor in ACTORS}
    return ids, actors


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("target", TARGETS)
def test_reading_a_key(keys, actor, target):
    ids, actors = keys
    response = client(actors[actor]).get(f"/api-keys/{ids[target]}")
    assert response.status_code == (200 if may_manage(actor, target) else 404)


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("target", TARGETS)
def test_rotating_a_key(keys, actor, target):
    ids, actors = keys
    before = ApiKey.objects.count()
    response = client(actors[actor]).post(
        f"/api-keys/{ids[target]}/rotate", {"graceSeconds": 60}, format="json"
    )
    if may_manage(actor, target):
        assert response.status_code == 201
        # Never more than the rotating key holds.
        assert response.json()["scope"] == target[1]
        assert actor[1] == "admin" or response.json()["scope"] == "agent"
        assert ApiKey.objects.count() == before + 1
    else:
        assert response.status_code == 404
        assert ApiKey.objects.count() == before
        assert ApiKey.objects.get(pk=ids[target]).expires_at is None


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("target", TARGETS)
def test_revoking_a_key(keys, actor, target):
    ids, actors = keys
    response = client(actors[actor]).delete(f"/api-keys/{ids[target]}")
    revoked = ApiKey.objects.get(pk=ids[target]).revoked_at is not None
    if may_manage(actor, target):
        assert (response.status_code, revoked) == (204, True)
    else:
        assert (response.status_code, revoked) == (404, False)


@pytest.mark.parametrize("actor", ACTORS)
def test_listing_shows_only_the_keys_a_key_manages(keys, actor):
    _, actors = keys
    listed = client(actors[actor]).get("/api-keys").json()["results"]
    scopes = {(row["owner"], row["scope"]) for row in listed}
    assert scopes == {t for t in [*TARGETS, *ACTORS] if t[0] == actor[0] and may_manage(actor, t)}


def test_an_agent_key_cannot_list_another_owners_keys(keys):
    _, actors = keys
    response = client(actors[("carol", "agent")]).get("/api-keys?owner=dave")
    assert response.status_code == 403


def test_the_reported_escalation_is_refused(keys):
    """An agent key rotating its owner's admin key got an admin secret (201)."""
    ids, actors = keys
    carol = client(actors[("carol", "agent")])
    response = carol.post(f"/api-keys/{ids[('carol', 'admin')]}/rotate", {}, format="json")
    assert response.status_code == 404
    assert not ApiKey.objects.filter(owner="carol", scope="admin", revoked_at__isnull=False)
    assert (
        carol.post("/api-keys", {"owner": "dave", "scope": "admin"}, format="json").status_code
        == 403
    )
