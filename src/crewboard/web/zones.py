"""Time zones as people read them: "Berlin (UTC+1)", not "Europe/Berlin"; the choices of a zone
select, each under that name and ordered by offset, its value the IANA name the server keeps."""

from __future__ import annotations

import functools
import zoneinfo
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

# Areas whose zones are places people name (not "Etc/GMT+5" or the old "US/Eastern").
_AREAS = ("Africa", "America", "Antarctica", "Asia", "Atlantic", "Australia", "Europe",
          "Indian", "Pacific")  # fmt: skip


def offset_words(offset: timedelta | None) -> str:
    """UTC+1, UTC−5, UTC+5:30, UTC."""
    minutes = int((offset or timedelta()).total_seconds() // 60)
    if minutes == 0:
        return "UTC"
    sign = "+" if minutes > 0 else "−"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def zone_label(name: str | None, at: datetime | None = None) -> str:
    """A zone as people read it: its place and its offset now ("Berlin (UTC+1)"); UTC as
    "UTC"; a name that is no zone, as given."""
    if not name:
        return ""
    if name in ("UTC", "Etc/UTC", "Etc/GMT", "GMT"):
        return "UTC"
    try:
        zone = zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return name
    place = name.rsplit("/", 1)[-1].replace("_", " ")
    return f"{place} ({offset_words((at or datetime.now(UTC)).astimezone(zone).utcoffset())})"


def zone_choices(keep: Iterable[str] = (), at: datetime | None = None) -> list[tuple[str, str]]:
    """Every place zone as (IANA name, label), UTC first, then by offset and place; the
    names in `keep` (a project's current zones) are offered even when not place zones."""
    moment = (at or datetime.now(UTC)).replace(minute=0, second=0, microsecond=0)
    listed = list(_choices(moment))
    known = {name for name, _ in listed}
    extra = [(name, zone_label(name, moment)) for name in keep if name and name not in known]
    return extra + listed


@functools.lru_cache(maxsize=4)
def _choices(moment: datetime) -> tuple[tuple[str, str], ...]:
    names = [n for n in zoneinfo.available_timezones() if n.split("/", 1)[0] in _AREAS]

    def order(name: str) -> tuple[timedelta, str, int]:
        offset = moment.astimezone(zoneinfo.ZoneInfo(name)).utcoffset() or timedelta()
        return offset, zone_label(name, moment), len(name)

    chosen: dict[str, str] = {"UTC": "UTC"}  # label: name; one zone per label, the shortest
    for name in sorted(names, key=order):
        chosen.setdefault(zone_label(name, moment), name)
    return tuple((name, label) for label, name in chosen.items())
