"""The recipes of docs/guides/local-development.md, taken from the page itself (no copy kept
here) and run as written: the one-file webhook receiver (standard library only) verified
by the registry's handshake and signing its events, and the local HTTPS site whose
self-signed certificate, made by the page's openssl command, FETCH_CA_BUNDLE trusts."""

import functools
import re
import ssl
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guides" / "local-development.md"


def section(title: str) -> str:
    text = PAGE.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def serving(server: ThreadingHTTPServer):
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


@pytest.fixture
def receiver(tmp_path):
    """The page's receiver.py, its class and checks as written, on a free port."""
    source = re.search(r"```python\n(.*?)```", section("Webhooks to a local receiver"), re.S)
    # All but its last line, which serves on the port of the command line.
    code, last, _ = source.group(1).rpartition("\nHTTPServer((")
    assert last, "the receiver ends by serving"
    namespace: dict = {"__name__": "receiver"}
    exec(compile(code, "receiver.py", "exec"), namespace)
    namespace["SECRET_FILE"] = tmp_path / "webhook-secret"
    server = serving(ThreadingHTTPServer(("127.0.0.1", 0), namespace["Receiver"]))
    yield server.server_address[1], namespace["SECRET_FILE"]
    server.shutdown()
    server.server_close()


@pytest.mark.django_db(transaction=True)
def test_the_receiver_recipe_is_verified_and_gets_signed_events(
    receiver, settings, alice, native_payload, capsys
):
    port, secret_file = receiver
    settings.FETCH_ALLOWED_HOSTS = settings.FETCH_ALLOW_HTTP_HOSTS = ["127.0.0.1"]
    # As the page's curl does: the shell creates the secret file empty before the answer.
    secret_file.write_text("")
    answer = alice.post("/subscriptions", {"url": f"http://127.0.0.1:{port}/hooks"}, format="json")
    assert answer.status_code == 201, answer.json()
    secret_file.write_text(answer.json()["secret"] + "\n")
    assert alice.get(f"/subscriptions/{answer.json()['id']}").json()["status"] == "active"
    agent = alice.post("/agents", native_payload(), format="json").json()["id"]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("org.a2a-registry.webhook.verification")
    assert f"org.a2a-registry.agent.created {agent} signed" in printed
    # A wrong secret: the receiver refuses the delivery, and the registry retries it.
    secret_file.write_text("whsec_" + "A" * 44)
    alice.patch(f"/agents/{agent}", {"name": "Renamed"}, format="json")
    deliveries = alice.get(f"/subscriptions/{answer.json()['id']}/deliveries").json()["results"]
    assert [d["lastStatusCode"] for d in deliveries] == [400, 200], deliveries


@pytest.mark.django_db(transaction=True)
def test_the_local_https_site_recipe_serves_an_entity_card(tmp_path, settings, alice):
    block = re.search(r"```text\n(.*?)```", section("Entity cards from a local HTTPS site"), re.S)
    # The page's commands up to the server, which runs here on a free port instead.
    with ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler) as probe:
        port = probe.server_address[1]
    setup = block.group(1).split("python3 -c")[0].replace("8443", str(port))
    setup = setup.replace("mkdir -p var/site/.well-known && cd var/site", "mkdir -p .well-known")
    made = subprocess.run(["bash", "-e", "-c", setup], cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    serving(server)
    try:
        settings.FETCH_ALLOWED_HOSTS = ["localhost"]
        settings.FETCH_CA_BUNDLE = str(tmp_path / "cert.pem")
        answer = alice.post("/entities", {"domain": f"localhost:{port}"}, format="json")
    finally:
        server.shutdown()
        server.server_close()
    assert answer.status_code == 201, answer.json()
    assert (answer.json()["domain"], answer.json()["format"]) == ("localhost", "a2e-0.1")
