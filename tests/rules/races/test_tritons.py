"""Tritons: 1 token fewer on Coastal regions, those bordering a Sea or the Lake, minimum 1
(rulebook, "Tritons"). On the 2-player board region 6 borders the Lake, region 9 borders no water.
"""

import pytest

from rules import IllegalAction, conquest_cost
from tests.rules.builder import Builder, act


def tritons(power="Hill"):
    return (
        Builder(2)
        .active(0, "Tritons", power, hand=6)
        .empty(1, 2)
        .region(2, seat=0)
        .region(3, seat=0)
        .at(0, "conquer")
        .build()
    )


def cost(state, region):
    return conquest_cost(state, 0, state.players[0].active, region)


def test_a_region_on_the_lake_costs_one_less():
    state = tritons()
    assert cost(state, 6) == 2 + 1 - 1  # the Lost Tribe on 6
    state = act(state, "conquer", 0, region=6)
    assert state.regions[6].tokens == 2


def test_a_region_on_a_sea_costs_one_less():
    state = tritons()
    assert cost(state, 1) == 1  # empty, on the Sea 0


def test_an_inland_region_costs_the_full_price():
    state = tritons()
    assert cost(state, 14) == 2 + 1  # the Lost Tribe on 14
    assert cost(state, 9) == 2


def test_the_cost_never_falls_below_one():
    state = tritons(power="Commando")
    assert cost(state, 1) == 1


def test_tritons_cannot_enter_the_lake_without_seafaring():
    state = tritons()
    with pytest.raises(IllegalAction, match="only a Seafaring race"):
        act(state, "conquer", 0, region=7)
