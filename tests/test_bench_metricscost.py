"""bench.metricscost without a server: the shipped server's environment differs only in
METRICS_ENABLED (tracing off whatever the shell says), the summary's per cent and the
rounds' alternating order; and bench.distinct's sequential rows, in alternating order."""

from pathlib import Path

from bench.metricscost import MetricsServer, summary


def test_the_two_servers_differ_in_metrics_enabled_alone_and_trace_nothing(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("METRICS_ENABLED", "true")
    made = {}
    for state in ("false", "true"):
        server = MetricsServer(
            metrics_enabled=state,
            port=23001,
            database_url="postgres://postgres@127.0.0.1:5432/registry_bench_x",
            redis_url="",
            log_path=Path("/tmp/unused.log"),
        )
        server.events_port = 23002  # chosen when it starts
        made[state] = server.environment()
    assert made["false"]["METRICS_ENABLED"] == "false" and made["true"]["METRICS_ENABLED"] == "true"
    assert {k: v for k, v in made["false"].items() if k != "METRICS_ENABLED"} == {
        k: v for k, v in made["true"].items() if k != "METRICS_ENABLED"
    }
    assert not [name for name in made["true"] if name.startswith("OTEL_")]


def test_the_summary_gives_each_rows_median_and_what_the_metrics_cost_in_per_cent():
    rounds = [
        {
            "off": {"card": 1000.0, "distinct text": 100.0},
            "on": {"card": 960.0, "distinct text": 90.0},
        },
        {
            "off": {"card": 1100.0, "distinct text": 110.0},
            "on": {"card": 1000.0, "distinct text": 100.0},
        },
        {
            "off": {"card": 900.0, "distinct text": 105.0},
            "on": {"card": 880.0, "distinct text": 102.0},
        },
    ]
    rows = summary(rounds)
    assert rows["card"] == {
        "off": 1000,
        "on": 960,
        "rounds_percent": [-4.0, -9.1, -2.2],
        "on_vs_off_percent": -4.0,
        "within_target": True,
    }
    # Each round's halves compared (the medians alone, 105 and 100, would say -4.8 %).
    assert rows["distinct text"]["rounds_percent"] == [-10.0, -9.1, -2.9]
    assert rows["distinct text"]["on_vs_off_percent"] == -9.1
    assert rows["distinct text"]["within_target"] is False
    rounds[0]["on"]["card"] = 900.0  # -10 % in the first round: the median is -9.1 %
    assert summary(rounds)["card"]["within_target"] is False


def test_the_rounds_alternate_which_state_runs_first(monkeypatch, tmp_path):
    import bench.load
    import bench.metricscost as metricscost

    order = []

    def measure(state, enabled, args, pools, cards, tmp):
        order.append(state)
        return {"card": 100.0}

    monkeypatch.setattr(metricscost, "state_measure", measure)
    monkeypatch.setattr(bench.load, "django_start", lambda url: None)
    monkeypatch.setattr(bench.load, "card_paths", lambda: ["/a2a/agents/x"])
    out = tmp_path / "out.json"
    metricscost.main(
        ["--database-url", "postgres://h/registry_bench_x", "--rounds", "3", "--kinds", "",
         "--out", str(out)]
    )  # fmt: skip
    assert order == ["off", "on", "on", "off", "off", "on"]


def test_the_sequential_rows_alternate_their_order_and_are_warmed_once(monkeypatch):
    """bench.distinct --sequential: the kinds forwards in even rounds, backwards in odd
    ones (so none always runs first), the warm-up before the first round alone."""
    import argparse

    import bench.distinct as distinct
    from bench import discover

    asked, warmed = [], []
    monkeypatch.setattr(discover, "discovery_warm", lambda port, seed: warmed.append(port))
    monkeypatch.setattr(
        discover,
        "discovery_measure",
        lambda port, kind, paths: asked.append(kind) or {"p50_ms": 1.0, "p95_ms": 2.0},
    )
    args = argparse.Namespace(
        sequential="filter,filter+minTrust,filter+sortTrust", requests=3, seed=1
    )
    rounds = [distinct._sequential(args, 8000, number) for number in range(3)]
    assert asked == [
        "filter", "filter+minTrust", "filter+sortTrust",
        "filter+sortTrust", "filter+minTrust", "filter",
        "filter", "filter+minTrust", "filter+sortTrust",
    ]  # fmt: skip
    assert warmed == [8000]
    assert rounds[1] == {
        f"discover {k}": {"p50_ms": 1.0, "p95_ms": 2.0}
        for k in ("filter+sortTrust", "filter+minTrust", "filter")
    }
    assert distinct._sequential(argparse.Namespace(sequential="", requests=3, seed=1), 1, 0) == {}
