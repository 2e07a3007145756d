"""Stout: may go In Decline at the end of any turn of conquests, after scoring, the pick turn
included (rulebook, "Stout"; rulings); offered as ``end_turn`` with ``decline: true``."""

import pytest

from rules import IllegalAction, auto_pass, legal_actions
from tests.rules.builder import Builder, act, region_of
from tests.rules.invariants import check_invariants
from tests.rules.playing import redeploy_simply


def stout(power="Stout", **more):
    return (
        Builder(2)
        .clear_board()
        .active(0, "Humans", power, hand=0)
        .region(1, seat=0, tokens=3)
        .region(9, seat=0, tokens=2)
        .region(4, seat=0)
        .at(0, "redeploy", **more)
        .build()
    )


def test_stout_declines_at_the_end_of_the_turn_after_scoring():
    state = stout()
    assert any(a.type == "end_turn" and a.decline for a in legal_actions(state, 0))
    state = act(state, "end_turn", 0, decline=True)
    # Scored as Active (2 Farmlands for the Humans), then In Decline.
    assert state.last["score"] == {"regions": 3, "bonus": {"Humans": 2}, "total": 5}
    assert state.players[0].active is None and state.players[0].declined[0].race == "Humans"
    assert [region_of(state, i)["tokens"] for i in (1, 9, 4)] == [1, 1, 1]
    assert state.current == 1
    check_invariants(state)


def test_the_stout_player_picks_a_new_race_next_turn():
    state = act(stout(), "end_turn", 0, decline=True)
    state = auto_pass(state, 1)
    assert state.current == 0 and state.phase == "pick"


def test_stout_may_decline_on_the_turn_it_was_picked():
    state = Builder(2).combos(("Humans", "Stout"), ("Ratmen", "Hill")).at(0, "pick").build()
    state = act(state, "pick", 0, combo=0)
    assert not any(a.type == "decline" for a in legal_actions(state, 0))
    state = act(state, "conquer", 0, region=1)
    state = redeploy_simply(act(state, "end_conquest", 0), 0)
    state = act(state, "end_turn", 0, decline=True)
    assert state.players[0].declined[0].race == "Humans"


def test_a_race_without_stout_cannot_decline_at_the_end_of_the_turn():
    state = stout(power="Hill")
    assert not any(a.type == "end_turn" and a.decline for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="Only a Stout race"):
        act(state, "end_turn", 0, decline=True)


def test_stout_declines_only_once_the_tokens_are_redeployed():
    state = Builder(2).clear_board().active(0, "Humans", "Stout", hand=2).region(1, seat=0).at(0, "redeploy").build()
    assert not any(a.type == "end_turn" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="in hand"):
        act(state, "end_turn", 0, decline=True)


def test_the_stout_decline_removes_the_earlier_in_decline_race():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Orcs", "Hill")
        .region(10, seat=0, declined=True)
        .active(0, "Humans", "Stout", hand=0)
        .region(1, seat=0)
        .at(0, "redeploy")
        .build()
    )
    state = act(state, "end_turn", 0, decline=True)
    assert [t.race for t in state.players[0].declined] == ["Humans"]
    assert region_of(state, 10) == {}
    assert state.last["score"]["regions"] == 2  # scored before the Orcs left


def test_stout_may_still_decline_at_the_start_of_a_turn():
    state = (
        Builder(2).clear_board().active(0, "Humans", "Stout", hand=0).region(1, seat=0, tokens=2).at(0, "start").build()
    )
    assert act(state, "decline", 0).players[0].declined[0].race == "Humans"


def test_an_auto_passed_stout_turn_does_not_decline():
    state = auto_pass(stout(), 0)
    assert state.players[0].active.race == "Humans"


def test_a_stout_defender_cannot_decline_while_redeploying_after_an_attack():
    state = (
        Builder(2, redeploy="ask")
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=8)
        .region(3, seat=0)
        .active(1, "Humans", "Stout", hand=0)
        .region(4, seat=1, tokens=3)
        .region(10, seat=1)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "conquer", 0, region=4)
    state = redeploy_simply(act(state, "end_conquest", 0), 0)
    state = act(state, "end_turn", 0)
    assert state.phase == "defend"
    state = redeploy_simply(state, 1)
    assert not any(a.decline for a in legal_actions(state, 1))
    with pytest.raises(IllegalAction, match="end of its own turn"):
        act(state, "end_turn", 1, decline=True)
    assert act(state, "end_turn", 1).players[1].active.race == "Humans"
