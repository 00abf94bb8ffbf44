"""Fixtures of the outbound fetcher's tests: the settings they fetch under, TCP connects
refused before the network, fake DNS answers, and a card to serve."""

import json
import socket

import pytest

CARD = json.dumps({"name": "Weather agent", "version": "1.0.0"}).encode()


@pytest.fixture
def fetch_settings(settings, ca_bundle):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
    settings.FETCH_ALLOW_HTTP_HOSTS = []
    settings.FETCH_CONNECT_TIMEOUT = 5
    settings.FETCH_READ_TIMEOUT = 5
    settings.FETCH_TOTAL_TIMEOUT = 30
    settings.FETCH_MAX_BYTES = 1024 * 1024
    settings.FETCH_MAX_REDIRECTS = 3
    return settings


@pytest.fixture
def connect_attempts(monkeypatch):
    """Every TCP connect the fetcher tries, refused before it reaches the network."""
    attempts = []

    def refuse(address, *args, **kwargs):
        attempts.append(address)
        raise ConnectionRefusedError(f"test refused a connection to {address}")

    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


@pytest.fixture
def resolver(monkeypatch):
    """Fake DNS answers for chosen names; other names resolve normally.

    ``resolver.answers["name"] = [...]`` gives the addresses, or a list of such
    lists to answer differently on each lookup; ``resolver.lookups`` records names.
    """
    real_getaddrinfo = socket.getaddrinfo

    class Resolver:
        answers: dict = {}
        lookups: list = []

        def __call__(self, host, port, *args, **kwargs):
            if host not in self.answers:
                return real_getaddrinfo(host, port, *args, **kwargs)
            self.lookups.append(host)
            answer = self.answers[host]
            if answer and isinstance(answer[0], list):
                answer = answer[min(len(self.lookups), len(answer)) - 1]
            if not answer:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            return [
                info
                for address in answer
                for info in real_getaddrinfo(address, port, *args, **kwargs)
            ]

    fake = Resolver()
    fake.answers, fake.lookups = {}, []
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake
