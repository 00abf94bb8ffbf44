"""The distinct-query rows' targets and labels (bench.report)."""

from typing import Any

DISTINCT_P95_RATIO_MAX = 2.0
LIVE_ONLY_P95_RATIO_MAX = 1.5
# Search by meaning's price: hybrid (the default) against mode=keyword, the same queries.
HYBRID_TO_KEYWORD_MIN = 0.7

# What each distinct kind asks (bench.discover.DISTINCT_KINDS, shortened).
DISTINCT_LABELS = {
    "text": "q=<word> <typed>",
    "text+filter": "q=<typed>&tag=<tag>",
    "filter": "tag=<tag>&protocolBinding&streaming&sort&limit",
    "facets": "q=<word> <typed>&facets=tag,protocolBinding",
    "text+liveOnly": "q=<word> <typed>&liveOnly=true",
    "text+capability": "q=<word> <typed>&capability=<skill name>",
    "text+provider": "q=<word> <typed>&provider=<organization, lower-cased>",
    "text+protocol": "q=<word> <typed>&protocol=A2A",
    "text+binding": "q=<word> <typed>&protocolBinding=<binding>",
    "text+fact": "q=<word> <typed>&streaming=<flag>",
    "text (hybrid)": "q=<word> <typed> (mode=hybrid, the default; bench.modes)",
    "text (keyword)": "q=<word> <typed>&mode=keyword (the same queries)",
}


def _target(name: str, value: float | None, limit: float, holds: bool | None) -> dict:
    return {"target": name, "value": value, "limit": limit, "holds": holds}


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def distinct_targets(distinct: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Distinct queries hold up with size (p95 at --agents against --middle), and
    ``liveOnly`` costs little over the same kind of query without it."""
    if not distinct or "full" not in distinct or "middle" not in distinct:
        return []
    middle, full = distinct["middle"], distinct["full"]
    targets = []
    for kind, at_middle in middle["queries"].items():
        at_full = full["queries"].get(kind)
        if not (at_full and at_middle.get("supported") and at_full.get("supported")):
            continue
        ratio = _ratio(at_full["p95_ms"], at_middle["p95_ms"])
        targets.append(
            _target(
                f"distinct '{kind}' p95 at N={full['agents']} <= {DISTINCT_P95_RATIO_MAX:g} "
                f"x p95 at N={middle['agents']}",
                round(ratio, 2),
                DISTINCT_P95_RATIO_MAX,
                ratio <= DISTINCT_P95_RATIO_MAX,
            )
        )
    for block in (middle, full):
        live, text = block["queries"].get("text+liveOnly"), block["queries"].get("text")
        if live and text:
            ratio = _ratio(live["p95_ms"], text["p95_ms"])
            targets.append(
                _target(
                    f"distinct 'text+liveOnly' p95 <= {LIVE_ONLY_P95_RATIO_MAX} x 'text' p95 "
                    f"at N={block['agents']}",
                    round(ratio, 2),
                    LIVE_ONLY_P95_RATIO_MAX,
                    ratio <= LIVE_ONLY_P95_RATIO_MAX,
                )
            )
    return targets


def mode_targets(throughput: dict[str, Any]) -> list[dict[str, Any]]:
    """Hybrid text discovery keeps pace with keyword search (bench.modes' rows)."""
    targets = []
    for block in throughput.values():
        hybrid = block["rows"].get("distinct text (hybrid)")
        keyword = block["rows"].get("distinct text (keyword)")
        if hybrid and keyword:
            ratio = _ratio(hybrid["requests_per_second"], keyword["requests_per_second"])
            targets.append(
                _target(
                    f"hybrid text discovery >= {HYBRID_TO_KEYWORD_MIN:g} x keyword rate "
                    f"(distinct queries) at N={block['agents']}",
                    round(ratio, 3),
                    HYBRID_TO_KEYWORD_MIN,
                    ratio >= HYBRID_TO_KEYWORD_MIN,
                )
            )
    return targets
