"""The documentation site at /docs/: the built files as they are, a folder's index.html,
nothing outside the built folder, and a 404 that says how to build it when it is not."""

import pytest


@pytest.fixture
def site(settings, tmp_path):
    root = tmp_path / "site"
    (root / "guides").mkdir(parents=True)
    (root / "index.html").write_text("<html><body>Home <script>x=1</script></body></html>")
    (root / "guides" / "index.html").write_text("<html><body>Guides</body></html>")
    (root / "guides" / "find-agents.html").write_text("<html><body>Find agents</body></html>")
    (root / "search").mkdir()
    (root / "search" / "search_index.js").write_text("var __index = {}")
    (tmp_path / "secret.txt").write_text("not for the web")
    settings.DOCS_SITE_DIR = root
    return root


def test_the_home_page_is_the_sites_index(client, site):
    response = client.get("/docs/")
    assert response.status_code == 200
    assert b"Home" in b"".join(response.streaming_content)
    assert response["Content-Type"].startswith("text/html")
    # The theme's inline scripts run; nothing else may frame or load from elsewhere.
    assert "script-src 'self' 'unsafe-inline'" in response["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_docs_without_its_slash_is_redirected(client, site):
    response = client.get("/docs")
    assert (response.status_code, response["Location"]) == (302, "/docs/")


def test_a_page_and_a_folder_are_served(client, site):
    page = client.get("/docs/guides/find-agents.html")
    assert page.status_code == 200
    assert b"Find agents" in b"".join(page.streaming_content)
    folder = client.get("/docs/guides/")
    assert b"Guides" in b"".join(folder.streaming_content)
    redirect = client.get("/docs/guides")
    assert (redirect.status_code, redirect["Location"]) == (302, "/docs/guides/")
    script = client.get("/docs/search/search_index.js")
    assert script.status_code == 200
    assert "javascript" in script["Content-Type"]


@pytest.mark.parametrize(
    "path",
    ["/docs/../secret.txt", "/docs/%2e%2e/secret.txt", "/docs/guides/../../secret.txt"],
)
def test_nothing_outside_the_built_folder_is_served(client, site, path):
    response = client.get(path)
    assert response.status_code == 404
    assert not response.streaming
    assert b"not for the web" not in response.content


def test_a_missing_page_is_a_404(client, site):
    assert client.get("/docs/nowhere.html").status_code == 404


def test_an_unbuilt_site_is_a_404_saying_how_to_build_it(client, settings, tmp_path):
    settings.DOCS_SITE_DIR = tmp_path / "not-built"
    response = client.get("/docs/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert "make docs" in response.json()["detail"]


def test_only_reads_are_answered(client, site):
    assert client.post("/docs/").status_code == 405
