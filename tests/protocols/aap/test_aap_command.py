"""manage.py aap_check: the checklist on stdout, exit status 0 only when compliant."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

pytest_plugins = ["tests.https_server"]

BASE_DIR = Path(__file__).resolve().parents[3]
FIXTURES = BASE_DIR / "tests" / "fixtures" / "aap"

MISSING_MANIFEST = (
    "Not compliant: the manifest is missing, so 4 MUST rules could not be checked "
    "(the card rules pass)"
)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "aap_check", *args],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def broken_manifest(tmp_path) -> Path:
    manifest = json.loads((FIXTURES / "manifest-bearer.json").read_text(encoding="utf-8"))
    manifest["auth_type"] = None
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return path


def test_compliant_files_print_the_checklist_and_exit_0():
    done = run(str(FIXTURES / "card-public.json"), str(FIXTURES / "manifest-public.json"))

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("✔ card.a2a")
    assert sum(line.startswith("✔ ") for line in lines) == 11
    assert lines[-1] == "Verdict: AAP v0.1 compliant"


def test_non_compliant_files_exit_1_after_printing_the_failing_rule(broken_manifest):
    done = run(str(FIXTURES / "card-bearer.json"), str(broken_manifest))

    assert done.returncode == 1
    assert any(
        line.startswith("✘ manifest.auth_type") and "auth_type: is null" in line
        for line in done.stdout.splitlines()
    )
    assert done.stdout.splitlines()[-1] == "Verdict: Not compliant: 1 MUST rule fails"


def test_a_card_file_alone_is_checked_without_its_manifest_and_is_not_compliant(capsys):
    with pytest.raises(SystemExit) as exited:
        call_command("aap_check", str(FIXTURES / "card-public.json"))

    assert exited.value.code == 1
    out = capsys.readouterr().out
    assert "\u2013 manifest.schema" in out
    assert out.rstrip().endswith("Verdict: " + MISSING_MANIFEST)


def test_a_generic_card_is_not_compliant(tmp_path, make_card, capsys):
    path = tmp_path / "card.json"
    path.write_text(json.dumps(make_card()), encoding="utf-8")

    with pytest.raises(SystemExit) as exited:
        call_command("aap_check", str(path))

    assert exited.value.code == 1
    assert "A generic A2A agent" in capsys.readouterr().out


def test_a_file_that_is_not_json_is_a_command_error_naming_it(tmp_path):
    path = tmp_path / "card.json"
    path.write_text('{"name": "Dealer"', encoding="utf-8")

    with pytest.raises(CommandError) as error:
        call_command("aap_check", str(path))

    assert str(path) in str(error.value)
    assert "The card is not valid JSON" in str(error.value)
    assert "(line 1, column 18)" in str(error.value)


def test_a_manifest_file_that_is_not_json_is_a_command_error(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_bytes(b"\xff\xfe")

    with pytest.raises(CommandError, match="The manifest is not valid UTF-8"):
        call_command("aap_check", str(FIXTURES / "card-public.json"), str(path))


def test_a_missing_json_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="Cannot read the card file"):
        call_command("aap_check", str(tmp_path / "absent.json"))


def test_a_file_without_a_json_suffix_is_read_when_it_exists(tmp_path, capsys):
    path = tmp_path / "card.txt"
    path.write_text((FIXTURES / "card-public.json").read_text(encoding="utf-8"))

    with pytest.raises(SystemExit):
        call_command("aap_check", str(path))

    assert "(the card rules pass)" in capsys.readouterr().out


def test_a_domain_is_fetched_and_checked(https_server, settings, ca_bundle, capsys):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    card = json.loads((FIXTURES / "card-public.json").read_text(encoding="utf-8"))
    card["capabilities"]["extensions"][0]["params"]["manifest_url"] = https_server.url("/m.json")
    https_server.json("/.well-known/agent-card.json", json.dumps(card).encode())
    https_server.json("/m.json", (FIXTURES / "manifest-public.json").read_bytes())

    call_command("aap_check", f"localhost:{https_server.port}")

    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("✔ card.fetch")
    assert any(line.startswith("✔ manifest.fetch") for line in lines)
    assert lines[-1] == "Verdict: AAP v0.1 compliant"


def test_an_unreachable_domain_prints_the_fetch_failure_and_exits_1(
    https_server, settings, ca_bundle, capsys
):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.FETCH_CA_BUNDLE = str(ca_bundle)

    with pytest.raises(SystemExit) as exited:
        call_command("aap_check", f"localhost:{https_server.port}")

    assert exited.value.code == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("✘ card.fetch")
    assert "HTTP status 404" in first


def test_a_malformed_domain_is_a_command_error():
    with pytest.raises(CommandError, match="not a valid host name"):
        call_command("aap_check", "dealer..example")


def test_a_manifest_file_with_a_domain_is_a_command_error():
    with pytest.raises(CommandError, match="goes with a card file"):
        call_command("aap_check", "dealer.example", str(FIXTURES / "manifest-public.json"))
