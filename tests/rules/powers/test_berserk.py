"""Berserk: before each conquest roll the die first, then name the target and pay its cost minus the
roll (minimum 1); a target hand + roll cannot pay fails and ends the conquests; two rolls with no
conquest between are not allowed (rulebook, "Berserk"; rulings)."""

import pytest

from rules import IllegalAction, auto_pass, legal_actions
from rules.components import DIE_FACES
from tests.rules.builder import Builder, act, region_of, slot


def berserk(hand=3, die=None, phase="conquer"):
    # Region 3 is held; 4 is empty, 9 has 2 Humans (cost 4).
    b = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Berserk", hand=hand)
        .region(3, seat=0)
        .active(1, "Humans", "Hill", hand=0)
        .region(9, seat=1, tokens=2)
        .region(14, seat=1)
    )
    return b.at(0, phase, berserk_die=die).build() if die is not None else b.at(0, phase).build()


def test_the_roll_comes_first_and_is_kept_for_the_next_conquest():
    state = berserk()
    assert any(a.type == "berserk_roll" for a in legal_actions(state, 0))
    state = act(state, "berserk_roll", 0)
    assert slot(state, "Berserk", turn=True).die in DIE_FACES
    assert state.last["die"] == slot(state, "Berserk", turn=True).die and state.last["undo_point"]


def test_the_conquest_costs_the_roll_less():
    state = act(berserk(hand=3, die=2), "conquer", 0, region=9)  # 4 - 2
    assert region_of(state, 9) == {"owner": 0, "race": "Ratmen", "tokens": 2}
    assert state.players[0].active.hand == 1
    assert slot(state, "Berserk", turn=True).die is None and state.phase == "conquer"
    assert state.last["die"] == 2


def test_the_conquest_still_needs_one_token():
    state = act(berserk(hand=3, die=3), "conquer", 0, region=4)  # 2 - 3
    assert region_of(state, 4)["tokens"] == 1


def test_a_target_that_hand_and_roll_cannot_pay_fails_and_ends_the_conquests():
    state = act(berserk(hand=2, die=1), "conquer", 0, region=9)  # 4 - 1 > 2
    assert region_of(state, 9)["race"] == "Humans"
    assert state.phase == "redeploy" and state.players[0].active.hand == 2


def test_with_a_roll_every_reachable_target_is_offered():
    state = berserk(hand=1, die=0)
    offered = {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    assert {4, 9} <= offered  # 9 cannot be paid: naming it is the final attempt


def test_two_rolls_without_a_conquest_between_are_refused():
    state = berserk(die=1)
    assert not any(a.type == "berserk_roll" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="already rolled"):
        act(state, "berserk_roll", 0)


def test_berserk_may_roll_again_after_a_conquest():
    state = act(berserk(hand=6, die=3), "conquer", 0, region=4)
    assert any(a.type == "berserk_roll" for a in legal_actions(state, 0))


def test_berserk_has_no_final_conquest_after_naming_the_target():
    state = berserk(hand=2)
    assert not any(a.type == "final_conquest" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="rolls the die before naming the target"):
        act(state, "final_conquest", 0, region=9)


def test_berserk_may_conquer_without_rolling():
    state = act(berserk(hand=4), "conquer", 0, region=9)
    assert region_of(state, 9)["tokens"] == 4


def test_a_roll_needs_a_token_in_hand():
    state = berserk(hand=0)
    assert not any(a.type == "berserk_roll" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="at least one token in hand"):
        act(state, "berserk_roll", 0)


def test_a_roll_at_the_start_of_the_turn_readies_the_troops():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Berserk", hand=0)
        .region(3, seat=0, tokens=3)
        .at(0, "start")
        .build()
    )
    state = act(state, "berserk_roll", 0)
    assert state.players[0].active.hand == 2 and state.phase == "conquer"


def test_no_region_is_abandoned_once_the_die_is_rolled():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Berserk", hand=0)
        .region(3, seat=0, tokens=3)
        .region(4, seat=0)
        .at(0, "start")
        .build()
    )
    state = act(state, "berserk_roll", 0)
    assert not any(a.type == "abandon" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="rolled"):
        act(state, "abandon", 0, region=4)


def test_no_roll_after_the_conquests():
    state = berserk(phase="redeploy")
    with pytest.raises(IllegalAction, match="during your conquests"):
        act(state, "berserk_roll", 0)


def test_an_unused_roll_is_dropped_when_the_turn_is_auto_passed():
    state = auto_pass(berserk(die=3), 0)
    assert slot(state, "Berserk", turn=True).die is None and state.current == 1


def test_an_in_decline_berserk_race_rolls_no_more():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Berserk")
        .region(3, seat=0, declined=True)
        .active(0, "Humans", "Hill", hand=5)
        .region(4, seat=0)
        .at(0, "conquer")
        .build()
    )
    assert not any(a.type == "berserk_roll" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="belongs to Berserk"):
        act(state, "berserk_roll", 0)
