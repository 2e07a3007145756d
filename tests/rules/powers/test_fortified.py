"""Fortified: once per turn while Active, a Fortress in a region the race holds; +1 defence even In
Decline, +1 coin while Active; at most 1 per region and 6 on the map; it leaves with the region
(rulebook, "Fortified")."""

import pytest

from rules import IllegalAction, conquest_cost, legal_actions, turn_score
from tests.rules.builder import Builder, act, marker, region_of
from tests.rules.invariants import check_invariants


def fortified(phase="redeploy", **fortresses):
    b = Builder(2).clear_board().active(0, "Humans", "Fortified", hand=0)
    for region in (3, 4, 9):
        b.region(region, seat=0, fortress=region in fortresses.get("at", ()))
    return b.at(0, phase).build()


def test_a_fortress_is_placed_in_a_region_the_race_holds():
    state = fortified()
    assert {a.region for a in legal_actions(state, 0) if a.type == "place_fortress"} == {3, 4, 9}
    state = act(state, "place_fortress", 0, region=4)
    assert region_of(state, 4)["fortress"] is True


def test_a_fortress_may_be_placed_during_the_conquests():
    state = act(fortified(phase="conquer"), "place_fortress", 0, region=3)
    assert marker(state, 3, "fortress")


def test_one_fortress_per_turn():
    state = act(fortified(), "place_fortress", 0, region=4)
    assert not any(a.type == "place_fortress" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="One Fortress per turn"):
        act(state, "place_fortress", 0, region=3)


def test_one_fortress_per_region():
    state = fortified(at=(4,))
    assert 4 not in {a.region for a in legal_actions(state, 0) if a.type == "place_fortress"}
    with pytest.raises(IllegalAction, match="already has a Fortress"):
        act(state, "place_fortress", 0, region=4)


def test_no_more_than_six_fortresses_on_the_map():
    b = Builder(2).clear_board().active(0, "Humans", "Fortified", hand=0)
    for region in (1, 2, 3, 4, 5, 6, 9):
        b.region(region, seat=0, fortress=region != 9)
    state = b.at(0, "redeploy").build()
    assert not any(a.type == "place_fortress" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="All 6 Fortresses"):
        act(state, "place_fortress", 0, region=9)


def test_only_in_the_races_own_regions():
    state = fortified()
    with pytest.raises(IllegalAction, match="not held by your Humans"):
        act(state, "place_fortress", 0, region=10)


def test_not_before_the_turns_conquests_begin():
    with pytest.raises(IllegalAction, match="conquests or redeployment"):
        act(fortified(phase="start"), "place_fortress", 0, region=3)


def test_a_fortress_adds_one_to_the_defence_even_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(2, seat=0)
        .declined(1, "Humans", "Fortified")
        .region(3, seat=1, declined=True, fortress=True)
        .at(0, "conquer")
        .build()
    )
    assert conquest_cost(state, 0, state.players[0].active, 3) == 2 + 1 + 1


def test_a_fortress_is_worth_a_coin_while_active():
    assert turn_score(fortified(at=(3, 9)), 0)["bonus"] == {"Fortified": 2, "Humans": 1}


def test_a_fortress_is_worth_nothing_in_decline():
    state = act(fortified(phase="start", at=(3, 9)), "decline", 0)
    assert state.last["score"] == {"regions": 3, "bonus": {}, "total": 3}
    assert marker(state, 3, "fortress") and marker(state, 9, "fortress")  # still there, still defending


def test_the_fortress_leaves_when_the_region_is_conquered():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(2, seat=0)
        .active(1, "Humans", "Fortified", hand=0)
        .region(3, seat=1, fortress=True)
        .region(4, seat=1)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "conquer", 0, region=3)
    assert region_of(state, 3) == {"owner": 0, "race": "Ratmen", "tokens": 4}


def test_the_fortress_leaves_when_the_region_is_abandoned():
    state = act(fortified(phase="start", at=(4,)), "abandon", 0, region=4)
    assert region_of(state, 4) == {}


def test_the_fortresses_leave_with_the_in_decline_race():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Humans", "Fortified")
        .region(3, seat=0, declined=True, fortress=True)
        .active(0, "Ratmen", "Hill", hand=0)
        .region(16, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert region_of(state, 3) == {}
    check_invariants(state)


def test_an_in_decline_fortified_race_places_no_fortress():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Humans", "Fortified")
        .region(3, seat=0, declined=True)
        .active(0, "Ratmen", "Hill", hand=0)
        .region(16, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert not any(a.type == "place_fortress" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="belongs to Fortified"):
        act(state, "place_fortress", 0, region=16)
