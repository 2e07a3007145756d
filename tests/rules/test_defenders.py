"""Defenders' redeployment after an attack (rulebook, "Enemy Losses & Withdrawals"; ARCHITECTURE §4, house
option ``redeploy``: ``auto`` or ``ask``; rulings: seat order starting after the active player).

Four players on the 2-player board, so that the regions are the ones described in test_conquest.py.
"""

from __future__ import annotations

import pytest

from rules import Action, IllegalAction, auto_pass, awaiting, legal_actions
from rules.state import DEFEND, REDEPLOY, START

from .builder import Builder, act, region_of
from .invariants import check_invariants


def attacked(redeploy: str = "auto") -> Builder:
    """Seat 0's Ratmen (10 in hand) beside seat 1's Humans in 2 (4 tokens), 4 (3), 9 (1), 13 (1)."""
    b = Builder(4, seed=1, redeploy=redeploy, map_name="2-players").clear_board()
    b.active(0, "Ratmen", "Merchant", hand=10).region(1, seat=0)
    b.active(1, "Humans", "Alchemist", hand=0)
    for region, tokens in ((2, 4), (4, 3), (9, 1), (13, 1)):
        b.region(region, seat=1, tokens=tokens)
    return b.at(0, "conquer")


def finish_turn(state, seat: int = 0):
    """End the conquests, put every token in hand on the first region held, end the turn."""
    if state.phase != REDEPLOY:
        state = act(state, "end_conquest", seat)
    troop = state.players[seat].active
    held = state.regions_of(seat, troop.race)
    if troop.hand and held:
        tokens = {i: state.regions[i].tokens for i in held}
        tokens[held[0]] += troop.hand
        state = act(state, "redeploy", seat, tokens=tuple(sorted(tokens.items())))
    after = act(state, "end_turn", seat)
    check_invariants(after)
    return after


# -- auto ------------------------------------------------------------------------------------------
def test_auto_one_token_at_a_time_onto_the_fewest_token_region_ties_lowest_number() -> None:
    """ARCHITECTURE §4: one at a time onto the region with the fewest tokens, ties by lowest number.
    Humans lose region 2 (4 tokens: 1 discarded, 3 in hand); 9 and 13 hold 1 each, 4 holds 3:
    9 gets one (2), then 13 (2), then 9 again (3, the tie goes to the lower number)."""
    state = act(attacked().build(), "conquer", 0, region=2)
    assert state.players[1].active.hand == 3  # type: ignore[union-attr]
    after = finish_turn(state)
    assert [after.regions[i].tokens for i in (4, 9, 13)] == [3, 3, 2]
    assert after.players[1].active.hand == 0  # type: ignore[union-attr]
    assert (after.current, after.phase) == (1, START)


def test_auto_redeploys_only_at_the_end_of_the_active_players_turn() -> None:
    """Rulebook: "as the final action of the current player's turn"."""
    state = act(attacked().build(), "conquer", 0, region=2)
    state = act(state, "end_conquest", 0)
    assert state.players[1].active.hand == 3  # type: ignore[union-attr]
    assert [state.regions[i].tokens for i in (4, 9, 13)] == [3, 1, 1]
    assert awaiting(state) == {0}


def test_a_defender_with_no_region_left_keeps_the_tokens_for_their_next_turn() -> None:
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Merchant", hand=10).region(1, seat=0)
    b.active(1, "Humans", "Alchemist", hand=0).region(2, seat=1, tokens=4)
    state = act(b.at(0, "conquer").build(), "conquer", 0, region=2)
    after = finish_turn(state)
    assert after.players[1].active.hand == 3  # type: ignore[union-attr]
    assert after.regions_of(1, "Humans") == []
    # ...and enters again as for a first conquest.
    with pytest.raises(IllegalAction, match="first conquest"):
        act(after, "conquer", 1, region=9)


# -- ask -------------------------------------------------------------------------------------------
def ask_with_two_defenders():
    """Seat 2 on turn attacks seats 0 and 3 (seat 1 is left alone): defenders 3 then 0."""
    b = Builder(4, seed=1, redeploy="ask", map_name="2-players").clear_board()
    b.active(2, "Ratmen", "Merchant", hand=12).region(3, seat=2)
    b.active(0, "Humans", "Alchemist", hand=0).region(4, seat=0, tokens=3).region(10, seat=0)
    b.active(3, "Elves", "Swamp", hand=0).region(9, seat=3, tokens=3).region(14, seat=3, tokens=2)
    b.active(1, "Orcs", "Hill", hand=0).region(20, seat=1, tokens=2)
    state = b.at(2, "conquer").build()
    state = act(act(state, "conquer", 2, region=4), "conquer", 2, region=9)
    return finish_turn(state, seat=2)


def test_ask_defenders_redeploy_in_seat_order_after_the_active_player() -> None:
    state = ask_with_two_defenders()
    assert state.phase == DEFEND
    assert state.defenders == [3, 0]
    assert awaiting(state) == {3}
    assert state.current == 2  # the next turn waits for the redeploys


def test_ask_the_defender_is_offered_a_redeploy_of_the_tokens_in_hand() -> None:
    state = ask_with_two_defenders()
    # Elves keep all their tokens when conquered: 3 in hand, added on top of region 14's 2.
    assert legal_actions(state, 3) == [Action("redeploy", 3, regions=(14,), count=5, tokens=((14, 2),))]
    assert legal_actions(state, 0) == legal_actions(state, 2) == []
    with pytest.raises(IllegalAction, match="It is not your turn: the game is waiting for player 3"):
        act(state, "redeploy", 0, tokens=((10, 3),))
    with pytest.raises(IllegalAction, match="You still have 3 Elves tokens in hand"):
        act(state, "end_turn", 3)
    state = act(state, "redeploy", 3, tokens=((14, 5),))
    assert Action("end_turn", 3) in legal_actions(state, 3)
    state = act(state, "end_turn", 3)
    assert state.last["undo_point"] is True
    assert awaiting(state) == {0} and state.defenders == [0]
    check_invariants(state)


def test_ask_a_defender_cannot_move_tokens_already_on_the_board() -> None:
    """A defender redeploys only the tokens in hand; free movement is the active player's."""
    b = Builder(2, seed=1, redeploy="ask").clear_board()
    b.active(0, "Ratmen", "Merchant", hand=6).region(1, seat=0)
    b.active(1, "Humans", "Alchemist", hand=0)
    b.region(2, seat=1, tokens=3).region(9, seat=1, tokens=5).region(4, seat=1)
    state = finish_turn(act(b.at(0, "conquer").build(), "conquer", 0, region=2))
    assert state.phase == DEFEND and state.players[1].active.hand == 2  # type: ignore[union-attr]
    with pytest.raises(IllegalAction, match="region 9 has 5, it cannot go down to 1"):
        act(state, "redeploy", 1, tokens=((4, 7), (9, 1)))
    after = act(state, "redeploy", 1, tokens=((4, 2), (9, 6)))
    assert [after.regions[i].tokens for i in (4, 9)] == [2, 6]


def test_ask_auto_pass_of_a_defender_applies_the_auto_rule() -> None:
    state = ask_with_two_defenders()
    state = auto_pass(state, 3)
    check_invariants(state)
    assert region_of(state, 14) == {"owner": 3, "race": "Elves", "tokens": 5}
    assert state.last == {"kind": "auto_pass", "player": 3, "undo_point": True}
    assert awaiting(state) == {0}
    # Humans lost region 4 (3 tokens: 2 in hand); they hold 10 only.
    state = auto_pass(state, 0)
    assert region_of(state, 10) == {"owner": 0, "race": "Humans", "tokens": 3}
    # All redeploys done: the next player's turn begins.
    assert (state.current, state.phase, state.defenders) == (3, START, [])
    check_invariants(state)


def test_ask_only_awaited_defenders_can_be_auto_passed() -> None:
    state = ask_with_two_defenders()
    with pytest.raises(IllegalAction, match="Player 0 has nothing to do now"):
        auto_pass(state, 0)


def test_ask_with_no_defender_the_turn_passes_at_once() -> None:
    b = Builder(2, seed=1, redeploy="ask").clear_board()
    state = b.active(0, "Ratmen", "Merchant", hand=10).at(0, "conquer").build()
    after = finish_turn(act(state, "conquer", 0, region=1))
    assert (after.current, after.phase) == (1, "pick")


def test_ask_a_lone_defender_token_lost_asks_nothing() -> None:
    b = Builder(2, seed=1, redeploy="ask").clear_board()
    b.active(0, "Ratmen", "Merchant", hand=10).region(1, seat=0)
    b.active(1, "Humans", "Alchemist", hand=0).region(2, seat=1).region(9, seat=1)
    after = finish_turn(act(b.at(0, "conquer").build(), "conquer", 0, region=2))
    assert (after.current, after.phase) == (1, START)
