"""What lies on a region besides its occupant: the markers races and powers put there, and the occupant
leaving (rulebook, "Enemy Losses & Withdrawals", "Abandoning a Region").

The markers live in their ability's own state (``GameState.abilities``), not in the region's record; these
functions read and change them without knowing which ability placed what.
"""

from __future__ import annotations

from typing import Any

from .abilities import ABILITIES, MARKERS, Marker, with_state
from .state import GameState


def vacate(state: GameState, region: int) -> None:
    """The occupant of ``region`` leaves (conquered, abandoned, emptied, vanished); the abilities with state
    in the game take away their markers there or put them back in hand (``on_vacate``). Mountains stay.
    State is an edit in progress."""
    r = state.edit_region(region)
    if state.abilities:
        owner, race = r.owner, r.race
        for ability in with_state(state, "on_vacate"):
            ability.on_vacate(state, region, owner, race)
    r.clear_occupant()


def markers_at(state: GameState, region: int) -> list[tuple[Marker, int]]:
    """The markers on ``region``: ``(marker, count)``, in the order of the abilities' slots."""
    if not state.abilities:
        return []
    # Worked out once per state (asked region after region: the Sorcerers' targets): the markers come from
    # the abilities' slots alone.
    found = state.derived("markers_at", _markers_by_region).get(region)
    return list(found) if found else []


def _markers_by_region(state: GameState) -> dict[int, list[tuple[Marker, int]]]:
    out: dict[int, list[tuple[Marker, int]]] = {}
    for name in state.abilities:
        ability = ABILITIES[name]
        if ability.markers:
            for where, marker, count in ability.placed(state):
                if count:
                    out.setdefault(where, []).append((marker, count))
    return out


#: What a region shows of a marker that is not counted: ``True``. Typed ``Any`` so that a compiled build
#: (mypyc), which keeps a value typed ``int | bool`` as an int, shows ``True`` and not ``1``.
SHOWN: Any = True


def all_markers(state: GameState) -> list[dict[str, int | bool]]:
    """:func:`region_markers` of every region, at once."""
    out: list[dict[str, int | bool]] = [{} for _ in state.regions]
    for name in state.abilities:
        ability = ABILITIES[name]
        if ability.markers:
            for where, marker, count in ability.placed(state):
                if count:
                    out[where][marker.name] = count if marker.counted else SHOWN
    return out


def region_markers(state: GameState, region: int) -> dict[str, int | bool]:
    """The markers on ``region`` by name (``Marker.name``), as pages show them: ``True``, or a count for a
    marker several of which may lie there (``Marker.counted``). ``{}``: none."""
    return {marker.name: count if marker.counted else SHOWN for marker, count in markers_at(state, region)}


def set_region_marker(state: GameState, region: int, name: str, value: int | bool) -> None:
    """Put ``value`` markers ``name`` on ``region`` (``True``: one; ``False`` or 0: none), in the state of
    the ability that places them: for setting up states (tests) and reading old snapshots."""
    if name not in MARKERS:
        raise ValueError(f"Unknown marker {name!r}; known: {', '.join(sorted(MARKERS))}")
    ability, marker = MARKERS[name]
    ability.place(state, region, marker, int(value))
