"""Who owns an agent, and how it changes hands: a transfer its owner offers and the
receiving owner accepts (either side may cancel; it expires after TRANSFER_EXPIRY_SECONDS),
and the move itself, which domain claims use too (registry.agents.claims).

Every step is audited (``transfer.requested``, ``transfer.accepted``,
``transfer.cancelled``, ``transfer.expired``); a move sends ``agent_owner_changed``
(registry.signals) inside its transaction. Write access follows ``Agent.owner``, so the
old owner's keys lose it in the transaction that moves the agent.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from registry.access.audit import audit_record
from registry.agents import services
from registry.agents.lifecycle import agent_writable
from registry.agents.models import Agent, OwnershipTransfer
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.signals import agent_owner_changed


def agent_owner_move(*, agent: Agent, owner: str, reason: str) -> Agent:
    """Give the agent to ``owner`` (call inside a transaction): the agent's write,
    ``agent_owner_changed`` and the audit entry of the write."""
    previous = agent.owner
    agent = services.agent_update(agent=agent, owner=owner, audit_action=f"agent.owner-{reason}")
    agent_owner_changed.send(
        sender=Agent, agent=agent, previous_owner=previous, owner=owner, reason=reason
    )
    return agent


def _audit(action: str, transfer: OwnershipTransfer, **after) -> None:
    audit_record(
        action,
        agent_id=transfer.agent_id,
        object_repr=f"{transfer.from_owner} -> {transfer.to_owner}",
        after={"transfer": str(transfer.id), "state": transfer.state, **after},
    )


@transaction.atomic
def transfer_request(*, agent: Agent, to_owner: str) -> OwnershipTransfer:
    agent = Agent.objects.select_for_update().get(pk=agent.pk)
    agent_writable(agent)
    if to_owner == agent.owner:
        raise ProblemError(
            400,
            "validation-error",
            f"toOwner is already the owner of agent {agent.id}.",
            [Problem("toOwner", "is the agent's owner already")],
        )
    _expire(OwnershipTransfer.objects.filter(agent=agent), timezone.now())
    if OwnershipTransfer.objects.filter(
        agent=agent, state=OwnershipTransfer.State.PENDING
    ).exists():
        raise ProblemError(
            409,
            "transfer-pending",
            f"Agent {agent.id} has a pending transfer already: cancel it first.",
        )
    transfer = OwnershipTransfer.objects.create(
        agent=agent,
        from_owner=agent.owner,
        to_owner=to_owner,
        expires_at=timezone.now() + timedelta(seconds=settings.TRANSFER_EXPIRY_SECONDS),
    )
    _audit("transfer.requested", transfer, expiresAt=transfer.expires_at.isoformat())
    return transfer


def _pending(transfer: OwnershipTransfer) -> OwnershipTransfer:
    """The transfer locked, if still pending (409 otherwise)."""
    transfer = OwnershipTransfer.objects.select_for_update().get(pk=transfer.pk)
    if transfer.state != OwnershipTransfer.State.PENDING:
        raise ProblemError(
            409, "transfer-closed", f"Transfer {transfer.id} is {transfer.state}, not pending."
        )
    return transfer


def _expire_first(transfer: OwnershipTransfer) -> None:
    """An offer past its time is marked expired (committed) before anyone answers it."""
    with transaction.atomic():
        _expire(OwnershipTransfer.objects.filter(pk=transfer.pk), timezone.now())


def transfer_accept(*, transfer: OwnershipTransfer) -> OwnershipTransfer:
    _expire_first(transfer)
    with transaction.atomic():
        transfer = _pending(transfer)
        agent = Agent.objects.select_for_update().get(pk=transfer.agent_id)
        if agent.owner != transfer.from_owner or agent.status == Agent.Status.RETIRED:
            transfer.state = OwnershipTransfer.State.CANCELLED
            transfer.decided_at = timezone.now()
            transfer.save(update_fields=["state", "decided_at"])
            _audit("transfer.cancelled", transfer, why="the agent changed since the offer")
            closed = True
        else:
            agent_owner_move(agent=agent, owner=transfer.to_owner, reason="transfer")
            transfer.state = OwnershipTransfer.State.ACCEPTED
            transfer.decided_at = timezone.now()
            transfer.save(update_fields=["state", "decided_at"])
            _audit("transfer.accepted", transfer)
            closed = False
    if closed:  # the cancellation stays: the refusal is raised after it committed
        raise ProblemError(
            409,
            "transfer-closed",
            f"Agent {agent.id} changed owner or was retired since the offer; the transfer "
            "is cancelled.",
        )
    return transfer


def transfer_cancel(*, transfer: OwnershipTransfer) -> OwnershipTransfer:
    _expire_first(transfer)
    with transaction.atomic():
        transfer = _pending(transfer)
        transfer.state = OwnershipTransfer.State.CANCELLED
        transfer.decided_at = timezone.now()
        transfer.save(update_fields=["state", "decided_at"])
        _audit("transfer.cancelled", transfer)
    return transfer


def _expire(transfers, now: datetime) -> int:
    expired = list(
        transfers.select_for_update().filter(
            state=OwnershipTransfer.State.PENDING, expires_at__lte=now
        )
    )
    for transfer in expired:
        transfer.state = OwnershipTransfer.State.EXPIRED
        transfer.decided_at = now
        transfer.save(update_fields=["state", "decided_at"])
        _audit("transfer.expired", transfer)
    return len(expired)


@transaction.atomic
def transfers_expire(now: datetime | None = None) -> int:
    """Mark pending transfers past their expiry as expired (the job, ``manage.py
    transfers_expire``); returns how many."""
    return _expire(OwnershipTransfer.objects.all(), now or timezone.now())
