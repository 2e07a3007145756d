"""Commando: every conquest costs 1 token fewer, minimum 1 (rulebook, "Commando")."""

from rules import conquest_cost
from tests.rules.builder import Builder, act, region_of


def commando(**more):
    return (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Commando", hand=6)
        .region(3, seat=0)
        .active(1, "Humans", "Hill", hand=0)
        .region(9, seat=1, tokens=2)
        .region(4)
        .at(0, "conquer")
        .build()
    )


def cost(state, region):
    return conquest_cost(state, 0, state.players[0].active, region)


def test_every_conquest_costs_one_token_fewer():
    state = commando()
    assert (cost(state, 9), cost(state, 4), cost(state, 8)) == (3, 2, 2)
    state = act(state, "conquer", 0, region=9)
    assert region_of(state, 9)["tokens"] == 3 and state.players[0].active.hand == 3


def test_the_cost_never_falls_below_one():
    state = commando()
    assert cost(state, 2) == 1
    assert region_of(act(state, "conquer", 0, region=2), 2)["tokens"] == 1


def test_an_in_decline_commando_race_gives_the_new_race_no_discount():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Commando")
        .region(3, seat=0, declined=True)
        .active(0, "Humans", "Hill", hand=6)
        .region(2, seat=0)
        .at(0, "conquer")
        .build()
    )
    assert cost(state, 8) == 3
