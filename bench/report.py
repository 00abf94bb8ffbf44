"""The results: targets checked, a table on the terminal, JSON and a Markdown summary."""

import json
from pathlib import Path
from typing import Any

from bench.report_distinct import DISTINCT_LABELS, distinct_targets, mode_targets

CARD_TO_BARE_MIN = 0.8
# At the largest size (--agents) the card fetch must come closer.
CARD_TO_BARE_FULL_MIN = 0.85
# Distinct queries (each a first query) against the card fetch, at --middle and --agents.
DISTINCT_TO_CARD_MIN = {"middle": 0.10, "full": 0.07}
DISTINCT_RATED = ("text", "text+filter", "filter")
LOAD_AGENTS_PER_SECOND_MIN = 1000.0
HEALTHZ_TO_BARE_MIN = 0.8
DISCOVERY_TO_CARD_MIN = 0.15
WORKER_RSS_MIB_MAX = 150.0
DISCOVERY_P95_RATIO_MAX = 3.0
# "Minutes, not hours": 100,000 agents within the hour, at the rate measured.
LOAD_100K_SECONDS_MAX = 3600.0
HEARTBEAT_TO_CARD_MIN = 0.5
# A pinned card version (?version=<n>) against the latest card.
PINNED_TO_CARD_MIN = 0.9
LIVE_ONLY_P95_RATIO_MAX = 1.5
A2A_TO_DISCOVER_MIN = 0.5
PAGE_P95_MS_MAX = 100.0
ENTITY_P95_RATIO_MAX = 3.0
ENTITY_LABELS = {"nearby": "GET /v1/nearby (1 km)", "resolve": "GET /v1/resolve?query=<word>"}


def _entity_targets(block: dict[str, Any]) -> list[dict[str, Any]]:
    small, full = block["small"], block["full"]
    targets = []
    for kind, at_small in small["queries"].items():
        ratio = full["queries"][kind]["p95_ms"] / at_small["p95_ms"]
        targets.append(
            {
                "target": f"{ENTITY_LABELS[kind]} p95 at {full['entities']} entities "
                f"<= 3 x p95 at {small['entities']}",
                "value": round(ratio, 2),
                "limit": ENTITY_P95_RATIO_MAX,
                "holds": ratio <= ENTITY_P95_RATIO_MAX,
            }
        )
    return targets


def _entity_rows(block: dict[str, Any] | None) -> list[list[str]]:
    if not block:
        return []
    rows = [
        [
            f"load ({phase['phase']}, entities.bulk)",
            str(phase["entities"]),
            f"{phase['seconds']:.1f} s",
            "",
            f"{phase['entities_per_second']:.0f} entities/s",
        ]
        for phase in block["load"]
    ]
    for size in ("small", "full"):
        for kind, figures in block[size]["queries"].items():
            rows.append(
                [
                    ENTITY_LABELS[kind],
                    f"{block[size]['entities']} entities",
                    f"{figures['p50_ms']:.1f} ms",
                    f"p95 {figures['p95_ms']:.1f} ms",
                    "",
                ]
            )
    return rows


def _target(name: str, value: float | None, limit: float, holds: bool | None) -> dict:
    return {"target": name, "value": value, "limit": limit, "holds": holds}


def _at_least(name: str, value: float, limit: float, digits: int = 3) -> dict:
    return _target(name, round(value, digits), limit, value >= limit)


def _rate(figures: dict[str, Any] | None) -> float:
    return figures["requests_per_second"] if figures else 0.0


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def throughput_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """At each size: card fetch and /healthz against the bare WSGI application, discovery
    against card fetch; then heartbeats and A2A messages, and the workers' memory."""
    targets = []
    for size, block in results["throughput"].items():
        rows, n = block["rows"], block["agents"]
        bare, card = _rate(rows.get("bare")), _rate(rows.get("card"))
        card_min = CARD_TO_BARE_FULL_MIN if size == "full" else CARD_TO_BARE_MIN
        targets.append(
            _at_least(
                f"card fetch >= {card_min} x bare WSGI at N={n}",
                _ratio(card, bare),
                card_min,
            )
        )
        for kind in DISTINCT_RATED:
            if f"distinct {kind}" in rows and size in DISTINCT_TO_CARD_MIN:
                limit = DISTINCT_TO_CARD_MIN[size]
                targets.append(
                    _at_least(
                        f"distinct {kind} queries >= {limit} x card fetch at N={n}",
                        _ratio(_rate(rows[f"distinct {kind}"]), card),
                        limit,
                    )
                )
        targets.append(
            _at_least(
                f"/healthz >= {HEALTHZ_TO_BARE_MIN} x bare WSGI at N={n}",
                _ratio(_rate(rows.get("healthz")), bare),
                HEALTHZ_TO_BARE_MIN,
            )
        )
        if "card pinned" in rows:
            targets.append(
                _at_least(
                    f"pinned card version fetch >= {PINNED_TO_CARD_MIN} x card fetch at N={n}",
                    _ratio(_rate(rows["card pinned"]), card),
                    PINNED_TO_CARD_MIN,
                )
            )
        for name in sorted(k for k in rows if k.startswith("discover ")):  # repeated URLs
            targets.append(
                _at_least(
                    f"{name} >= {DISCOVERY_TO_CARD_MIN} x card fetch at N={n}",
                    _ratio(_rate(rows[name]), card),
                    DISCOVERY_TO_CARD_MIN,
                )
            )
        if "heartbeat" in rows:
            targets.append(
                _at_least(
                    f"heartbeat throughput >= {HEARTBEAT_TO_CARD_MIN} x card fetch at N={n}",
                    _ratio(_rate(rows["heartbeat"]), card),
                    HEARTBEAT_TO_CARD_MIN,
                )
            )
    shipped = results.get("shipped")
    if shipped:
        rows, n = shipped["rows"], shipped["agents"]
        bare = _rate(rows.get("bare"))
        targets.append(
            _at_least(
                f"card fetch from make serve as shipped >= {CARD_TO_BARE_MIN} x bare WSGI at "
                f"N={n} ({shipped['clients']} clients, built-in generator)",
                _ratio(_rate(rows.get("served as shipped")), bare),
                CARD_TO_BARE_MIN,
            )
        )
    pairs = results.get("pairs") or {}
    if "discover" in pairs and "a2a-discover" in pairs:
        targets.append(
            _at_least(
                "A2A discovery message throughput >= 0.5 x GET /discover/agents "
                "(the same text queries)",
                _ratio(_rate(pairs["a2a-discover"]), _rate(pairs["discover"])),
                A2A_TO_DISCOVER_MIN,
            )
        )
    if "discover" in pairs and "ard-search" in pairs:
        targets.append(
            _at_least(
                "POST /ard/search throughput >= 0.8 x GET /discover/agents (the same text queries)",
                _ratio(_rate(pairs["ard-search"]), _rate(pairs["discover"])),
                0.8,
            )
        )
    rss = (results.get("memory") or {}).get("workers_rss_mib") or []
    targets.append(
        _target(
            f"worker resident memory <= {WORKER_RSS_MIB_MAX:g} MiB after the run (largest)",
            max(rss) if rss else None,
            WORKER_RSS_MIB_MAX,
            max(rss) <= WORKER_RSS_MIB_MAX if rss else None,
        )
    )
    return targets


def targets_evaluate(results: dict[str, Any]) -> list[dict[str, Any]]:
    targets = throughput_targets(results)
    small, full = results["discovery"]["small"], results["discovery"]["full"]
    if "text+liveOnly" in full["queries"]:
        ratio = full["queries"]["text+liveOnly"]["p95_ms"] / full["queries"]["text"]["p95_ms"]
        targets.append(
            {
                "target": "discovery 'text+liveOnly' p95 <= 1.5 x 'text' p95 "
                f"at N={full['agents']}",
                "value": round(ratio, 2),
                "limit": LIVE_ONLY_P95_RATIO_MAX,
                "holds": ratio <= LIVE_ONLY_P95_RATIO_MAX,
            }
        )
    for kind, at_small in small["queries"].items():
        at_full = full["queries"][kind]
        name = f"discovery '{kind}' p95 at N={full['agents']} <= 3 x p95 at N={small['agents']}"
        if not (at_small["supported"] and at_full["supported"]):
            targets.append({"target": name, "value": None, "limit": 3.0, "holds": None})
            continue
        ratio = at_full["p95_ms"] / at_small["p95_ms"]
        targets.append(
            {
                "target": name,
                "value": round(ratio, 2),
                "limit": DISCOVERY_P95_RATIO_MAX,
                "holds": ratio <= DISCOVERY_P95_RATIO_MAX,
            }
        )
    targets += distinct_targets(results.get("distinct"))
    targets += mode_targets(results["throughput"])
    pages = results.get("pages")
    for kind, figures in (pages or {}).get("pages", {}).items():
        targets.append(
            {
                "target": f"page '{kind}' p95 < 100 ms at N={pages['agents']}",
                "value": figures["p95_ms"],
                "limit": PAGE_P95_MS_MAX,
                "holds": figures["p95_ms"] < PAGE_P95_MS_MAX,
            }
        )
    if results.get("entities"):
        targets += _entity_targets(results["entities"])
    for phase in results["load"]:
        if phase["agents"] >= 1000:
            targets.append(
                _at_least(
                    f"bulk load ({phase['phase']}, {phase['agents']} agents) "
                    f">= {LOAD_AGENTS_PER_SECOND_MIN:g} agents/s",
                    phase["agents_per_second"],
                    LOAD_AGENTS_PER_SECOND_MIN,
                    digits=1,
                )
            )
    loaded = sum(phase["agents"] for phase in results["load"])
    seconds = sum(phase["seconds"] for phase in results["load"])
    projected = 100_000 * seconds / loaded
    targets.append(
        {
            "target": "bulk load of 100,000 agents in minutes, not hours (< 3600 s)",
            "value": round(projected, 1),
            "limit": LOAD_100K_SECONDS_MAX,
            "holds": projected < LOAD_100K_SECONDS_MAX,
            "projected": loaded != 100_000,
        }
    )
    return targets


def _holds(value: bool | None) -> str:
    return {True: "holds", False: "MISSED", None: "not measured"}[value]


def _rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for phase in results["load"]:
        rows.append(
            [
                f"load ({phase['phase']}, {phase['method']})",
                str(phase["agents"]),
                f"{phase['seconds']:.1f} s",
                "",
                f"{phase['agents_per_second']:.0f} agents/s",
            ]
        )
    for size in ("small", "full"):
        block = results["discovery"][size]
        for kind, figures in block["queries"].items():
            if not figures["supported"]:
                rows.append([f"discover {kind}", str(block["agents"]), "unsupported", "", ""])
                continue
            rows.append(
                [
                    f"discover {kind}",
                    str(block["agents"]),
                    f"{figures['p50_ms']:.1f} ms",
                    f"p95 {figures['p95_ms']:.1f} ms",
                    "",
                ]
            )
    for size in ("middle", "full"):
        block = (results.get("distinct") or {}).get(size)
        for kind, figures in (block or {}).get("queries", {}).items():
            if not figures["supported"]:
                continue
            rows.append(
                [
                    f"distinct {kind} (each URL once: {DISTINCT_LABELS[kind]})",
                    str(block["agents"]),
                    f"{figures['p50_ms']:.1f} ms",
                    f"p95 {figures['p95_ms']:.1f} ms",
                    f"{figures['mean_results']:g} results a page",
                ]
            )
    labels = {
        "home": "page /",
        "browse": "page /browse?q=<word>",
        "agent": "page /browse/agents/<id>",
    }
    pages = results.get("pages") or {"pages": {}}
    for kind, figures in pages["pages"].items():
        rows.append(
            [
                labels.get(kind, f"page {kind}"),
                str(pages["agents"]),
                f"{figures['p50_ms']:.1f} ms",
                f"p95 {figures['p95_ms']:.1f} ms",
                "",
            ]
        )
    labels = {
        "bare": "bare WSGI application (the limit)",
        "healthz": "GET /healthz",
        "card": "GET /a2a/agents/<id>",
        "card pinned": "GET /a2a/agents/<id>?version=1",
        "discover text": "GET /discover/agents?q=<word> (300 URLs repeated)",
        "discover filter": "GET /discover/agents?tag=<tag> (300 URLs repeated)",
        "discover facets": "GET /discover/agents?q=<word>&facets=tag,protocolBinding "
        "(300 URLs repeated)",
        **{
            f"distinct {kind}": f"GET /discover/agents?{label} (each URL once)"
            for kind, label in DISTINCT_LABELS.items()
        },
        "heartbeat": "POST /agents/<id>/endpoints/<eid>/heartbeat (live endpoints, beating)",
        "heartbeat reviving": "the same, each reviving an endpoint not live (each once; no target)",
    }
    blocks = [(block["agents"], block["rows"]) for block in results["throughput"].values()]
    pair_labels = {
        "discover": "GET /discover/agents?q=<word> (the A2A pair)",
        "a2a-discover": "A2A SendMessage {q: <word>} (POST /a2a/jsonrpc)",
        "ard-search": "POST /ard/search {query: {text: <word>}}",
    }
    blocks.append((results["discovery"]["full"]["agents"], results.get("pairs") or {}))
    shipped = results.get("shipped")
    if shipped:
        clients = f"built-in generator, {shipped['clients']} clients"
        shipped_labels = {
            "bare": f"bare WSGI application ({clients})",
            "card": f"GET /a2a/agents/<id>, the bench's server ({clients})",
            "served as shipped": f"GET /a2a/agents/<id>, make serve as shipped ({clients})",
        }
        blocks.append(
            (
                shipped["agents"],
                {shipped_labels[name]: figures for name, figures in shipped["rows"].items()},
            )
        )
    for agents, block in blocks:
        for name, figures in block.items():
            rows.append(
                [
                    labels.get(name) or pair_labels.get(name, name),
                    str(agents),
                    f"{figures['p50_ms']:.1f} ms",
                    f"p99 {figures['p99_ms']:.1f} ms",
                    f"{figures['requests_per_second']:.0f} req/s",
                ]
            )
    rss = (results.get("memory") or {}).get("workers_rss_mib")
    if rss:
        rows.append(["worker resident memory", "", ", ".join(f"{v:g} MiB" for v in rss), "", ""])
    return rows + _entity_rows(results.get("entities"))


HEADER = ["measurement", "N", "p50 / time", "p95 / p99", "throughput"]


def table_text(results: dict[str, Any]) -> str:
    rows = [HEADER, *_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    for target in results["targets"]:
        lines.append(f"{_holds(target['holds']):>12}  {target['target']}: {target['value']}")
    return "\n".join(lines)


def markdown(results: dict[str, Any]) -> str:
    meta = results["meta"]
    db = meta["database"]
    files = meta["commit"]["changed_files"]
    changed = f" with changes to {', '.join(files)}" if files else ""
    lines = [
        "# Benchmark results",
        "",
        f"{meta['started_at']}, commit `{meta['commit']['head']}`{changed}. "
        f"{meta['machine']['cores']} cores "
        f"({meta['machine']['cpu']}), Python {meta['machine']['python']}, "
        f"{db['vendor']} {db['version']}"
        + (f" (shared_buffers {db['shared_buffers']})" if db.get("shared_buffers") else "")
        + f", gunicorn {meta['server']['workers']} "
        f"{meta['server'].get('worker_class', 'sync')} workers, "
        f"load generator {meta['generator']['name']} ({meta['generator']['version']}), "
        f"{meta['options']['connections']} connections for {meta['options']['duration']} s; "
        f"{meta['options']['requests']} sequential requests per discovery query.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(results)]
    lines += ["", "| target | value | holds |", "|---|---|---|"]
    for target in results["targets"]:
        lines.append(f"| {target['target']} | {target['value']} | {_holds(target['holds'])} |")
    notes = [
        f"- discover {kind} at N={results['discovery'][size]['agents']}: {figures['note']}"
        for size in ("small", "full")
        for kind, figures in results["discovery"][size]["queries"].items()
        if not figures["supported"]
    ]
    notes += [
        f"- {name} at N={block['agents']}: {figures['repeated']} requests past the "
        f"{figures['urls']} URLs handed out (sent again: not first queries)"
        for block in results["throughput"].values()
        for name, figures in block["rows"].items()
        if figures.get("repeated")
    ]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def results_write(results: dict[str, Any], out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    summary = out.parent / "RESULTS.md"
    # Kept beside the run's tables: what was measured by hand or by the focused programs
    # (bench/notes.md: this run against the last, profiles, the ARD rows) and the search by
    # meaning's figures (bench/semantic.md).
    kept = [Path(__file__).parent / name for name in ("notes.md", "semantic.md")]
    summary.write_text(
        markdown(results) + "".join("\n" + path.read_text() for path in kept if path.exists())
    )
    return summary
