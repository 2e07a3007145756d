"""Setting up a game (rulebook, "Setting up the game")."""

from __future__ import annotations

from typing import Any

from . import rng
from .abilities import POWERS, RACES
from .board import board_for_players, load_board
from .combos import replenish
from .components import STARTING_COINS
from .designs import deal, official
from .state import LOST_TRIBE, PICK, REDEPLOY_ASK, REDEPLOY_AUTO, GameState, PlayerState, RegionState, TurnState

DEFAULT_OPTIONS: dict[str, Any] = {"redeploy": REDEPLOY_AUTO}


def new_game(
    players: int,
    *,
    seed: int | str,
    map_name: str | None = None,
    options: dict[str, Any] | None = None,
    custom: dict[str, Any] | None = None,
) -> GameState:
    """A game ready for its first turn: the board for the player count, Lost Tribes and Mountains placed,
    the stacks shuffled from ``seed``, six combos visible, 5 coins each. Seat 0 plays first.

    ``options``: ``{"redeploy": "auto" | "ask"}`` (ARCHITECTURE §4, defenders' redeployment).
    ``custom``: the host's own race and power, ``{"race": design, "replaces": "Humans", "power": design,
    "first": true}`` (each part optional; ``rules.designs.deal``, ARCHITECTURE §11); a fault is a
    ``rules.designs.DesignError`` (a ValueError) naming the field.
    """
    board = load_board(map_name) if map_name else board_for_players(players)
    if not 2 <= players <= 5:
        raise ValueError(f"Small World is played by 2 to 5 players, not {players}")
    chosen = _checked_options(DEFAULT_OPTIONS, options or {})
    state_rng = rng.seed_state(seed)
    state_rng, races = rng.shuffled(state_rng, official(RACES))
    state_rng, powers = rng.shuffled(state_rng, official(POWERS))
    designs: dict[str, Any] = {}
    if custom is not None:
        state_rng, designs, races, powers = deal(custom, state_rng, races, powers)
    regions = []
    for region in board.regions:
        r = RegionState(mountain=region.terrain == "mountain")
        if region.lost_tribe:
            r.race, r.tokens = LOST_TRIBE, 1
        regions.append(r)
    state = GameState(
        board_name=board.name,
        turns=board.turns,
        turn=1,
        current=0,
        phase=PICK,
        players=[PlayerState(coins=STARTING_COINS) for _ in range(players)],
        regions=regions,
        combos=[],
        race_stack=races,
        power_stack=powers,
        power_discard=[],
        rng=state_rng,
        t=TurnState(),
        options=chosen,
        designs=designs,
    )
    replenish(state)
    state.last = {"kind": "setup", "undo_point": True}
    return state


def _checked_options(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    chosen = dict(base)
    for key, value in changes.items():
        if key not in DEFAULT_OPTIONS:
            raise ValueError(f"Unknown game option {key!r}")
        chosen[key] = value
    if chosen["redeploy"] not in (REDEPLOY_AUTO, REDEPLOY_ASK):
        raise ValueError("The redeploy option is 'auto' or 'ask'")
    return chosen


def with_options(state: GameState, options: dict[str, Any]) -> GameState:
    """The same game under changed house options (the host may switch the defenders' redeploy mode).

    A pending ``ask`` step stays as it is; the new mode applies from the next end of turn. ``state`` is not
    changed.
    """
    new = state.fork()
    new.options = _checked_options(state.options, options)
    new.last = {"kind": "options", "undo_point": True, "options": dict(options)}
    return new.done()
