"""Typical /discover/agents queries, with terms varied from the generated vocabulary."""

import json
import random
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from bench.database import BenchError
from bench.generate import AUDIENCES, ORG_FIRST, ORGS, TAGS, query_words, skill_names
from bench.loadgen import percentile, requests_sequential

QUERY_KINDS = {
    "text": "q=<word>",
    "text+skill": "q=<word>&capability=<skill name>",
    "filter": "tag=<tag>",
    "facets": "q=<word>&facets=tag,protocolBinding",
    "text+liveOnly": "q=<word>&liveOnly=true (the words of 'text')",
    "filter+minTrust": "tag=<tag>&minTrust=50 (the tags of 'filter')",
    "filter+sortTrust": "tag=<tag>&sort=trust (the tags of 'filter')",
}


def query_paths(kind: str, count: int, seed: int) -> list[str]:
    """`count` discovery URLs of one kind; the same list at every database size."""
    if kind == "text+liveOnly":  # the same queries as "text", compared with them
        return [f"{path}&liveOnly=true" for path in query_paths("text", count, seed)]
    if kind == "filter+minTrust":  # the same queries as "filter", compared with them
        return [f"{path}&minTrust=50" for path in query_paths("filter", count, seed)]
    if kind == "filter+sortTrust":
        return [f"{path}&sort=trust" for path in query_paths("filter", count, seed)]
    rng = random.Random(f"{seed}-{kind}")
    words = query_words() + [a.split()[-1] for a in AUDIENCES] + [o.lower() for o in ORG_FIRST]
    skills = skill_names()
    paths = []
    for _ in range(count):
        if kind == "text":
            params = {"q": rng.choice(words)}
        elif kind == "text+skill":
            params = {"q": rng.choice(words), "capability": rng.choice(skills)}
        elif kind == "filter":
            params = {"tag": rng.choice(TAGS)}
        else:
            params = {"q": rng.choice(words), "facets": "tag,protocolBinding"}
        paths.append(f"/discover/agents?{urlencode(params)}")
    return paths


def discovery_warm(port: int, seed: int) -> None:
    """A few queries of each kind first, so worker start-up is not in the figures."""
    for kind in QUERY_KINDS:
        requests_sequential(port, query_paths(kind, 6, seed + 1))


def discovery_measure(port: int, kind: str, paths: list[str]) -> dict[str, Any]:
    """p50/p95 of the queries, or why they could not be measured."""
    first = requests_sequential(port, paths[:1])[0]
    if kind == "facets":
        unsupported = _facets_unsupported(first.status, first.body)
        if unsupported:
            return {"supported": False, "note": unsupported, "requests": 0}
    answers = requests_sequential(port, paths)
    failed = [a for a in answers if a.status != 200]
    if failed:
        raise BenchError(
            f"discovery query '{kind}' answered {failed[0].status}: {failed[0].body[:300]!r}"
        )
    latencies = sorted(a.seconds for a in answers)
    results = [len(json.loads(a.body).get("results", [])) for a in answers]
    return {
        "supported": True,
        "requests": len(answers),
        "p50_ms": round(percentile(latencies, 50) * 1000, 3),
        "p95_ms": round(percentile(latencies, 95) * 1000, 3),
        "max_ms": round(latencies[-1] * 1000, 3),
        "mean_results": round(sum(results) / len(results), 1),
        "empty_pages": sum(1 for r in results if r == 0),
    }


def _facets_unsupported(status: int, body: bytes) -> str | None:
    if status == 400:
        return "the server answers 400 to the facets parameter"
    if status == 200 and "facets" not in json.loads(body):
        return "the server ignores the facets parameter (no facets in the answer)"
    return None


# The A2A discovery message's JSON-RPC call, with the text query of "text" as its data part.
A2A_HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}


def a2a_message_line(query: str, n: int) -> str:
    """A paths-file line: a JSON-RPC SendMessage to /a2a/jsonrpc whose data part is the
    discovery query ``{"q": query}``, the same search as /discover/agents?q=<query>."""
    message = {
        "role": "ROLE_USER",
        "messageId": f"bench-{n}",
        "parts": [{"data": {"q": query}}],
    }
    body = {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": message}}
    return "POST /a2a/jsonrpc " + json.dumps(body, separators=(",", ":"))


def throughput_pairs(count: int, seed: int) -> tuple[list[str], list[str]]:
    """The same text queries twice: as GET /discover/agents?q= paths, and as A2A messages."""
    paths = query_paths("text", count, seed)
    queries = [parse_qs(urlsplit(path).query)["q"][0] for path in paths]
    return paths, [a2a_message_line(q, n) for n, q in enumerate(queries)]


def a2a_answer_check(port: int, search: str, message: str) -> None:
    """The A2A message must answer what the GET answers (a message whose data part lists
    the same agents): otherwise its throughput would measure errors."""
    import http.client

    from bench.loadgen import HOST, request_line

    _, path, body = request_line(message)
    connection = http.client.HTTPConnection(HOST, port, timeout=120)
    try:
        connection.request("POST", path, body=body, headers=A2A_HEADERS)
        answer = json.loads(connection.getresponse().read())
    finally:
        connection.close()
    listed = json.loads(requests_sequential(port, [search])[0].body)["results"]
    parts = answer.get("result", {}).get("message", {}).get("parts", [])
    data = next((part["data"] for part in parts if "data" in part), None)
    if not isinstance(data, dict) or "agents" not in data:
        raise BenchError(f"the A2A discovery message was not answered: {answer!r:.300}")
    if [a["id"] for a in data["agents"]] != [a["id"] for a in listed]:
        raise BenchError("the A2A discovery message found other agents than the GET")


ARD_HEADERS = {"Content-Type": "application/json"}


def ard_search_lines(paths: list[str]) -> list[str]:
    """The same text queries as POST /ard/search bodies (federation none: the registry alone),
    ranked by the same search as GET /discover/agents?q=<query>."""
    lines = []
    for path in paths:
        query = parse_qs(urlsplit(path).query)["q"][0]
        body = {"query": {"text": query}, "federation": "none", "pageSize": 20}
        lines.append("POST /ard/search " + json.dumps(body, separators=(",", ":")))
    return lines


def catalog_build_measure() -> dict[str, Any]:
    """Assemble the AI Catalog from the stored entries once, in this process, and time it."""
    import time

    from protocols.ard.catalog.document import catalog_build
    from protocols.ard.models import CatalogEntry, CatalogPage

    started = time.perf_counter()
    pages = catalog_build()
    seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 3),
        "entries": CatalogEntry.objects.filter(listed=True).count(),
        "pages": pages,
        "root_bytes": len(bytes(CatalogPage.objects.get(number=0).body)),
    }


# Distinct queries: URLs that never repeat within a run, as people and agents ask (a person
# types a word, then a second, adds a filter; an agent asks with its own task's words). No
# answer of one can come from a cache the others filled.
DISTINCT_KINDS = {
    "text": "q=<word> <prefix of a word>",
    "text+filter": "q=<prefix of a word>&tag=<tag>",
    "filter": "tag=<tag>[&protocolBinding=<binding>][&streaming=<flag>]&sort=<sort>&limit=<n>",
    "facets": "q=<word> <prefix of a word>&facets=tag,protocolBinding",
    "text+liveOnly": "q=<word> <prefix of a word>&liveOnly=true",
}
# The default mode's first queries with each other filter kind the API has, beside the tag
# of "text+filter" (a person typing, then adding a filter): {kind: (parameter, values)}.
# The provider is asked lower-cased (the filter is case-insensitive); the protocol keeps
# every agent of the benchmark (all are A2A); streaming is a card's flag fact.
FILTER_KINDS = {
    "text+capability": ("capability", tuple(name.lower() for name in skill_names())),
    "text+provider": ("provider", tuple(org.lower() for org, _ in ORGS)),
    "text+protocol": ("protocol", ("A2A",)),
    "text+binding": ("protocolBinding", ("JSONRPC", "HTTP+JSON", "GRPC")),
    "text+fact": ("streaming", ("true", "false")),
}
DISTINCT_KINDS.update(
    {
        kind: f"q=<word> <prefix of a word>&{name}=<value>"
        for kind, (name, _) in FILTER_KINDS.items()
    }
)


def _prefixes(word: str) -> list[str]:
    """What a person has typed of ``word`` on the way to it: 3 letters, 4, ..., all of it."""
    return [word[:n] for n in range(min(3, len(word)), len(word) + 1)]


def _distinct_params(kind: str) -> list[dict[str, str]]:
    words = sorted(
        set(query_words() + [a.split()[-1].lower() for a in AUDIENCES])
        | {o.lower() for o in ORG_FIRST}
    )
    if kind in ("text", "facets", "text+liveOnly"):
        extra = {"facets": {"facets": "tag,protocolBinding"}, "text+liveOnly": {"liveOnly": "true"}}
        more = extra.get(kind, {})
        return [
            {"q": f"{first} {typed}", **more}
            for first in words
            for second in words
            if second != first
            for typed in _prefixes(second)
        ]
    if kind == "text+filter":
        return [
            {"q": typed, "tag": tag} for word in words for typed in _prefixes(word) for tag in TAGS
        ]
    if kind in FILTER_KINDS:
        # Two words, the second being typed, as the "text" kind, each with one value of
        # the filter (in turn): URLs enough for any row's run, none asked twice.
        name, values = FILTER_KINDS[kind]
        typed_pairs = [
            (first, typed)
            for first in words
            for second in words
            if second != first
            for typed in _prefixes(second)
        ]
        return [
            {"q": f"{first} {typed}", name: values[number % len(values)]}
            for number, (first, typed) in enumerate(typed_pairs)
        ]
    if kind == "filter":
        found = []
        for tag in TAGS:
            for binding in ("", "JSONRPC", "HTTP+JSON", "GRPC"):
                for streaming in ("", "true", "false"):
                    for sort in ("recent", "name"):
                        for limit in range(10, 55, 5):
                            params = {"tag": tag}
                            if binding:
                                params["protocolBinding"] = binding
                            if streaming:
                                params["streaming"] = streaming
                            found.append({**params, "sort": sort, "limit": str(limit)})
        return found
    raise ValueError(kind)


class DistinctQueries:
    """Every URL of one distinct kind, shuffled by the seed; ``take`` hands each out once
    in a run (so no row can answer from a page another row cached)."""

    def __init__(self, kind: str, seed: int):
        self.kind = kind
        # dict.fromkeys: a word that is a prefix of another one gives a URL twice.
        self.paths = list(
            dict.fromkeys(f"/discover/agents?{urlencode(p)}" for p in _distinct_params(kind))
        )
        random.Random(f"{seed}-distinct-{kind}").shuffle(self.paths)
        self.used = 0

    def take(self, count: int) -> list[str]:
        """The next ``count`` URLs never handed out (fewer when the kind runs out)."""
        taken = self.paths[self.used : self.used + count]
        self.used += len(taken)
        return taken

    def left(self) -> int:
        return len(self.paths) - self.used


def distinct_pools(seed: int) -> dict[str, DistinctQueries]:
    return {kind: DistinctQueries(kind, seed) for kind in DISTINCT_KINDS}
