"""What anyone may see on the board: the regions' tokens and markers, and each seat's races.

A :class:`PublicBoard` is what the drawing draws. It is built from a state's JSON or a ``rules.player_view``
(the pages) or from the board a turn mail's context holds (:meth:`PublicBoard.from_mail`, written with the
state change by :meth:`PublicBoard.to_mail`). It holds no coins (ARCHITECTURE §4): nothing secret can reach a
picture. It is immutable and hashable, so a picture drawn for one reader is drawn once for all of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import rules

from .geometry import board_with

#: The pieces that may lie on a region besides tokens, in the order they are drawn (the Mountain first: it is
#: printed on the map). Encampments are counted apart.
MARKERS = ("mountain", "lair", "fortress", "hole", "hero", "dragon")

LOST_TRIBE = "Lost Tribe"


@dataclass(frozen=True, slots=True)
class Troops:
    """Tokens on a region: a seat's (``owner``) or the Lost Tribe's (``owner`` None)."""

    race: str
    tokens: int
    owner: int | None = None
    declined: bool = False


@dataclass(frozen=True, slots=True)
class RegionView:
    troops: Troops | None = None
    markers: tuple[str, ...] = ()
    encampments: int = 0


@dataclass(frozen=True, slots=True)
class SeatView:
    name: str
    #: The Active race with its power, e.g. "Flying Orcs"; None before the first pick.
    active: str | None = None
    #: The races In Decline.
    declined: tuple[str, ...] = ()

    @property
    def troops(self) -> str:
        """The seat's races in words: "Orcs (Flying); Ratmen In Decline"."""
        parts = [self.active] if self.active else []
        if self.declined:
            parts.append(" and ".join(self.declined) + " In Decline")
        return "; ".join(parts) or "no race yet"


@dataclass(frozen=True, slots=True)
class PublicBoard:
    board: str
    regions: tuple[RegionView, ...]
    seats: tuple[SeatView, ...]

    @property
    def layout(self) -> rules.Board:
        return rules.load_board(self.board)

    @classmethod
    def from_state(cls, state: Mapping[str, Any], seat_names: Sequence[str] = ()) -> PublicBoard:
        """From a ``rules.player_view`` (only its public parts are read; its regions list their markers, which
        ``GameState.to_json()`` keeps in the races' and powers' own state since schema 2)."""
        declined_races: list[set[str]] = []
        seats = []
        for number, player in enumerate(state["players"]):
            active = player.get("active")
            declined = tuple(t["race"] for t in player.get("declined") or [])
            declined_races.append(set(declined))
            seats.append(
                SeatView(
                    name=seat_names[number] if number < len(seat_names) else f"Player {number + 1}",
                    active=rules.combo_name(active["race"], active["power"]) if active else None,
                    declined=declined,
                )
            )
        regions = []
        for r in state["regions"]:
            troops = None
            if r.get("tokens"):
                owner = r.get("owner")
                owner = owner if owner is not None and owner >= 0 else None
                race = r.get("race") or "?"
                in_decline = owner is not None and owner < len(declined_races) and race in declined_races[owner]
                troops = Troops(race=race, tokens=r["tokens"], owner=owner, declined=in_decline)
            regions.append(
                RegionView(
                    troops=troops,
                    markers=tuple(m for m in MARKERS if r.get(m)),
                    encampments=r.get("encampments") or 0,
                )
            )
        return cls(board=state["board"], regions=tuple(regions), seats=tuple(seats))

    # -- a turn mail's context ------------------------------------------------------------------------------
    def to_mail(self) -> dict[str, Any]:
        """The board as a mail's context holds it (plain JSON, also read by the text of the mail)::

        {"board": "2-players",
         "players": [{"name": "Ann", "active": "Seafaring Orcs", "declined": ["Ratmen"]}, ...],
         "regions": [{"terrain": "forest", "owner": 0, "race": "Orcs", "tokens": 3, "declined": false,
                      "marks": ["fortress"]}, {"terrain": "sea"}, ...]}

        ``marks`` leave out the Mountain, which the terrain says; ``encampments`` is there when more than one.
        """
        layout = self.layout
        regions: list[dict[str, Any]] = []
        for spec, region in zip(layout.regions, self.regions, strict=True):
            entry: dict[str, Any] = {"terrain": spec.terrain}
            if region.troops:
                entry["race"] = region.troops.race
                entry["tokens"] = region.troops.tokens
                if region.troops.owner is not None:
                    entry["owner"] = region.troops.owner
                    entry["declined"] = region.troops.declined
            marks = [m for m in region.markers if m != "mountain"]
            if region.encampments:
                marks.insert(marks.index("hole") if "hole" in marks else len(marks), "encampments")
            if marks:
                entry["marks"] = marks
            if region.encampments > 1:
                entry["encampments"] = region.encampments
            regions.append(entry)
        players = [{"name": seat.name, "active": seat.active, "declined": list(seat.declined)} for seat in self.seats]
        return {"board": self.board, "players": players, "regions": regions}

    @classmethod
    def from_mail(cls, data: Mapping[str, Any]) -> PublicBoard:
        """From :meth:`to_mail`'s JSON (mails written before it named its board: found by its region count)."""
        name = data.get("board") or board_with(len(data["regions"]))
        if name is None:
            raise ValueError(f"no board has {len(data['regions'])} regions")
        regions = []
        for r in data["regions"]:
            marks = r.get("marks") or []
            troops = None
            if r.get("tokens"):
                troops = Troops(
                    race=r.get("race") or "?",
                    tokens=r["tokens"],
                    owner=r.get("owner"),
                    declined=bool(r.get("declined")),
                )
            printed = ("mountain",) if r.get("terrain") == "mountain" else ()
            regions.append(
                RegionView(
                    troops=troops,
                    markers=printed + tuple(m for m in MARKERS if m in marks),
                    encampments=r.get("encampments") or (1 if "encampments" in marks else 0),
                )
            )
        seats = tuple(
            SeatView(
                name=p.get("name") or f"Player {number + 1}",
                active=p.get("active") or None,
                declined=tuple(p.get("declined") or ()),
            )
            for number, p in enumerate(data["players"])
        )
        return cls(board=name, regions=tuple(regions), seats=seats)
