"""emails.board.public: what anyone may see of a board, from a state or from a mail's context."""

from __future__ import annotations

import random

import pytest

import rules
from emails.board.public import PublicBoard, RegionView, Troops
from emails.samples import BOARD
from rules.bots import random_action


def played(players: int, seed: int, steps: int) -> rules.GameState:
    rnd = random.Random(seed)
    state = rules.new_game(players, seed=seed)
    for _ in range(steps):
        if state.over:
            break
        state = rules.apply(state, random_action(state, min(rules.awaiting(state)), rnd))
    return state


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_mails_board_is_the_states_board(players: int) -> None:
    names = [f"P{n}" for n in range(players)]
    state = played(players, seed=players, steps=120)
    public = PublicBoard.from_state(rules.player_view(state, None), names)
    assert PublicBoard.from_mail(public.to_mail()) == public
    assert any(r.troops and r.troops.declined for r in public.regions) or state.turn < 3


def test_a_mail_written_before_boards_were_named_is_read_by_its_region_count() -> None:
    public = PublicBoard.from_mail(BOARD)  # the sample has no "board" key, as older mails
    assert public.board == "2-players"
    assert public.regions[9] == RegionView(Troops("Ratmen", 1, owner=1, declined=True))
    assert public.regions[5].markers == ("mountain",)  # a Mountain region holds its marker
    assert public.regions[3].markers == ("fortress",)
    with pytest.raises(ValueError, match="no board has 2 regions"):
        PublicBoard.from_mail({"players": [], "regions": [{}, {}]})


def test_seats_say_their_races() -> None:
    public = PublicBoard.from_mail(BOARD)
    assert [seat.troops for seat in public.seats] == ["Seafaring Orcs", "Wealthy Giants; Ratmen In Decline"]
