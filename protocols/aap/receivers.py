"""The AAP app's receivers: every card the A2A app stores gets its AAP status."""

from django.dispatch import receiver

from protocols.a2a.signals import card_stored
from protocols.aap.statuses.services import aap_statuses_store


@receiver(card_stored, dispatch_uid="aap-card-status")
def on_card_stored(sender, cards, **kwargs) -> None:
    aap_statuses_store(cards)
