"""Diplomat: at the end of the turn, choose one opponent whose Active race was not attacked this
turn; that opponent cannot attack the Diplomat's Active race until the Diplomat's next turn; In
Decline tokens are neither protected nor bound (rulebook, "Diplomat"; rulings)."""

import pytest

from rules import IllegalAction, legal_actions
from tests.rules.builder import Builder, act, region_of, slot
from tests.rules.playing import finish_turn


def diplomat(players=2, phase="redeploy"):
    b = (
        Builder(players)
        .clear_board()
        .active(0, "Humans", "Diplomat", hand=0)
        .region(3, seat=0)
        .region(4, seat=0)
        .active(1, "Ratmen", "Hill", hand=0)
        .region(9, seat=1, tokens=6)
    )
    return b.at(0, phase).build()


def conquests(state, seat):
    return {a.region for a in legal_actions(state, seat) if a.type in ("conquer", "final_conquest")}


def test_the_diplomat_chooses_an_ally_at_the_end_of_the_turn():
    state = diplomat()
    assert [a.target for a in legal_actions(state, 0) if a.type == "choose_ally"] == [1]
    state = act(state, "choose_ally", 0, target=1)
    assert slot(state, "Diplomat").ally == 1


def test_the_ally_cannot_attack_the_diplomats_active_race():
    state = act(diplomat(), "choose_ally", 0, target=1)
    state = act(state, "end_turn", 0)
    assert state.current == 1
    assert not {3, 4} & conquests(state, 1)
    with pytest.raises(IllegalAction, match="at peace with player 0's Humans"):
        act(state, "conquer", 1, region=3)


def test_the_peace_ends_when_the_diplomats_next_turn_begins():
    state = act(diplomat(), "choose_ally", 0, target=1)
    state = finish_turn(act(state, "end_turn", 0), 1)
    assert state.current == 0 and slot(state, "Diplomat").ally is None


def test_an_opponent_attacked_this_turn_cannot_be_chosen():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Humans", "Diplomat", hand=5)
        .region(3, seat=0)
        .active(1, "Ratmen", "Hill", hand=0)
        .region(9, seat=1)
        .region(14, seat=1)
        .at(0, "conquer")
        .build()
    )
    state = act(act(state, "conquer", 0, region=9), "end_conquest", 0)
    assert not any(a.type == "choose_ally" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="attacked player 1's Active race"):
        act(state, "choose_ally", 0, target=1)


def test_another_opponent_can_still_be_chosen_after_an_attack():
    state = (
        Builder(3)
        .clear_board()
        .active(0, "Humans", "Diplomat", hand=5)
        .region(3, seat=0)
        .active(1, "Ratmen", "Hill", hand=0)
        .region(9, seat=1)
        .region(10, seat=1)
        .at(0, "conquer")
        .build()
    )
    state = act(act(state, "conquer", 0, region=9), "end_conquest", 0)
    assert [a.target for a in legal_actions(state, 0) if a.type == "choose_ally"] == [2]


def test_the_peace_does_not_protect_the_diplomats_in_decline_regions():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Orcs", "Swamp")
        .region(10, seat=0, declined=True)
        .active(0, "Humans", "Diplomat", hand=0)
        .region(3, seat=0)
        .active(1, "Ratmen", "Hill", hand=0)
        .region(9, seat=1, tokens=6)
        .at(0, "redeploy")
        .build()
    )
    state = act(act(state, "choose_ally", 0, target=1), "end_turn", 0)
    assert 10 in conquests(state, 1)
    assert region_of(act(state, "conquer", 1, region=10), 10)["race"] == "Ratmen"


def test_the_ally_is_chosen_only_at_the_end_of_the_turn():
    state = diplomat(phase="conquer")
    assert not any(a.type == "choose_ally" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="at the end of the turn"):
        act(state, "choose_ally", 0, target=1)


@pytest.mark.parametrize("target", [0, 2, -1])
def test_the_ally_is_another_player_of_the_game(target):
    with pytest.raises(IllegalAction, match="another player"):
        act(diplomat(), "choose_ally", 0, target=target)


def test_the_diplomat_may_change_allies_each_turn():
    state = act(diplomat(players=3), "choose_ally", 0, target=1)
    state = act(state, "choose_ally", 0, target=2)
    assert slot(state, "Diplomat").ally == 2


def test_without_an_ally_anyone_may_attack():
    state = act(diplomat(), "end_turn", 0)
    assert 3 in conquests(state, 1)


def test_an_in_decline_diplomat_makes_no_peace():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Humans", "Diplomat")
        .region(3, seat=0, declined=True)
        .active(0, "Orcs", "Hill", hand=0)
        .region(10, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert not any(a.type == "choose_ally" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="belongs to Diplomat"):
        act(state, "choose_ally", 0, target=1)


def test_an_attack_by_the_players_in_decline_ghouls_also_rules_the_opponent_out():
    """Decision: the player attacked that opponent this turn, whichever of their races did it."""
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ghouls", "Swamp")
        .region(10, seat=0, tokens=4, declined=True)
        .active(0, "Humans", "Diplomat", hand=0)
        .region(3, seat=0)
        .active(1, "Ratmen", "Hill", hand=0)
        .region(9, seat=1)
        .region(14, seat=1)
        .at(0, "start")
        .build()
    )
    state = act(state, "conquer", 0, region=9, troop="declined")
    state = act(state, "end_conquest", 0)
    with pytest.raises(IllegalAction, match="attacked player 1"):
        act(state, "choose_ally", 0, target=1)
