"""What the game page and the turn page both show: the players, the combos, the turn and the deadline.

Built from ``service.domain.views.game_view`` (``rules.player_view`` for the viewer): another seat's coins
are ``None`` there until the game is over, and they are shown as hidden.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import rules
from emails.times import left_words, local_time
from emails.times import zone as zone_of
from service.domain.clock import Clock
from service.domain.models import utcnow
from service.domain.schemas import GameView
from service.web.maps import MapOptions, board_svg
from service.web.pages.access import AnyViewer
from service.web.pages.narration import PHASES, name_of


def page_context(
    viewer: AnyViewer | None,
    view: GameView,
    clock: Clock,
    public: dict[str, Any],
    names: list[str],
    *,
    map_id: str | None = None,
) -> dict[str, Any]:
    """What the pages of a game show of it to ``viewer`` (``None``: a watcher); with ``map_id`` (the prefix of
    the drawing's element ids, unique on its page), the map too, as ``map_svg`` (``None`` before the game's
    state exists)."""
    zone = zone_of(viewer.player.time_zone if viewer else None)
    drawn = MapOptions(id_prefix=map_id, seat_names=names, label=f"Map of {view.name}") if map_id else None
    return {
        **({"map_svg": board_svg(public, drawn) if public else None} if drawn else {}),
        "game": view,
        "viewer": viewer,
        "you": viewer.number if viewer else None,
        "names": names,
        "public": public,
        "players": player_rows(public, names),
        "combos": combo_rows(public),
        "phase_words": PHASES.get(public.get("phase", ""), ""),
        "deadline": deadline(clock, utcnow(), zone),
        "awaited_names": [name_of(s, names) for s in view.awaiting],
        "viewer_zone": zone.key,
    }


def player_rows(public: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    rows = []
    regions = public.get("regions", [])
    for seat, p in enumerate(public.get("players", [])):
        held = [r for r in regions if r.get("owner") == seat and r.get("tokens")]
        active = p.get("active")
        rows.append(
            {
                "seat": seat,
                "name": name_of(seat, names),
                "coins": p.get("coins"),
                "active": rules.combo_name(active["race"], active["power"]) if active else None,
                "hand": (active or {}).get("hand", 0),
                "declined": [t["race"] for t in p.get("declined") or []],
                "regions": len(held),
                "tokens": sum(r["tokens"] for r in held),
                "on_turn": public.get("current") == seat and public.get("phase") != "over",
            }
        )
    return rows


def combo_rows(public: dict[str, Any]) -> list[dict[str, Any]]:
    """The visible column, top first: the cost to take one is its position (a coin on each combo above)."""
    rows = []
    for index, (race, power, coins) in enumerate(public.get("combos", [])):
        rows.append(
            {
                "index": index,
                "race": race,
                "power": power,
                "name": rules.combo_name(race, power),
                "tokens": rules.RACES[race].given_tokens() + rules.POWERS[power].given_tokens(),
                "coins": coins,
                "cost": index,
                # Each race and power says what it does in one line (its module's ``summary``).
                "race_note": rules.RACES[race].summary,
                "power_note": rules.POWERS[power].summary,
                # And in full, in the rulebook's words (each module's ``description``), shown on a tap.
                "race_description": rules.RACES[race].description,
                "power_description": rules.POWERS[power].description,
            }
        )
    return rows


def deadline(clock: Clock, now: datetime, zone: ZoneInfo) -> dict[str, Any] | None:
    """The clock's deadline in the viewer's time zone, and the time left at ``now``, as the pages say it (the
    page's script, ``pages.js``, keeps it ticking and says it the same way)."""
    at, left = clock.deadline, clock.time_left(now)
    if at is None:
        return None
    words = left_words(left)
    return {"iso": at.astimezone(UTC).isoformat(), "local": local_time(at, zone.key), "left": words}
