"""Amazons: four tokens serve only for conquest (rulebook, "Amazons"; components.md, rulings)."""

import pytest

from rules import IllegalAction, auto_pass, final_standings, legal_actions
from rules.state import OVER
from rules.troops import box_left
from tests.rules.builder import Builder, act, region_of, slot
from tests.rules.invariants import check_invariants


def amazons_redeploying(hand: int, *stacks: tuple[int, int], redeploy: str = "auto"):
    b = Builder(2, redeploy=redeploy).clear_board().active(0, "Amazons", "Hill", hand=hand)
    for region, tokens in stacks:
        b.region(region, seat=0, tokens=tokens)
    return b.at(0, "redeploy").build()


def test_amazons_get_ten_tokens_plus_the_badge_when_picked():
    state = Builder(2).combos(("Amazons", "Hill"), ("Ratmen", "Swamp")).at(0, "pick").build()
    state = act(state, "pick", 0, combo=0)
    assert state.players[0].active.hand == 6 + 4 + 4


def test_after_redeployment_four_amazons_leave_the_map():
    state = amazons_redeploying(4, (1, 3), (2, 3))
    (choice,) = [a for a in legal_actions(state, 0) if a.type == "redeploy"]
    assert choice.count == 6  # 10 tokens, 4 of them off the board
    state = act(state, "redeploy", 0, tokens=((1, 2), (2, 4)))
    state = act(state, "end_turn", 0)
    troop = state.players[0].active
    assert (troop.hand, slot(state, "Amazons").held) == (0, 4)
    assert region_of(state, 1)["tokens"] + region_of(state, 2)["tokens"] == 6
    check_invariants(state)


def test_redeployment_refuses_to_place_the_four_conquest_only_tokens():
    state = amazons_redeploying(4, (1, 3), (2, 3))
    with pytest.raises(IllegalAction, match="exactly 6 tokens .4 stay off the map"):
        act(state, "redeploy", 0, tokens=((1, 5), (2, 5)))


def test_the_four_come_from_the_biggest_stacks_leaving_one_per_region():
    # Nothing redeployed by hand: the auto rule places nothing and the removal takes the 4.
    state = amazons_redeploying(0, (1, 1), (2, 4), (3, 2))
    state = auto_pass(state, 0)
    assert [region_of(state, i)["tokens"] for i in (1, 2, 3)] == [1, 1, 1]
    assert slot(state, "Amazons").held == 4


def test_the_four_empty_a_region_only_when_there_is_no_other_way():
    state = amazons_redeploying(0, (1, 1), (2, 2), (3, 2))
    state = act(state, "end_turn", 0)
    held = state.regions_of(0, "Amazons")
    assert len(held) == 1 and state.regions[held[0]].tokens == 1
    assert slot(state, "Amazons").held == 4
    check_invariants(state)


def test_the_four_come_back_in_hand_when_troops_are_readied():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Amazons", "Hill", hand=0, held=4)
        .region(1, seat=0, tokens=3)
        .region(2, seat=0, tokens=1)
        .at(0, "start")
        .build()
    )
    state = act(state, "conquer", 0, region=6)  # readies 2 from region 1, and the 4 held back
    troop = state.players[0].active
    assert (troop.hand, slot(state, "Amazons").held) == (2 + 4 - 2, 0)
    assert region_of(state, 6) == {"owner": 0, "race": "Amazons", "tokens": 2}


def test_amazons_that_did_not_ready_their_troops_do_not_lose_four_more():
    """The 4 are already off the board: ending the conquests at once must not take 4 more."""
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Amazons", "Hill", hand=0, held=4)
        .region(1, seat=0, tokens=3)
        .region(2, seat=0, tokens=3)
        .at(0, "start")
        .build()
    )
    state = act(state, "end_conquest", 0)
    (choice,) = [a for a in legal_actions(state, 0) if a.type == "redeploy"]
    assert choice.count == 6
    state = act(state, "redeploy", 0, tokens=((1, 2), (2, 4)))
    state = act(state, "end_turn", 0)
    troop = state.players[0].active
    assert (troop.hand, slot(state, "Amazons").held) == (0, 4)
    assert region_of(state, 1)["tokens"] + region_of(state, 2)["tokens"] == 6


def test_auto_pass_removes_the_four_and_places_the_rest_by_the_auto_rule():
    state = amazons_redeploying(6, (1, 1), (2, 1))
    state = auto_pass(state, 0)
    troop = state.players[0].active
    assert (troop.hand, slot(state, "Amazons").held) == (0, 4)
    assert [region_of(state, i)["tokens"] for i in (1, 2)] == [2, 2]


def test_auto_pass_at_the_start_of_a_turn_keeps_the_held_four():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Amazons", "Hill", hand=0, held=4)
        .region(1, seat=0, tokens=3)
        .region(2, seat=0, tokens=3)
        .at(0, "start")
        .build()
    )
    state = auto_pass(state, 0)
    troop = state.players[0].active
    assert (troop.hand, slot(state, "Amazons").held) == (0, 4)
    assert [region_of(state, i)["tokens"] for i in (1, 2)] == [3, 3]


def test_defending_amazons_place_every_token_in_hand():
    """The 4 leave the map after the Amazons' own redeployment only, not after an attack."""
    state = (
        Builder(2, redeploy="ask")
        .clear_board()
        .active(0, "Ratmen", "Commando", hand=8)
        .active(1, "Amazons", "Hill", hand=0, held=4)
        .region(3, seat=0)
        .region(4, seat=1, tokens=3)
        .region(10, seat=1, tokens=1)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "conquer", 0, region=4)  # 2 + 3 - 1 (Commando) = 4
    assert state.players[1].active.hand == 2
    state = act(state, "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((3, 1), (4, 8)))
    state = act(state, "end_turn", 0)
    assert state.phase == "defend"
    (choice,) = [a for a in legal_actions(state, 1) if a.type == "redeploy"]
    assert choice.count == 3
    state = act(state, "redeploy", 1, tokens=((10, 3),))
    state = act(state, "end_turn", 1)
    assert region_of(state, 10)["tokens"] == 3 and slot(state, "Amazons").held == 4


def test_the_four_held_back_do_not_count_for_the_tie_break():
    state = amazons_redeploying(0, (1, 3), (2, 3))
    state = act(state, "end_turn", 0)
    state.phase = OVER
    row = next(r for r in final_standings(state) if r["player"] == 0)
    assert row["tokens_on_board"] == 2


def test_going_in_decline_returns_the_held_four_to_the_box():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Amazons", "Hill", hand=0, held=4)
        .region(1, seat=0, tokens=3)
        .region(2, seat=0, tokens=3)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    (troop,) = state.players[0].declined
    assert (troop.hand, slot(state, "Amazons").held) == (0, 0)
    assert box_left(state, "Amazons") == 15 - 2
