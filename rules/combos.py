"""The column of six race and power combos (rulebook, "Picking a Race and Special Power Combo")."""

from __future__ import annotations

from . import rng
from .abilities import POWERS, RACES
from .actions import IllegalAction
from .components import VISIBLE_COMBOS
from .state import CONQUER, Combo, GameState, Troop
from .troops import box_left


def replenish(state: GameState) -> None:
    """Fill the column up to six from the top of the stacks.

    Rulebook, "In Decline": when the Special Power stack runs out, the discarded badges are reshuffled.
    """
    if len(state.combos) < VISIBLE_COMBOS and state.race_stack:
        state.edit_stacks()
    while len(state.combos) < VISIBLE_COMBOS and state.race_stack:
        if not state.power_stack:
            if not state.power_discard:
                return
            state.rng, state.power_stack = rng.shuffled(state.rng, state.power_discard)
            state.power_discard = []
        state.combos.append(Combo(state.race_stack.pop(0), state.power_stack.pop(0)))


def return_race(state: GameState, race: str) -> None:
    """A vanished race goes under the banner stack, or to the lowest empty slot of the column.

    Rulebook, "Entering In Decline": placed at the bottom of the stack "or in the lowest empty slot in the
    banner column, if any".
    """
    state.edit_stacks()
    state.race_stack.append(race)
    replenish(state)


def pick_combo(state: GameState, seat: int, index: int) -> None:
    """Pay one coin on each combo above, take the coins on the chosen one, take its tokens."""
    if not 0 <= index < len(state.combos):
        raise IllegalAction(f"There is no combo {index}; choose 0 to {len(state.combos) - 1}")
    player = state.edit_player(seat)
    if player.coins < index:
        raise IllegalAction(f"Combo {index} costs {index} coins (one on each combo above it); you have {player.coins}")
    for above in range(index):
        state.edit_combo(above).coins += 1
    state.edit_stacks()
    chosen = state.combos.pop(index)
    player.coins += chosen.coins - index
    race, power = RACES[chosen.race], POWERS[chosen.power]
    # Components, "Race banners": banner + badge, never more than the box still holds of that race.
    hand = min(race.given_tokens() + power.given_tokens(), box_left(state, chosen.race))
    player.active = Troop(chosen.race, chosen.power, hand=hand, picked_turn=state.turn)
    for ability in (race, power):
        ability.on_pick(state, seat, player.active)
    replenish(state)
    t = state.edit_turn()
    t.picked = True
    t.readied = True
    state.phase = CONQUER
