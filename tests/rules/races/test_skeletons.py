"""Skeletons: 1 new token from the box for every 2 non-empty regions conquered this turn, added at
redeployment; none when the box is empty (rulebook, "Skeletons"; components.md: the box is the hard
cap)."""

from rules import legal_actions
from rules.troops import box_left
from tests.rules.builder import Builder, act
from tests.rules.invariants import check_invariants
from tests.rules.playing import finish_turn


def conquer_all(state, *regions):
    for region in regions:
        state = act(state, "conquer", 0, region=region)
    return state


def test_two_non_empty_conquests_bring_one_new_skeleton():
    state = conquer_all(
        Builder(2)
        .clear_board()
        .active(0, "Skeletons", "Hill", hand=10)
        .region(5, seat=0)
        .region(6)
        .region(11)
        .at(0, "conquer")
        .build(),
        6,
        11,
    )
    hand = state.players[0].active.hand
    state = act(state, "end_conquest", 0)
    assert state.players[0].active.hand == hand + 1


def test_one_per_two_rounded_down():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Skeletons", "Hill", hand=12)
        .region(5, seat=0)
        .region(6)
        .region(11)
        .region(12)
        .at(0, "conquer")
        .build()
    )
    state = conquer_all(state, 6, 11, 12)
    hand = state.players[0].active.hand
    assert act(state, "end_conquest", 0).players[0].active.hand == hand + 1


def test_empty_regions_bring_nothing():
    state = Builder(2).clear_board().active(0, "Skeletons", "Hill", hand=10).region(5, seat=0).at(0, "conquer").build()
    state = conquer_all(state, 6, 11)
    hand = state.players[0].active.hand
    assert act(state, "end_conquest", 0).players[0].active.hand == hand


def test_no_new_skeleton_when_the_box_is_empty():
    # 20 Skeletons in the box: 10 on the map and 10 in hand.
    b = Builder(2).clear_board().active(0, "Skeletons", "Hill", hand=10)
    for region in (1, 2, 4, 5, 9, 15, 17, 19, 20, 21):
        b.region(region, seat=0)
    state = b.region(6).region(11).at(0, "conquer").build()
    assert box_left(state, "Skeletons") == 0
    state = conquer_all(state, 6, 11)
    hand = state.players[0].active.hand
    state = act(state, "end_conquest", 0)
    assert state.players[0].active.hand == hand
    check_invariants(state)


def test_the_box_limits_how_many_new_skeletons_come():
    b = Builder(2).clear_board().active(0, "Skeletons", "Hill", hand=12)
    for region in (1, 2, 5, 15, 17, 19, 20):
        b.region(region, seat=0)
    state = b.region(6).region(11).region(12).region(13).at(0, "conquer").build()
    state = conquer_all(state, 6, 11, 12, 13)  # 4 non-empty: 2 owed, 1 in the box
    assert box_left(state, "Skeletons") == 1
    hand = state.players[0].active.hand
    state = act(state, "end_conquest", 0)
    assert state.players[0].active.hand == hand + 1 and box_left(state, "Skeletons") == 0


def test_the_new_skeletons_are_redeployed_at_the_end_of_the_turn():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Skeletons", "Hill", hand=7)
        .region(5, seat=0)
        .region(6)
        .region(11)
        .at(0, "conquer")
        .build()
    )
    state = conquer_all(state, 6, 11)  # 3 + 3 of the 7
    state = act(state, "end_conquest", 0)
    (choice,) = [a for a in legal_actions(state, 0) if a.type == "redeploy"]
    assert choice.count == 1 + 3 + 3 + 1 + 1  # the region held, the two conquests, the 1 left, the new one
    state = finish_turn(state, 0)
    assert sum(state.regions[i].tokens for i in state.regions_of(0, "Skeletons")) == 9


def test_in_decline_skeletons_bring_nothing():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Skeletons", "Swamp")
        .region(3, seat=0, declined=True)
        .active(0, "Ratmen", "Hill", hand=10)
        .region(5, seat=0)
        .region(6)
        .region(11)
        .at(0, "conquer")
        .build()
    )
    state = conquer_all(state, 6, 11)
    state = act(state, "end_conquest", 0)
    assert state.players[0].declined[0].hand == 0
    assert state.players[0].active.hand == 10 - 3 - 3
