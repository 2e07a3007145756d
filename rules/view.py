"""What a player may see, and the final standings (ARCHITECTURE §4, "Hidden information", "End of game")."""

from __future__ import annotations

from typing import Any

from .regions import all_markers
from .scoring import tokens_on_board
from .state import GameState


def player_view(state: GameState, player: int | None, *, revealed: bool | None = None) -> dict[str, Any]:
    """The state as ``player`` may see it (``None``: a spectator).

    ``revealed``: whether the coins are revealed (rulebook, "Game End": they are revealed and tallied once
    every player had a final turn); by default, as soon as the game is over. A service that tallies later
    passes ``False`` until its tally is done.

    Rulebook, "Scoring Victory Coins": coins are hidden from other players until the end. The RNG and the
    order of the stacks below the column are never shown before the end (they would tell future die rolls
    and combos); their sizes are. For drawing the board, each region also lists the markers on it
    (``rules.region_markers``: each marker's name, true or a count), which the JSON keeps in their
    ability's state.
    """
    data = state.to_json()
    for region, markers in zip(data["regions"], all_markers(state), strict=True):
        region.update(markers)
    if state.over if revealed is None else revealed:
        return data
    for seat, p in enumerate(data["players"]):
        if seat != player:
            p["coins"] = None
    if data["last"].get("player") != player:
        data["last"].pop("score", None)  # a turn's score, added up, would tell the coins
    del data["rng"]
    data["race_stack"] = len(state.race_stack)
    data["power_stack"] = len(state.power_stack)
    return data


def final_standings(state: GameState) -> list[dict[str, Any]]:
    """Ranking once the game is over: most coins; ties broken by race tokens on the board (Active + In
    Decline); still tied, the players share the place (rulings, "Tie-break")."""
    if not state.over:
        raise ValueError("The game is not over yet")
    rows = [
        {"player": seat, "coins": p.coins, "tokens_on_board": tokens_on_board(state, seat)}
        for seat, p in enumerate(state.players)
    ]
    rows.sort(key=lambda r: (-r["coins"], -r["tokens_on_board"], r["player"]))
    place = 0
    previous = None
    for index, row in enumerate(rows):
        key = (row["coins"], row["tokens_on_board"])
        if key != previous:
            place = index + 1
            previous = key
        row["place"] = place
    tied_on_coins: dict[int, list[int]] = {}
    for row in rows:
        tied_on_coins.setdefault(row["coins"], []).append(row["player"])
    for row in rows:
        row["tie_break"] = len(tied_on_coins[row["coins"]]) > 1
    return rows
