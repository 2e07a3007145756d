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


_HOOKED: dict[tuple[str, str, str], tuple[Ability, ...]] = {}
_FLAGS: dict[tuple[str, str, str], bool] = {}


def hooked(troop: Troop, hook: str) -> tuple[Ability, ...]:
    """The troop's :func:`abilities` that override ``hook`` (an :class:`Ability` method), worked out once
    per race and power: the engine calls only those, not the do-nothing defaults of the others."""
    if troop.declined:
        return ()
    key = (troop.race, troop.power, hook)
    found = _HOOKED.get(key)
    if found is None:
        default = getattr(Ability, hook)
        found = _HOOKED[key] = tuple(
            a for a in (RACES[troop.race], POWERS[troop.power]) if getattr(type(a), hook) is not default
        )
    return found


def has_flag(troop: Troop, flag: str) -> bool:
    """Whether the race or the power of the troop, while Active, sets ``flag`` (``sails``, ``flies``…)."""
    if troop.declined:
        return False
    key = (troop.race, troop.power, flag)
    found = _FLAGS.get(key)
    if found is None:
        found = _FLAGS[key] = bool(getattr(RACES[troop.race], flag) or getattr(POWERS[troop.power], flag))
    return found


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
    regions = state.regions
    return troop.hand + sum([regions[i].tokens for i in state.regions_of(seat, troop.race)])


def hand_for_conquest(state: GameState, seat: int, troop: Troop, held: list[int] | None = None) -> int:
    """Tokens the troop would have in hand to conquer with, once its troops are readied (``held``: the
    troop's regions, when the caller has them)."""
    readied = state.t.ghouls_readied if troop.declined else state.t.readied
    if readied:
        return troop.hand
    if held is None:
        held = state.regions_of(seat, troop.race)
    regions = state.regions
    return troop.hand + sum([regions[i].tokens for i in held]) + troop.held - len(held)
