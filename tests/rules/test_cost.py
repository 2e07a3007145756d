"""May I conquer, what does it cost, and why (``rules/cost.py``): one answer, with its labelled parts,
that ``legal_actions``, ``apply`` and the pages read (rulebook, "Conquering a Region"; rulings).

The 2-player board: 1 farmland (edge), 3 swamp and Cavern (edge), 4 hill (edge), 5 mountain and Cavern
(edge), 8 mountain, 9 farmland, 10 forest (edge), 14 hill and Cavern.
"""

from __future__ import annotations

import random

from hypothesis import given

from rules import ConquestCost, apply, awaiting, conquest_breakdown, conquest_cost, conquest_refusal, legal_actions

from .builder import Builder, act
from .test_properties import GAMES, _settings, games, play


def ratmen(power: str = "Merchant", hand: int = 12, held: int = 4) -> Builder:
    """Seat 0 conquering with Ratmen (no race discount) holding region ``held``."""
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", power, hand=hand)
    return b.region(held, seat=0).at(0, "conquer")


def breakdown(state, region: int, seat: int = 0) -> ConquestCost:
    troop = state.players[seat].active
    assert troop is not None
    return conquest_breakdown(state, seat, troop, region)


def test_each_part_of_the_cost_is_labelled() -> None:
    """Rulebook: 2, +1 per token, Mountain, Encampment, Fortress and Troll's Lair."""
    state = (
        ratmen(held=9)
        .active(1, "Trolls", "Fortified")
        .region(8, seat=1, tokens=2, lair=True, fortress=True)
        .region(13, seat=1)
        .build()
    )
    cost = breakdown(state, 8)
    assert cost.parts == (("base", 2), ("tokens", 2), ("Mountain", 1), ("Troll's Lair", 1), ("Fortress", 1))
    assert cost.total == 7 and cost.refusal is None and cost.allowed
    assert str(cost) == "2 base + 2 tokens + 1 Mountain + 1 Troll's Lair + 1 Fortress = 7"
    assert conquest_cost(state, 0, state.players[0].active, 8) == 7


def test_encampments_count_each() -> None:
    state = ratmen().active(1, "Humans", "Bivouacking").region(9, seat=1, encampments=3).build()
    assert breakdown(state, 9).allowed
    assert breakdown(state, 9).parts == (("base", 2), ("tokens", 1), ("Encampments", 3))


def test_discounts_are_the_race_or_power_by_name_and_the_cost_stays_at_least_one() -> None:
    """Rulebook (Giants, Commando): "A minimum of 1 token is still required"."""
    state = Builder(2, seed=1).clear_board().active(0, "Giants", "Commando", hand=8).region(5, seat=0)
    state = state.at(0, "conquer").build()
    cost = breakdown(state, 1)  # an empty farmland next to the Giants' Mountain
    assert cost.parts == (("base", 2), ("Giants", -1), ("Commando", -1), ("at least 1", 1))
    assert cost.total == 1
    assert str(cost) == "2 base - 1 Giants - 1 Commando + 1 at least 1 = 1"


def test_a_refused_region_says_why_with_its_cost() -> None:
    state = ratmen().region(14).build()
    cost = breakdown(state, 14)  # a Lost Tribe, not next to region 4
    assert cost.refusal == "Region 14 is not adjacent to any region your Ratmen hold"
    assert not cost.allowed and cost.total == 3
    assert conquest_refusal(state, 0, state.players[0].active, 14) == cost.refusal
    assert breakdown(state, 99).refusal == "There is no region 99 on this board (0 to 22)"


def test_a_die_rolled_first_is_a_part_of_the_cost() -> None:
    state = ratmen("Berserk", hand=2).region(9, seat=-1).region(10).at(0, "conquer", berserk_die=2).build()
    cost = breakdown(state, 10)  # a Lost Tribe on an edge forest: 3, minus the die
    assert cost.parts == (("base", 2), ("tokens", 1), ("Berserk die", -2))
    assert cost.total == 1
    after = act(state, "conquer", 0, region=10)
    assert after.regions[10].tokens == 1  # apply put exactly the total there


def check_offers_against_breakdown(state, rnd: random.Random) -> None:
    """``legal_actions`` offers a conquest exactly where the breakdown allows it and the hand pays it (or
    the die may help, 1 to 3 short), and ``apply`` takes what the breakdown says."""
    seat = min(awaiting(state))
    troop = state.players[seat].active
    if troop is None or state.phase not in ("start", "conquer") or state.t.abilities:
        return
    for action in legal_actions(state, seat):
        if action.type == "conquer" and action.troop == "active":
            cost = breakdown(state, action.region, seat)
            assert cost.allowed, cost
            after = apply(state, action)
            assert after.regions[action.region].tokens == cost.total
            break


@_settings(GAMES // 20)
@given(games())
def test_legal_actions_and_apply_read_the_breakdown(game) -> None:
    play(game, check_offers_against_breakdown)


def test_the_modules_example_holds() -> None:
    """``rules/cost.py``'s docstring example (doctest)."""
    import doctest

    import rules.cost

    assert doctest.testmod(rules.cost).failed == 0
