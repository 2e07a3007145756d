"""Conquest (rulebook, "Conquering Regions", "Enemy Losses & Withdrawals", "Ready your Troops",
"Abandoning a Region"; components.md "Rulings").

The 2-player board, by region: 0 Sea (edge), 1 farmland (edge), 2 forest (edge), 3 swamp (edge),
4 hill (edge), 5 mountain (edge), 6 hill, 7 the Lake, 8 mountain, 9 farmland, 12 forest (on the
Lake), 13 farmland, 21 forest (on the shore of the Sea 22, not on the edge), 22 Sea (edge).
"""

from __future__ import annotations

import pytest

from rules import IllegalAction, conquest_cost, legal_actions
from rules.state import CONQUER, LOST_TRIBE, REDEPLOY
from rules.troops import box_left

from .builder import Builder, act, region_of
from .invariants import check_invariants


def ratmen(hand: int = 12, *, phase: str = "conquer") -> Builder:
    """Seat 0 on turn with Active Ratmen (no race or power discount) on an empty 2-player board."""
    return Builder(2, seed=1).clear_board().active(0, "Ratmen", "Merchant", hand=hand).at(0, phase)


def cost(state, region: int, seat: int = 0) -> int:
    troop = state.players[seat].active
    assert troop is not None
    return conquest_cost(state, seat, troop, region)


def conquer(state, region: int, seat: int = 0):
    after = act(state, "conquer", seat, region=region)
    check_invariants(after)
    return after


# -- the cost: 2 + markers + tokens ----------------------------------------------------------------
def test_an_empty_region_costs_two() -> None:
    state = ratmen().build()
    assert cost(state, 1) == 2
    after = conquer(state, 1)
    assert region_of(after, 1) == {"owner": 0, "race": "Ratmen", "tokens": 2}
    assert after.players[0].active.hand == 10  # type: ignore[union-attr]


def test_a_mountain_adds_one_and_stays_for_the_conqueror() -> None:
    state = ratmen().build()
    assert cost(state, 5) == 3
    after = conquer(state, 5)
    assert region_of(after, 5) == {"owner": 0, "race": "Ratmen", "tokens": 3, "mountain": True}


def test_a_lost_tribe_adds_one_and_is_discarded() -> None:
    state = ratmen().region(3).build()
    assert cost(state, 3) == 3
    after = conquer(state, 3)
    assert region_of(after, 3) == {"owner": 0, "race": "Ratmen", "tokens": 3}
    assert not any(r.race == LOST_TRIBE for r in after.regions)


@pytest.mark.parametrize(
    ("markers", "tokens", "expected"),
    [
        ({}, 1, 3),
        ({}, 3, 5),
        ({"fortress": True}, 1, 4),
        ({"lair": True}, 2, 5),
        ({"encampments": 2}, 1, 5),
        ({"encampments": 3}, 2, 7),
    ],
)
def test_each_marker_and_each_enemy_token_adds_one(markers: dict, tokens: int, expected: int) -> None:
    """Rulebook: 2 + 1 per Encampment, Fortress, Mountain or Troll's Lair + 1 per token there."""
    race = "Trolls" if markers.get("lair") else "Humans"
    power = "Bivouacking" if markers.get("encampments") else "Fortified"
    state = ratmen().active(1, race, power).region(1, seat=1, tokens=tokens, **markers).build()
    assert cost(state, 1) == expected


def test_worked_example_trolls_on_a_mountain_in_their_lair() -> None:
    """Two Trolls with their Lair on a Mountain: 2 + 1 (Mountain) + 1 (Lair) + 2 (tokens) = 6."""
    state = ratmen(hand=6).active(1, "Trolls", "Hill").region(5, seat=1, tokens=2, lair=True).build()
    assert cost(state, 5) == 6
    after = conquer(state, 5)
    # The Lair leaves with the Trolls (rulings); the Mountain stays.
    assert region_of(after, 5) == {"owner": 0, "race": "Ratmen", "tokens": 6, "mountain": True}
    assert after.players[0].active.hand == 0  # type: ignore[union-attr]


def test_the_attackers_own_in_decline_token_costs_one_and_is_lost() -> None:
    """Rulings: conquering one's own In Decline token costs 2 + 1, and the token is lost."""
    b = ratmen().declined(0, "Humans", "Alchemist").region(1, seat=0, declined=True)
    state = b.region(2, seat=0, declined=True).build()
    assert cost(state, 1) == 3
    after = conquer(state, 1)
    assert region_of(after, 1) == {"owner": 0, "race": "Ratmen", "tokens": 3}
    assert after.players[0].declined[0].hand == 0
    assert after.regions_of(0, "Humans") == [2]


def test_conquest_cost_is_the_public_function_the_engine_uses() -> None:
    state = ratmen().region(8).build()  # a Lost Tribe on a Mountain: 2 + 1 + 1
    assert cost(state, 8) == 4
    offered = {a.region: a.type for a in legal_actions(state, 0)}
    # Region 8 is not adjacent to anything held and Ratmen hold nothing: it is not offered at all.
    assert 8 not in offered


# -- where a race may conquer ----------------------------------------------------------------------
def test_the_first_conquest_is_on_a_border_region() -> None:
    state = ratmen().build()
    with pytest.raises(IllegalAction, match="first conquest must be on a border region .* 6 is not"):
        act(state, "conquer", 0, region=6)
    conquer(state, 4)


def test_the_shore_of_a_border_sea_counts_as_border() -> None:
    """Rulebook, "First Conquest": "one whose shore is on a Sea adjacent to the edge"."""
    state = ratmen().build()
    assert not state.board.regions[21].border
    conquer(state, 21)


def test_the_shore_of_the_lake_does_not() -> None:
    state = ratmen().build()
    with pytest.raises(IllegalAction, match="first conquest"):
        act(state, "conquer", 0, region=12)


def test_first_conquests_offered_are_exactly_the_entry_regions() -> None:
    state = ratmen().build()
    offered = {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    land_entries = {i for i in state.board.entry if not state.board.regions[i].is_water}
    assert offered == land_entries


def test_following_conquests_must_be_adjacent() -> None:
    state = ratmen(hand=10).region(1, seat=0, tokens=2).build()
    with pytest.raises(IllegalAction, match="Region 13 is not adjacent to any region your Ratmen hold"):
        act(state, "conquer", 0, region=13)
    # Not even a border region far away: the border rule is only for a first conquest.
    with pytest.raises(IllegalAction, match="Region 20 is not adjacent"):
        act(state, "conquer", 0, region=20)
    after = conquer(conquer(state, 6), 12)  # 1 -> 6 -> 12, inland
    assert after.regions_of(0, "Ratmen") == [1, 6, 12]


def test_seas_and_the_lake_cannot_be_conquered() -> None:
    state = ratmen(hand=10).region(2, seat=0, tokens=2).build()
    with pytest.raises(IllegalAction, match="Region 0 is a sea: only a Seafaring race"):
        act(state, "conquer", 0, region=0)
    with pytest.raises(IllegalAction, match="Region 7 is a lake"):
        act(state, "conquer", 0, region=7)
    offered = {a.region for a in legal_actions(state, 0) if a.region is not None}
    assert not offered & {0, 7, 22}


def test_a_region_already_held_or_off_the_board_is_refused() -> None:
    state = ratmen(hand=10).region(2, seat=0, tokens=2).build()
    with pytest.raises(IllegalAction, match="Region 2 is already yours"):
        act(state, "conquer", 0, region=2)
    with pytest.raises(IllegalAction, match=r"There is no region 23 on this board \(0 to 22\)"):
        act(state, "conquer", 0, region=23)
    with pytest.raises(IllegalAction, match="There is no region -1"):
        act(state, "conquer", 0, region=-1)


def test_a_race_that_lost_every_region_enters_again_by_a_border() -> None:
    """Rulebook, "Enemy Losses": tokens in hand, none on the board: "as if ... a First Conquest"."""
    state = ratmen(hand=5, phase="start").build()
    with pytest.raises(IllegalAction, match="first conquest"):
        act(state, "conquer", 0, region=9)
    conquer(state, 9 - 5)  # region 4 is on the edge


# -- enemy losses ----------------------------------------------------------------------------------
def test_the_defender_discards_one_token_and_takes_the_rest_in_hand() -> None:
    b = ratmen().active(1, "Humans", "Alchemist").region(1, seat=1, tokens=4).region(9, seat=1)
    state = b.build()
    before = state.players[1].active.hand  # type: ignore[union-attr]
    after = conquer(state, 1)
    assert after.players[1].active.hand == before + 3  # type: ignore[union-attr]
    assert box_left(after, "Humans") == box_left(state, "Humans") + 1
    # They are redeployed "as the final action of the current player's turn", not before.
    assert region_of(after, 9) == {"owner": 1, "race": "Humans", "tokens": 1}
    assert after.t.attacked == [1]


def test_a_lone_defender_is_discarded() -> None:
    state = ratmen().active(1, "Humans", "Alchemist", hand=0).region(1, seat=1).region(9, seat=1).build()
    after = conquer(state, 1)
    assert after.players[1].active.hand == 0  # type: ignore[union-attr]
    assert box_left(after, "Humans") == box_left(state, "Humans") + 1


def test_an_in_decline_token_is_discarded_and_the_race_leaves_with_its_last_region() -> None:
    state = ratmen().declined(1, "Humans", "Alchemist").region(1, seat=1, declined=True).build()
    assert cost(state, 1) == 3
    after = conquer(state, 1)
    assert after.players[1].declined == []
    assert after.race_stack[-1] == "Humans"
    assert after.t.attacked == []  # only Active races count as attacked (Diplomat)


def test_a_defender_left_with_no_region_keeps_the_tokens_in_hand() -> None:
    state = ratmen(hand=5).active(1, "Humans", "Alchemist", hand=0).region(1, seat=1, tokens=3).build()
    after = act(conquer(state, 1), "end_conquest", 0)
    after = act(after, "end_turn", 0)
    assert after.current == 1
    assert after.players[1].active.hand == 2  # type: ignore[union-attr]
    assert after.regions_of(1, "Humans") == []
    check_invariants(after)


# -- ready your troops, abandon --------------------------------------------------------------------
def test_ready_troops_leaves_one_token_in_each_region() -> None:
    state = ratmen(hand=0, phase="start").region(1, seat=0, tokens=4).region(2, seat=0, tokens=3).build()
    # Before readying, the hand to conquer with counts the tokens that will come off the board.
    offered = {a.region: a.type for a in legal_actions(state, 0)}
    assert offered[6] == "conquer"
    after = conquer(state, 8)  # a Mountain: 3 of the 5 readied tokens
    assert [after.regions[i].tokens for i in (1, 2, 8)] == [1, 1, 3]
    assert after.players[0].active.hand == 2  # type: ignore[union-attr]
    assert after.phase == CONQUER


def test_a_turn_that_conquers_nothing_leaves_the_board_as_it_stood() -> None:
    state = ratmen(hand=0, phase="start").region(1, seat=0, tokens=4).region(2, seat=0, tokens=3).build()
    after = act(act(state, "end_conquest", 0), "end_turn", 0)
    assert [after.regions[i].tokens for i in (1, 2)] == [4, 3]


def test_abandoning_a_region_before_the_first_conquest() -> None:
    """Rulebook, "Abandoning a Region": the tokens come back in hand; the region is not his."""
    state = ratmen(hand=0, phase="start").region(1, seat=0, tokens=4).region(2, seat=0, tokens=3).build()
    after = act(state, "abandon", 0, region=2)
    assert region_of(after, 2) == {}
    assert region_of(after, 1) == {"owner": 0, "race": "Ratmen", "tokens": 1}
    assert after.players[0].active.hand == 6  # type: ignore[union-attr]
    after = conquer(after, 2)
    with pytest.raises(IllegalAction, match="abandoned only .* before your first conquest"):
        act(after, "abandon", 0, region=1)
    assert not [a for a in legal_actions(after, 0) if a.type == "abandon"]


def test_abandoning_every_region_means_a_first_conquest_again() -> None:
    state = ratmen(hand=0, phase="start").region(6, seat=0, tokens=4).build()
    after = act(state, "abandon", 0, region=6)
    with pytest.raises(IllegalAction, match="first conquest"):
        act(after, "conquer", 0, region=12)
    conquer(after, 1)


def test_only_ones_own_active_regions_can_be_abandoned() -> None:
    b = ratmen(hand=0, phase="start").region(1, seat=0, tokens=4)
    state = b.active(1, "Humans", "Alchemist").region(9, seat=1).build()
    with pytest.raises(IllegalAction, match="Region 9 is not held by your Ratmen"):
        act(state, "abandon", 0, region=9)
    with pytest.raises(IllegalAction, match="There is no region 40"):
        act(state, "abandon", 0, region=40)


# -- tokens in hand --------------------------------------------------------------------------------
def test_a_conquest_needs_the_whole_cost_in_hand() -> None:
    state = ratmen(hand=2).region(1, seat=0).region(6).build()
    with pytest.raises(
        IllegalAction,
        match=r"Region 6 needs 3 tokens, you have 2 in hand \(you may try it as your final conq",
    ):
        act(state, "conquer", 0, region=6)


def test_no_token_in_hand_no_conquest() -> None:
    state = ratmen(hand=0).region(1, seat=0).build()
    with pytest.raises(IllegalAction, match="at least one token in hand"):
        act(state, "conquer", 0, region=2)
    assert not [a for a in legal_actions(state, 0) if "conquer" in a.type]


def test_a_conquest_puts_exactly_its_cost_in_the_region() -> None:
    """Rulings: extra tokens wait in hand until redeployment."""
    after = conquer(ratmen(hand=12).build(), 1)
    assert after.regions[1].tokens == 2 and after.players[0].active.hand == 10  # type: ignore[union-attr]


def test_after_the_conquests_no_more_conquest() -> None:
    state = act(conquer(ratmen().build(), 1), "end_conquest", 0)
    assert state.phase == REDEPLOY
    with pytest.raises(IllegalAction, match="Your conquests for this turn are over"):
        act(state, "conquer", 0, region=2)
    with pytest.raises(IllegalAction, match="already over"):
        act(state, "end_conquest", 0)


def test_a_player_without_a_race_picks_before_conquering() -> None:
    state = Builder(2).build()
    with pytest.raises(IllegalAction, match="[Pp]ick"):
        act(state, "conquer", 0, region=1)


def test_only_the_player_on_turn_conquers() -> None:
    state = ratmen().active(1, "Humans", "Alchemist").build()
    with pytest.raises(IllegalAction, match="It is not your turn: the game is waiting for player 0"):
        act(state, "conquer", 1, region=1)
    with pytest.raises(IllegalAction, match="There is no player 5"):
        act(state, "conquer", 5, region=1)


def test_a_mountain_alone_is_an_empty_region() -> None:
    """Rulebook: "A Region that contains a Mountain marker but no Lost Tribe or enemy Race token is
    considered empty" (it matters to Orcs, Pillaging, Skeletons)."""
    state = ratmen().region(6).build()
    after = conquer(conquer(state, 5), 6)  # the empty Mountain, then a Lost Tribe next to it
    assert after.t.conquered == [5, 6]
    assert after.t.nonempty_conquered == 1
