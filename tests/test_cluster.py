"""Past one machine, live: two registry nodes (each its web server, event stream server,
embedding service, job scheduler, relay consumer and var folder) on a PostgreSQL primary and
its streaming replica of their own, one Redis, one RabbitMQ, behind a round-robin front
(bench/cluster.py, what ``make cluster`` starts; the fixture in tests/cluster_support.py).
Each scenario of docs/operations/scale.md is asserted here: a write read at once through
the other node, every node serving it within a second, reads on the replica and a replica
too far behind skipped, each event on each stream once, the nodes' search by meaning
converging, one scheduler sending the jobs, the replica stopped and started again, each
webhook delivered once whichever node's worker sends it, a relayed task's replies reaching
it whichever node's consumer takes them, a relay consumer killed mid-run losing no reply it
took, and a node killed mid-run losing nothing it acknowledged."""

import json
import re
import threading
import time
import urllib.request

import psycopg
import pytest

# Its helpers' assertions read as the tests' own (it is also loaded as a plugin, below).
pytest.register_assert_rewrite("tests.cluster_support")

from bench.cluster import DATABASE  # noqa: E402
from tests.cluster_support import (  # noqa: E402
    MAX_LAG,
    call,
    queue_counts,
    ready,
    register,
    relay_send,
    relay_state,
    relay_task_states,
    replica_reads,
    replica_sql,
    until,
)
from tests.conftest import NATIVE_PAYLOAD  # noqa: E402

# The cluster chooses its own databases: CI's PostgreSQL pass leaves this file out.
pytestmark = pytest.mark.database_independent

pytest_plugins = ["tests.https_server", "tests.cluster_support"]


def test_a_writer_reads_its_write_at_once_through_the_other_node_while_others_read_the_replica(
    cluster,
):
    one, two = cluster.nodes
    register(one.url, cluster.key, "Warmup")
    cluster.pair.replica_caught_up()
    replica_sql(cluster, "SELECT pg_wal_replay_pause()")
    try:
        agent = register(one.url, cluster.key, "Ledgerwise", caller="10.9.0.1")
        # The writer, through the other node: from the primary (its write's WAL position
        # is not replayed); the card too, on the lean lane.
        assert call(f"{two.url}/agents/{agent}", caller="10.9.0.1")[0] == 200
        assert call(f"{two.url}/a2a/agents/{agent}", caller="10.9.0.1")[0] == 200
        # Anyone else reads the replica, which has not replayed it yet.
        assert call(f"{two.url}/agents/{agent}", caller="10.9.0.2")[0] == 404
        assert call(f"{two.url}/a2a/agents/{agent}", caller="10.9.0.2")[0] == 404
        # Once it is further behind than DATABASE_REPLICA_MAX_LAG_SECONDS it is skipped.
        answer = until(
            lambda: (r := ready(two))["checks"]["replica1"] == "degraded" and r,
            MAX_LAG + 5,
            "the replica skipped",
        )
        assert answer["status"] == "degraded"
        assert answer["replicaLagSeconds"]["replica1"] > MAX_LAG
        # That answer is one web process's; each of the node's processes looks at the
        # replica again within DATABASE_REPLICA_CHECK_SECONDS (0.2 s here), then reads the
        # primary: four reads in a row (whichever process takes each) answered from it.
        until(
            lambda: all(
                call(f"{two.url}/agents/{agent}", caller="10.9.0.2")[0] == 200 for _ in range(4)
            ),
            2,
            "every process of node 2 skipping the replica",
        )
    finally:
        replica_sql(cluster, "SELECT pg_wal_replay_resume()")
    answer = until(
        lambda: (r := ready(two))["checks"]["replica1"] == "ok" and r, 10, "the replica used again"
    )
    assert answer["replicaLagSeconds"]["replica1"] < MAX_LAG


def test_a_write_on_one_node_is_served_by_every_node_within_a_second(cluster):
    one, two = cluster.nodes
    for writer, reader, name in ((one, two, "Quillfeather"), (two, one, "Inkwellspring")):
        agent = register(writer.url, cluster.key, name, caller="10.9.1.1")
        written = time.monotonic()
        before = replica_reads(cluster)
        while True:
            card = call(f"{reader.url}/a2a/agents/{agent}", caller="10.9.1.2")[0]
            _, found = call(f"{reader.url}/discover/agents?q={name}", caller="10.9.1.2")
            seen = [card, [a["id"] for a in found["results"]]]
            if seen == [200, [agent]]:
                break
            assert time.monotonic() - written < 1.0, f"{name} on {reader.name}: {seen}"
            time.sleep(0.02)
        # Those reads were the replica's.
        until(lambda b=before: replica_reads(cluster) > b, 5, "reads on the replica")


class Stream(threading.Thread):
    """The events of a node's GET /events, as they come."""

    def __init__(self, node):
        # Left open: a daemon thread, ended with the cluster.
        super().__init__(daemon=True)
        self.response = urllib.request.urlopen(f"{node.events_url}/events", timeout=30)
        self.events: list[tuple[int, str, str]] = []
        self.start()

    def run(self):
        frame = {}
        for raw in self.response:
            line = raw.decode().rstrip("\n")
            if line.startswith(("id: ", "event: ", "data: ")):
                field, value = line.split(": ", 1)
                frame[field] = value
            elif not line and "data" in frame:
                subject = json.loads(frame["data"]).get("subject")
                self.events.append((int(frame["id"]), frame["event"], subject))
                frame = {}


def test_each_event_reaches_each_nodes_stream_once(cluster):
    streams = [Stream(node) for node in cluster.nodes]
    agents = [
        register(node.url, cluster.key, f"Streamwright{number}")
        for number, node in enumerate(cluster.nodes * 2)
    ]

    def complete():
        return all(
            {s for _, t, s in stream.events if t == "agent.created"} >= set(agents)
            for stream in streams
        )

    until(complete, 10, "every agent.created on both streams")
    time.sleep(0.3)  # a duplicate, if any, would come with the next batch
    for stream in streams:
        created = [s for _, t, s in stream.events if t == "agent.created"]
        assert sorted(created) == sorted(agents)
        ids = [i for i, _, _ in stream.events]
        assert ids == sorted(set(ids))


def test_each_nodes_search_by_meaning_converges_on_the_same_vectors(cluster):
    agent = register(
        cluster.nodes[0].url,
        cluster.key,
        "Harborpilot",
        description="Guides container ships through the harbour to their berth.",
    )
    query = "discover/agents?q=harbour+ship+pilot&mode=semantic&limit=50"

    def orders():
        found = [call(f"{node.url}/{query}", caller="10.9.2.1")[1] for node in cluster.nodes]
        ids = [[a["id"] for a in page["results"]] for page in found]
        return ids if all(agent in order for order in ids) else None

    first, second = until(orders, 10, "the new agent in both nodes' semantic search")
    assert first == second


def test_each_webhook_is_delivered_once_whichever_nodes_worker_sends_it(cluster, receiver):
    status, created = call(
        f"{cluster.base_url}/subscriptions",
        caller="10.9.5.1",
        method="POST",
        body={"url": receiver.url()},
        key=cluster.key,
    )
    assert status == 201, created
    receiver.secret = created["secret"]
    shown = f"{cluster.base_url}/subscriptions/{created['id']}"
    until(
        lambda: call(shown, caller="10.9.5.1", key=cluster.key)[1]["status"] == "active",
        30,
        "the subscription verified by a node's webhook worker",
    )
    agents = [
        register(node.url, cluster.key, f"Hookwright{letter}", caller="10.9.5.1")
        for letter, node in zip("abcd", cluster.nodes * 2, strict=True)
    ]

    def created_subjects():
        return [
            r["event"]["subject"]
            for r in receiver.received
            if r["event"]["type"] == "org.a2a-registry.agent.created"
        ]

    until(lambda: set(created_subjects()) >= set(agents), 30, "every agent.created delivered")
    time.sleep(0.5)  # a second delivery, if any, would come with the next job
    assert sorted(s for s in created_subjects() if s in agents) == sorted(agents)
    ids = [r["event"]["id"] for r in receiver.received]
    assert len(ids) == len(set(ids))
    assert receiver.bad_signatures == 0 and receiver.verifications == 1


def test_exactly_one_scheduler_sends_the_jobs_and_another_takes_over(cluster):
    def leaders():
        return [n for n in cluster.nodes if "This scheduler sends the jobs" in n.log("beat")]

    (leader,) = until(leaders, 15, "a scheduler leading")
    with psycopg.connect(cluster.pair.url(DATABASE), autocommit=True) as primary:
        held = primary.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
        ).fetchone()[0]
    assert held == 1
    leader.kill("beat")
    (other,) = [n for n in cluster.nodes if n is not leader]
    until(lambda: other in leaders(), 15, "the other scheduler taking over")


def test_reads_go_on_while_the_replica_is_stopped_and_return_to_it_when_it_is_back(cluster):
    front = cluster.base_url
    agent = register(front, cluster.key, "Tidewatcher")
    cluster.pair.replica_stop()
    try:
        for _ in range(6):  # each node's lean lane and Django's path
            assert call(f"{front}/a2a/agents/{agent}", caller="10.9.3.1")[0] == 200
            assert call(f"{front}/agents/{agent}", caller="10.9.3.1")[0] == 200
        for node in cluster.nodes:
            assert ready(node)["checks"]["replica1"] == "degraded"
        written = register(front, cluster.key, "Stillwriting", caller="10.9.3.2")
    finally:
        cluster.pair.replica_start()
    for node in cluster.nodes:
        until(lambda n=node: ready(n)["checks"]["replica1"] == "ok", 15, "the replica back")
    before = replica_reads(cluster)
    assert call(f"{front}/agents/{written}", caller="10.9.3.3")[0] == 200
    until(lambda: replica_reads(cluster) > before, 5, "reads on the replica again")


COMPLETED = "TASK_STATE_COMPLETED"


def test_a_relayed_tasks_replies_reach_it_whichever_nodes_consumer_takes_them(cluster, relay_agent):
    one, two = cluster.nodes
    endpoint, key = relay_agent["endpoint"], cluster.key
    one.kill("relay")  # node 1 sends the task; only node 2's consumer can take its replies
    try:
        until(lambda: cluster_consumers(cluster) == 1, 10, "node 1's consumer gone")
        task = relay_send(one, endpoint, key, "2 x Widget @ 3.50")
        assert task["status"]["state"] == COMPLETED  # node 1's wait saw node 2's write
        assert relay_agent["executor"].ran.count(task["id"]) == 1
        for node in (one, two):
            assert relay_state(node, endpoint, key, task["id"]) == COMPLETED
        # A GET is a public read, a replica's: it has the consumer's write within a second.
        rest = f"{two.url}/a2a/queue/{endpoint}/tasks/{task['id']}"
        until(
            lambda: (
                call(rest, caller="10.9.6.3", key=key, headers={"A2A-Version": "1.0"})[1]
                .get("status", {})
                .get("state")
                == COMPLETED
            ),
            1,
            "the completed task read through node 2's REST binding",
        )
    finally:
        one.restart("relay")


def cluster_consumers(cluster) -> int:
    return queue_counts(cluster.reply_queue)[1]


def test_a_relay_consumer_killed_mid_run_loses_no_reply(cluster, relay_agent):
    """Replies wait while no consumer runs; node 2's consumer takes them, is held on the
    fourth task's row (a lock of the test's) with replies taken and not yet acknowledged,
    and is killed there; node 1's consumer then applies every reply, none twice."""
    one, two = cluster.nodes
    endpoint, key = relay_agent["endpoint"], cluster.key
    for node in (one, two):
        node.kill("relay")
    until(lambda: cluster_consumers(cluster) == 0, 10, "no consumer")
    sent = [
        relay_send(node, endpoint, key, f"{n} x Bolt @ 1", at_once=True)["id"]
        for n, node in enumerate((one, two) * 4, start=1)
    ]
    executor = relay_agent["executor"]
    until(lambda: set(executor.ran) >= set(sent), 20, "every task run by the agent")
    replies = until(
        lambda: (n := queue_counts(cluster.reply_queue)[0]) >= 3 * len(sent) and n, 10, "replies"
    )
    with psycopg.connect(cluster.pair.url(DATABASE)) as locker:
        locker.execute("SELECT 1 FROM a2a_relaytask WHERE id = %s FOR UPDATE", [sent[3]])
        two.restart("relay")
        until(lambda: waiting_for_lock(cluster), 30, "node 2's consumer held on the lock")
        before = relay_task_states(cluster, sent)
        assert [before[t] for t in sent[:3]] == [COMPLETED] * 3  # applied and acknowledged
        assert before[sent[3]] != COMPLETED
        two.kill("relay")
        # What it had taken and not acknowledged is back on the queue, the first three
        # tasks' replies gone from it for good.
        left = until(
            lambda: (c := queue_counts(cluster.reply_queue))[1] == 0 and c[0],
            10,
            "the replies it held back on the queue",
        )
        assert left == replies - 3 * (replies // len(sent))
        locker.rollback()
    one.restart("relay")
    until(
        lambda: set(relay_task_states(cluster, sent).values()) == {COMPLETED},
        30,
        lambda: relay_task_states(cluster, sent),
    )
    for number, task in enumerate(sent):
        assert relay_state(cluster.nodes[number % 2], endpoint, key, task) == COMPLETED
    until(lambda: queue_counts(cluster.reply_queue)[0] == 0, 10, "the reply queue empty")
    assert queue_counts(cluster.dead_letter_queue)[0] == 0  # no reply applied twice
    two.restart("relay")


def waiting_for_lock(cluster) -> bool:
    with psycopg.connect(cluster.pair.url(DATABASE), autocommit=True) as primary:
        return (
            primary.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            ).fetchone()[0]
            > 0
        )


def test_a_node_killed_mid_run_loses_nothing_it_acknowledged(cluster):
    one, two = cluster.nodes
    acknowledged, failed = [], []

    def writer():
        for number in range(24):
            try:
                status, body = call(
                    f"{cluster.base_url}/agents",
                    caller="10.9.4.1",
                    method="POST",
                    body={**NATIVE_PAYLOAD, "name": f"Survivor {number}"},
                    key=cluster.key,
                )
            except OSError:
                status, body = 0, None
            (acknowledged if status == 201 else failed).append(body and body.get("id"))

    thread = threading.Thread(target=writer)
    thread.start()
    until(lambda: len(acknowledged) >= 6, 20, "writes before the kill")
    one.kill()
    thread.join(60)
    assert len(acknowledged) + len(failed) == 24
    assert len(failed) <= 1  # the one in flight on the killed node, if any
    for agent in acknowledged:
        assert call(f"{cluster.base_url}/agents/{agent}", caller="10.9.4.1")[0] == 200
    status, page = call(f"{two.url}/discover/agents?q=Survivor&limit=50", caller="10.9.4.2")
    assert status == 200
    assert {a["id"] for a in page["results"]} >= set(acknowledged)
    assert re.fullmatch(r"ok|degraded", ready(two)["status"])
