"""Dragon Master: once per turn conquer a region with a single token whatever defends it; the Dragon
then makes the region immune to conquest and to every racial and special power until it moves; it
leaves when the race goes In Decline (rulebook, "Dragon Master"; rulings)."""

import pytest

from rules import IllegalAction, legal_actions
from rules.regions import set_region_marker
from tests.rules.builder import Builder, act, marker, region_of
from tests.rules.invariants import check_invariants
from tests.rules.playing import finish_turn


def dragon_master(hand=5, phase="conquer", **turn):
    return (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Dragon Master", hand=hand)
        .region(3, seat=0)
        .active(1, "Trolls", "Fortified", hand=0)
        .region(9, seat=1, tokens=4, lair=True, fortress=True)
        .region(14, seat=1)
        .at(0, phase, **turn)
        .build()
    )


def dragons(state, seat=0):
    return {a.region for a in legal_actions(state, seat) if a.type == "dragon"}


def test_the_dragon_conquers_with_one_token_whatever_the_defence():
    state = dragon_master()
    assert 9 in dragons(state)
    state = act(state, "dragon", 0, region=9)
    assert region_of(state, 9) == {"owner": 0, "race": "Ratmen", "tokens": 1, "dragon": True}
    assert state.players[0].active.hand == 4
    assert state.players[1].active.hand == 3  # one Troll lost, as in any conquest
    check_invariants(state)


def test_the_dragon_may_take_an_empty_region_for_one_token():
    state = dragon_master()
    assert 8 in dragons(state)  # an empty Mountain: 3 tokens otherwise
    assert region_of(act(state, "dragon", 0, region=8), 8)["tokens"] == 1


def test_the_dragons_region_is_immune_to_conquest():
    state = finish_turn(act(dragon_master(), "dragon", 0, region=9), 0)
    assert state.current == 1
    assert 9 not in {a.region for a in legal_actions(state, 1) if a.region is not None}
    with pytest.raises(IllegalAction, match="immune: the Dragon"):
        act(state, "conquer", 1, region=9)


def test_the_dragons_region_is_immune_to_the_sorcerers():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", "Hill", hand=0)
        .region(3, seat=0)
        .active(1, "Ratmen", "Dragon Master", hand=0)
        .region(4, seat=1, dragon=True)
        .at(0, "start")
        .build()
    )
    with pytest.raises(IllegalAction, match="immune: the Dragon"):
        act(state, "convert", 0, region=4)


def test_the_dragon_attacks_once_per_turn():
    state = act(dragon_master(), "dragon", 0, region=9)
    assert dragons(state) == set()
    with pytest.raises(IllegalAction, match="once per turn"):
        act(state, "dragon", 0, region=4)


def test_the_dragon_moves_to_its_next_conquest():
    state = dragon_master(hand=5)
    set_region_marker(state, 3, "dragon", True)
    state = act(state, "dragon", 0, region=9)
    assert not marker(state, 3, "dragon") and marker(state, 9, "dragon")
    assert sum(marker(state, i, "dragon") for i in range(len(state.regions))) == 1


def test_an_unused_dragon_stays_where_it_is():
    state = dragon_master()
    set_region_marker(state, 3, "dragon", True)
    state = act(state, "conquer", 0, region=4)
    state = finish_turn(state, 0)
    assert marker(state, 3, "dragon")


def test_the_dragon_cannot_attack_an_immune_region():
    state = dragon_master()
    set_region_marker(state, 9, "hero", True)
    assert 9 not in dragons(state)
    with pytest.raises(IllegalAction, match="immune: Heroes"):
        act(state, "dragon", 0, region=9)


def test_the_dragon_needs_a_token_in_hand():
    state = dragon_master(hand=0)
    assert dragons(state) == set()
    with pytest.raises(IllegalAction, match="one token in hand"):
        act(state, "dragon", 0, region=9)


def test_the_dragon_follows_the_adjacency_rules():
    state = dragon_master()
    with pytest.raises(IllegalAction, match="not adjacent"):
        act(state, "dragon", 0, region=14)
    with pytest.raises(IllegalAction, match="only a Seafaring race"):
        act(state, "dragon", 0, region=7)


def test_the_dragon_disappears_when_the_race_goes_in_decline():
    state = dragon_master(phase="start")
    set_region_marker(state, 3, "dragon", True)
    state = act(state, "decline", 0)
    assert not any(marker(state, i, "dragon") for i in range(len(state.regions)))
    check_invariants(state)


def test_the_dragon_leaves_an_abandoned_region():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Dragon Master", hand=0)
        .region(3, seat=0, tokens=2, dragon=True)
        .region(4, seat=0)
        .at(0, "start")
        .build()
    )
    state = act(state, "abandon", 0, region=3)
    assert region_of(state, 3) == {}


def test_a_dragon_conquest_ends_the_in_decline_ghouls_moment():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ghouls", "Swamp")
        .region(10, seat=0, tokens=3, declined=True)
        .active(0, "Ratmen", "Dragon Master", hand=3)
        .region(3, seat=0)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "dragon", 0, region=4)
    assert not any(a.troop == "declined" for a in legal_actions(state, 0))


def test_no_dragon_while_a_berserk_roll_waits():
    state = dragon_master(berserk_die=2)
    assert dragons(state) == set()


def test_the_dragons_region_is_immune_to_in_decline_ghouls():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ghouls", "Swamp")
        .region(3, seat=0, tokens=5, declined=True)
        .active(1, "Ratmen", "Dragon Master", hand=0)
        .region(4, seat=1, dragon=True)
        .at(0, "pick")
        .build()
    )
    assert not any(a.region == 4 for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="immune: the Dragon"):
        act(state, "conquer", 0, region=4, troop="declined")
