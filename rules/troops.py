"""Who acts, with which tokens: a player's Active race, or their In Decline race that still conquers."""

from __future__ import annotations

from operator import attrgetter

from .abilities import RACES, hooks_of
from .actions import ACTIVE, IllegalAction
from .state import GameState, Troop

#: A region's tokens: ``sum(map(TOKENS, map(state.regions.__getitem__, held)))`` adds up those of ``held``
#: without a comprehension (a function made and called at each sum).
TOKENS = attrgetter("tokens")


def conquering_declined(state: GameState, seat: int) -> Troop | None:
    """The player's In Decline race that still conquers (``conquers_in_decline``), if any."""
    for troop in state.players[seat].declined:
        if RACES[troop.race].conquers_in_decline:
            return troop
    return None


def acting_troop(state: GameState, seat: int, kind: str) -> Troop:
    """The troop an action names: ``active`` or ``declined`` (the In Decline race that still conquers)."""
    player = state.players[seat]
    if kind == ACTIVE:
        if player.active is None:
            raise IllegalAction("You have no Active race yet: pick a race and power combo first")
        return player.active
    troop = conquering_declined(state, seat)
    if troop is None:
        # The official races (a design of another game is no business of this one's players).
        names = " or ".join(sorted(n for n, race in RACES.items() if race.conquers_in_decline and not race.designed))
        raise IllegalAction(f"Only In Decline {names} go on conquering; you have none")
    return troop


def total_tokens(state: GameState, seat: int, troop: Troop) -> int:
    """Tokens of this troop on the board and in hand (not those an ability keeps aside: ``aside``)."""
    return troop.hand + sum(map(TOKENS, map(state.regions.__getitem__, state.regions_of(seat, troop.race))))


def aside(state: GameState, troop: Troop) -> int:
    """Tokens of the troop off the board and not in hand (an ability's ``aside``), else 0."""
    keepers = hooks_of(troop).aside
    return sum(a.aside(state, troop) for a in keepers) if keepers else 0


def hand_for_conquest(state: GameState, seat: int, troop: Troop, held: list[int] | None = None) -> int:
    """Tokens the troop would have in hand to conquer with, once its troops are readied (``held``: the
    troop's regions, when the caller has them)."""
    readied = RACES[troop.race].declined_readied(state) if troop.declined else state.t.readied
    if readied:
        return troop.hand
    if held is None:
        held = state.regions_of(seat, troop.race)
    return troop.hand + sum(map(TOKENS, map(state.regions.__getitem__, held))) + aside(state, troop) - len(held)


def box_left(state: GameState, race: str) -> int:
    """Tokens of this race still in the box (components.md: a player never gets more than the box holds)."""
    used = sum(r.tokens for r in state.regions if r.race == race)
    for p in state.players:
        troop = p.troop_of(race)
        if troop is not None:
            used += troop.hand + aside(state, troop)
    return RACES[race].box_tokens() - used
