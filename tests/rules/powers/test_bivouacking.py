"""Bivouacking: 5 Encampments placed in the race's regions at redeployment, +1 defence each, moved
freely each turn, never lost in an attack (placed again at the end of the attacker's turn), gone In
Decline (rulebook, "Bivouacking"). The ``auto`` rule (ARCHITECTURE §4) leaves them where they are and puts
those off the board on the weakest region."""

import pytest

from rules import IllegalAction, auto_pass, conquest_cost, legal_actions, turn_score
from tests.rules.builder import Builder, act, marker, region_of, slot
from tests.rules.invariants import check_invariants


def camping(camps_on_board=None, camps_off=0, phase="redeploy", redeploy="auto"):
    camps_on_board = camps_on_board or {}
    b = Builder(2, redeploy=redeploy).clear_board().active(0, "Humans", "Bivouacking", hand=0, camps=camps_off)
    for region in (3, 4, 9):
        b.region(region, seat=0, encampments=camps_on_board.get(region, 0))
    return b.at(0, phase).build()


def test_the_five_encampments_come_with_the_pick():
    state = Builder(2).combos(("Humans", "Bivouacking"), ("Ratmen", "Hill")).at(0, "pick").build()
    state = act(state, "pick", 0, combo=0)
    assert slot(state, "Bivouacking").aside == 5


def test_encampments_are_placed_during_redeployment():
    state = camping(camps_off=5)
    (choice,) = [a for a in legal_actions(state, 0) if a.type == "place_encampments"]
    assert (choice.regions, choice.count) == ((3, 4, 9), 5)
    state = act(state, "place_encampments", 0, tokens=((3, 2), (9, 3)))
    assert [marker(state, i, "encampments") for i in (3, 4, 9)] == [2, 0, 3]
    assert slot(state, "Bivouacking").aside == 0
    check_invariants(state)


def test_each_encampment_adds_one_to_the_defence():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(2, seat=0)
        .active(1, "Humans", "Bivouacking", hand=0)
        .region(3, seat=1, encampments=3)
        .region(4, seat=1, encampments=2)
        .at(0, "conquer")
        .build()
    )
    assert conquest_cost(state, 0, state.players[0].active, 3) == 2 + 1 + 3


def test_encampments_move_freely_each_turn():
    state = camping({3: 2, 4: 3})
    state = act(state, "place_encampments", 0, tokens=((9, 5),))
    assert [marker(state, i, "encampments") for i in (3, 4, 9)] == [0, 0, 5]


def test_no_more_than_the_five_encampments():
    state = camping({3: 2, 4: 3})
    with pytest.raises(IllegalAction, match="You have 5 Encampments"):
        act(state, "place_encampments", 0, tokens=((9, 6),))


def test_encampments_go_only_in_the_races_own_regions():
    state = camping(camps_off=5)
    with pytest.raises(IllegalAction, match="only in your own regions; 10 is not yours"):
        act(state, "place_encampments", 0, tokens=((10, 1),))


def test_encampments_are_placed_only_at_redeployment():
    state = camping(camps_off=5, phase="conquer")
    assert not any(a.type == "place_encampments" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="during your Troop Redeployment"):
        act(state, "place_encampments", 0, tokens=((3, 1),))


def test_encampments_left_aside_are_placed_at_the_end_of_the_turn():
    state = camping(camps_off=5)
    state = act(state, "place_encampments", 0, tokens=((3, 3),))
    state = act(state, "end_turn", 0)
    # The 2 left aside go by the auto rule onto the weakest regions (tokens + Encampments, lowest
    # number).
    assert [marker(state, i, "encampments") for i in (3, 4, 9)] == [3, 1, 1]


def test_auto_pass_keeps_the_encampments_where_they_are():
    state = auto_pass(camping({3: 1, 9: 4}, phase="start"), 0)
    assert [marker(state, i, "encampments") for i in (3, 4, 9)] == [1, 0, 4]


def test_encampments_are_never_lost_in_an_attack():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=10)
        .region(2, seat=0)
        .active(1, "Humans", "Bivouacking", hand=0)
        .region(3, seat=1, encampments=2)
        .region(4, seat=1, encampments=3)
        .region(10, seat=1)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "conquer", 0, region=3)  # 2 + 1 + 2
    assert slot(state, "Bivouacking").aside == 2 and region_of(state, 3)["race"] == "Ratmen"
    state = act(state, "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((2, 1), (3, 10)))
    state = act(state, "end_turn", 0)
    # Placed again at the end of the attacker's turn, onto the weakest region.
    assert slot(state, "Bivouacking").aside == 0
    assert [marker(state, i, "encampments") for i in (4, 10)] == [3, 2]
    check_invariants(state)


def test_encampments_of_an_abandoned_region_are_placed_again():
    state = act(camping({4: 5}, phase="start"), "abandon", 0, region=4)
    assert slot(state, "Bivouacking").aside == 5
    state = act(state, "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((3, 2), (9, 1)))
    state = act(state, "end_turn", 0)
    assert sum(marker(state, i, "encampments") for i in (3, 9)) == 5


def test_encampments_disappear_when_the_race_goes_in_decline():
    state = act(camping({3: 2, 4: 3}, phase="start"), "decline", 0)
    assert all(marker(state, i, "encampments") == 0 for i in range(len(state.regions)))
    assert slot(state, "Bivouacking").aside == 0
    check_invariants(state)


def test_encampments_earn_no_coin():
    assert turn_score(camping({3: 5}), 0) == {"regions": 3, "bonus": {"Humans": 1}, "total": 4}


def attacked_in_ask_mode(**humans):
    """``ask`` mode: seat 0's Ratmen take region 3 (2 Humans, 2 Encampments) from seat 1's Bivouacking
    Humans, who also hold 4 (3 Encampments) and 10, and end the turn."""
    state = (
        Builder(2, redeploy="ask")
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=10)
        .region(2, seat=0)
        .active(1, "Humans", "Bivouacking", hand=0)
        .region(3, seat=1, tokens=2, encampments=2)
        .region(4, seat=1, encampments=3)
        .region(10, seat=1, **humans)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "conquer", 0, region=3)  # 2 + 2 + 2
    state = act(state, "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((2, 1), (3, 10)))
    return act(state, "end_turn", 0)


def test_in_ask_mode_the_attacked_player_places_the_encampments_of_a_conquered_region():
    # Rulebook, "Bivouacking": Encampments "are never lost during an attack on the Region they are in: they
    # are redeployed at the end of the current player's turn" - by their owner, in the step ``ask`` gives.
    state = attacked_in_ask_mode()
    assert state.phase == "defend" and state.defenders == [1]
    assert slot(state, "Bivouacking").aside == 2 and marker(state, 10, "encampments") == 0
    choices = legal_actions(state, 1)
    (choice,) = [a for a in choices if a.type == "return_encampments"]
    assert (choice.regions, choice.count) == ((4, 10), 2)
    assert not any(a.type == "place_encampments" for a in choices)  # those on the board stay
    with pytest.raises(IllegalAction, match="for your own turn"):
        act(state, "place_encampments", 1, tokens=((4, 5),))
    with pytest.raises(IllegalAction, match="2 of your Encampments are off the map; this places 3"):
        act(state, "return_encampments", 1, tokens=((10, 3),))
    state = act(state, "return_encampments", 1, tokens=((4, 1), (10, 1)))
    assert [marker(state, i, "encampments") for i in (4, 10)] == [4, 1]
    assert slot(state, "Bivouacking").aside == 0
    assert not any(a.type == "return_encampments" for a in legal_actions(state, 1))
    state = act(state, "redeploy", 1, tokens=((4, 1), (10, 2)))  # the token back in hand
    state = act(state, "end_turn", 1)
    assert state.current == 1 and [marker(state, i, "encampments") for i in (4, 10)] == [4, 1]
    check_invariants(state)


def test_in_ask_mode_encampments_left_off_go_by_the_auto_rule_when_the_step_ends():
    state = attacked_in_ask_mode()
    state = act(state, "return_encampments", 1, tokens=((4, 1),))
    assert slot(state, "Bivouacking").aside == 1
    state = act(state, "redeploy", 1, tokens=((4, 1), (10, 2)))
    state = act(state, "end_turn", 1)  # the last one: the weakest region, 10 (2 tokens, no Encampment)
    assert slot(state, "Bivouacking").aside == 0 and [marker(state, i, "encampments") for i in (4, 10)] == [4, 1]
    check_invariants(state)


def test_in_ask_mode_a_missed_deadline_places_them_by_the_auto_rule():
    # ARCHITECTURE §4: at the deadline the ``auto`` rule applies - the weakest region (tokens + Encampments).
    state = auto_pass(attacked_in_ask_mode(), 1)
    assert state.current == 1 and [marker(state, i, "encampments") for i in (4, 10)] == [3, 2]
    check_invariants(state)


def test_return_encampments_is_only_for_an_attacked_player():
    with pytest.raises(IllegalAction, match="attacked player's redeployment"):
        act(camping(camps_off=2), "return_encampments", 0, tokens=((3, 2),))


def test_in_auto_mode_they_are_placed_at_the_end_of_the_attackers_turn():
    state = Builder(2).clear_board().active(0, "Ratmen", "Hill", hand=10).region(2, seat=0)
    state = state.active(1, "Humans", "Bivouacking", hand=0).region(3, seat=1, tokens=2, encampments=2)
    state = state.region(4, seat=1, encampments=3).region(10, seat=1).at(0, "conquer").build()
    state = act(state, "conquer", 0, region=3)
    state = act(state, "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((2, 1), (3, 10)))
    state = act(state, "end_turn", 0)
    assert state.current == 1 and slot(state, "Bivouacking").aside == 0
    assert [marker(state, i, "encampments") for i in (4, 10)] == [3, 2]


def test_encampments_of_a_region_the_amazons_give_up_are_placed_again():
    # Amazons with 6 tokens on 3 regions keep 2 on the board: the Encampments of the region given up
    # stay.
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Amazons", "Bivouacking", hand=3)
        .region(3, seat=0, encampments=1)
        .region(4, seat=0, encampments=4)
        .region(9, seat=0)
        .at(0, "redeploy")
        .build()
    )
    state = act(state, "redeploy", 0, tokens=((3, 1), (4, 0), (9, 1)))
    state = act(state, "end_turn", 0)
    assert sum(marker(state, i, "encampments") for i in (3, 9)) == 5
    check_invariants(state)
