"""Small World rules engine: pure, deterministic, shared by the web service and the workers.

The contract (ARCHITECTURE §3)::

    state = new_game(3, seed="s3cret")
    legal_actions(state, 0)           # what seat 0 may do now
    state = apply(state, Action("pick", 0, combo=0))
    awaiting(state)                   # {0}
    auto_pass(state, 0)               # what a missed deadline does
    player_view(state, 1)             # what seat 1 may see
    read_state(state.to_json()) == state  # the state its JSON holds, checked

Nothing here does I/O or imports Flask, SQLModel or Celery.
"""

from . import powers as _powers  # noqa: F401  (registers the 20 powers)
from . import races as _races  # noqa: F401  (registers the 14 races)
from .abilities import ABILITIES, POWERS, RACES, registered
from .actions import ACTION_KINDS, Action, ActionKind, IllegalAction
from .board import BOARD_NAMES, Board, board_for_players, load_board
from .cost import ConquestCost, conquest_breakdown, conquest_cost, conquest_refusal
from .designs import DesignError, custom_of, read_design
from .engine import apply, auto_pass, awaiting, legal_actions
from .previewing import Explanation, Preview, board_after, explain, preview, previews
from .regions import region_markers
from .schema import read_state
from .scoring import turn_score
from .setup import new_game, with_options
from .state import SCHEMA_VERSION, GameState, Phase
from .telling import combo_name, region_name, score_words, tell, tell_turn
from .view import final_standings, player_view

__all__ = [
    "ABILITIES",
    "ACTION_KINDS",
    "BOARD_NAMES",
    "Explanation",
    "POWERS",
    "Preview",
    "RACES",
    "SCHEMA_VERSION",
    "Action",
    "ActionKind",
    "Board",
    "ConquestCost",
    "DesignError",
    "GameState",
    "Phase",
    "IllegalAction",
    "apply",
    "combo_name",
    "auto_pass",
    "awaiting",
    "board_after",
    "board_for_players",
    "conquest_breakdown",
    "conquest_cost",
    "conquest_refusal",
    "custom_of",
    "explain",
    "final_standings",
    "legal_actions",
    "load_board",
    "new_game",
    "player_view",
    "preview",
    "previews",
    "read_design",
    "read_state",
    "region_markers",
    "region_name",
    "registered",
    "score_words",
    "tell",
    "tell_turn",
    "turn_score",
    "with_options",
]
