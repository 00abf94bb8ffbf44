"""Opening hours: Schema.org's two spellings read into one shape, an entity's time zone (from
its coordinates, with tzfpy's bundled zone boundaries, or from its country), and whether it
is open at a moment in that zone.

The shape: ``[{"days": ["Mo", "Tu"], "opens": "12:00", "closes": "23:00"}]``. A period that
closes at or before it opens runs past midnight into the next day; ``00:00``-``00:00`` (or
``23:59``) is the whole day.
"""

import functools
import re
import zoneinfo
from datetime import datetime
from pathlib import Path
from typing import Any

import tzfpy

DAYS = ("Mo", "Tu", "We", "Th", "Fr", "Sa", "Su")
_DAY_NAMES = {
    "monday": "Mo",
    "tuesday": "Tu",
    "wednesday": "We",
    "thursday": "Th",
    "friday": "Fr",
    "saturday": "Sa",
    "sunday": "Su",
}
_TIME = re.compile(r"^([01]?\d|2[0-4]):([0-5]\d)(?::[0-5]\d)?")
# "Mo-Fr 09:00-17:00", "Mo,We,Fr 10:00-18:00", "Sa 10:00-14:00,15:00-18:00", "Mo-Su".
_SPEC = re.compile(
    r"^\s*(?P<days>(?:Mo|Tu|We|Th|Fr|Sa|Su)(?:\s*[-,]\s*(?:Mo|Tu|We|Th|Fr|Sa|Su))*)"
    r"(?:\s+(?P<times>\d{1,2}:\d{2}\s*-\s*\d{1,2}:\d{2}(?:\s*,\s*\d{1,2}:\d{2}\s*-\s*\d{1,2}:\d{2})*))?\s*$",
    re.IGNORECASE,
)
MAX_PERIODS = 50


def _day(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    name = value.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1].strip().lower()
    if name in _DAY_NAMES:
        return _DAY_NAMES[name]
    short = name[:2].capitalize()
    return short if short in DAYS and len(name) == 2 else None


def _time(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    match = _TIME.match(value.strip())
    if not match:
        return None
    hours, minutes = int(match.group(1)), int(match.group(2))
    if hours == 24:
        hours, minutes = 0, 0
    return f"{hours:02d}:{minutes:02d}"


def _day_range(text: str) -> list[str]:
    days: list[str] = []
    for part in text.split(","):
        ends = [_day(p.strip()) for p in part.split("-")]
        if None in ends or not ends:
            continue
        if len(ends) == 1:
            days.append(ends[0])
        else:
            start, end = DAYS.index(ends[0]), DAYS.index(ends[-1])
            span = (end - start) % 7
            days += [DAYS[(start + i) % 7] for i in range(span + 1)]
    return list(dict.fromkeys(days))


def hours_from_specification(items: Any) -> list[dict]:
    """Schema.org ``openingHoursSpecification`` (one object or a list of them)."""
    periods = []
    for item in items if isinstance(items, list) else [items]:
        if not isinstance(item, dict):
            continue
        raw_days = item.get("dayOfWeek")
        raw_days = raw_days if isinstance(raw_days, list) else [raw_days]
        days = [d for d in (_day(v) for v in raw_days) if d]
        opens, closes = _time(item.get("opens")), _time(item.get("closes"))
        if days and opens and closes:
            periods.append({"days": list(dict.fromkeys(days)), "opens": opens, "closes": closes})
    return periods[:MAX_PERIODS]


def hours_from_text(values: Any) -> list[dict]:
    """Schema.org ``openingHours``: "Mo-Fr 09:00-17:00" strings (one, a list, or several
    separated by semicolons)."""
    texts = values if isinstance(values, list) else [values]
    periods = []
    for text in texts:
        if not isinstance(text, str):
            continue
        for spec in text.split(";"):
            match = _SPEC.match(spec)
            if not match:
                continue
            days = _day_range(match.group("days"))
            times = match.group("times")
            if not times:
                periods.append({"days": days, "opens": "00:00", "closes": "00:00"})
                continue
            for span in times.split(","):
                opens, closes = (_time(t) for t in span.split("-"))
                if days and opens and closes:
                    periods.append({"days": days, "opens": opens, "closes": closes})
    return periods[:MAX_PERIODS]


def _minutes(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def is_open(hours: list[dict], local: datetime) -> bool:
    """Whether ``local`` (a time in the entity's zone) falls in one of the periods."""
    today = DAYS[local.weekday()]
    yesterday = DAYS[(local.weekday() - 1) % 7]
    now = local.hour * 60 + local.minute
    for period in hours:
        opens, closes = _minutes(period["opens"]), _minutes(period["closes"])
        if closes == 23 * 60 + 59:
            closes = 24 * 60
        whole_day = opens == closes == 0 or (opens == 0 and closes == 24 * 60)
        if today in period["days"]:
            if whole_day:
                return True
            if opens < closes and opens <= now < closes:
                return True
            if closes <= opens and now >= opens:  # open past midnight: tonight's part
                return True
        if yesterday in period["days"] and closes <= opens and not whole_day and now < closes:
            return True
    return False


@functools.cache
def _country_zones() -> dict[str, str]:
    """Country code -> its zone, for countries with one zone only (the tz database's
    ``zone.tab``, wherever zoneinfo finds the database)."""
    for directory in zoneinfo.TZPATH:
        path = Path(directory) / "zone.tab"
        if path.is_file():
            zones: dict[str, list[str]] = {}
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("#") or not line.strip():
                    continue
                parts = line.split("\t")
                if len(parts) >= 3:
                    zones.setdefault(parts[0], []).append(parts[2])
            return {code: names[0] for code, names in zones.items() if len(names) == 1}
    return {}


def time_zone_of(lat: float | None, lng: float | None, country: str = "") -> str:
    """The IANA zone at the coordinates, else the zone of a one-zone country, else ""."""
    if lat is not None and lng is not None:
        name = tzfpy.get_tz(lng, lat)
        if name and not name.startswith("Etc/"):
            return name
    return _country_zones().get(country.upper(), "") if country else ""


def open_now(hours: list[dict], zone: str, at: datetime) -> bool | None:
    """Open at ``at`` (aware) in ``zone``; None when the hours or the zone are unknown."""
    if not hours or not zone:
        return None
    try:
        local = at.astimezone(zoneinfo.ZoneInfo(zone))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
    return is_open(hours, local)
