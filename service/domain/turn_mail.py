"""What a turn mail shows of the game besides its link: the public board, for its picture and its words.

The mail's context is plain JSON written when the step is announced (``service.domain.announce``,
ARCHITECTURE §2 and §6), a moment after the step: it holds the board as it stood then. Only public information
goes in (ARCHITECTURE §4: regions, tokens, races, markers); never coins.
"""

from __future__ import annotations

from typing import Any

import rules
from emails.board.public import PublicBoard
from emails.messages import Board
from rules import orders


def board_summary(state: rules.GameState, names: dict[int, str], you: int | None) -> Board:
    """The board for the mail's picture and words (``emails.board.public.PublicBoard.to_mail``), with whose
    mail it is and the game turn."""
    public = PublicBoard.from_state(rules.player_view(state, None), seat_names(state, names)).to_mail()
    return {
        "board": public["board"],
        "players": public["players"],
        "regions": public["regions"],
        "you": you,
        "turn": state.turn,
        "turns": state.turns,
    }


def step_details(state: rules.GameState, seat: int, names: dict[int, str]) -> dict[str, Any]:
    """The extra context of a "your turn" or "redeploy needed" mail for ``seat``: with what it may do, as
    orders to reply with (ARCHITECTURE §10)."""
    player = state.players[seat]
    return {
        "seat": seat,
        "defending": state.phase == rules.Phase.DEFEND,
        "hand": sum(troop.hand for troop in [player.active, *player.declined] if troop is not None),
        "board": board_summary(state, names, seat),
        **orders_of(state, seat, names),
    }


def orders_of(state: rules.GameState, seat: int, names: dict[int, str]) -> dict[str, list[str]]:
    """What ``seat`` may do now as orders to reply with, and each region it may conquer with its cost and
    holder: the same lists in a turn mail, a reminder and an answer to orders (ARCHITECTURE §10)."""
    everyone = seat_names(state, names)
    return {"orders": orders.describe(state, seat, everyone), "conquests": orders.conquests(state, seat, everyone)}


def seat_names(state: rules.GameState, names: dict[int, str]) -> list[str]:
    """Every seat's name, by seat number (``Player 2`` for a seat without one)."""
    return [names.get(seat, f"Player {seat + 1}") for seat in range(len(state.players))]
