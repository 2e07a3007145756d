"""Going In Decline and races leaving the map (rulebook, "Entering In Decline")."""

from __future__ import annotations

from .abilities import POWERS, RACES, hooks_of
from .combos import return_race
from .regions import vacate
from .state import GameState, Troop


def vanish(state: GameState, seat: int, race: str) -> None:
    """An In Decline race leaves the map: its tokens go to the box, its banner under the stack."""
    player = state.edit_player(seat)
    troop = player.troop_of(race)
    assert troop is not None and troop.declined
    for i in state.regions_of(seat, race):
        vacate(state, i)
    player.declined = [t for t in player.declined if t.race != race]
    if not POWERS[troop.power].counts_toward_decline_limit:
        # A badge that does not count toward the limit stayed with its race; now it goes to the discards.
        state.edit_stacks()
        state.power_discard.append(troop.power)
    return_race(state, race)


def vanish_if_gone(state: GameState, seat: int, troop: Troop) -> None:
    """Rulebook: the banner returns "when the last token of a race In Decline is wiped off the map"."""
    if troop.declined and not state.regions_of(seat, troop.race):
        vanish(state, seat, troop.race)


def go_into_decline(state: GameState, seat: int) -> None:
    """Flip the Active race: one token per region (unless the race keeps them all), the badge discarded
    (unless it does not count toward the limit).

    Rulebook, "Entering In Decline": the earlier In Decline race leaves first, unless one of the two does
    not count toward the one-race limit. What the troop kept aside leaves with its abilities (``on_decline``).
    """
    player = state.edit_player(seat)
    troop = player.active
    assert troop is not None
    race, power = RACES[troop.race], POWERS[troop.power]
    if power.counts_toward_decline_limit:
        for old in list(player.declined):
            if POWERS[old.power].counts_toward_decline_limit:
                vanish(state, seat, old.race)
                player = state.edit_player(seat)
    troop = player.active
    assert troop is not None
    for ability in hooks_of(troop).on_decline:
        ability.on_decline(state, seat, troop)
    for i in state.regions_of(seat, troop.race):
        if not race.keeps_all_in_decline:
            state.edit_region(i).tokens = 1
    troop.hand = 0
    troop.declined = True
    if power.counts_toward_decline_limit:
        state.edit_stacks()
        state.power_discard.append(troop.power)
    player.active = None
    player.declined.append(troop)
    vanish_if_gone(state, seat, troop)
