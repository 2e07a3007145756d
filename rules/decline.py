"""Going In Decline and races leaving the map (rulebook, "Entering In Decline")."""

from __future__ import annotations

from .abilities import POWERS, RACES
from .combos import return_race
from .state import GameState, Troop
from .troops import hooked


def vanish(state: GameState, seat: int, race: str) -> None:
    """An In Decline race leaves the map: its tokens go to the box, its banner under the stack."""
    player = state.edit_player(seat)
    troop = player.troop_of(race)
    assert troop is not None and troop.declined
    for i in state.regions_of(seat, race):
        state.edit_region(i).clear_occupant()
    player.declined = [t for t in player.declined if t.race != race]
    if not POWERS[troop.power].counts_toward_decline_limit:
        # Spirit kept its badge while In Decline; now it goes to the discards like any other.
        state.power_discard.append(troop.power)
    return_race(state, race)


def vanish_if_gone(state: GameState, seat: int, troop: Troop) -> None:
    """Rulebook: the banner returns "when the last token of a race In Decline is wiped off the map"."""
    if troop.declined and not state.regions_of(seat, troop.race):
        vanish(state, seat, troop.race)


def go_into_decline(state: GameState, seat: int) -> None:
    """Flip the Active race: one token per region (Ghouls keep all), the badge discarded (not Spirit).

    Rulebook, "Entering In Decline": the earlier In Decline race leaves first, unless one of the two is
    Spirit, which never counts toward the one-race limit (rulings).
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
    for ability in hooked(troop, "on_decline"):
        ability.on_decline(state, seat, troop)
    for i in state.regions_of(seat, troop.race):
        if not race.keeps_all_in_decline:
            state.edit_region(i).tokens = 1
    troop.hand = troop.held = troop.camps = 0
    troop.declined = True
    if power.counts_toward_decline_limit:
        state.power_discard.append(troop.power)
    player.active = None
    player.ally = None
    player.declined.append(troop)
    vanish_if_gone(state, seat, troop)
