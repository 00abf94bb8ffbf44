"""The browser of the browser tests: Debian's chromium driven by Playwright.

Without a chromium the browser tests are skipped with a reason, except where
``BROWSER_TESTS_REQUIRED=1`` (CI, .ci/run), where a missing browser is a failure.
"""

import os
import shutil

import pytest

CHROMIUM_NAMES = ["chromium", "chromium-browser", "google-chrome"]


def chromium_path() -> str | None:
    if path := os.environ.get("CHROMIUM"):
        return path
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    if path is None:
        reason = "no chromium found (apt-get install chromium, or set CHROMIUM=/path)"
        if os.environ.get("BROWSER_TESTS_REQUIRED") == "1":
            pytest.fail(f"the browser tests must run here: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; the tests' database work
    # (the same thread) is plain synchronous code, which Django would otherwise refuse.
    # Only while this module's browser runs: later tests start subprocesses.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=path)
            yield chromium
            chromium.close()


@pytest.fixture
def context(browser, live_server):
    """A fresh browser profile pointed at the live server, desktop width."""
    ctx = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            errors.append(message.text)
            if message.type == "error" and not message.text.startswith("Failed to load resource")
            else None
        ),
    )
    # Every style sheet, script and icon a page loads is there (a page itself may be a 404).
    page.on(
        "response",
        lambda response: (
            errors.append(f"{response.status} {response.url}")
            if response.status >= 400 and response.request.resource_type != "document"
            else None
        ),
    )
    yield page
    # No script error, no missing resource and no policy violation (CSP reports on the console).
    assert errors == []
