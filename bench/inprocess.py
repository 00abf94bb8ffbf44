"""In-process CPU per request through the project's WSGI application (the lean lane and
Django, no HTTP server): for comparing two trees on a machine too busy for the throughput
rows. CPU time (``process_time``) over N requests of one kind, after one warm-up request.

    cd TREE && STATE=/tmp/s.json DATABASE_URL=sqlite:////tmp/b.sqlite3 \\
        python -m bench.inprocess setup
    cd TREE && STATE=/tmp/s.json DATABASE_URL=sqlite:////tmp/b.sqlite3 \\
        python -m bench.inprocess measure agent|card|discover|heartbeat|register N

``setup`` migrates and registers 300 native agents; ``discover`` asks q=<word>&tag=<t>, 130
distinct combinations. It prints one JSON line: the kind, N and microseconds per request.
"""

import io
import json
import os
import sys
import time
import uuid

for name, value in {
    "DJANGO_SETTINGS_MODULE": "registry.settings",
    "SECRET_KEY": "bench-inprocess-" + "x" * 40,
    "DEBUG": "0",
    "REGISTRY_BASE_URL": "https://registry.example",
    "ALLOWED_HOSTS": "registry.example",
    "RATE_LIMIT_READ": "100000000/min",
    "RATE_LIMIT_WRITE": "100000000/min",
    "RATE_LIMIT_HEARTBEAT": "100000000/min",
    "CARD_CACHE_MB": "64",
}.items():
    os.environ.setdefault(name, value)

WORDS = ["translate", "weather", "invoice", "flight", "recipe"]
WORDS += ["legal", "music", "tax", "hotel", "podcast"]


def call(app, method: str, path: str, body: bytes = b"", key: str | None = None):
    path, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "registry.example",
        "SERVER_PORT": "443",
        "HTTP_HOST": "registry.example",
        "wsgi.url_scheme": "https",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/json",
        "REMOTE_ADDR": "127.0.0.1",
    }
    if key:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    answer = {}

    def start(status, headers, exc_info=None):
        answer["status"] = status

    data = b"".join(app(environ, start))
    if not answer["status"].startswith("2"):
        raise SystemExit(f"{method} {path}: {answer['status']} {data[:300]!r}")
    return data


def agent_body(i: int) -> bytes:
    word = WORDS[i % len(WORDS)]
    return json.dumps(
        {
            "name": f"{word.title()} agent {i}",
            "description": f"Helps with {word} number {i}",
            "capabilities": [
                {"name": f"{word} skill {i % 7}", "description": word, "tags": [word, f"t{i % 13}"]}
            ],
            "endpoints": [
                {
                    "name": "main",
                    "transport": "Http",
                    "protocol": "A2A",
                    "address": f"https://a{i}.example/a2a",
                }
            ],
        }
    ).encode()


def setup(app) -> None:
    from django.core.management import call_command

    from registry.access.keys import api_key_create

    call_command("migrate", verbosity=0)
    _, raw = api_key_create(owner="bench", admin=False, label="inprocess")
    ids = []
    for i in range(300):
        agent = json.loads(call(app, "POST", "/agents", agent_body(i), raw))
        ids.append((agent["id"], agent["endpoints"][0]["id"]))
    with open(os.environ["STATE"], "w") as out:
        json.dump({"key": raw, "ids": ids}, out)


def request(kind: str, i: int, ids: list) -> tuple[str, str, bytes]:
    agent, endpoint = ids[i % len(ids)]
    if kind == "agent":
        return "GET", f"/agents/{agent}", b""
    if kind == "card":
        return "GET", f"/a2a/agents/{agent}", b""
    if kind == "discover":
        return "GET", f"/discover/agents?q={WORDS[i % 10]}&tag=t{i % 13}&limit=20", b""
    if kind == "heartbeat":
        return "POST", f"/agents/{agent}/endpoints/{endpoint}/heartbeat", b""
    return "POST", "/agents", agent_body(1000 + i).replace(b"main", uuid.uuid4().hex.encode())


def measure(app, kind: str, count: int) -> None:
    with open(os.environ["STATE"]) as state_file:
        state = json.load(state_file)
    plan = [request(kind, i, state["ids"]) for i in range(count + 1)]
    call(app, *plan[0], state["key"])  # warm-up
    start = time.process_time()
    for method, path, body in plan[1:]:
        call(app, method, path, body, state["key"])
    spent = time.process_time() - start
    print(json.dumps({"kind": kind, "n": count, "us": round(spent / count * 1e6, 1)}))


def main() -> None:
    from registry.wsgi import application

    if sys.argv[1] == "setup":
        setup(application)
    else:
        measure(application, sys.argv[2], int(sys.argv[3]))


if __name__ == "__main__":
    main()
