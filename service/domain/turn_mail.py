"""What a turn mail shows of the game besides its link: the public board, for its picture and its words.

The mail's context is plain JSON written with the state change (DESIGN §6), so it holds the board as it
stood when the step began. Only public information goes in (DESIGN §4: regions, tokens, races, markers);
never coins.
"""

from __future__ import annotations

from typing import Any

import rules
from emails.messages import Board, BoardPlayer, BoardRegion

# Mountains show as terrain; these are the pieces lying on a region.
_MARKS = ("lair", "fortress", "encampments", "hole", "hero", "dragon")


def board_summary(state: rules.GameState, names: dict[int, str], you: int | None) -> Board:
    """The board for ``emails.board_picture``: terrain, owner, race, tokens and markers per region."""
    board = state.board
    regions: list[BoardRegion] = []
    for spec, region in zip(board.regions, state.regions, strict=True):
        entry: BoardRegion = {"terrain": spec.terrain}
        if region.race:
            entry["race"] = region.race
            entry["tokens"] = region.tokens
        if region.owner >= 0:
            entry["owner"] = region.owner
            active = state.players[region.owner].active
            entry["declined"] = not (active is not None and active.race == region.race)
        marks = [mark for mark in _MARKS if getattr(region, mark)]
        if marks:
            entry["marks"] = marks
        if region.encampments > 1:
            entry["encampments"] = region.encampments
        regions.append(entry)
    players: list[BoardPlayer] = [
        {
            "name": names.get(seat, f"Player {seat + 1}"),
            "active": f"{p.active.race} ({p.active.power})" if p.active else None,
            "declined": [t.race for t in p.declined],
        }
        for seat, p in enumerate(state.players)
    ]
    return {"players": players, "regions": regions, "you": you, "turn": state.turn, "turns": state.turns}


def step_details(state: rules.GameState, seat: int, names: dict[int, str]) -> dict[str, Any]:
    """The extra context of a "your turn" or "redeploy needed" mail for ``seat``."""
    player = state.players[seat]
    return {
        "seat": seat,
        "defending": state.phase == "defend",
        "hand": sum(troop.hand for troop in [player.active, *player.declined] if troop is not None),
        "board": board_summary(state, names, seat),
    }
