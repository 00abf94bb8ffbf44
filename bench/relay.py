"""python -m bench.relay: the queue relay's round trip, against a running registry.

Start the registry with its relay consumer and the demo's queue agent (`make run`, or
gunicorn with threads plus `manage.py relay_consume` and `manage.py queue_agent --demo`),
then run this: it finds the demo's AMQP agent by discovery and sends it `--messages` text
invoices over the queue URL (JSON-RPC, or HTTP+JSON with `--binding rest`), `--concurrency`
at a time, each waiting for the completed task (the relay's default). It reports the round
trip (request sent to completed task received: the registry, the broker both ways, the
agent, the relay consumer and the database) at p50/p95/max, and completed messages per
second. Every answer must be a completed task; anything else is counted as a failure.
"""

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid

import httpx

INVOICE = "2 x Widget @ 3.50\n1 x Gadget @ 10"


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.relay", description=__doc__)
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the registry")
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--binding", choices=["jsonrpc", "rest"], default="jsonrpc")
    parser.add_argument("--warmup", type=int, default=20, help="messages sent first, unmeasured")
    return parser.parse_args(argv)


def queue_url(base: str) -> str:
    found = httpx.get(f"{base}/discover/agents", params={"transport": "Amqp", "protocol": "A2A"})
    agent = found.json()["results"][0]
    card = httpx.get(f"{base}/a2a/agents/{agent['id']}").json()
    return card["supportedInterfaces"][0]["url"]


def request_of(url: str, binding: str) -> tuple[str, dict]:
    message = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": INVOICE}]}
    if binding == "rest":
        return f"{url}/message:send", {"message": message}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return url, body


def completed(answer: dict, binding: str) -> bool:
    task = (answer if binding == "rest" else answer.get("result") or {}).get("task") or {}
    return task.get("status", {}).get("state") == "TASK_STATE_COMPLETED"


async def drive(url: str, binding: str, count: int, concurrency: int) -> tuple[list, int, float]:
    """Send ``count`` messages, ``concurrency`` at a time: the round trips, the failures
    and the wall-clock seconds."""
    headers = {"A2A-Version": "1.0"}
    times: list[float] = []
    failures = 0
    todo = iter(range(count))

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal failures
        for _ in todo:
            target, body = request_of(url, binding)
            started = time.perf_counter()
            try:
                answer = await client.post(target, json=body, headers=headers)
                ok = answer.status_code == 200 and completed(answer.json(), binding)
            except (httpx.HTTPError, ValueError):
                ok = False
            if ok:
                times.append(time.perf_counter() - started)
            else:
                failures += 1

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        return times, failures, time.perf_counter() - started


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    url = queue_url(args.url)
    asyncio.run(drive(url, args.binding, args.warmup, args.concurrency))
    times, failures, seconds = asyncio.run(
        drive(url, args.binding, args.messages, args.concurrency)
    )
    result = {
        "binding": args.binding,
        "messages": args.messages,
        "concurrency": args.concurrency,
        "completed": len(times),
        "failures": failures,
        "p50_ms": round(statistics.median(times) * 1000, 1) if times else None,
        "p95_ms": round(percentile(times, 0.95) * 1000, 1) if times else None,
        "max_ms": round(max(times) * 1000, 1) if times else None,
        "messages_per_second": round(len(times) / seconds, 1),
    }
    print(json.dumps(result))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
