"""Giants: 1 token fewer to conquer a region adjacent to a Mountain region they occupy, minimum 1
(rulebook, "Giants"; rulings). On the 2-player board Mountain 5 borders 0, 1, 6, 11; Mountain 8
borders 2, 3, 7, 9, 13, 14."""

from rules import conquest_cost
from tests.rules.builder import Builder, act, region_of


def cost(state, region, seat=0):
    return conquest_cost(state, seat, state.players[seat].active, region)


def giants(power="Hill", **regions):
    b = Builder(2).active(0, "Giants", power, hand=6).empty(1, 2, 5)
    for name, tokens in regions.items():
        b.region(int(name[1:]), seat=0, tokens=tokens)
    return b.at(0, "conquer").build()


def test_a_region_next_to_a_mountain_they_occupy_costs_one_less():
    state = giants(r5=1)
    assert cost(state, 6) == 2 + 1 - 1  # a Lost Tribe on region 6
    state = act(state, "conquer", 0, region=6)
    assert region_of(state, 6)["tokens"] == 2 and state.players[0].active.hand == 4


def test_the_cost_never_falls_below_one():
    state = giants(power="Commando", r5=1)
    assert cost(state, 1) == 1  # empty: 2 - 1 (Giants) - 1 (Commando)


def test_no_discount_next_to_a_mountain_they_do_not_occupy():
    state = giants(r2=1)  # region 2 borders Mountain 8, which nobody holds
    assert cost(state, 3) == 3  # 2 + the Lost Tribe


def test_no_discount_next_to_a_mountain_held_by_their_owners_other_race():
    state = (
        Builder(2)
        .active(0, "Giants", "Hill", hand=6)
        .empty(5)
        .declined(0, "Ratmen", "Swamp")
        .region(5, seat=0, declined=True)
        .region(1, seat=0)
        .at(0, "conquer")
        .build()
    )
    assert cost(state, 6) == 3


def test_conquering_the_mountain_itself_gets_no_discount():
    state = giants(r2=1)
    assert cost(state, 8) == 3  # 2 + the Mountain: Mountain 8 borders no Giant Mountain


def test_giants_in_decline_give_the_new_race_no_discount():
    state = (
        Builder(2)
        .declined(0, "Giants")
        .empty(5)
        .region(5, seat=0, declined=True)
        .active(0, "Ratmen", "Hill", hand=6)
        .empty(1)
        .region(1, seat=0)
        .at(0, "conquer")
        .build()
    )
    assert cost(state, 6) == 3
