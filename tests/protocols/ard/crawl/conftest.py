"""A publisher's test site on the local HTTPS server, and adding it as a source."""

import hashlib
import json

import pytest

HOST = "mybusiness.com"


@pytest.fixture
def network(settings, ca_bundle, local_names):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost", *local_names]
    return settings


class Site:
    """A publisher's test site on the local HTTPS server."""

    def __init__(self, server, make_card):
        self.server, self.make_card = server, make_card

    def base(self, host: str = HOST) -> str:
        return f"https://{host}:{self.server.port}"

    def card(self, name: str) -> bytes:
        card = self.make_card(name=f"{name.title()} Agent")
        card["supportedInterfaces"] = [
            dict(card["supportedInterfaces"][0], url=f"https://{name}.{HOST}/a2a")
        ]
        body = json.dumps(card).encode()
        self.server.json(f"/cards/{name}.json", body)
        return body

    def entry(self, name: str, publisher: str = HOST, **overrides) -> dict:
        body = self.card(name)
        entry = {
            "identifier": f"urn:air:{publisher}:a2a:{name}",
            "displayName": name,
            "type": "application/a2a-agent-card+json",
            "url": f"{self.base()}/cards/{name}.json",
            "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
        }
        entry.update(overrides)
        return entry

    def catalog(self, entries: list, path: str = "/.well-known/ard.json", **headers) -> None:
        body = json.dumps({"specVersion": "1.0", "entries": entries}).encode()
        self.server.route(path, 200, {"Content-Type": "application/json", **headers}, body)


@pytest.fixture
def site(network, https_server, make_card) -> Site:
    return Site(https_server, make_card)


def add_source(client, site: Site, status=202, **body):
    body = body or {"domain": f"{HOST}:{site.server.port}"}
    response = client.post("/ard/sources", body, format="json")
    assert response.status_code == status, response.content
    return response


def report_of(client, response) -> dict:
    answer = client.get(response["Location"])
    assert answer.status_code == 200
    return answer.json()["report"]
