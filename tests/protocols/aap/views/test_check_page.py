"""The /aap/check page: a form for pasted documents or a domain, and the checklist it shows."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from protocols.aap.views.forms import CheckForm
from registry.outbound.hosts import domain_parse

pytest_plugins = ["tests.https_server"]

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "aap"
ROW = re.compile(r'<tr class="(\w+)" data-rule="([\w.]+)" data-status="(\w+)">(.*?)</tr>', re.S)


def text_of(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture
def browser() -> Client:
    """A client that, like a browser, must send the form's CSRF token."""
    return Client(enforce_csrf_checks=True)


def submit(browser: Client, **fields: str):
    page = browser.get("/aap/check")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token, "the form carries no CSRF token"
    return browser.post("/aap/check", {"csrfmiddlewaretoken": token.group(1), **fields})


def checklist(response) -> list[tuple[str, str]]:
    """(rule, status) of each row of the rendered checklist."""
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    return [(rule, status) for _, rule, status, _ in ROW.findall(response.content.decode())]


def test_page_shows_an_empty_form_with_a_csrf_token(browser):
    response = browser.get("/aap/check")

    html = response.content.decode()
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert '<textarea name="card"' in html
    assert '<textarea name="manifest"' in html
    assert 'name="domain"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert "csrftoken" in response.cookies
    assert checklist(response) == []


def test_browsers_asking_for_html_only_get_the_page(browser):
    response = browser.get("/aap/check", HTTP_ACCEPT="text/html")

    assert response.status_code == 200
    assert "<form" in response.content.decode()


def test_pasted_card_and_manifest_render_a_passing_checklist_and_the_verdict(browser):
    response = submit(
        browser, card=text_of("card-public.json"), manifest=text_of("manifest-public.json")
    )

    rows = checklist(response)
    html = response.content.decode()
    assert [rule for rule, _ in rows][:2] == ["card.a2a", "card.extension"]
    assert len(rows) == 11
    assert {status for _, status in rows} == {"pass"}
    assert "AAP v0.1 compliant" in html
    assert 'class="verdict compliant"' in html
    assert "Report for the pasted documents" in html


def test_a_failing_rule_shows_its_mark_level_path_and_message(browser):
    manifest = json.loads(text_of("manifest-bearer.json"))
    manifest["auth_type"] = None

    response = submit(browser, card=text_of("card-bearer.json"), manifest=json.dumps(manifest))

    assert ("manifest.auth_type", "fail") in checklist(response)
    [row] = [r for r in ROW.findall(response.content.decode()) if r[1] == "manifest.auth_type"]
    cells = row[3]
    assert "✘" in cells
    assert "MUST" in cells
    assert "<code>auth_type</code>" in cells
    assert "is null but the card is bearer" in cells
    assert 'class="verdict not-compliant"' in response.content.decode()
    assert "Not compliant: 1 MUST rule fails" in response.content.decode()


def test_card_alone_shows_manifest_rules_as_skipped(browser):
    rows = checklist(submit(browser, card=text_of("card-public.json")))

    assert ("manifest.schema", "skip") in rows
    assert ("card.binding", "pass") in rows


def test_invalid_json_shows_a_form_error_and_keeps_what_was_typed(browser):
    response = submit(browser, card='{"name": "Dealer",}')

    html = response.content.decode()
    assert response.status_code == 200
    assert "The card is not valid JSON: Expecting property name" in html
    assert "(line 1, column 19)" in html
    assert "{&quot;name&quot;: &quot;Dealer&quot;,}" in html
    assert checklist(response) == []


def test_invalid_manifest_json_is_reported_against_the_manifest(browser):
    response = submit(browser, card=text_of("card-public.json"), manifest="[1, 2")

    assert "The manifest is not valid JSON" in response.content.decode()
    assert checklist(response) == []


def test_a_card_that_is_not_an_object_is_a_form_error(browser):
    response = submit(browser, card="[]")

    assert "The card must be a JSON object." in response.content.decode()


def test_an_empty_form_asks_for_a_card_or_a_domain(browser):
    response = submit(browser)

    assert "Paste an agent card" in response.content.decode()
    assert checklist(response) == []


def test_a_malformed_domain_is_a_form_error(browser):
    response = submit(browser, domain="https://dealer.example/")

    assert "with an optional port, not a URL" in response.content.decode()


def test_domain_field_checks_a_live_domain(browser, https_server, settings, ca_bundle):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    card = json.loads(text_of("card-public.json"))
    card["capabilities"]["extensions"][0]["params"]["manifest_url"] = https_server.url("/m.json")
    https_server.json("/.well-known/agent-card.json", json.dumps(card).encode())
    https_server.json("/m.json", text_of("manifest-public.json").encode())

    response = submit(browser, domain=f"localhost:{https_server.port}")

    rows = checklist(response)
    assert rows[0] == ("card.fetch", "pass")
    assert ("manifest.fetch", "pass") in rows
    assert f"Report for https://localhost:{https_server.port}" in response.content.decode()
    assert "AAP v0.1 compliant" in response.content.decode()


def test_a_form_post_without_the_csrf_token_is_refused(browser):
    response = browser.post("/aap/check", {"card": text_of("card-public.json")})

    assert response.status_code == 403


def test_json_posts_to_the_same_path_reach_the_api_without_a_csrf_token(browser):
    body: dict[str, Any] = {
        "card": json.loads(text_of("card-public.json")),
        "manifest": json.loads(text_of("manifest-public.json")),
    }

    response = browser.post("/aap/check", json.dumps(body), content_type="application/json")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()["compliant"] is True


def test_the_form_reads_a_domain_as_registration_does():
    # One parser (registry.outbound.hosts, UTS46): not IDNA 2003's strasse.de, another host.
    form = CheckForm(data={"domain": "Straße.de"})
    form.is_valid()
    assert form.cleaned_data["domain"] == domain_parse("straße.de").authority == "xn--strae-oqa.de"


def test_domain_checks_from_one_client_have_the_strictest_rate_limit(browser, settings):
    settings.RATE_LIMIT_FETCH_ANON = "1/day"
    settings.FETCH_ALLOWED_HOSTS = []  # nothing is reached either way

    first = submit(browser, domain="dealer.example")
    second = submit(browser, domain="dealer.example")

    assert first.status_code == 200
    assert second.status_code == 429
    assert "Too many domain checks from here" in second.content.decode()
    # Pasted documents fetch nothing and are not limited so.
    assert submit(browser, card=text_of("card-public.json")).status_code == 200
