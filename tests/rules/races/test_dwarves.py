"""Dwarves: +1 coin per Mine region, kept In Decline (rulebook, "Dwarves").

Mines on the 2-player board: regions 2, 5, 15 and 18.
"""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_dwarves_get_three_tokens_plus_the_badge():
    state = Builder(2).combos(("Dwarves", "Hill"), ("Ratmen", "Swamp")).at(0, "pick").build()
    assert act(state, "pick", 0, combo=0).players[0].active.hand == 3 + 4


def test_each_mine_region_is_worth_one_more_coin():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Dwarves", "Alchemist")
        .region(2, seat=0)
        .region(5, seat=0)
        .region(1, seat=0)
        .at(0, "redeploy")
        .build()
    )
    score = turn_score(state, 0)
    assert score["regions"] == 3 and score["bonus"]["Dwarves"] == 2


def test_regions_without_a_mine_give_no_bonus():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Dwarves", "Commando")
        .region(1, seat=0)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 2, "bonus": {}, "total": 2}


def test_the_mine_bonus_is_kept_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Dwarves")
        .active(0, "Ratmen", "Commando")
        .region(2, seat=0, declined=True)
        .region(15, seat=0, declined=True)
        .region(18, seat=0)
        .at(0, "redeploy")
        .build()
    )
    score = turn_score(state, 0)
    # Mines 2 and 15 are the In Decline Dwarves'; mine 18 is the Ratmen's and gives nothing.
    assert score["bonus"] == {"Dwarves": 2} and score["total"] == 5


def test_going_in_decline_scores_the_mines_that_turn():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Dwarves", "Commando")
        .region(2, seat=0, tokens=3)
        .region(5, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert state.last["score"] == {"regions": 2, "bonus": {"Dwarves": 2}, "total": 4}
