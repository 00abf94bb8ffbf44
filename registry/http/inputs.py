"""What every request body's serializer shares: a member the endpoint does not know is a
400 naming it (a misspelt ``descripton`` would otherwise change nothing without a word, as
a misspelt query parameter would widen a list: ``params.params_check``), and a choice that
is not one lists the choices, as discovery's parameters do."""

from collections.abc import Iterable, Mapping
from typing import Any

from rest_framework import serializers

from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError


def unknown_message(known: Iterable[str]) -> str:
    return f"is not a member of this body; it takes {', '.join(sorted(known))}"


def members_check(body: Any, known: Iterable[str], path: str = "") -> None:
    """Refuse a body object with members ``known`` does not list (the bodies that no
    serializer reads): a 400 naming each."""
    if not isinstance(body, Mapping):
        return
    known = set(known)
    unknown = [name for name in body if name not in known]
    if unknown:
        names = ", ".join(unknown)
        raise ProblemError(
            400,
            "validation-error",
            f"Unknown member{'s' if len(unknown) > 1 else ''} {names}; "
            f"this body takes {', '.join(sorted(known))}.",
            [
                Problem(f"{path}.{name}" if path else name, unknown_message(known))
                for name in unknown
            ],
        )


class ChoiceField(serializers.ChoiceField):
    """DRF's ChoiceField whose refusal lists the choices."""

    default_error_messages = {"invalid_choice": "must be one of {choices}, not '{input}'"}

    def fail(self, key, **kwargs):
        if key == "invalid_choice":
            kwargs["choices"] = ", ".join(str(choice) for choice in self.choices)
        return super().fail(key, **kwargs)


# The base of every request body's serializer: unknown members are refused, each named
# with its path, beside the other problems of the body. (No docstring: the OpenAPI
# document would show it as every request body's description.)
# The members of the resource as it is read (``output_members``: ``id``, ``createdAt`` …) are
# not unknown: they are ignored, so a body read with GET can be sent back with changes.
class InputSerializer(serializers.Serializer):
    def output_members(self) -> Iterable[str]:
        return ()

    def to_internal_value(self, data):
        known = [name for name, field in self.fields.items() if not field.read_only]
        unknown = {}
        if isinstance(data, Mapping):
            shown = set(self.output_members())
            unknown = {
                name: [unknown_message(known)]
                for name in data
                if name not in known and name not in shown
            }
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**exc.detail, **unknown}) from None
            raise
        if unknown:
            raise serializers.ValidationError(unknown)
        return value
