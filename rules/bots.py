"""A random-legal-move player, for tests, benchmarks and the demo.

:func:`random_action` lists every legal action (``legal_actions``) and chooses among them by a fixed
policy; :func:`sample_action` follows the same policy with the same probabilities but checks the
regions a conquest could go to only as it draws them (the bulk of listing every legal action), and is
what :func:`random_player` plays.
"""

from __future__ import annotations

import random

from .actions import ACTION_KINDS, CONQUERING, DECLINED, ROLLING, Action
from .engine import ConquestOffers, apply, awaiting, legal_actions, legal_choices
from .state import CONQUER, DEFEND, PICK, REDEPLOY, START, GameState

#: Action types the policy counts as conquests (``ActionKind.conquers``: the base game's and the abilities').
CONQUESTS = CONQUERING


def concrete(choice: Action, rnd: random.Random) -> Action:
    """Turn a described choice (``redeploy``, or an ability's kind whose ``choice`` is ``"spread"`` or
    ``"choose"``) into an action."""
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
    kind = ACTION_KINDS.get(choice.type)
    if kind is not None and kind.choice == "spread":  # up to ``count`` over ``regions``
        placed: dict[int, int] = {}
        for _ in range(rnd.randint(0, choice.count or 0)):
            r = rnd.choice(choice.regions)
            placed[r] = placed.get(r, 0) + 1
        return Action(choice.type, choice.player, tokens=tuple(sorted(placed.items())))
    if kind is not None and kind.choice == "choose":  # ``count`` of ``regions``
        return Action(choice.type, choice.player, regions=tuple(rnd.sample(choice.regions, choice.count or 0)))
    return choice


def random_action(state: GameState, player: int, rnd: random.Random) -> Action:
    """A random legal action for ``player``, favouring progress so that games end in reasonable time:
    conquests are preferred to ending them, and ``end_turn`` waits until the redeploy is done.

    So that random games play every rule (tests/rules/test_coverage.py), some legal moves are favoured:
    an In Decline race that still conquers usually uses its moment before the Active race, a race goes In
    Decline now and then, and a die that may be rolled before a conquest (``ActionKind.rolls``) usually is.
    """
    choices = legal_actions(state, player)
    declined = [a for a in choices if a.troop == DECLINED and a.type in ("conquer", "final_conquest")]
    if declined and rnd.random() < 0.6:
        return rnd.choice(declined)
    declines = [a for a in choices if a.type == "decline"]
    if declines and rnd.random() < 0.12:
        return declines[0]
    rolls = [a for a in choices if a.type in ROLLING]
    if rolls and rnd.random() < 0.5:
        return rolls[0]
    conquests = [a for a in choices if a.type in CONQUESTS]
    if conquests and rnd.random() < 0.85:
        return concrete(rnd.choice(conquests), rnd)
    if state.phase in ("redeploy", "defend"):
        return _redeploy_or_end(choices, rnd)
    return concrete(rnd.choice(choices), rnd)


def _redeploy_or_end(choices: list[Action], rnd: random.Random) -> Action:
    placing = [a for a in choices if a.type != "end_turn"]
    if placing and rnd.random() < 0.5:
        return concrete(rnd.choice(placing), rnd)
    ends = [a for a in choices if a.type == "end_turn"]
    return rnd.choice(ends) if ends else concrete(rnd.choice(placing), rnd)


def sample_action(state: GameState, player: int, rnd: random.Random) -> Action:
    """:func:`random_action`'s policy, drawn without checking every region a conquest could go to.

    Each action has the probability it has in :func:`random_action` (so every legal action may be
    played, and only those ``legal_actions`` offers are), but other random numbers are drawn: a seed
    plays another game. During the conquests, where :func:`random_action` chooses uniformly among a
    list of legal actions, this draws from the actions known to be legal (``legal_choices``) and the
    regions a conquest could go to (``ConquestOffers.regions``), in a random order without replacement,
    checks each region drawn and takes the first legal action: uniform among the legal ones too, and
    usually after a region or two rather than all of them. The die-or-not choice for a region is the
    engine's (``ConquestOffers.at``). Picking, redeploying and defending list everything (cheap there).
    """
    if state.phase in (REDEPLOY, DEFEND):  # random_action's other branches offer nothing here
        return _redeploy_or_end(legal_actions(state, player), rnd)
    if state.phase not in (PICK, START, CONQUER):
        return random_action(state, player, rnd)
    with state.reading():
        known, offers = legal_choices(state, player)
        # The branches of random_action, in its order; "if it exists and the die says so" is drawn the
        # other way round where knowing it exists would need the regions checked (same probabilities).
        declined = [o for o in offers if o.kind == DECLINED]
        if declined and rnd.random() < 0.6:
            action = _first_legal([], declined, rnd)
            if action is not None:
                return action
        declines = [a for a in known if a.type == "decline"]
        if declines and rnd.random() < 0.12:
            return declines[0]
        rolls = [a for a in known if a.type in ROLLING]
        if rolls and rnd.random() < 0.5:
            return rolls[0]
        conquests = [a for a in known if a.type in CONQUESTS]  # the abilities' conquering kinds
        if (conquests or offers) and rnd.random() < 0.85:
            action = _first_legal(conquests, offers, rnd)
            if action is not None:
                return concrete(action, rnd)
        action = _first_legal(known, offers, rnd)
        assert action is not None, "the awaited player always has something to do"
        return concrete(action, rnd)


def _first_legal(known: list[Action], offers: list[ConquestOffers], rnd: random.Random) -> Action | None:
    """A uniform choice among ``known`` and the legal actions of ``offers``, or None if there is none:
    the first legal one in a random order (drawn one at a time, without replacement)."""
    items: list[Action | tuple[ConquestOffers, int]] = list(known)
    for o in offers:
        items += [(o, region) for region in o.regions]
    while items:
        i = rnd.randrange(len(items))
        item = items[i]
        items[i] = items[-1]
        items.pop()
        if isinstance(item, Action):
            return item
        action = item[0].at(item[1])
        if action is not None:
            return action
    return None


def random_player(state: GameState, rnd: random.Random) -> Action:
    """An action for whoever the game awaits (:func:`sample_action`)."""
    return sample_action(state, min(awaiting(state)), rnd)


def play_random_game(state: GameState, rnd: random.Random, max_steps: int = 20000) -> GameState:
    """Play random legal actions until the game is over."""
    for _ in range(max_steps):
        if state.over:
            return state
        state = apply(state, random_player(state, rnd))
    raise RuntimeError("game did not end")
