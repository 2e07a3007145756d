"""Mounted: Hill and Farmland regions cost 1 token fewer, minimum 1 (rulebook, "Mounted").
On the 2-player board 4 and 6 are Hills, 9 and 1 Farmland, 2 a Forest."""

from rules import conquest_cost
from tests.rules.builder import Builder, act


def mounted(power="Mounted"):
    return (
        Builder(2).clear_board().active(0, "Ratmen", power, hand=6).region(3, seat=0).region(6).at(0, "conquer").build()
    )


def cost(state, region):
    return conquest_cost(state, 0, state.players[0].active, region)


def test_hills_and_farmland_cost_one_token_fewer():
    state = mounted()
    assert (cost(state, 4), cost(state, 9), cost(state, 6)) == (1, 1, 2)
    assert act(state, "conquer", 0, region=4).regions[4].tokens == 1


def test_other_terrains_cost_the_full_price():
    state = mounted()
    assert (cost(state, 2), cost(state, 8), cost(state, 20)) == (2, 3, 2)


def test_without_mounted_hills_cost_the_full_price():
    assert cost(mounted(power="Hill"), 4) == 2
