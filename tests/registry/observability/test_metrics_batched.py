"""Requests are counted in the process first and written to the series at most once a
second (registry.http.metrics.http_flush): the series then say what observing each request
would have said."""

from prometheus_client import Histogram

from registry.http import metrics


def samples(histogram, **labels) -> dict:
    found = {}
    for family in histogram.collect():
        for sample in family.samples:
            if all(sample.labels.get(k) == v for k, v in labels.items()):
                found[(sample.name, sample.labels.get("le"))] = sample.value
    return found


def test_requests_are_written_once_a_second_as_observing_each_would_write_them(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(metrics.time, "monotonic", lambda: clock[0])
    metrics.http_flush()
    route = "/tests/batched/"
    child = metrics.http_requests.labels(route, "GET", "200", "lean")
    before = child._value.get()
    durations = [0.0004, 0.003, 0.003, 0.07, 20.0]
    for seconds in durations[:-1]:
        metrics.http_observe(route, "GET", 200, "lean", seconds)
    assert child._value.get() == before  # not yet written: within the second
    clock[0] += metrics.FLUSH_SECONDS
    metrics.http_observe(route, "GET", 200, "lean", durations[-1])  # a second on: written
    assert child._value.get() == before + len(durations)

    reference = Histogram("tests_reference", "", buckets=metrics.LATENCY_BUCKETS)
    for seconds in durations:
        reference.observe(seconds)
    written = samples(metrics.http_duration, route=route)
    expected = samples(reference)
    rename = metrics.PREFIX + "http_request_duration_seconds"
    assert {
        (n.replace("tests_reference", rename), le): v
        for (n, le), v in expected.items()
        if not n.endswith("_created")
    } == {key: value for key, value in written.items() if not key[0].endswith("_created")}
