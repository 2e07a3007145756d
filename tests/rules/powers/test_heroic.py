"""Heroic: at the end of the turn the 2 Heroes stand in 2 different regions of the race, which are
immune to conquest and to every racial and special power until the Heroes move; they disappear In
Decline (rulebook, "Heroic"; rulings). Not placed by hand (or auto-passed), they stay where they
stand; missing ones go to the race's lowest-numbered regions."""

import pytest

from rules import IllegalAction, auto_pass, legal_actions
from tests.rules.builder import Builder, act, marker
from tests.rules.invariants import check_invariants
from tests.rules.playing import finish_turn


def heroic(phase="redeploy", heroes=(), regions=(3, 4, 9), **more):
    b = Builder(2, **more).clear_board().active(0, "Humans", "Heroic", hand=0)
    for region in regions:
        b.region(region, seat=0, hero=region in heroes)
    return b.at(0, phase).build()


def heroes(state):
    return [i for i in range(len(state.regions)) if marker(state, i, "hero")]


def test_the_two_heroes_go_to_two_regions_at_the_end_of_the_turn():
    state = heroic()
    (choice,) = [a for a in legal_actions(state, 0) if a.type == "place_heroes"]
    assert (choice.regions, choice.count) == ((3, 4, 9), 2)
    state = act(state, "place_heroes", 0, regions=(4, 9))
    assert heroes(state) == [4, 9]
    state = act(state, "end_turn", 0)
    assert heroes(state) == [4, 9]


def test_a_heros_region_is_immune_to_conquest():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(2, seat=0)
        .active(1, "Humans", "Heroic", hand=0)
        .region(3, seat=1, hero=True)
        .region(8, seat=1)
        .at(0, "conquer")
        .build()
    )
    assert 3 not in {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    with pytest.raises(IllegalAction, match="immune: Heroes"):
        act(state, "conquer", 0, region=3)


def test_a_heros_region_is_immune_to_the_sorcerers_the_dragon_and_the_ghouls():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", "Dragon Master", hand=5)
        .region(2, seat=0)
        .declined(0, "Ghouls", "Swamp")
        .region(4, seat=0, tokens=5, declined=True)
        .active(1, "Humans", "Heroic", hand=0)
        .region(3, seat=1, hero=True)
        .region(8, seat=1, hero=True)
        .at(0, "start")
        .build()
    )
    assert not {3, 8} & {a.region for a in legal_actions(state, 0) if a.region is not None}
    for kind, troop in (("convert", "active"), ("dragon", "active"), ("conquer", "declined")):
        with pytest.raises(IllegalAction, match="immune: Heroes"):
            act(state, kind, 0, region=3, troop=troop)


def test_the_two_heroes_stand_in_different_regions():
    with pytest.raises(IllegalAction, match="two different regions"):
        act(heroic(), "place_heroes", 0, regions=(4, 4))


def test_heroes_go_only_in_the_races_regions():
    with pytest.raises(IllegalAction, match="not held by your Humans"):
        act(heroic(), "place_heroes", 0, regions=(4, 10))


def test_both_heroes_are_placed():
    with pytest.raises(IllegalAction, match="Place 2 Heroes"):
        act(heroic(), "place_heroes", 0, regions=(4,))


def test_a_race_with_one_region_places_one_hero():
    state = heroic(regions=(3,))
    (choice,) = [a for a in legal_actions(state, 0) if a.type == "place_heroes"]
    assert choice.count == 1
    assert heroes(act(state, "place_heroes", 0, regions=(3,))) == [3]


def test_heroes_move_when_placed_again():
    state = act(heroic(heroes=(3, 4)), "place_heroes", 0, regions=(9, 3))
    assert heroes(state) == [3, 9]


def test_heroes_are_placed_only_at_the_end_of_the_turn():
    state = heroic(phase="conquer")
    assert not any(a.type == "place_heroes" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="end of your turn"):
        act(state, "place_heroes", 0, regions=(3, 4))


def test_heroes_not_moved_stay_where_they_stand():
    state = act(heroic(heroes=(4, 9)), "end_turn", 0)
    assert heroes(state) == [4, 9]


def test_an_auto_passed_turn_leaves_the_heroes_in_place():
    state = auto_pass(heroic(phase="start", heroes=(4, 9)), 0)
    assert heroes(state) == [4, 9]


def test_heroes_not_yet_on_the_map_go_to_the_lowest_numbered_regions():
    state = act(heroic(heroes=(9,)), "end_turn", 0)
    assert heroes(state) == [3, 9]
    assert heroes(act(heroic(), "end_turn", 0)) == [3, 4]


def test_a_hero_whose_region_was_abandoned_after_placing_lands_again():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Humans", "Heroic", hand=0)
        .region(3, seat=0, tokens=3)
        .region(4, seat=0)
        .region(9, seat=0)
        .at(0, "start")
        .build()
    )
    state = act(state, "abandon", 0, region=4)
    state = finish_turn(state, 0)
    assert heroes(state) == [3, 9]


def test_the_heroes_disappear_when_the_race_goes_in_decline():
    state = act(heroic(phase="start", heroes=(3, 4)), "decline", 0)
    assert heroes(state) == []
    check_invariants(state)


def test_stout_heroes_land_then_leave_with_the_decline():
    state = Builder(2).clear_board().active(0, "Humans", "Stout", hand=0).region(3, seat=0).at(0, "redeploy").build()
    assert heroes(act(state, "end_turn", 0, decline=True)) == []


def test_heroes_placed_before_a_region_is_given_up_are_completed_at_the_end_of_the_turn():
    # Amazons with 6 tokens on 3 regions keep 2 on the board: one region is given up at
    # redeployment.
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Amazons", "Heroic", hand=3)
        .region(3, seat=0)
        .region(4, seat=0)
        .region(9, seat=0)
        .at(0, "redeploy")
        .build()
    )
    state = act(state, "place_heroes", 0, regions=(3, 4))
    state = act(state, "redeploy", 0, tokens=((3, 1), (4, 0), (9, 1)))
    state = act(state, "end_turn", 0)
    assert heroes(state) == [3, 9]
    check_invariants(state)
