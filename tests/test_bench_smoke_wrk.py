"""The benchmark end to end as tests/test_bench_smoke.py runs it, with wrk as the load
generator (skipped where wrk is not installed; CI installs it)."""

from tests import test_bench_smoke as smoke


def test_bench_runs_end_to_end_with_wrk(tmp_path):
    smoke.test_bench_runs_end_to_end_and_reports_every_figure(tmp_path, "wrk")
