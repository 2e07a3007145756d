"""Troop redeployment at the end of one's conquests (rulebook, "Troop Redeployment"; rulings: every
token in hand is placed if the race holds a region)."""

from __future__ import annotations

import pytest

from rules import Action, IllegalAction, apply, legal_actions
from rules.state import REDEPLOY

from .builder import Builder, act, region_of
from .invariants import check_invariants


def after_conquests(hand: int = 3) -> Builder:
    """Seat 0's Ratmen hold 1 (2 tokens), 2 (1) and 20 (1), far apart, and ``hand`` in hand."""
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Merchant", hand=hand)
    b.region(1, seat=0, tokens=2).region(2, seat=0).region(20, seat=0)
    return b.at(0, REDEPLOY)


def redeploy(state, *pairs: tuple[int, int]):
    after = act(state, "redeploy", 0, tokens=tuple(sorted(pairs)))
    check_invariants(after)
    return after


def test_the_redeploy_choice_names_the_regions_and_the_token_count() -> None:
    state = after_conquests().build()
    choices = [a for a in legal_actions(state, 0) if a.type == "redeploy"]
    assert choices == [Action("redeploy", 0, regions=(1, 2, 20), count=7)]
    assert "end_turn" not in {a.type for a in legal_actions(state, 0)}


def test_tokens_move_freely_between_regions_not_adjacent() -> None:
    """Rulebook: "not necessarily just an adjacent or contiguous Region"."""
    after = redeploy(after_conquests(hand=0).build(), (1, 1), (2, 1), (20, 2))
    assert [after.regions[i].tokens for i in (1, 2, 20)] == [1, 1, 2]
    assert after.phase == REDEPLOY
    assert "end_turn" in {a.type for a in legal_actions(after, 0)}


def test_every_token_in_hand_is_placed_before_the_turn_ends() -> None:
    state = after_conquests(hand=3).build()
    with pytest.raises(IllegalAction, match="You still have 3 Ratmen tokens in hand: redeploy them"):
        act(state, "end_turn", 0)
    after = redeploy(state, (1, 2), (2, 1), (20, 4))
    assert after.players[0].active.hand == 0  # type: ignore[union-attr]
    after = act(after, "end_turn", 0)
    assert after.current == 1
    assert region_of(after, 20) == {"owner": 0, "race": "Ratmen", "tokens": 4}


def test_at_least_one_token_stays_in_each_region() -> None:
    state = after_conquests().build()
    with pytest.raises(
        IllegalAction,
        match=r"Leave at least one token in every region you hold \(region 2 has none\)",
    ):
        redeploy(state, (1, 5), (2, 0), (20, 2))


def test_the_distribution_places_exactly_the_tokens_there_are() -> None:
    state = after_conquests().build()
    with pytest.raises(IllegalAction, match="must place exactly 7 tokens; this places 6"):
        redeploy(state, (1, 2), (2, 2), (20, 2))
    with pytest.raises(IllegalAction, match="must place exactly 7 tokens; this places 8"):
        redeploy(state, (1, 4), (2, 2), (20, 2))


def test_the_distribution_names_every_region_held_and_no_other() -> None:
    state = after_conquests().build()
    with pytest.raises(IllegalAction, match=r"give a count for every region you hold \(missing: 20\)"):
        redeploy(state, (1, 4), (2, 3))
    with pytest.raises(IllegalAction, match="regions 9 are not yours"):
        redeploy(state, (1, 2), (2, 1), (20, 1), (9, 3))


def test_redeployment_comes_after_the_conquests() -> None:
    state = after_conquests().at(0, "conquer").build()
    with pytest.raises(IllegalAction, match="Redeployment comes after your conquests"):
        redeploy(state, (1, 4), (2, 1), (20, 2))
    state = act(state, "end_conquest", 0)
    redeploy(state, (1, 4), (2, 1), (20, 2))


def test_a_later_redeploy_replaces_an_earlier_one() -> None:
    state = after_conquests().build()
    once = redeploy(state, (1, 5), (2, 1), (20, 1))
    twice = redeploy(once, (1, 1), (2, 1), (20, 5))
    assert [twice.regions[i].tokens for i in (1, 2, 20)] == [1, 1, 5]


def test_the_turn_ends_only_once_the_conquests_are_over() -> None:
    state = after_conquests().at(0, "conquer").build()
    with pytest.raises(IllegalAction, match="End your conquests first"):
        act(state, "end_turn", 0)


def test_a_race_with_no_region_keeps_its_tokens_in_hand() -> None:
    state = Builder(2).clear_board().active(0, "Ratmen", "Merchant", hand=4).at(0, REDEPLOY).build()
    with pytest.raises(IllegalAction, match="hold no region: their tokens wait in hand"):
        redeploy(state, (1, 4))
    assert not [a for a in legal_actions(state, 0) if a.type == "redeploy"]
    after = act(state, "end_turn", 0)
    assert after.players[0].active.hand == 4  # type: ignore[union-attr]


def test_the_redeploy_action_in_json() -> None:
    state = after_conquests().build()
    data = {"type": "redeploy", "player": 0, "tokens": {"1": 2, "2": 1, "20": 4}}
    after = apply(state, data)
    assert [after.regions[i].tokens for i in (1, 2, 20)] == [2, 1, 4]
    assert Action.from_json(data).to_json() == data
    with pytest.raises(IllegalAction, match="'tokens' must map region numbers to token counts"):
        apply(state, {"type": "redeploy", "player": 0, "tokens": [2, 1, 4]})
    with pytest.raises(IllegalAction, match="Region 2: the token count must be a whole number"):
        apply(state, {"type": "redeploy", "player": 0, "tokens": {"1": 2, "2": -1}})
    with pytest.raises(IllegalAction, match="'x' is not a region number"):
        apply(state, {"type": "redeploy", "player": 0, "tokens": {"x": 2}})


def test_only_the_in_decline_ghouls_are_offered_a_declined_redeploy() -> None:
    """``"troop": "declined"`` names the In Decline Ghouls: a second In Decline race (Spirit) holds
    one token per region and is not offered a redeploy that would be applied to the Ghouls."""
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Merchant", hand=0)
    b.region(1, seat=0, tokens=2).declined(0, "Elves", "Stout").region(11, seat=0, declined=True)
    b.declined(0, "Ghouls", "Spirit").region(4, seat=0, tokens=3, declined=True)
    state = b.at(0, REDEPLOY, ghouls_readied=True, ghouls_done=True).build()
    choices = [a for a in legal_actions(state, 0) if a.type == "redeploy"]
    assert [(a.troop, a.regions) for a in choices] == [("active", (1,)), ("declined", (4,))]
    for choice in choices:
        act(state, "redeploy", 0, troop=choice.troop, tokens=((choice.regions[0], choice.count),))
