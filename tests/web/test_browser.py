"""The pages in a real browser (Playwright driving chromium, against a live server): what a
person does to find an agent, with and without JavaScript, and the screenshots of the README.

``SCREENSHOTS_DIR=docs/screenshots`` writes the screenshots there (make screenshots)."""

import json
import os
import re
from pathlib import Path

import pytest

from tests.web.helpers import HOSTILE_NAME, card, register

# The browser comes first: the database work of each test runs beside its event loop.
pytestmark = [pytest.mark.usefixtures("browser"), pytest.mark.django_db(transaction=True)]


@pytest.fixture
def expect():
    from playwright.sync_api import expect

    return expect


@pytest.fixture
def agents(transactional_db):
    made = {}
    for owner, name, skill, tags, org in [
        ("alice", "Weather Agent", "Forecast", ["weather"], "Example Weather Co"),
        ("alice", "Tide Tables", "Tide forecast", ["sea", "weather"], "Harbour Data"),
        ("bob", "Ledger Bot", "Bookkeeping", ["finance"], "Numbers Ltd"),
        ("bob", "Invoice Reader", "Invoice parsing", ["finance", "documents"], "Numbers Ltd"),
    ]:
        host = f"{name.split()[0].lower()}.example"
        provider = {"organization": org, "url": f"https://{host}"}
        made[name] = register(owner, card(name, skill, tags, host=host, provider=provider))
    return made


def card_names(page) -> list[str]:
    return page.locator("#results .agent-card h3").all_inner_texts()


def arrive(page, expect, url: str) -> None:
    """Wait until a click's navigation reaches ``url`` (a pattern) and its page has loaded.

    A click returns once the navigation starts; reading the results before the new page is
    parsed would see part of it, or none."""
    expect(page).to_have_url(re.compile(url))
    page.wait_for_load_state()


def test_find_an_agent_by_a_skill_word_narrow_open_and_copy_its_card(
    context, page, agents, live_server, expect
):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.goto("/")
    page.get_by_role("searchbox", name="Search agents").fill("forecast")
    page.get_by_role("button", name="Search").click()
    arrive(page, expect, r"/browse\?q=forecast$")
    assert sorted(card_names(page)) == ["Tide Tables", "Weather Agent"]

    page.locator('.facet a[data-facet="tag"][data-value="sea"]').click()
    arrive(page, expect, r"/browse\?q=forecast&tag=sea$")
    assert card_names(page) == ["Tide Tables"]

    page.get_by_role("link", name="Tide Tables").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Tide Tables")
    page.get_by_role("button", name="Copy card").click()
    expect(page.locator(".copied")).to_have_text("Copied to the clipboard.")
    copied = json.loads(page.evaluate("navigator.clipboard.readText()"))
    served = page.request.get(f"/a2a/agents/{agents['Tide Tables'].pk}").json()
    assert copied == served


def test_live_search_follows_typing_and_the_url_can_be_shared(page, agents, expect):
    page.goto("/browse")
    expect(page.locator("#results .agent-card")).to_have_count(4)
    page.get_by_role("searchbox", name="Search agents").press_sequentially("invoice")
    expect(page.locator("#results .agent-card")).to_have_count(1)
    assert card_names(page) == ["Invoice Reader"]
    expect(page).to_have_url(re.compile(r"/browse\?q=invoice$"))
    page.get_by_label("Sort by").select_option("name")  # filters apply as they change
    expect(page).to_have_url(re.compile(r"/browse\?q=invoice&sort=name$"))
    page.reload()
    assert card_names(page) == ["Invoice Reader"]


def test_next_page_links_walk_every_agent_once(page, agents, monkeypatch, expect):
    monkeypatch.setattr("web.selectors.PAGE_SIZE", 3)
    page.goto("/browse?sort=name")
    seen = card_names(page)
    assert len(seen) == 3
    page.get_by_role("link", name="Next page").click()
    arrive(page, expect, r"/browse\?sort=name&cursor=")
    seen += card_names(page)
    assert page.get_by_role("link", name="Next page").count() == 0
    assert seen == sorted(agents)
    page.get_by_role("link", name="First page").click()
    arrive(page, expect, r"/browse\?sort=name$")
    assert card_names(page) == sorted(agents)[:3]


def test_a_hostile_agent_name_shows_as_text(page, transactional_db):
    agent = register("mallory", card(HOSTILE_NAME, "Steal", ["x"], host="m.example"))
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for url in ["/", "/browse?q=steal", f"/browse/agents/{agent.pk}"]:
        page.goto(url)
        assert HOSTILE_NAME in page.locator("main").inner_text(), url
        assert page.locator("main img").count() == 0, url
    assert page.get_by_role("heading", level=1).inner_text() == HOSTILE_NAME
    assert dialogs == []


def test_everything_works_without_javascript(browser, live_server, agents, expect):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    page.goto("/")
    page.get_by_role("searchbox", name="Search agents").fill("finance")
    page.get_by_role("button", name="Search").click()
    arrive(page, expect, r"/browse\?q=finance$")
    assert sorted(card_names(page)) == ["Invoice Reader", "Ledger Bot"]
    page.locator('.facet a[data-facet="tag"][data-value="documents"]').click()
    arrive(page, expect, r"tag=documents")
    assert card_names(page) == ["Invoice Reader"]
    page.get_by_label("Sort by").select_option("name")
    page.get_by_role("button", name="Apply").click()
    arrive(page, expect, r"\?(?=.*sort=name)(?=.*tag=documents)")
    page.get_by_role("link", name="Invoice Reader").click()
    arrive(page, expect, r"/browse/agents/")
    # No copy button without a script to copy; the card is there to select.
    assert not page.get_by_role("button", name="Copy card").is_visible()
    assert json.loads(page.locator("#card-json").inner_text())["name"] == "Invoice Reader"
    context.close()


def test_an_unknown_agent_is_a_page_with_a_way_on(page, transactional_db, expect):
    response = page.goto("/browse/agents/00000000-0000-4000-8000-000000000000")
    assert response.status == 404
    assert page.get_by_role("heading", level=1).inner_text() == "No such agent"
    page.get_by_role("link", name="Browse all agents").click()
    expect(page).to_have_url(re.compile(r"/browse$"))


def test_keyboard_reaches_the_content_first(page, agents, expect):
    page.goto("/browse")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    # The browser tells Playwright of the fragment's navigation by an event: wait for it.
    expect(page).to_have_url(re.compile(r"/browse#main$"))


DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
# name: (viewport, colour scheme); the dark one is the desktop in the dark colour scheme.
WIDTHS = {"desktop": (DESKTOP, "light"), "phone": (PHONE, "light"), "dark": (DESKTOP, "dark")}


@pytest.mark.parametrize("size", list(WIDTHS))
def test_screenshots_at_desktop_and_phone_widths_light_and_dark(
    browser, live_server, agents, size, tmp_path
):
    from protocols.aap.demo import dealer_demo_load

    dealer_demo_load("demo", set())
    folder = Path(os.environ.get("SCREENSHOTS_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    weather = agents["Weather Agent"].pk
    viewport, scheme = WIDTHS[size]
    context = browser.new_context(base_url=live_server.url, viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    for name, url in [
        ("home", "/"),
        ("browse", "/browse?q=weather"),
        ("agent", f"/browse/agents/{weather}"),
        ("aap-check", "/aap/check"),
    ]:
        if size == "dark" and name not in ("browse", "agent"):
            continue  # the dark colour scheme is shown on two pages
        page.goto(url)
        # Nothing is wider than the screen: no sideways scrolling on a phone.
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), url
        path = folder / f"{name}-{size}.png"
        page.screenshot(path=path, full_page=size != "phone")
        assert path.read_bytes().startswith(b"\x89PNG")
    context.close()


def test_on_a_phone_a_filters_control_comes_before_the_results(browser, live_server, agents):
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    page.goto("/browse?q=forecast")
    control = page.get_by_role("link", name="Filters", exact=True)
    assert control.is_visible()
    first_result = page.locator("#results .agent-card").first.bounding_box()
    assert control.bounding_box()["y"] < first_result["y"]
    assert page.locator("#filters").bounding_box()["y"] > first_result["y"]
    control.click()
    assert page.evaluate("location.hash") == "#filters"
    assert page.get_by_role("heading", name="Refine").is_visible()
    context.close()

    desktop = browser.new_context(base_url=live_server.url, viewport=DESKTOP)
    wide = desktop.new_page()
    wide.goto("/browse?q=forecast")
    # Beside the results on a wide screen, the filters need no link.
    assert not wide.get_by_role("link", name="Filters", exact=True).is_visible()
    desktop.close()


# Where a line of text wraps between two letters of one word ("ser|ving"), in the page's
# text outside code (a URL may wrap anywhere): the words and the letters either side.
WORDS_BROKEN = """() => {
  const found = [];
  const walker = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest("code, pre")) continue;
    const text = node.textContent;
    let top = null;
    for (let i = 0; i < text.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect) continue;
      if (top !== null && rect.top > top + 2 && /\\w/.test(text[i - 1]) && /\\w/.test(text[i]))
        found.push(text.slice(Math.max(0, i - 12), i) + "|" + text.slice(i, i + 12));
      top = rect.top;
    }
  }
  return found;
}"""


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_entity_page_keeps_words_whole_and_its_sources_short(browser, live_server, size):
    from protocols.entities.demo import entities_demo_load
    from protocols.entities.models import Entity

    entities_demo_load("demo", set())
    trattoria = Entity.objects.get(name="Demo Trattoria")
    context = browser.new_context(base_url=live_server.url, viewport=WIDTHS[size][0])
    page = context.new_page()
    for url in [f"/browse/entities/{trattoria.pk}", f"/browse/agents/{trattoria.pk}", "/"]:
        page.goto(url)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), url
        assert page.evaluate(WORDS_BROKEN) == [], url
    page.goto(f"/browse/entities/{trattoria.pk}")
    # The source's URL gets the width of the column, not a letter's: a short column.
    assert page.locator(".agent-side dd code").first.bounding_box()["width"] > 100
    side, main = (page.locator(s).bounding_box() for s in (".agent-side", ".agent-main"))
    if size == "desktop":
        assert side["height"] < main["height"]
    context.close()
