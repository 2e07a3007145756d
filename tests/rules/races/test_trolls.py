"""Trolls: a Troll's Lair in each region they conquer, +1 defence, kept In Decline; the Lair leaves
with the Trolls (region conquered, abandoned, or the In Decline Trolls removed) (rulebook, "Trolls";
rulings)."""

from rules import conquest_cost, turn_score
from tests.rules.builder import Builder, act, marker, region_of
from tests.rules.invariants import check_invariants


def trolls_conquering(hand=8):
    return Builder(2).active(0, "Trolls", "Hill", hand=hand).empty(1).region(1, seat=0).at(0, "conquer").build()


def test_a_lair_is_placed_in_each_region_the_trolls_conquer():
    state = act(trolls_conquering(), "conquer", 0, region=6)
    assert region_of(state, 6) == {"owner": 0, "race": "Trolls", "tokens": 3, "lair": True}


def test_a_lair_adds_one_to_the_defence():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(3, seat=0)
        .active(1, "Trolls", "Swamp", hand=0)
        .region(4, seat=1, lair=True)
        .at(0, "conquer")
        .build()
    )
    assert conquest_cost(state, 0, state.players[0].active, 4) == 2 + 1 + 1


def test_the_lair_stays_when_the_trolls_go_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Trolls", "Hill", hand=0)
        .region(3, seat=0, tokens=3, lair=True)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert region_of(state, 3) == {"owner": 0, "race": "Trolls", "tokens": 1, "lair": True}


def test_in_decline_trolls_still_defend_with_their_lair():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(3, seat=0)
        .declined(1, "Trolls", "Swamp")
        .region(4, seat=1, declined=True, lair=True)
        .at(0, "conquer")
        .build()
    )
    assert conquest_cost(state, 0, state.players[0].active, 4) == 4


def test_the_lair_leaves_when_the_region_is_conquered():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(3, seat=0)
        .active(1, "Trolls", "Swamp", hand=0)
        .region(4, seat=1, lair=True)
        .region(10, seat=1, lair=True)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "conquer", 0, region=4)
    assert region_of(state, 4) == {"owner": 0, "race": "Ratmen", "tokens": 4}


def test_the_lair_leaves_when_the_region_is_abandoned():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Trolls", "Hill", hand=0)
        .region(3, seat=0, tokens=2, lair=True)
        .region(4, seat=0, lair=True)
        .at(0, "start")
        .build()
    )
    state = act(state, "abandon", 0, region=4)
    assert region_of(state, 4) == {}


def test_the_lairs_leave_when_the_in_decline_trolls_are_removed_by_a_later_decline():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Trolls")
        .region(3, seat=0, declined=True, lair=True)
        .active(0, "Ratmen", "Hill", hand=0)
        .region(16, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert region_of(state, 3) == {}
    assert [t.race for t in state.players[0].declined] == ["Ratmen"]


def test_a_lair_earns_no_coin():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Trolls", "Commando", hand=0)
        .region(3, seat=0, lair=True)
        .region(4, seat=0, lair=True)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 2, "bonus": {}, "total": 2}


def test_all_ten_trolls_on_the_map_each_have_their_lair():
    """The box holds 10 Troll tokens and 10 Lairs: a Troll region never lacks its Lair."""
    b = Builder(2).clear_board().active(0, "Trolls", "Commando", hand=1)
    for region in (1, 2, 3, 4, 5, 6, 8, 9, 10):
        b.region(region, seat=0, lair=True)
    state = act(b.at(0, "conquer").build(), "conquer", 0, region=11)  # empty: 2 - 1 (Commando)
    assert region_of(state, 11)["lair"] is True
    assert sum(marker(state, i, "lair") for i in range(len(state.regions))) == 10
    check_invariants(state)


def test_the_lair_of_in_decline_trolls_leaves_when_their_region_is_conquered():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(3, seat=0)
        .declined(1, "Trolls", "Swamp")
        .region(4, seat=1, declined=True, lair=True)
        .region(10, seat=1, declined=True, lair=True)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "conquer", 0, region=4)  # 2 + 1 Troll + 1 Lair
    assert region_of(state, 4) == {"owner": 0, "race": "Ratmen", "tokens": 4}
    assert marker(state, 10, "lair")
