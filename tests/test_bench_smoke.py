"""The benchmark runs end to end at a tiny size: load, gunicorn, discovery, card fetch, report.

No timing is asserted here; the figures belong to bench/README.md.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.discover import DISTINCT_KINDS as DISTINCT

# Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parent.parent


# The wrk run is tests/test_bench_smoke_wrk.py: a file of its own, so that parallel test
# processes (which take a file each) run the two at once.
@pytest.mark.parametrize("generator", ["python"])
def test_bench_runs_end_to_end_and_reports_every_figure(tmp_path, generator):
    if generator == "wrk" and shutil.which("wrk") is None:
        pytest.skip("wrk is not installed")
    out = tmp_path / "results.json"
    # The bench chooses its own database; the suite's DATABASE_URL must not leak into it.
    # (Nor the suite's base URL: the bench sets its own, as a deployment must.)
    leaked = ("DATABASE_URL", "REDIS_URL", "REGISTRY_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in leaked}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--agents=60",
            "--small=20",
            "--middle=40",
            "--duration=0.3",
            "--connections=4",
            "--requests=5",
            "--entities=60",
            "--small-entities=20",
            "--mcp-servers=60",
            f"--database-url=sqlite:///{tmp_path}/bench.sqlite3",
            f"--out={out}",
            f"--generator={generator}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(out.read_text())

    assert results["meta"]["database"]["vendor"] == "sqlite"
    assert results["meta"]["generator"]["name"] == generator
    assert [p["agents"] for p in results["load"]] == [20, 20, 20]
    assert all(p["seconds"] > 0 and p["agents_per_second"] > 0 for p in results["load"])
    for size, agents in (("small", 20), ("full", 60)):
        block = results["discovery"][size]
        assert block["agents"] == agents
        assert set(block["queries"]) == {
            "text",
            "text+skill",
            "filter",
            "facets",
            "text+liveOnly",
            "filter+minTrust",
            "filter+sortTrust",
        }
        for kind, figures in block["queries"].items():
            if kind == "facets" and not figures["supported"]:
                assert figures["note"]
                continue
            assert figures["requests"] == 5
            assert figures["p50_ms"] > 0 and figures["p95_ms"] >= figures["p50_ms"]
    assert results["pages"]["agents"] == 60
    assert set(results["pages"]["pages"]) == {"home", "browse", "agent"}
    for figures in results["pages"]["pages"].values():
        assert figures["requests"] == 5
        assert figures["p50_ms"] > 0 and figures["p95_ms"] >= figures["p50_ms"]
    # Each size's throughput rows, against the bare WSGI application. Heartbeats are POSTs
    # with the owner's key: a refused one (401, 404, 429) fails the run.
    kinds = {"bare", "healthz", "card", "card pinned"}
    kinds |= {"discover text", "discover filter", "discover facets"}
    kinds |= {f"distinct {kind}" for kind in DISTINCT}
    # The same distinct text queries in the default mode (hybrid) and mode=keyword.
    modes = {"text (hybrid)", "text (keyword)"}
    kinds |= {f"distinct {kind}" for kind in modes}
    assert results["throughput"]["middle"]["agents"] == 40
    assert set(results["throughput"]["middle"]["rows"]) == kinds
    assert results["throughput"]["full"]["agents"] == 60
    assert set(results["throughput"]["full"]["rows"]) == kinds | {"heartbeat", "heartbeat reviving"}
    names = [t["target"] for t in results["targets"]]
    rows = [*results["throughput"]["middle"]["rows"].values()]
    rows += [*results["throughput"]["full"]["rows"].values(), *results["pairs"].values()]
    for figures in rows:
        assert figures["requests"] > 0 and figures["requests_per_second"] > 0
        assert figures["p99_ms"] >= figures["p50_ms"] > 0
    # Distinct queries: one client, then the generator, each URL handed out once in the run.
    for size, agents in (("middle", 40), ("full", 60)):
        block = results["distinct"][size]
        assert block["agents"] == agents
        assert set(block["queries"]) == set(DISTINCT) | modes
        for figures in block["queries"].values():
            assert figures["requests"] == 5
        for kind in [*DISTINCT, *modes]:
            figures = results["throughput"][size]["rows"][f"distinct {kind}"]
            assert figures["urls"] > 0 and figures["repeated"] >= 0
    assert sum(" queries >= 0.1 x card fetch" in name for name in names) == 3
    assert sum(" queries >= 0.07 x card fetch" in name for name in names) == 3
    assert sum(name.startswith("distinct '") and " p95 at N=60 <= 2 x" in name for name in names)
    assert set(results["pairs"]) == {"discover", "a2a-discover", "ard-search"}
    # make serve as shipped (honcho, Procfile.serve, the shipped read limit) from many
    # client addresses, beside the bench's server and the bare application.
    shipped = results["shipped"]
    assert shipped["agents"] == 60 and shipped["clients"] == 256
    assert set(shipped["rows"]) == {"bare", "card", "served as shipped"}
    for figures in shipped["rows"].values():
        assert figures["generator"] == "python" and figures["requests"] > 0
        assert figures["errors"] <= figures["requests"] * 0.01
    assert any(name.startswith("card fetch from make serve as shipped") for name in names)
    # The AI Catalog built from the 60 agents' stored entries, in one document.
    assert (results["catalog"]["entries"], results["catalog"]["pages"]) == (60, 1)
    assert results["catalog"]["seconds"] > 0 and results["catalog"]["root_bytes"] > 0
    assert len(results["memory"]["workers_rss_mib"]) == 2
    # The embedding service ran beside the workers (as make serve runs it), with the model.
    assert results["memory"]["semantic_service_rss_mib"] > 0
    assert sum(name.startswith("hybrid text discovery >= 0.7 x keyword") for name in names) == 2
    assert all(size > 0 for size in results["memory"]["workers_rss_mib"])
    assert {t["holds"] for t in results["targets"]} <= {True, False, None}
    # minTrust and sort=trust beside the same filter without them.
    for kind in ("filter+minTrust", "filter+sortTrust"):
        assert (
            sum(name.startswith(f"discovery '{kind}' p95 <= 1.1 x 'filter'") for name in names) == 1
        )
    sorted_trust = results["discovery"]["full"]["queries"]["filter+sortTrust"]
    assert (
        sorted_trust["mean_results"]
        == results["discovery"]["full"]["queries"]["filter"]["mean_results"]
    )
    assert sum(name.startswith("card fetch >= 0.8 x bare WSGI") for name in names) == 1
    assert sum(name.startswith("card fetch >= 0.85 x bare WSGI") for name in names) == 1
    assert sum(name.startswith("/healthz >= 0.8 x bare WSGI") for name in names) == 2
    assert sum(" >= 0.15 x card fetch" in name for name in names) == 6
    assert sum(name.startswith("pinned card version fetch >= 0.9") for name in names) == 2
    assert sum(name.startswith("page ") for name in names) == 3
    assert any(name.startswith("heartbeat throughput") for name in names)
    assert any(name.startswith("A2A discovery message") for name in names)
    assert any(name.startswith("worker resident memory") for name in names)
    # The MCP Registry API's pages over the entities' servers, and an import's rate.
    mcp = results["mcp_registry"]
    assert mcp["pages"]["servers_seen"] > 0
    assert set(mcp["pages"]["queries"]) == {"first page", "next pages", "latest", "search"}
    for figures in mcp["pages"]["queries"].values():
        assert figures["requests"] == 5 and figures["p95_ms"] >= figures["p50_ms"] > 0
    assert (mcp["import"]["servers"], mcp["import"]["first"]["added"]) == (60, 60)
    assert mcp["import"]["again"]["unchanged"] == 60
    assert mcp["import"]["first"]["servers_per_second"] > 0
    assert [p["entities"] for p in results["entities"]["load"]] == [20, 40]
    for size, count in (("small", 20), ("full", 60)):
        block = results["entities"][size]
        assert block["entities"] == count
        for figures in block["queries"].values():
            assert figures["requests"] == 5
            assert figures["p50_ms"] > 0 and figures["p95_ms"] >= figures["p50_ms"]
    assert sum(t["target"].startswith("GET /v1/") for t in results["targets"]) == 2
    assert "GET /a2a/agents/<id>" in (tmp_path / "RESULTS.md").read_text()
    assert "GET /a2a/agents/<id>?version=1" in run.stdout
    assert "GET /healthz" in run.stdout
    assert "bare WSGI application (the limit)" in run.stdout
    assert "page /browse/agents/<id>" in run.stdout
    assert "POST /agents/<id>/endpoints/<eid>/heartbeat" in run.stdout
    assert "GET /v1/nearby (1 km)" in run.stdout


def test_the_pinned_card_program_runs_and_reports_both_kinds(tmp_path):
    out = tmp_path / "pinned.json"
    leaked = ("DATABASE_URL", "REDIS_URL", "REGISTRY_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in leaked}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.pinned",
            "--agents=30",
            "--rounds=1",
            "--duration=0.3",
            "--connections=4",
            "--generator=python",
            f"--database-url=sqlite:///{tmp_path}/bench.sqlite3",
            f"--out={out}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(out.read_text())
    [round_] = results["rounds"]
    assert round_["card"] > 0 and round_["card-pinned"] > 0
    assert set(results["lane"]) == {"cached", "database"}
    assert all(figures["pinned_us"] > 0 for figures in results["lane"].values())
    assert "pinned / latest card fetch at N=30" in run.stdout


def test_the_ard_bench_runs_end_to_end_at_two_sizes(tmp_path):
    """python -m bench.ard: the ARD search against the same GET, and the catalog build."""
    out = tmp_path / "ard.json"
    leaked = ("DATABASE_URL", "REDIS_URL", "REGISTRY_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in leaked}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.ard",
            "--sizes=20,40",
            "--duration=0.3",
            "--connections=4",
            "--requests=5",
            "--rounds=1",
            "--builds=1",
            "--generator=python",
            f"--database-url=sqlite:///{tmp_path}/bench.sqlite3",
            f"--out={out}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(out.read_text())
    assert [s["agents"] for s in results["sizes"]] == [20, 40]
    for size in results["sizes"]:
        [round_] = size["rounds"]
        assert round_["discover"]["requests"] > 0 and round_["ard-search"]["requests"] > 0
        assert round_["discover"]["errors"] == round_["ard-search"]["errors"] == 0
        [build] = size["catalog_builds"]
        assert (build["entries"], build["pages"]) == (size["agents"], 1)
        assert size["catalog_fetch"]["root_bytes"] == build["root_bytes"]


def test_the_replica_rows_run_and_report_lag_wal_sizes_and_reads(tmp_path):
    from bench import pgpair

    if not pgpair.available():
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs PostgreSQL 15's programs (initdb, pg_basebackup)")
        pytest.skip(f"no PostgreSQL programs in {pgpair.POSTGRES_BIN}")
    out = tmp_path / "replica.json"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    run = subprocess.run(
        [sys.executable, "-m", "bench.replica", "--agents=40", "--duration=0.3",
         "--connections=2", "--requests=3", "--registrations=2", "--servers=replica",
         f"--out={out}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["bulk_load_wal_bytes_per_agent"] > 0
    assert result["registration_wal_bytes"] > 0
    assert result["replica_lag_during_bulk_load"]["samples"] > 0
    reads = result["reads_on_replica"]
    assert reads["card_fetch"]["requests"] > 0 and reads["card_fetch"]["errors"] == 0
    assert reads["discovery_first_text"]["requests"] == 3
    tables = result["sizes"]["tables"]
    assert tables["registry_agent"]["rows_per_agent"] >= 1
    assert result["sizes"]["total_bytes_per_agent"] > 0


def test_the_probe_job_and_trust_rows_run_at_a_tiny_size(tmp_path):
    """``python -m bench.probes``: the probe job against a local HTTPS server, with the
    trust scores of what it probed, and the daily trust job over every agent."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REGISTRY_BASE_URL")}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.probes",
            "--agents=20",
            "--batch=10",
            "--runs=1",
            "--concurrency=2",
            f"--database-url=sqlite:///{tmp_path}/bench-probes.sqlite3",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(run.stdout)
    assert results["agents"] == 20 and results["probes_per_second"] > 0
    assert "run 1: 10 probes" in run.stderr  # each probe of the batch answered and stored
    refresh = results["trust_refresh"]
    assert refresh["agents"] == 20 and refresh["agents_per_second"] > 0
    # The ten probed agents were scored by their batch; the daily job scores the others.
    assert refresh["changed"] == 10
