"""Halflings: enter through any land region; a Hole-in-the-Ground in each of their first 2 conquests
makes the region immune to conquest and to every racial and special power; the Holes go when the
Halflings go In Decline or leave the region (rulebook, "Halflings"; rulings)."""

import pytest

from rules import IllegalAction, legal_actions
from tests.rules.builder import Builder, act, marker, region_of, slot
from tests.rules.invariants import check_invariants
from tests.rules.playing import finish_turn

# 2-player board: 9 (farmland) and 6 (hill, Lost Tribe) are inland; 7 is the Lake.


def halflings_picking():
    return Builder(2).combos(("Halflings", "Hill"), ("Ratmen", "Swamp")).at(0, "pick").build()


def test_halflings_may_enter_through_an_inland_region():
    state = act(halflings_picking(), "pick", 0, combo=0)
    assert {6, 9} <= {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    state = act(state, "conquer", 0, region=9)
    assert region_of(state, 9)["race"] == "Halflings"


def test_other_races_must_enter_through_the_border():
    state = act(halflings_picking(), "pick", 0, combo=1)
    with pytest.raises(IllegalAction, match="first conquest must be on a border region"):
        act(state, "conquer", 0, region=9)


def test_seafaring_halflings_may_enter_by_the_lake():
    """Rulings: a race that may enter anywhere makes its first conquest on any region it may conquer, so
    Seafaring Halflings may enter by the Lake (7, inland), as other Seafarers may not."""
    state = Builder(2).combos(("Halflings", "Seafaring"), ("Ratmen", "Swamp")).at(0, "pick").build()
    state = act(state, "pick", 0, combo=0)
    assert 7 in {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    state = act(state, "conquer", 0, region=7)
    assert region_of(state, 7) == {"owner": 0, "race": "Halflings", "tokens": 2, "hole": True}
    check_invariants(state)


def test_halflings_never_enter_the_lake():
    state = act(halflings_picking(), "pick", 0, combo=0)
    with pytest.raises(IllegalAction, match="only a Seafaring race"):
        act(state, "conquer", 0, region=7)


def test_the_first_two_conquests_get_a_hole_in_the_ground_and_no_more():
    state = act(halflings_picking(), "pick", 0, combo=0)
    for region in (9, 4, 10):
        state = act(state, "conquer", 0, region=region)
    assert [marker(state, i, "hole") for i in (9, 4, 10)] == [True, True, False]
    assert slot(state, "Halflings").dug == 2


def test_a_hole_makes_the_region_immune_to_conquest():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(3, seat=0)
        .active(1, "Halflings", "Swamp", hand=0, holes=1)
        .region(4, seat=1, hole=True)
        .at(0, "conquer")
        .build()
    )
    assert 4 not in {a.region for a in legal_actions(state, 0)}
    with pytest.raises(IllegalAction, match="immune: a Hole-in-the-Ground"):
        act(state, "conquer", 0, region=4)


def test_a_hole_makes_the_region_immune_to_the_sorcerers_and_the_dragon():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", "Dragon Master", hand=6)
        .region(3, seat=0)
        .active(1, "Halflings", "Swamp", hand=0, holes=1)
        .region(4, seat=1, hole=True)
        .at(0, "conquer")
        .build()
    )
    assert 4 not in {a.region for a in legal_actions(state, 0)}
    with pytest.raises(IllegalAction, match="immune"):
        act(state, "convert", 0, region=4)
    with pytest.raises(IllegalAction, match="immune"):
        act(state, "dragon", 0, region=4)


def test_a_hole_makes_the_region_immune_to_in_decline_ghouls():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ghouls", "Swamp")
        .region(3, seat=0, tokens=5, declined=True)
        .active(1, "Halflings", "Hill", hand=0, holes=1)
        .region(4, seat=1, hole=True)
        .at(0, "pick")
        .build()
    )
    with pytest.raises(IllegalAction, match="immune"):
        act(state, "conquer", 0, region=4, troop="declined")


def test_the_holes_go_when_the_halflings_go_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Halflings", "Hill", hand=0, holes=2)
        .region(3, seat=0, tokens=2, hole=True)
        .region(4, seat=0, hole=True)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert not marker(state, 3, "hole") and not marker(state, 4, "hole")
    check_invariants(state)


def test_the_hole_goes_when_its_region_is_abandoned_and_is_not_given_again():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Halflings", "Hill", hand=0, holes=2)
        .region(3, seat=0, tokens=3, hole=True)
        .region(4, seat=0, hole=True)
        .at(0, "start")
        .build()
    )
    state = act(state, "abandon", 0, region=4)
    assert region_of(state, 4) == {}
    state = act(state, "conquer", 0, region=9)
    assert not marker(state, 9, "hole")  # two Holes were placed already, ever


def test_halflings_that_abandoned_everything_enter_anywhere_again():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Halflings", "Hill", hand=0, holes=1)
        .region(3, seat=0, tokens=3, hole=True)
        .at(0, "start")
        .build()
    )
    state = act(state, "abandon", 0, region=3)
    assert state.players[0].active.hand == 3
    state = act(state, "conquer", 0, region=13)  # inland (Lost Tribe cleared)
    assert marker(state, 13, "hole")


def test_holes_stay_in_place_through_an_auto_passed_turn():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Halflings", "Hill", hand=0, holes=2)
        .region(3, seat=0, tokens=3, hole=True)
        .region(4, seat=0, hole=True)
        .at(0, "start")
        .build()
    )
    state = finish_turn(state, 0)
    assert marker(state, 3, "hole") and marker(state, 4, "hole")
