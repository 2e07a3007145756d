"""Scoring Victory coins (rulebook, "Scoring Victory Coins": 1 coin per region held, Active and In
Decline, plus the Active race's and power's bonuses)."""

from __future__ import annotations

from rules import turn_score
from rules.state import REDEPLOY

from .builder import Builder, act


def five_regions() -> Builder:
    """Seat 0: Active Ratmen (Commando: no bonus) on 1, 2, 6; In Decline Humans on 9 and 13."""
    b = Builder(3, seed=1, map_name="2-players").clear_board()
    b.active(0, "Ratmen", "Commando", hand=0).declined(0, "Humans", "Alchemist")
    b.region(1, seat=0, tokens=3).region(2, seat=0).region(6, seat=0, tokens=2)
    b.region(9, seat=0, declined=True).region(13, seat=0, declined=True)
    return b


def test_one_coin_per_region_active_and_in_decline() -> None:
    state = five_regions().at(0, REDEPLOY).build()
    assert turn_score(state, 0) == {"regions": 5, "bonus": {}, "total": 5}


def test_the_score_is_added_at_the_end_of_the_players_turn() -> None:
    state = five_regions().coins(0, 7).coins(1, 3).at(0, REDEPLOY).build()
    after = act(state, "end_turn", 0)
    assert after.players[0].coins == 12
    assert after.last["score"] == {"regions": 5, "bonus": {}, "total": 5}
    assert after.players[1].coins == 3  # others score on their own turns only


def test_regions_of_other_players_and_lost_tribes_do_not_count() -> None:
    b = five_regions().active(1, "Orcs", "Hill").region(3, seat=1).region(4)  # 4: a Lost Tribe
    state = b.at(0, REDEPLOY).build()
    assert turn_score(state, 0)["regions"] == 5
    assert turn_score(state, 1)["regions"] == 1
    assert turn_score(state, 2) == {"regions": 0, "bonus": {}, "total": 0}


def test_the_number_of_tokens_in_a_region_does_not_matter() -> None:
    state = five_regions().region(1, seat=0, tokens=9).at(0, REDEPLOY).build()
    assert turn_score(state, 0)["regions"] == 5


def test_a_player_holding_nothing_scores_nothing() -> None:
    state = Builder(2).clear_board().at(0).build()
    after = act(act(state, "pick", 0, combo=0), "end_conquest", 0)
    after = act(after, "end_turn", 0)
    assert after.last["score"]["regions"] == 0
    assert after.players[0].coins >= 0


def test_scoring_counts_the_regions_held_after_the_turns_conquests() -> None:
    state = five_regions().active(0, "Ratmen", "Commando", hand=6).at(0, "conquer").build()
    state = act(act(state, "conquer", 0, region=3), "conquer", 0, region=4)
    state = act(state, "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((1, 1), (2, 1), (3, 2), (4, 2), (6, 6)))
    after = act(state, "end_turn", 0)
    assert after.last["score"]["regions"] == 5 + 2
