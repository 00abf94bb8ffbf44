"""The trust score's formula (docs/reference/trust.md): each signal a value from 0 to 1 (or
none, where it says nothing of the agent), each weighed by ``TRUST_WEIGHTS``; the score is
the weighted mean of the values the agent has, times 100, rounded half up."""

from django.conf import settings

from registry import extensions

# The score bands discovery counts (the ``trustBand`` facet), best first: (value, lowest).
BANDS = (("75-100", 75), ("50-74", 50), ("25-49", 25), ("0-24", 0))


def weighted_signals() -> list[tuple[extensions.TrustSignal, int]]:
    """The registered signals with a weight above 0, with their weight."""
    weights = settings.TRUST_WEIGHTS
    return [
        (signal, weights.get(signal.name, 0))
        for signal in extensions.trust_signals.read()
        if weights.get(signal.name, 0) > 0
    ]


def score_of(signals: dict[str, dict]) -> int:
    """The score of an agent's signals ({name: {"value": v, "weight": w, …}})."""
    counted = [
        (entry["weight"], entry["value"])
        for entry in signals.values()
        if entry["value"] is not None and entry["weight"] > 0
    ]
    total = sum(weight for weight, _ in counted)
    if not total:
        return 0
    return int(100 * sum(weight * value for weight, value in counted) / total + 0.5)


def band_of(score: int) -> str:
    return next(name for name, lowest in BANDS if score >= lowest)
