"""Fixtures of the A2A tests that reach the local HTTPS and DNS test servers (their modules
load ``tests.https_server`` and ``tests.dns_server`` as plugins)."""

import pytest


@pytest.fixture
def network(settings, ca_bundle, dns_server):
    """Fetches may reach the local servers: the test CA, localhost allowed, the test DNS."""
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.DISCOVERY_DNS_NAMESERVERS = ["127.0.0.1"]
    settings.DISCOVERY_DNS_PORT = dns_server.port
    settings.PROBE_CONCURRENCY = 1
    return settings
