"""What a player may see (ARCHITECTURE §4, "Hidden information"; rulebook, "Scoring Victory Coins": coins
are kept hidden "from other players at all times; final scores are not revealed until the end")."""

from __future__ import annotations

import json
import random

from rules import apply, auto_pass, new_game, player_view
from rules.bots import random_player
from rules.state import OVER

from .builder import Builder, act


def coins_game():
    """Seats hold 7, 11 and 13 coins; 2 and 3 coins lie on the first combos."""
    b = Builder(3, seed=9).coins(0, 7).coins(1, 11).coins(2, 13)
    b.combos(("Ratmen", "Hill", 2), ("Orcs", "Swamp", 3), ("Elves", "Forest"))
    return b.at(0).build()


def test_own_coins_are_shown_others_hidden() -> None:
    state = coins_game()
    for seat, coins in enumerate((7, 11, 13)):
        view = player_view(state, seat)
        assert [p["coins"] for p in view["players"]] == [coins if other == seat else None for other in range(3)]


def test_a_spectator_sees_no_coins() -> None:
    view = player_view(coins_game(), None)
    assert [p["coins"] for p in view["players"]] == [None, None, None]


def test_coins_on_the_combos_and_the_map_are_public() -> None:
    view = player_view(coins_game(), 1)
    assert view["combos"][:3] == [
        ["Ratmen", "Hill", 2],
        ["Orcs", "Swamp", 3],
        ["Elves", "Forest", 0],
    ]
    assert view["regions"] == coins_game().to_json()["regions"]


def test_the_generator_and_the_order_of_the_stacks_are_hidden() -> None:
    state = coins_game()
    view = player_view(state, 0)
    assert "rng" not in view
    assert view["race_stack"] == len(state.race_stack)
    assert view["power_stack"] == len(state.power_stack)
    assert view["power_discard"] == state.power_discard  # discarded badges lie face up


def test_a_turns_score_is_shown_to_its_player_only() -> None:
    """A turn's score added up would tell the coins."""
    state = act(act(act(coins_game(), "pick", 0, combo=0), "end_conquest", 0), "end_turn", 0)
    assert "score" in state.last
    assert "score" in player_view(state, 0)["last"]
    assert "score" not in player_view(state, 1)["last"]
    assert "score" not in player_view(state, None)["last"]
    passed = auto_pass(state, 1)
    assert "score" in player_view(passed, 1)["last"]
    assert "score" not in player_view(passed, 0)["last"]


def test_no_other_players_coins_anywhere_in_the_view_of_a_random_game() -> None:
    """Give each seat a coin count no other number in the state has, then search the views."""
    rnd = random.Random(4)
    state = new_game(3, seed=4)
    for _ in range(60):
        state = apply(state, random_player(state, rnd))
    marks = (90001, 90002, 90003)
    for seat, mark in enumerate(marks):
        state.players[seat].coins = mark
    for seat in range(3):
        text = json.dumps(player_view(state, seat))
        for other, mark in enumerate(marks):
            assert (str(mark) in text) == (other == seat)


def test_the_view_does_not_change_the_state() -> None:
    state = coins_game()
    before = state.to_json()
    view = player_view(state, 0)
    view["players"][0]["coins"] = 999
    view["last"]["x"] = 1
    assert state.to_json() == before


def test_everything_is_public_once_the_game_is_over() -> None:
    state = Builder(3, seed=9).coins(1, 11).at(2, OVER).build()
    for seat in (0, 1, 2, None):
        view = player_view(state, seat)
        assert view == state.to_json()
        assert view["rng"] == state.to_json()["rng"]
        assert [p["coins"] for p in view["players"]] == [5, 11, 5]
