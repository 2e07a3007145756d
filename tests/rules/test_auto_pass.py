"""A missed deadline (ARCHITECTURE §4, "Missed deadline → auto-pass"): whatever the player did stands;
conquest stops; tokens in hand are redeployed by the ``auto`` rule; the player scores what they
hold; the turn ends. A player with no Active race who missed the pick does not pick."""

from __future__ import annotations

import pytest

from rules import IllegalAction, auto_pass
from rules.state import CONQUER, PICK, REDEPLOY, START

from .builder import Builder, act, region_of
from .invariants import check_invariants


def passed(state, seat: int = 0):
    before = state.to_json()
    after = auto_pass(state, seat)
    assert state.to_json() == before, "auto_pass never changes its input"
    check_invariants(after)
    return after


def ratmen(phase: str, hand: int = 0) -> Builder:
    """Seat 0's Ratmen on 1 (4 tokens) and 2 (2), ``hand`` in hand; seat 0 on turn in ``phase``."""
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Merchant", hand=hand)
    return b.region(1, seat=0, tokens=4).region(2, seat=0, tokens=2).at(0, phase)


def test_a_player_with_no_active_race_does_not_pick() -> None:
    b = Builder(2, seed=1).clear_board().declined(0, "Humans", "Alchemist")
    state = b.region(9, seat=0, declined=True).region(13, seat=0, declined=True).at(0, PICK).build()
    after = passed(state)
    assert after.players[0].active is None
    assert after.combos == state.combos
    assert after.players[0].coins == 5 + 2  # the In Decline regions score
    assert after.last == {
        "kind": "auto_pass",
        "player": 0,
        "undo_point": True,
        "score": {"regions": 2, "bonus": {}, "total": 2},
    }
    assert (after.current, after.phase) == (1, PICK)
    # ...and on the next turn they pick as usual.
    after = passed(after, 1)
    assert after.phase == PICK and after.current == 0


def test_at_the_start_of_a_turn_the_board_stays_as_it_stood() -> None:
    state = ratmen(START).build()
    after = passed(state)
    assert [after.regions[i].tokens for i in (1, 2)] == [4, 2]  # troops not readied
    assert after.players[0].coins == 5 + 2 + 2  # 2 regions + Merchant's 1 per region
    assert after.current == 1


def test_tokens_left_in_hand_from_an_attack_are_placed_by_the_auto_rule() -> None:
    after = passed(ratmen(START, hand=3).build())
    # One at a time onto the fewest: 2 (2→3), 2 (3→4), then 1 and 2 tie at 4: the lower, 1.
    assert [after.regions[i].tokens for i in (1, 2)] == [5, 4]
    assert after.players[0].active.hand == 0  # type: ignore[union-attr]


def test_conquests_made_stand_and_the_hand_is_redeployed() -> None:
    state = ratmen(START).build()
    state = act(state, "conquer", 0, region=6)  # readies 4 tokens (3 + 1), 2 go to region 6
    assert state.players[0].active.hand == 2  # type: ignore[union-attr]
    after = passed(state)
    assert region_of(after, 6) == {"owner": 0, "race": "Ratmen", "tokens": 2}
    assert [after.regions[i].tokens for i in (1, 2, 6)] == [2, 2, 2]
    assert after.players[0].active.hand == 0  # type: ignore[union-attr]
    assert after.last["score"]["regions"] == 3
    assert after.current == 1


def test_a_redeployment_already_made_stands() -> None:
    state = act(ratmen(CONQUER, hand=2).build(), "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((1, 1), (2, 7)))
    after = passed(state)
    assert [after.regions[i].tokens for i in (1, 2)] == [1, 7]


def test_a_pick_made_stands_then_conquest_stops() -> None:
    state = act(Builder(2, seed=1).clear_board().build(), "pick", 0, combo=0)
    troop = state.players[0].active
    after = passed(state)
    assert after.players[0].active is not None
    assert after.players[0].active.race == troop.race  # type: ignore[union-attr]
    assert after.players[0].active.hand == troop.hand  # type: ignore[union-attr]  # nowhere to go


def test_consecutive_auto_passes_are_counted_and_a_played_turn_resets_them() -> None:
    state = ratmen(START).build()
    after = passed(passed(state), 1)
    assert after.players[0].auto_passes == 1 and after.players[1].auto_passes == 1
    after = passed(after, 0)
    assert after.players[0].auto_passes == 2
    after = passed(after, 1)
    after = act(act(after, "end_conquest", 0), "end_turn", 0)
    assert after.players[0].auto_passes == 0


def test_only_the_awaited_player_can_be_auto_passed() -> None:
    state = ratmen(START).build()
    with pytest.raises(IllegalAction, match="Player 1 has nothing to do now"):
        auto_pass(state, 1)


def test_during_redeployment_the_auto_rule_finishes_it() -> None:
    after = passed(ratmen(REDEPLOY, hand=4).build())
    # One at a time onto the fewest: 2 (2→3), 2 (3→4), then 1 and 2 tie at 4: 1 (5), then 2 (5).
    assert [after.regions[i].tokens for i in (1, 2)] == [5, 5]
