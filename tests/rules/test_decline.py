"""Going In Decline (rulebook, "Entering In Decline"; rulings: at the start of a turn instead of
conquering, never on the turn the race was picked)."""

from __future__ import annotations

import pytest

from rules import IllegalAction, legal_actions
from rules.state import PICK, START
from rules.troops import box_left

from .builder import Builder, act, region_of
from .invariants import check_invariants


def ratmen_on_three_regions(**kw) -> Builder:
    """Seat 0's Ratmen hold 1 (4 tokens), 2 (2) and 6 (1); 5 still in hand from an attack."""
    b = Builder(2, seed=1, **kw).clear_board().active(0, "Ratmen", "Merchant", hand=5)
    return b.region(1, seat=0, tokens=4).region(2, seat=0, tokens=2).region(6, seat=0).at(0, START)


def decline(state, seat: int = 0):
    after = act(state, "decline", seat)
    check_invariants(after)
    return after


def test_one_token_stays_in_each_region_the_others_go_back_to_the_box() -> None:
    state = ratmen_on_three_regions().build()
    after = decline(state)
    for i in (1, 2, 6):
        assert region_of(after, i) == {"owner": 0, "race": "Ratmen", "tokens": 1}
    troop = after.players[0].declined[0]
    assert (troop.race, troop.declined, troop.hand) == ("Ratmen", True, 0)
    assert after.players[0].active is None
    assert box_left(after, "Ratmen") == 13 - 3


def test_the_special_power_badge_is_discarded() -> None:
    after = decline(ratmen_on_three_regions().build())
    assert after.power_discard == ["Merchant"]


def test_the_turn_ends_at_once_after_scoring_the_in_decline_regions() -> None:
    """Rulebook: "The player can make no conquests during the turn his race goes into decline; his
    turn ends immediately after scoring!" and he scores no power benefit (Merchant here)."""
    state = ratmen_on_three_regions().build()
    after = decline(state)
    assert after.last["score"] == {"regions": 3, "bonus": {}, "total": 3}
    assert after.players[0].coins == 5 + 3
    assert (after.current, after.phase) == (1, PICK)
    assert after.last["undo_point"] is True


def test_on_the_next_turn_the_player_picks_a_new_combo() -> None:
    state = ratmen_on_three_regions().build()
    after = decline(state)
    after = act(act(after, "pick", 1, combo=0), "end_conquest", 1)
    after = act(after, "end_turn", 1)
    assert (after.current, after.phase) == (0, PICK)
    assert {a.type for a in legal_actions(after, 0)} == {"pick"}
    after = act(after, "pick", 0, combo=0)
    assert after.players[0].active is not None
    assert [t.race for t in after.players[0].declined] == ["Ratmen"]


def test_the_previous_in_decline_race_leaves_and_its_banner_goes_under_the_stack() -> None:
    """Rulebook: "If the player still has tokens from an earlier In Decline race left on the map,
    those are all immediately removed ... The Race banner ... is placed at the bottom"."""
    b = ratmen_on_three_regions().declined(0, "Humans", "Alchemist")
    state = b.region(9, seat=0, declined=True).region(13, seat=0, declined=True).build()
    after = decline(state)
    assert region_of(after, 9) == region_of(after, 13) == {}
    assert [t.race for t in after.players[0].declined] == ["Ratmen"]
    assert after.race_stack[-1] == "Humans"
    assert after.last["score"]["regions"] == 3  # the Humans' regions no longer score
    assert after.power_discard == ["Alchemist", "Merchant"]


def test_a_race_goes_in_decline_only_at_the_start_of_a_turn() -> None:
    state = ratmen_on_three_regions().build()
    conquered = act(state, "conquer", 0, region=5)
    with pytest.raises(IllegalAction, match="at the start of a turn, instead of conquering"):
        act(conquered, "decline", 0)
    assert "decline" not in {a.type for a in legal_actions(conquered, 0)}
    assert "decline" in {a.type for a in legal_actions(state, 0)}


def test_never_on_the_turn_the_race_was_picked() -> None:
    state = act(Builder(2).build(), "pick", 0, combo=0)
    with pytest.raises(IllegalAction, match="at the start of a turn"):
        act(state, "decline", 0)


def test_a_player_without_an_active_race_cannot_decline() -> None:
    with pytest.raises(IllegalAction, match="You have no Active race to put In Decline"):
        act(Builder(2).build(), "decline", 0)


def test_a_race_with_no_token_left_declines_and_vanishes() -> None:
    """Rulings: a race with no token on the board or in hand may be put In Decline; it leaves."""
    state = Builder(2).clear_board().active(0, "Ratmen", "Merchant", hand=0).at(0).build()
    after = decline(state)
    assert after.players[0].declined == [] and after.players[0].active is None
    assert after.race_stack[-1] == "Ratmen"
    assert after.last["score"]["total"] == 0


def test_a_race_with_no_token_left_may_also_just_score() -> None:
    """Rulings: "may on their next turn either make no conquest ... or put that race In Decline"."""
    b = Builder(2).clear_board().active(0, "Ratmen", "Merchant", hand=0)
    state = b.declined(0, "Humans", "Alchemist").region(9, seat=0, declined=True).at(0).build()
    after = act(act(state, "end_conquest", 0), "end_turn", 0)
    assert after.last["score"]["regions"] == 1
    assert after.players[0].active is not None
