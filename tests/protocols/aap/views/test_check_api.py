"""POST /aap/check: documents or a live domain in, the AAP v0.1 report out."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.protocols.a2a.sample_cards import V03_CARD

# A plugin rather than imported names: ruff reports imported fixtures used as arguments.
pytest_plugins = ["tests.https_server"]

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "aap"
CARD_PATH = "/.well-known/agent-card.json"
DEFAULT_MANIFEST_PATH = "/.well-known/auto-agent-contract.json"

MISSING_MANIFEST = (
    "Not compliant: the manifest is missing, so 4 MUST rules could not be checked "
    "(the card rules pass)"
)


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def check(client, body) -> dict[str, Any]:
    response = client.post("/aap/check", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def statuses(report: dict[str, Any], rule: str) -> list[tuple[str, str]]:
    return [(r["status"], r["path"]) for r in report["results"] if r["rule"] == rule]


def result(report: dict[str, Any], rule: str) -> dict[str, str]:
    [found] = [r for r in report["results"] if r["rule"] == rule]
    return found


@pytest.fixture
def dealer_site(https_server, settings, ca_bundle):
    """The local HTTPS server as a dealer's domain: localhost:<port>, trusted in tests."""
    settings.FETCH_ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
    settings.FETCH_ALLOW_HTTP_HOSTS = []
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_CONNECT_TIMEOUT = settings.FETCH_READ_TIMEOUT = 5

    def serve(card: Any, manifest: Any = None, manifest_path: str = "/contract.json") -> str:
        if isinstance(card, dict):
            params = card["capabilities"]["extensions"][0].get("params", {})
            if "manifest_url" in params:
                params["manifest_url"] = https_server.url(manifest_path)
        https_server.json(CARD_PATH, json.dumps(card).encode())
        if manifest is not None:
            https_server.json(manifest_path, json.dumps(manifest).encode())
        return f"localhost:{https_server.port}"

    serve.server = https_server
    return serve


def test_official_public_example_passes_through_the_api_without_a_key(anon):
    report = check(
        anon, {"card": load("card-public.json"), "manifest": load("manifest-public.json")}
    )

    assert report["compliant"] is True
    assert report["verdict"] == "AAP v0.1 compliant"
    assert report["aapVersion"] == "0.1"
    assert report["isDealerAgent"] is True
    assert "lead.submit" in report["implementedSkills"]
    assert {r["status"] for r in report["results"]} == {"pass"}


def test_official_bearer_example_passes_through_the_api(anon):
    report = check(
        anon, {"card": load("card-bearer.json"), "manifest": load("manifest-bearer.json")}
    )

    assert report["compliant"] is True
    assert result(report, "card.auth")["message"].startswith("bearer")


def test_a_broken_example_fails_with_the_rule_id_and_path_but_still_answers_200(anon):
    manifest = load("manifest-bearer.json")
    manifest["auth_type"] = None

    report = check(anon, {"card": load("card-bearer.json"), "manifest": manifest})

    assert report["compliant"] is False
    assert report["verdict"] == "Not compliant: 1 MUST rule fails"
    assert statuses(report, "manifest.auth_type") == [("fail", "auth_type")]
    assert result(report, "manifest.auth_type")["level"] == "MUST"


def test_a_card_alone_is_incomplete_and_so_not_compliant(anon):
    report = check(anon, {"card": load("card-public.json")})

    assert report["compliant"] is False
    assert report["complete"] is False
    assert report["verdict"] == MISSING_MANIFEST
    assert statuses(report, "manifest.schema") == [("skip", "(manifest)")]
    with_manifest = check(
        anon, {"card": load("card-public.json"), "manifest": load("manifest-public.json")}
    )
    assert with_manifest["compliant"] is True
    assert with_manifest["complete"] is True


def test_an_invalid_api_key_does_not_matter_to_the_public_check(client_for):
    client = client_for("alice")
    client.credentials(HTTP_AUTHORIZATION="Bearer not-a-key")

    report = check(client, {"card": load("card-public.json")})

    assert report["complete"] is False
    assert report["verdict"].endswith("(the card rules pass)")


@pytest.mark.parametrize(
    ("body", "path", "words"),
    [
        ([{"card": {}}], None, "not an array"),
        ({}, "card", 'neither "card" nor "domain"'),
        ({"manifest": {}}, "card", 'neither "card" nor "domain"'),
        ({"card": "{}"}, "card", "must be a JSON object"),
        ({"card": ["name"]}, "card", "must be a JSON object"),
        ({"domain": "https://dealer.example/"}, "domain", "not a URL"),
        ({"domain": "dealer.example/a2a"}, "domain", "not a URL"),
        ({"domain": "dealer.example:99999"}, "domain", "port must be a number"),
        ({"domain": "bad_host.example"}, "domain", "not a valid host name"),
        ({"domain": 42}, "domain", "is required"),
        ({"domain": "dealer.example", "card": {}}, "domain", "not both"),
    ],
)
def test_unusable_bodies_are_400_problems_naming_the_member(anon, body, path, words):
    response = anon.post("/aap/check", body, format="json")

    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert words in problem["detail"]
    if path is not None:
        assert problem["errors"][0]["path"] == path


def test_domain_check_fetches_the_card_and_its_manifest_and_checks_both(anon, dealer_site):
    domain = dealer_site(load("card-public.json"), load("manifest-public.json"))

    report = check(anon, {"domain": domain})

    assert report["compliant"] is True, report
    assert report["verdict"] == "AAP v0.1 compliant"
    card_url = f"https://{domain}{CARD_PATH}"
    manifest_url = f"https://{domain}/contract.json"
    assert statuses(report, "card.fetch") == [("pass", card_url)]
    assert statuses(report, "manifest.fetch") == [("pass", manifest_url)]
    rules = [r["rule"] for r in report["results"]]
    assert rules[0] == "card.fetch"
    assert rules.index("manifest.fetch") == rules.index("manifest.schema") - 1
    assert {r["status"] for r in report["results"]} == {"pass"}
    assert [r.path for r in dealer_site.server.requests] == [CARD_PATH, "/contract.json"]


def test_domain_card_without_manifest_url_has_its_manifest_fetched_from_the_well_known_path(
    anon, dealer_site
):
    card = load("card-public.json")
    del card["capabilities"]["extensions"][0]["params"]["manifest_url"]
    domain = dealer_site(card, load("manifest-public.json"), manifest_path=DEFAULT_MANIFEST_PATH)

    report = check(anon, {"domain": domain})

    assert statuses(report, "manifest.fetch") == [
        ("pass", f"https://{domain}{DEFAULT_MANIFEST_PATH}")
    ]
    assert report["compliant"] is True
    assert statuses(report, "card.manifest_url")[0][0] == "warn"


def test_domain_whose_card_cannot_be_fetched_is_a_card_fetch_failure_not_an_error(
    anon, dealer_site
):
    domain = f"localhost:{dealer_site.server.port}"  # serves nothing: every path is a 404

    report = check(anon, {"domain": domain})

    assert report["compliant"] is False
    assert report["verdict"] == "Not compliant: the card could not be fetched"
    fetched = result(report, "card.fetch")
    assert fetched["status"] == "fail"
    assert fetched["level"] == "MUST"
    assert fetched["path"] == f"https://{domain}{CARD_PATH}"
    assert "HTTP status 404" in fetched["message"]
    others = {r["status"] for r in report["results"] if r["rule"] != "card.fetch"}
    assert others == {"skip"}
    # Each message written whole, none built by prefixing another.
    assert result(report, "manifest.fetch")["message"] == (
        "not fetched: the card, which gives the manifest's address, could not be fetched"
    )


def test_domain_card_that_is_not_json_is_a_card_fetch_failure(anon, dealer_site):
    domain = dealer_site(load("card-public.json"))
    dealer_site.server.json(CARD_PATH, b"{not json")

    report = check(anon, {"domain": domain})

    assert statuses(report, "card.fetch")[0][0] == "fail"
    assert "not valid JSON" in result(report, "card.fetch")["message"]


def test_domain_whose_manifest_cannot_be_fetched_fails_manifest_fetch_after_the_card_rules(
    anon, dealer_site
):
    domain = dealer_site(load("card-public.json"))  # no manifest served

    report = check(anon, {"domain": domain})

    assert report["compliant"] is False
    assert report["verdict"] == "Not compliant: 1 MUST rule fails"
    assert statuses(report, "manifest.fetch") == [("fail", f"https://{domain}/contract.json")]
    assert "404" in result(report, "manifest.fetch")["message"]
    assert statuses(report, "card.skills")[0][0] == "pass"
    skipped = result(report, "manifest.endpoint")
    assert skipped["status"] == "skip"
    assert "could not be fetched" in skipped["message"]


def test_hostile_domain_is_refused_as_a_card_fetch_failure_without_a_request(
    anon, dealer_site, settings
):
    settings.FETCH_ALLOWED_HOSTS = []
    domain = f"127.0.0.1:{dealer_site.server.port}"
    dealer_site(load("card-public.json"), load("manifest-public.json"))

    report = check(anon, {"domain": domain})

    fetched = result(report, "card.fetch")
    assert fetched["status"] == "fail"
    assert "which is not a public address" in fetched["message"]
    assert report["compliant"] is False
    assert dealer_site.server.requests == []


def test_domain_of_a_generic_a2a_agent_is_not_asked_for_a_manifest(anon, dealer_site, make_card):
    domain = f"localhost:{dealer_site.server.port}"
    dealer_site.server.json(CARD_PATH, json.dumps(make_card()).encode())

    report = check(anon, {"domain": domain})

    assert report["verdict"] == "A generic A2A agent, not an AAP dealer agent"
    assert statuses(report, "card.fetch")[0][0] == "pass"
    assert statuses(report, "manifest.fetch")[0][0] == "skip"
    assert [r.path for r in dealer_site.server.requests] == [CARD_PATH]


def test_check_is_described_in_the_openapi_schema(anon):
    schema = json.loads(anon.get("/api/schema", HTTP_ACCEPT="application/json").content)

    operation = schema["paths"]["/aap/check"]["post"]
    assert list(operation["requestBody"]["content"]) == ["application/json"]
    assert "get" in schema["paths"]["/aap/dealers"]


def test_checks_are_rate_limited_per_client_like_other_posts(anon, settings):
    settings.RATE_LIMIT_WRITE = "2/day"
    body = {"domain": "dealer.example:99999"}  # refused before any fetch
    for _ in range(2):
        assert (
            anon.post("/aap/check", body, format="json", REMOTE_ADDR="203.0.113.7").status_code
            == 400
        )

    response = anon.post("/aap/check", body, format="json", REMOTE_ADDR="203.0.113.7")

    assert response.status_code == 429
    assert response.json()["type"] == "/problems/throttled"
    other = anon.post("/aap/check", body, format="json", REMOTE_ADDR="203.0.113.8")
    assert other.status_code == 400


def test_domain_checks_have_their_own_stricter_limit_and_card_checks_do_not_count(anon, settings):
    settings.RATE_LIMIT_FETCH_ANON = "1/day"
    domain = {"domain": "dealer.example:99999"}  # refused before any fetch

    assert anon.post("/aap/check", domain, format="json").status_code == 400
    refused = anon.post("/aap/check", domain, format="json")

    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    assert (
        anon.post("/aap/check", {"card": load("card-public.json")}, format="json").status_code
        == 200
    )


@pytest.mark.parametrize("member", ["defaultInputModes", "defaultOutputModes"])
def test_a_03_card_with_a_number_for_a_list_is_checked_not_a_crash(anon, member):
    card = {**V03_CARD, member: 5}

    report = check(anon, {"card": card})

    assert report["compliant"] is False


def test_the_dealer_list_refuses_unknown_parameters_and_out_of_range_limits(anon):
    response = anon.get("/aap/dealers", {"aap": "true"})  # every dealer listed is compliant
    assert response.status_code == 400
    assert [e["path"] for e in response.json()["errors"]] == ["aap"]
    response = anon.get("/aap/dealers", {"limit": "1000"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["message"] == "must be a whole number from 1 to 100"
