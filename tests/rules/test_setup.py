"""Setting up a game (rulebook, "Setting up the game"; components.md, "Other pieces")."""

from __future__ import annotations

import pytest

from rules import BOARD_NAMES, POWERS, RACES, board_for_players, load_board, new_game, region_markers
from rules.state import LOST_TRIBE, PICK

from .invariants import check_invariants

# maps/README: regions, borders, game turns, Lost Tribe regions, Mountains of each printed board.
PRINTED_BOARDS = {
    2: ("2-players", 23, 51, 10, 9, 4),
    3: ("3-players", 30, 71, 10, 10, 7),
    4: ("4-players", 39, 95, 9, 14, 8),
    5: ("5-players", 48, 120, 8, 18, 9),
}


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_board_follows_the_player_count(players: int) -> None:
    name, regions, borders, turns, lost_tribes, mountains = PRINTED_BOARDS[players]
    state = new_game(players, seed=1)
    board = state.board
    assert state.board_name == name == board_for_players(players).name
    assert len(board) == regions == len(state.regions)
    assert len(board.edges) == borders
    assert sum(r.lost_tribe for r in board.regions) == lost_tribes
    assert len(board.mountains) == mountains
    # maps/README: each map has exactly 2 Seas and 1 Lake.
    assert sorted(r.terrain for r in board.regions if r.is_water) == ["lake", "sea", "sea"]
    check_invariants(state)


@pytest.mark.parametrize(("players", "turns"), [(2, 10), (3, 10), (4, 9), (5, 8)])
def test_the_turn_track_has_10_10_9_8_turns(players: int, turns: int) -> None:
    state = new_game(players, seed=1)
    assert state.turns == turns
    assert state.turn == 1


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_lost_tribes_and_mountains_are_placed(players: int) -> None:
    state = new_game(players, seed=7)
    board = state.board
    for i, (land, r) in enumerate(zip(board.regions, state.regions, strict=True)):
        if land.lost_tribe:
            assert (r.owner, r.race, r.tokens) == (-1, LOST_TRIBE, 1), land
        else:
            assert r.tokens == 0 and r.race is None, land
        # "Put a Mountain token on each Region of the map featuring a Mountain."
        assert r.mountain == (land.terrain == "mountain"), land
        assert not region_markers(state, i)  # no Lair, Fortress, Encampment, Hole, Hero or Dragon


def test_first_turn_seat_0_picks_with_5_coins_each() -> None:
    state = new_game(4, seed="abc")
    assert [p.coins for p in state.players] == [5, 5, 5, 5]
    assert all(p.active is None and p.declined == [] for p in state.players)
    assert (state.current, state.phase) == (0, PICK)


def test_six_combos_are_visible_and_every_piece_is_somewhere() -> None:
    state = new_game(3, seed=2)
    assert len(state.combos) == 6
    assert all(c.coins == 0 for c in state.combos)
    assert sorted([c.race for c in state.combos] + state.race_stack) == sorted(RACES)
    assert sorted([c.power for c in state.combos] + state.power_stack) == sorted(POWERS)
    assert len(RACES) == 14 and len(POWERS) == 20
    assert state.power_discard == []


def test_the_stacks_are_shuffled_from_the_seed() -> None:
    a, b = new_game(3, seed=42), new_game(3, seed=42)
    assert a == b and a.to_json() == b.to_json()
    orders = {
        (tuple(c.race for c in s.combos) + tuple(s.race_stack), tuple(s.power_stack))
        for s in (new_game(3, seed=seed) for seed in range(20))
    }
    assert len(orders) == 20, "different seeds give different stacks"
    assert new_game(3, seed="x").combos != new_game(3, seed="y").combos


def test_string_and_integer_seeds_are_both_accepted() -> None:
    assert new_game(2, seed="s3cret").rng != new_game(2, seed=0).rng


def test_a_board_can_be_chosen_by_name() -> None:
    state = new_game(3, seed=1, map_name="5-players")
    assert state.board_name == "5-players" and state.turns == 8 and len(state.players) == 3


@pytest.mark.parametrize("players", [0, 1, 6])
def test_small_world_is_played_by_2_to_5(players: int) -> None:
    with pytest.raises(ValueError, match="2 to 5 players"):
        new_game(players, seed=1)


def test_unknown_board_and_options_are_refused_readably() -> None:
    with pytest.raises(ValueError, match="Unknown board"):
        load_board("6-players")
    with pytest.raises(ValueError, match="Unknown game option 'colour'"):
        new_game(2, seed=1, options={"colour": "red"})
    with pytest.raises(ValueError, match="'auto' or 'ask'"):
        new_game(2, seed=1, options={"redeploy": "sometimes"})


def test_boards_are_named_after_their_player_count() -> None:
    assert BOARD_NAMES == ("2-players", "3-players", "4-players", "5-players")


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_border_regions_and_shores_of_border_seas_are_entries(players: int) -> None:
    """maps/README: a region on the shore of a Sea on the edge counts as a border region."""
    board = board_for_players(players)
    border_seas = {r.id for r in board.regions if r.terrain == "sea" and r.border}
    for land in board.regions:
        expected = land.border or bool(board.neighbours[land.id] & border_seas)
        assert (land.id in board.entry) == expected, land
    lake = next(r.id for r in board.regions if r.terrain == "lake")
    assert not board.regions[lake].border


def test_adjacency_is_symmetric_and_irreflexive() -> None:
    for name in BOARD_NAMES:
        board = load_board(name)
        for i, near in enumerate(board.neighbours):
            assert i not in near
            assert all(i in board.neighbours[j] for j in near)
