"""The results: targets checked, a table on the terminal, JSON and a Markdown summary."""

import json
from pathlib import Path
from typing import Any

from bench.report_distinct import DISTINCT_LABELS
from bench.targets import entity_rows


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
    return rows + entity_rows(results.get("entities"))


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
