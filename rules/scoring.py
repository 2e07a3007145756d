"""Scoring Victory coins at the end of a turn (rulebook, "Scoring Victory Coins")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .abilities import RACES, Ability, hooks_of
from .state import GameState


def turn_score(state: GameState, seat: int) -> dict[str, Any]:
    """What the player scores now: 1 coin per region (Active and In Decline) plus the bonuses.

    Returns ``{"regions": n, "bonus": {ability: coins}, "total": coins}``. Bonuses are the Active race's and
    power's, and the In Decline races' that say they persist (``scores_in_decline``).
    """
    regions = 0
    bonus: dict[str, int] = {}
    for troop in state.players[seat].troops():
        held = state.regions_of(seat, troop.race)
        regions += len(held)
        sources: Sequence[Ability]
        if troop.declined:
            sources = [RACES[troop.race]] if RACES[troop.race].scores_in_decline else ()
        else:
            sources = hooks_of(troop).score  # the race and power that override ``score`` (others give 0)
        for ability in sources:
            coins = ability.score(state, seat, troop, held)
            if coins:
                bonus[ability.name] = bonus.get(ability.name, 0) + coins
    return {"regions": regions, "bonus": bonus, "total": regions + sum(bonus.values())}


def score_turn(state: GameState, seat: int) -> dict[str, Any]:
    score = turn_score(state, seat)
    state.edit_player(seat).coins += score["total"]
    return score


def tokens_on_board(state: GameState, seat: int) -> int:
    """Tie-break: race tokens (Active + In Decline) on the board (none kept aside, rulings)."""
    return sum(r.tokens for r in state.regions if r.owner == seat)
