"""Webhook secrets at rest: stored sealed (Fernet), opened only to sign; shown once; the
migration seals the secrets stored in clear; a key of its own can replace the derived one."""

import importlib

import pytest
from cryptography.fernet import Fernet
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from registry.events.models import Subscription
from registry.events.sealing import secret_open, secret_seal

migration = importlib.import_module("registry.migrations.0020_webhook_secret_sealed")


@pytest.fixture
def allowed(settings):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]


@pytest.mark.django_db
def test_the_secret_is_stored_sealed_and_shown_in_the_creating_answer_only(alice, allowed):
    created = alice.post("/subscriptions", {"url": "https://localhost:9/in"}, format="json").json()
    stored = Subscription.objects.get(pk=created["id"]).secret_sealed
    assert created["secret"].startswith("whsec_")
    assert created["secret"] not in stored and "whsec_" not in stored
    assert secret_open(stored) == created["secret"]
    listed = alice.get("/subscriptions").json()["results"]
    assert [s["id"] for s in listed] == [created["id"]] and "secret" not in listed[0]
    assert "secret" not in alice.get(f"/subscriptions/{created['id']}").json()


@pytest.mark.django_db
def test_rotating_shows_a_new_secret_once_and_only_to_its_owner(alice, bob, allowed):
    created = alice.post("/subscriptions", {"url": "https://localhost:9/in"}, format="json").json()
    path = f"/subscriptions/{created['id']}/rotate-secret"
    assert bob.post(path).status_code == 404
    rotated = alice.post(path)
    assert rotated.status_code == 200
    secret = rotated.json()["secret"]
    assert secret.startswith("whsec_") and secret != created["secret"]
    assert secret_open(Subscription.objects.get(pk=created["id"]).secret_sealed) == secret


@pytest.mark.django_db
def test_the_migration_seals_the_secrets_stored_in_clear_and_back(alice, allowed):
    created = alice.post("/subscriptions", {"url": "https://localhost:9/in"}, format="json").json()
    Subscription.objects.filter(pk=created["id"]).update(secret_sealed=created["secret"])
    migration.secrets_seal(apps, None)
    sealed = Subscription.objects.get(pk=created["id"]).secret_sealed
    assert not sealed.startswith("whsec_") and secret_open(sealed) == created["secret"]
    migration.secrets_seal(apps, None)  # sealed ones stay as they are
    assert Subscription.objects.get(pk=created["id"]).secret_sealed == sealed
    migration.secrets_open(apps, None)
    assert Subscription.objects.get(pk=created["id"]).secret_sealed == created["secret"]


@pytest.mark.django_db
def test_a_key_of_its_own_seals_and_the_derived_key_still_opens(settings, alice, allowed):
    before = secret_seal("whsec_old")
    settings.WEBHOOK_SECRET_KEY = Fernet.generate_key().decode()
    after = secret_seal("whsec_new")
    assert secret_open(before) == "whsec_old" and secret_open(after) == "whsec_new"
    assert Fernet(settings.WEBHOOK_SECRET_KEY).decrypt(after.encode()) == b"whsec_new"
    created = alice.post("/subscriptions", {"url": "https://localhost:9/in"}, format="json").json()
    Subscription.objects.filter(pk=created["id"]).update(secret_sealed=before)
    call_command("webhook_secrets_reseal", stdout=open("/dev/null", "w"))  # noqa: SIM115
    resealed = Subscription.objects.get(pk=created["id"]).secret_sealed
    assert Fernet(settings.WEBHOOK_SECRET_KEY).decrypt(resealed.encode()) == b"whsec_old"
    settings.SECRET_KEY = "another-secret-key-entirely-for-this-test-0123456789"
    settings.WEBHOOK_SECRET_KEY = ""
    with pytest.raises(ImproperlyConfigured):
        secret_open(after)  # neither key is in the settings any more


def test_a_malformed_key_is_refused_with_the_settings_name(settings):
    settings.WEBHOOK_SECRET_KEY = "not-a-fernet-key"
    with pytest.raises(ImproperlyConfigured, match="WEBHOOK_SECRET_KEY"):
        secret_seal("whsec_x")
