"""deploy/prometheus/alerts.yml and deploy/grafana/registry.json: every expression parses
(promtool, from Debian's prometheus package) and names only series GET /metrics exports;
and a real Prometheus, scraping make serve's processes (gunicorn and the stream server,
adding up through the metrics folder), reads back with PromQL the counts of the traffic
this test sent."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from django.db import connection

from registry.http import metrics
from registry.observability.scrape import REPLICA_SERIES
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "registry.json"
PYTHON = (sys.executable, "-m")
PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")
needs_prometheus = pytest.mark.skipif(
    not (PROMTOOL and PROMETHEUS) and os.environ.get("PROMETHEUS_TESTS_REQUIRED") != "1",
    reason="promtool and prometheus are not installed (apt-get install prometheus)",
)

# What PromQL names besides series: functions (followed by "("), keywords, and the label
# names the registry's series carry; `up` is Prometheus' own series of each scrape target.
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool"}
KEYWORDS |= {"and", "or", "unless", "offset", "le", "inf", "nan"}
PROMETHEUS_OWN = {"up"}


def alert_expressions() -> list[str]:
    rules = yaml.safe_load(ALERTS.read_text())
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


def dashboard_expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel.get("targets", [])]


def series_named(expr: str) -> set[str]:
    """The series an expression selects: its names, without strings, label matchers,
    ranges, grouping clauses, functions and keywords."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", text))
    return {name for name in names if name.lower() not in KEYWORDS}


def exported_series(scraped: str) -> set[str]:
    """Every sample name /metrics can export: the series made in code (with the suffixes
    of their type) and those a scrape shows (the gauges read at scrape time)."""
    names = set()
    for made in metrics.series.values():
        for family in made.describe():
            if family.type == "counter":
                names.add(family.name + "_total")
            elif family.type == "histogram":
                names |= {family.name + s for s in ("_bucket", "_sum", "_count")}
            else:
                names.add(family.name)
    names |= set(re.findall(r"^(registry_[a-z_]+)", scraped, re.MULTILINE))
    return names


@pytest.mark.apps("a2a", "ard")
def test_every_alert_and_panel_names_only_exported_series(db, client):
    import protocols.ard.crawl.ingest  # noqa: F401 (its series: crawls)

    exported = exported_series(client.get("/metrics").content.decode())
    # Exported where replicas are configured (none in the tests' settings).
    exported |= {metrics.PREFIX + name for name in REPLICA_SERIES}
    for expr in alert_expressions() + dashboard_expressions():
        unknown = series_named(expr) - exported - PROMETHEUS_OWN
        assert unknown == set(), (expr, unknown)
    named = set().union(*map(series_named, alert_expressions() + dashboard_expressions()))
    # The dashboard shows every family the registry exports.
    shown = {re.sub(r"_(total|bucket|sum|count)$", "", name) for name in named}
    made = {metrics.PREFIX + name for name in metrics.series}
    assert made - shown == set()


@pytest.mark.database_independent
def test_the_name_reader_finds_series_and_nothing_else():
    expr = (
        'histogram_quantile(0.95, sum by (le, route) (rate(registry_x_bucket{lane="django",'
        'route=~"/a|b"}[5m]))) / ignoring(outcome) registry_y > bool 2 and up{job="r"}'
    )
    assert series_named(expr) == {"registry_x_bucket", "registry_y", "up"}


@needs_prometheus
@pytest.mark.database_independent
def test_promtool_checks_the_alert_rules_and_every_dashboard_expression(tmp_path):
    checked = subprocess.run(
        [PROMTOOL, "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # The panels' queries as recording rules: promtool parses each the same way.
    panels = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"dashboard:query_{n}", "expr": expr}
                    for n, expr in enumerate(dashboard_expressions())
                ],
            }
        ]
    }
    (tmp_path / "panels.yml").write_text(yaml.safe_dump(panels))
    checked = subprocess.run(
        [PROMTOOL, "check", "rules", str(tmp_path / "panels.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _started(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait_for(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            assert process.poll() is None, log.read_text()
            time.sleep(0.1)
    pytest.fail(f"{url} did not answer: {log.read_text()}")


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return f"sqlite:///{db['NAME']}"


@pytest.fixture
def served(transactional_db, tmp_path):
    """make serve's web and stream processes (Procfile.serve) over the test database, their
    counts in one metrics folder: gunicorn (one worker: its /metrics writes its own counts
    when scraped) and uvicorn."""
    web, events = free_port(), free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _database_url(),
        "REGISTRY_VAR_DIR": str(tmp_path),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "REGISTRY_BASE_URL": f"http://127.0.0.1:{web}",
        "RATE_LIMIT_READ": "100000/min",
        "LOG_FORMAT": "json",
        "LOG_REQUESTS": "1",
    }
    env.pop("REDIS_URL", None)
    processes = [
        _started(
            [*PYTHON, "gunicorn", "registry.wsgi", "--workers=1", f"--bind=127.0.0.1:{web}"],
            env,
            tmp_path / "web.log",
        ),
        _started(
            [*PYTHON, "uvicorn", "registry.events.asgi:application", f"--port={events}"],
            env,
            tmp_path / "events.log",
        ),
    ]
    try:
        _wait_for(f"http://127.0.0.1:{web}/healthz", processes[0], tmp_path / "web.log")
        _wait_for(f"http://127.0.0.1:{events}/nothing", processes[1], tmp_path / "events.log")
        yield {"web": f"http://127.0.0.1:{web}", "events": f"http://127.0.0.1:{events}"}
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
    # Every line either process wrote, gunicorn's own and uvicorn's, is a JSON object.
    for log in ("web.log", "events.log"):
        lines = (tmp_path / log).read_text().splitlines()
        assert lines, log
        plain = [line for line in lines if not line.startswith("{")]
        assert plain == [], log
        assert all(json.loads(line)["level"] for line in lines)


@pytest.fixture
def prometheus(served, tmp_path):
    """A real Prometheus scraping the web process every half second (a scrape may take as
    long: on a loaded machine a shorter one times out), with the alert rules."""
    port = free_port()
    target = served["web"].removeprefix("http://")
    config = {
        "global": {"scrape_interval": "500ms", "scrape_timeout": "500ms"},
        "rule_files": [str(ALERTS)],
        "scrape_configs": [{"job_name": "registry", "static_configs": [{"targets": [target]}]}],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = tmp_path / "prometheus.log"
    process = _started(
        [
            PROMETHEUS,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        dict(os.environ),
        log,
    )
    try:
        _wait_for(f"http://127.0.0.1:{port}/-/ready", process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)


def value_of(prometheus: str, expr: str) -> float:
    """An instant query's one value (0 when it finds no series)."""
    answer = httpx.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=5)
    result = answer.json()["data"]["result"]
    return float(result[0]["value"][1]) if result else 0.0


def query_until(prometheus: str, expr: str, expected: float) -> float:
    """The value of an instant query once it is ``expected`` (20 s at most: Prometheus
    scrapes every half second)."""
    deadline = time.monotonic() + 20
    while (found := value_of(prometheus, expr)) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


@needs_prometheus
def test_a_real_prometheus_reads_the_served_processes_counts_back(served, prometheus):
    web = served["web"]
    sent = {
        'sum(registry_http_requests_total{route="/agents",method="GET",status="200"})': 7,
        'sum(registry_http_requests_total{route="/healthz",lane="lean"})': 5,
        'sum(registry_http_requests_total{route="(unmatched)",status="404"})': 3,
    }
    assert query_until(prometheus, 'up{job="registry"}', 1) == 1
    before = {expr: value_of(prometheus, expr) for expr in sent}
    with httpx.Client(timeout=10) as http:
        statuses = [http.get(f"{web}/agents").status_code for _ in range(7)]
        statuses += [http.get(f"{web}/healthz").status_code for _ in range(5)]
        statuses += [http.get(f"{web}/no/such/path").status_code for _ in range(3)]
        assert statuses == [200] * 12 + [404] * 3
        # A stream held open on the stream server: counted there, read through the web's scrape.
        with http.stream("GET", f"{served['events']}/events") as stream:
            assert stream.status_code == 200
            assert query_until(prometheus, "sum(registry_event_streams_open)", 1) == 1
    for expr, count in sent.items():
        found = query_until(prometheus, expr, before[expr] + count)
        assert found == before[expr] + count, (expr, before[expr], found)
    assert query_until(prometheus, 'registry_agents{status="active"}', 0) == 0
    assert query_until(prometheus, "sum(registry_event_streams_open)", 0) == 0
