"""A random-legal-move player, for tests, benchmarks and the demo."""

from __future__ import annotations

import random

from .actions import DECLINED, Action
from .engine import apply, awaiting, legal_actions
from .state import GameState


def concrete(choice: Action, rnd: random.Random) -> Action:
    """Turn a described choice (``redeploy``, ``place_encampments``, ``place_heroes``) into an action."""
    if choice.type == "redeploy":
        count = choice.count or 0
        regions = list(choice.regions)
        if choice.tokens:  # a defender: the tokens in hand go on top of what each region keeps
            spread = dict(choice.tokens)
            for _ in range(count - sum(spread.values())):
                spread[rnd.choice(regions)] += 1
        elif count >= len(regions):
            spread = {r: 1 for r in regions}
            for _ in range(count - len(regions)):
                spread[rnd.choice(regions)] += 1
        else:
            kept = set(rnd.sample(regions, count))
            spread = {r: int(r in kept) for r in regions}
        return Action("redeploy", choice.player, troop=choice.troop, tokens=tuple(sorted(spread.items())))
    if choice.type == "place_encampments":
        camps: dict[int, int] = {}
        for _ in range(rnd.randint(0, choice.count or 0)):
            r = rnd.choice(choice.regions)
            camps[r] = camps.get(r, 0) + 1
        return Action("place_encampments", choice.player, tokens=tuple(sorted(camps.items())))
    if choice.type == "place_heroes":
        return Action("place_heroes", choice.player, regions=tuple(rnd.sample(choice.regions, choice.count or 0)))
    return choice


def random_action(state: GameState, player: int, rnd: random.Random) -> Action:
    """A random legal action for ``player``, favouring progress so that games end in reasonable time:
    conquests are preferred to ending them, and ``end_turn`` waits until the redeploy is done.

    So that random games play every rule (tests/rules/test_coverage.py), some legal moves are favoured:
    In Decline Ghouls usually use their moment before the Active race, a race goes In Decline now and then,
    and Berserk usually rolls before conquering.
    """
    choices = legal_actions(state, player)
    ghouls = [a for a in choices if a.troop == DECLINED and a.type in ("conquer", "final_conquest")]
    if ghouls and rnd.random() < 0.6:
        return rnd.choice(ghouls)
    declines = [a for a in choices if a.type == "decline"]
    if declines and rnd.random() < 0.12:
        return declines[0]
    rolls = [a for a in choices if a.type == "berserk_roll"]
    if rolls and rnd.random() < 0.5:
        return rolls[0]
    conquests = [a for a in choices if a.type in ("conquer", "final_conquest", "dragon", "convert")]
    if conquests and rnd.random() < 0.85:
        return concrete(rnd.choice(conquests), rnd)
    if state.phase in ("redeploy", "defend"):
        placing = [a for a in choices if a.type != "end_turn"]
        if placing and rnd.random() < 0.5:
            return concrete(rnd.choice(placing), rnd)
        ends = [a for a in choices if a.type == "end_turn"]
        return rnd.choice(ends) if ends else concrete(rnd.choice(placing), rnd)
    return concrete(rnd.choice(choices), rnd)


def random_player(state: GameState, rnd: random.Random) -> Action:
    """An action for whoever the game awaits."""
    return random_action(state, min(awaiting(state)), rnd)


def play_random_game(state: GameState, rnd: random.Random, max_steps: int = 20000) -> GameState:
    """Play random legal actions until the game is over."""
    for _ in range(max_steps):
        if state.over:
            return state
        state = apply(state, random_player(state, rnd))
    raise RuntimeError("game did not end")
