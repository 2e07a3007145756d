"""Who acts and with which abilities: a player's Active race, or their In Decline Ghouls."""

from __future__ import annotations

from .abilities import POWERS, RACES, Ability
from .actions import ACTIVE, IllegalAction
from .state import GameState, Troop


def abilities(troop: Troop) -> tuple[Ability, ...]:
    """The race and power whose benefits apply now: none once In Decline (rulebook, "The Races…")."""
    if troop.declined:
        return ()
    return (RACES[troop.race], POWERS[troop.power])


def sails(troop: Troop) -> bool:
    """Seafaring: Seas and the Lake are kept In Decline (only an Active race conquers them)."""
    return POWERS[troop.power].sails


def declined_ghouls(state: GameState, seat: int) -> Troop | None:
    """The player's In Decline race that still conquers (Ghouls), if any."""
    for troop in state.players[seat].declined:
        if RACES[troop.race].conquers_in_decline:
            return troop
    return None


def acting_troop(state: GameState, seat: int, kind: str) -> Troop:
    """The troop an action names: ``active`` or ``declined`` (In Decline Ghouls)."""
    player = state.players[seat]
    if kind == ACTIVE:
        if player.active is None:
            raise IllegalAction("You have no Active race yet: pick a race and power combo first")
        return player.active
    troop = declined_ghouls(state, seat)
    if troop is None:
        raise IllegalAction("Only In Decline Ghouls go on conquering; you have none")
    return troop


def total_tokens(state: GameState, seat: int, troop: Troop) -> int:
    """Tokens of this troop on the board and in hand (not the Amazons' 4 held back)."""
    return troop.hand + sum(
        r.tokens for r in state.regions if r.owner == seat and r.race == troop.race
    )


def hand_for_conquest(state: GameState, seat: int, troop: Troop) -> int:
    """Tokens the troop would have in hand to conquer with, once its troops are readied."""
    readied = state.t.ghouls_readied if troop.declined else state.t.readied
    if readied:
        return troop.hand
    held = state.regions_of(seat, troop.race)
    return total_tokens(state, seat, troop) + troop.held - len(held)
