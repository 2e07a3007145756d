"""The end of the game (rulebook, "Starting the game", "End of the game"; rulings, "Tie-break")."""

from __future__ import annotations

import pytest

from rules import IllegalAction, auto_pass, awaiting, final_standings, legal_actions
from rules.state import DEFEND, OVER

from .builder import Builder, act
from .invariants import check_invariants


def last_turn(players: int = 3, seat: int | None = None, **kw) -> Builder:
    """The last turn on the track (10 for 3 players), ``seat`` (default: the last) on turn."""
    b = Builder(players, seed=1, **kw)
    turns = b.state.turns
    return b.at(players - 1 if seat is None else seat, turn=turns)


def test_the_turn_marker_moves_on_after_the_last_seat() -> None:
    state = Builder(3).at(1).build()
    state = act(act(act(state, "pick", 1, combo=0), "end_conquest", 1), "end_turn", 1)
    assert (state.turn, state.current) == (1, 2)
    state = act(act(act(state, "pick", 2, combo=0), "end_conquest", 2), "end_turn", 2)
    assert (state.turn, state.current) == (2, 0)


def test_the_game_ends_after_the_last_players_last_turn() -> None:
    state = last_turn().build()
    assert state.turn == state.turns == 10
    after = act(act(act(state, "pick", 2, combo=0), "end_conquest", 2), "end_turn", 2)
    assert after.phase == OVER and after.over
    assert after.turn == 10
    assert after.last["score"]["total"] >= 0  # the last turn is scored
    assert awaiting(after) == set()
    assert all(legal_actions(after, seat) == [] for seat in range(3))
    check_invariants(after)


def test_not_before_every_player_has_played_the_last_turn() -> None:
    state = last_turn(seat=1).build()
    after = act(act(act(state, "pick", 1, combo=0), "end_conquest", 1), "end_turn", 1)
    assert not after.over
    assert (after.turn, after.current) == (10, 2)


@pytest.mark.parametrize(("players", "turns"), [(2, 10), (3, 10), (4, 9), (5, 8)])
def test_the_last_turn_follows_the_track(players: int, turns: int) -> None:
    state = last_turn(players).build()
    assert state.turn == turns
    seat = players - 1
    after = act(act(act(state, "pick", seat, combo=0), "end_conquest", seat), "end_turn", seat)
    assert after.over


def test_nothing_more_is_accepted_once_the_game_is_over() -> None:
    state = last_turn().at(2, OVER, turn=10).build()
    with pytest.raises(IllegalAction, match="The game is over"):
        act(state, "pick", 2, combo=0)
    with pytest.raises(IllegalAction, match="nothing to do now"):
        auto_pass(state, 2)


def test_an_auto_passed_last_turn_ends_the_game_too() -> None:
    assert auto_pass(last_turn().build(), 2).over


def test_defenders_redeploy_before_the_game_ends() -> None:
    b = last_turn(2, redeploy="ask").clear_board()
    b.active(1, "Ratmen", "Merchant", hand=10).region(1, seat=1)
    b.active(0, "Humans", "Alchemist", hand=0).region(2, seat=0, tokens=3).region(9, seat=0)
    state = b.at(1, "conquer", turn=10).build()
    state = act(act(state, "conquer", 1, region=2), "end_conquest", 1)
    state = act(state, "redeploy", 1, tokens=((1, 6), (2, 5)))
    state = act(state, "end_turn", 1)
    assert (state.phase, state.defenders) == (DEFEND, [0])
    state = act(act(state, "redeploy", 0, tokens=((9, 3),)), "end_turn", 0)
    assert state.over
    assert [r["tokens_on_board"] for r in sorted(final_standings(state), key=lambda r: r["player"])] == [
        3,
        11,
    ]


# -- final standings -------------------------------------------------------------------------------
def over(coins: list[int], tokens: list[int]) -> Builder:
    """A finished game: each seat holds ``tokens`` tokens in one region, and ``coins``."""
    b = Builder(len(coins), seed=1).clear_board()
    races = ["Ratmen", "Humans", "Orcs", "Wizards", "Trolls"]
    powers = ["Merchant", "Hill", "Forest", "Swamp", "Alchemist"]
    for seat, (c, t) in enumerate(zip(coins, tokens, strict=True)):
        b.coins(seat, c).active(seat, races[seat], powers[seat], hand=0)
        if t:
            b.region(1 + seat, seat=seat, tokens=t)
    return b.at(len(coins) - 1, OVER)


def test_standings_are_refused_before_the_end() -> None:
    with pytest.raises(ValueError, match="not over"):
        final_standings(Builder(2).build())


def test_the_most_coins_wins() -> None:
    rows = final_standings(over([20, 31, 25], [1, 1, 9]).build())
    assert [(r["player"], r["place"], r["coins"], r["tie_break"]) for r in rows] == [
        (1, 1, 31, False),
        (2, 2, 25, False),
        (0, 3, 20, False),
    ]


def test_a_tie_on_coins_goes_to_the_most_race_tokens_on_the_board() -> None:
    """Rulebook: "the player with the most Race tokens (Active + In Decline) still on the board"."""
    b = over([30, 30, 12], [4, 5, 9])
    b.declined(0, "Giants", "Stout").region(10, seat=0, declined=True).region(11, seat=0, declined=True)
    rows = final_standings(b.build())
    assert [(r["player"], r["place"], r["tokens_on_board"], r["tie_break"]) for r in rows] == [
        (0, 1, 6, True),
        (1, 2, 5, True),
        (2, 3, 9, False),
    ]


def test_still_tied_the_players_share_the_place() -> None:
    rows = final_standings(over([18, 25, 18, 18], [3, 2, 3, 1]).build())
    assert [(r["player"], r["place"]) for r in rows] == [(1, 1), (0, 2), (2, 2), (3, 4)]
    assert [r["tie_break"] for r in rows] == [False, True, True, True]


def test_tokens_in_hand_do_not_count_for_the_tie_break() -> None:
    b = over([10, 10], [2, 2]).active(0, "Ratmen", "Merchant", hand=5)
    rows = final_standings(b.build())
    assert {r["player"]: r["place"] for r in rows} == {0: 1, 1: 1}


def test_standings_of_a_whole_game_played_to_the_end() -> None:
    import random

    from rules import new_game
    from rules.bots import play_random_game

    state = play_random_game(new_game(4, seed=11), random.Random(11))
    rows = final_standings(state)
    assert sorted(r["player"] for r in rows) == [0, 1, 2, 3]
    assert [r["coins"] for r in rows] == sorted((p.coins for p in state.players), reverse=True)
    assert rows[0]["place"] == 1
    check_invariants(state)
