"""Opening hours in Schema.org's two spellings, open or not at a moment in the entity's own
time zone, and the zone from coordinates or a one-zone country."""

from datetime import UTC, datetime

import pytest

from protocols.entities.cards.hours import (
    hours_from_specification,
    hours_from_text,
    open_now,
    time_zone_of,
)

LATE_BAR = hours_from_text("Mo-Fr 18:00-02:00; Sa 12:00-14:00,19:00-23:00")


def test_both_spellings_read_into_one_shape():
    assert LATE_BAR == [
        {"days": ["Mo", "Tu", "We", "Th", "Fr"], "opens": "18:00", "closes": "02:00"},
        {"days": ["Sa"], "opens": "12:00", "closes": "14:00"},
        {"days": ["Sa"], "opens": "19:00", "closes": "23:00"},
    ]
    assert hours_from_specification(
        {"dayOfWeek": "https://schema.org/Saturday", "opens": "12:00:00", "closes": "14:00:00"}
    ) == [{"days": ["Sa"], "opens": "12:00", "closes": "14:00"}]
    assert hours_from_text(["Su-Tu 10:00-12:00"])[0]["days"] == ["Su", "Mo", "Tu"]


@pytest.mark.parametrize("hostile", [None, 3, "every day", {"opens": "25:99"}, [{"dayOfWeek": 1}]])
def test_hostile_hours_give_nothing(hostile):
    assert hours_from_specification(hostile) == []
    assert hours_from_text(hostile) == []


@pytest.mark.parametrize(
    ("utc", "expected"),
    [
        ("2026-11-27T18:30:00", True),  # Friday 19:30 in Paris
        ("2026-11-28T00:30:00", True),  # Saturday 01:30: Friday's evening runs on
        ("2026-11-28T01:30:00", False),  # Saturday 02:30
        ("2026-11-28T12:30:00", True),  # Saturday 13:30
        ("2026-11-28T14:00:00", False),  # Saturday 15:00
        ("2026-11-29T19:00:00", False),  # Sunday
    ],
)
def test_open_now_in_the_entitys_zone(utc, expected):
    at = datetime.fromisoformat(utc).replace(tzinfo=UTC)
    assert open_now(LATE_BAR, "Europe/Paris", at) is expected


def test_open_now_is_unknown_without_hours_or_zone():
    now = datetime.now(UTC)
    assert open_now([], "Europe/Paris", now) is None
    assert open_now(LATE_BAR, "", now) is None
    assert open_now(LATE_BAR, "Not/AZone", now) is None


def test_the_zone_from_coordinates_else_a_one_zone_country():
    assert time_zone_of(40.7580, -73.9855) == "America/New_York"
    assert time_zone_of(None, None, "FR") == "Europe/Paris"
    assert time_zone_of(None, None, "US") == ""  # several zones: unknown without coordinates
    assert time_zone_of(0.0, -160.0, "") == ""  # the open sea
