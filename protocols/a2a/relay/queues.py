"""Whose a queue name is. The relay publishes to the queue a relayed endpoint (A2A over
AMQP) names, on the registry's own broker, so an endpoint may not name the registry's or
the job engine's queues (``queue_name_reserved``: the relay's reply and dead-letter queues,
the webhook queue, ``celery``, and QUEUE_RELAY_RESERVED_PREFIXES), nor a queue another
owner's endpoint named first (``QueueClaim``, kept per owner by ``queue_names_claim`` from
every write of an agent's endpoints or owner, and released when its owner has no relayed
endpoint on it any more).
"""

from django.conf import settings

from protocols.a2a.models import QueueClaim
from registry.agents.models import Agent, Endpoint
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError

MAX_NAME_BYTES = 255  # AMQP's short string


def is_relayed(endpoint: Endpoint) -> bool:
    return (
        endpoint.transport == Endpoint.Transport.AMQP and endpoint.protocol == Endpoint.Protocol.A2A
    )


def queue_name_reserved(name: str) -> bool:
    """Whether ``name`` is one of the registry's or the job engine's queues."""
    exact = {
        "celery",
        settings.WEBHOOK_QUEUE,
        settings.QUEUE_RELAY_REPLY_QUEUE,
        settings.QUEUE_RELAY_DEAD_LETTER_QUEUE,
    }
    prefixes = tuple(settings.QUEUE_RELAY_RESERVED_PREFIXES)
    return name in exact or (bool(prefixes) and name.startswith(prefixes))


def _owner_names(owner: str) -> set[str]:
    return set(
        Endpoint.objects.filter(
            agent__owner=owner,
            transport=Endpoint.Transport.AMQP,
            protocol=Endpoint.Protocol.A2A,
        )
        .exclude(agent__status=Agent.Status.RETIRED)  # nothing is relayed to those
        .values_list("address", flat=True)
    )


def _refused(status: int, slug: str, path: str, message: str) -> ProblemError:
    return ProblemError(status, slug, f"{path} {message}.", [Problem(path, message)])


def _claim(name: str, owner: str, path: str) -> None:
    claim, made = QueueClaim.objects.select_for_update().get_or_create(
        name=name, defaults={"owner": owner}
    )
    if made or claim.owner == owner:
        return
    if name in _owner_names(claim.owner):
        raise _refused(
            409,
            "queue-name-taken",
            path,
            f"names the queue {name!r}, which another owner's agent uses",
        )
    claim.owner = owner  # its owner left it: released to whoever asks first
    claim.save(update_fields=["owner"])


def queue_names_claim(agent: Agent, *, created: bool = False) -> None:
    """Refuse (ProblemError, naming the endpoint's address) a relayed endpoint of ``agent``
    that names a reserved queue or one another owner holds; else claim its queue for the
    agent's owner, and release the owner's claims none of its endpoints names any more
    (``created``: a new agent, which can have left none, so none is looked for)."""
    endpoints = sorted(agent.endpoints.all(), key=lambda e: e.position)
    if created and not any(is_relayed(endpoint) for endpoint in endpoints):
        return  # a bulk import's thousands of agents: no query each
    for index, endpoint in enumerate(endpoints):
        if not is_relayed(endpoint):
            continue
        path, name = f"endpoints[{index}].address", endpoint.address
        if len(name.encode()) > MAX_NAME_BYTES:
            raise _refused(400, "validation-error", path, f"is longer than {MAX_NAME_BYTES} bytes")
        if queue_name_reserved(name):
            raise _refused(
                400,
                "validation-error",
                path,
                f"names the queue {name!r}, which the registry reserves for its own use "
                "(docs/guides/queue-agent.md)",
            )
        _claim(name, agent.owner, path)
    QueueClaim.objects.filter(owner=agent.owner).exclude(
        name__in=_owner_names(agent.owner)
    ).delete()
