"""The curl examples of the README and of the documentation (docs/**/*.md), taken from the
pages themselves (no copy kept here) and run by bash against a live server set up as
`make run` sets it up: debug mode's settings, the demo data, an admin key in $KEY. Each page
runs in a terminal of its own, on a registry of its own, top to bottom: what a block sets
($CARD …) the next blocks of the page use. Each command must answer what its `# -> `
comment shows (the status codes it names; without one, a success), and a ```json block that
follows a command block is exactly the last answer.

A block runs when it is fenced ```sh and holds a curl command; a block shown but not run
(it needs a broker, another host, a secret) is fenced ```text."""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from registry.access.keys import api_key_create

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BASE = "http://127.0.0.1:8000"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
# Every call of curl records its status and body, then prints the body as curl would.
WRAPPER = r"""
curl() {
  local body status
  body=$(mktemp)
  status=$(command curl -sS -o "$body" -w '%{http_code}' "$@")
  printf '%s\n' "$status" >> "$CURL_LOG/statuses"
  cp "$body" "$CURL_LOG/last"
  cp "$body" "$CURL_LOG/answer-$(wc -l < "$CURL_LOG/statuses")"
  cat "$body"
  rm -f "$body"
}
"""


def pages() -> list[Path]:
    """README.md, then the documentation's pages in the order of the site's navigation
    (mkdocs.yml), then any page the navigation does not list."""
    listed: list[str] = []

    def walk(entries) -> None:
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            if isinstance(value, list):
                walk(value)
            elif isinstance(value, str) and value.endswith(".md"):
                listed.append(value)

    walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text()).get("nav", []))
    ordered = [DOCS / name for name in listed]
    ordered += sorted(set(DOCS.rglob("*.md")) - set(ordered))
    return [ROOT / "README.md", *ordered]


def blocks(page: Path) -> list[tuple[str, str | None]]:
    """A page's curl blocks: (the block, the ```json block right after it, if any)."""
    text = page.read_text()
    fences = list(FENCE.finditer(text))
    found = []
    for index, fence in enumerate(fences):
        if fence.group(1) != "sh" or "curl " not in fence.group(2):
            continue
        after = fences[index + 1] if index + 1 < len(fences) else None
        between = text[fence.end() : after.start()] if after else ""
        shown = (
            after.group(2) if after and after.group(1) == "json" and len(between) < 200 else None
        )
        found.append((fence.group(2), shown))
    return found


PAGES = [page for page in pages() if blocks(page)]


def expectations(block: str) -> list[tuple[set[int] | None, str]]:
    """For each curl command of the block, in order, the statuses its `# -> ` comment names
    (None: any success) and the comment."""
    wanted: list[tuple[set[int] | None, str]] = []
    for line in block.splitlines():
        stripped = line.strip()
        if re.search(r"(^|\$\(|\| )curl ", stripped) and not stripped.startswith("#"):
            wanted.append((None, ""))
        elif stripped.startswith("# -> ") and wanted and not wanted[-1][1]:
            # A status is a number alone, not a piece of an address, a version or a name
            # (127.0.0.1, sha256, "score":100).
            found = re.findall(r"(?<![\w.:-])([1-5]\d\d)(?![\w.])", stripped)
            codes = {int(code) for code in found}
            wanted[-1] = (codes or None, stripped[5:])
    return wanted


def shown_members(comment: str, answer: bytes) -> None:
    """An answer shown as ``{"member": [{…}]}`` has that member, and it is not empty; one
    shown as ``{"results": [{…"score": N…`` has that score first."""
    if match := re.match(r'\{"(\w+)"(:\s?\[\{)?', comment):
        found = json.loads(answer)
        assert match.group(1) in found, (comment, found)
        if match.group(2):
            assert found[match.group(1)], (comment, found)
        score = re.search(r'"score":\s?(\d+)[,}]', comment)
        if score and match.group(1) == "results":
            assert found["results"][0]["score"] == int(score.group(1)), (comment, found)


@pytest.fixture
def running(live_server, settings):
    # What `make run` sets: debug mode's URL rules, the demo data, an admin key.
    settings.REGISTRY_BASE_URL = live_server.url
    settings.A2A_ALLOW_HTTP_URLS = True
    call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    _, secret = api_key_create(owner="me", admin=True, label="readme")
    return live_server.url, secret


def test_the_readme_and_the_guides_have_curl_examples():
    names = {page.relative_to(ROOT).as_posix() for page in PAGES}
    assert {"README.md", "docs/getting-started.md", "docs/guides/entity-cards.md"} <= names
    assert len(blocks(ROOT / "README.md")) >= 1
    assert sum(len(blocks(page)) for page in PAGES) >= 15


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_the_curl_examples_answer_what_they_show(page, running, tmp_path):
    base, key = running
    # One terminal through the page: what a block sets ($CARD …) the next ones use.
    carried = tmp_path / "variables"
    carried.touch()
    for number, (block, shown) in enumerate(blocks(page)):
        log = tmp_path / f"block{number}"
        log.mkdir()
        script = "\n".join(
            line for line in block.splitlines() if not line.startswith("KEY=")
        ).replace(BASE, base)
        keep = f"""
{{ for name in $(compgen -v); do
    grep -qx "$name" "{tmp_path}/before" || declare -p "$name"; done; }} >> "{carried}"
"""
        prologue = f'source "{carried}"; compgen -v > "{tmp_path}/before"; echo start >/dev/null\n'
        run = subprocess.run(
            ["bash", "-c", WRAPPER + prologue + script + keep],
            env={"PATH": "/usr/bin:/bin", "KEY": key, "CURL_LOG": str(log)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        statuses = [int(s) for s in (log / "statuses").read_text().split()]
        wanted = expectations(block)
        context = (
            f"{page.relative_to(ROOT)} block {number}:\n{block}\n"
            f"stdout: {run.stdout}\nstderr: {run.stderr}"
        )
        assert len(statuses) == len(wanted), context
        for count, (status, (codes, comment)) in enumerate(zip(statuses, wanted, strict=True)):
            shown_members(comment, (log / f"answer-{count + 1}").read_bytes())
            if codes is None:
                assert 200 <= status < 300, f"{status} {context}"
            else:
                assert status in codes, f"{status} not in {codes}: {context}"
        if shown is not None:
            answered, expected = json.loads((log / "last").read_text()), json.loads(shown)
            if "requestId" in expected:  # each request's own: shown as an example
                assert re.fullmatch(r"[0-9a-f]{32}", answered.pop("requestId", "")), context
                expected.pop("requestId")
            assert answered == expected, context
