"""What a step will do before it is taken, and why a step is not offered: the rules engine's previews and
explanations (``rules.previews``, ``rules.explain``) of a game, as the seat on turn may see them.

Everything here reads the game and changes nothing. A preview holds only what the seat may know: the board,
its own coins and tokens; the die of a step that rolls it is previewed for every value it can show, never
the one the game's generator holds (ARCHITECTURE §4, "Hidden information").
"""

from __future__ import annotations

from typing import Any

import rules
from service.domain.errors import BadRequest, Conflict, IllegalMove
from service.domain.models import GameStatus
from service.domain.rows import GameRecord
from service.domain.schemas import Explained, LegalActions, RegionExplained


def _state(game: GameRecord) -> rules.GameState:
    if game.state is None or game.status != GameStatus.ACTIVE:
        raise Conflict("The game is not running: nothing to preview", version=game.version)
    return rules.read_state(game.state)


def legal_actions(
    game: GameRecord, seat: int, *, with_previews: bool = True, state: rules.GameState | None = None
) -> LegalActions:
    """What ``seat`` may do now and, in the same order, what each action will do (``rules.previews``).
    ``state``: the game's state when the caller holds it (not parsed again from the snapshot)."""
    if game.state is None or game.status != GameStatus.ACTIVE:
        return LegalActions(version=game.version, actions=[], previews=[])
    state = state or rules.read_state(game.state)
    if not with_previews:
        return LegalActions(version=game.version, actions=[a.to_json() for a in rules.legal_actions(state, seat)])
    listed = rules.previews(state, seat)
    return LegalActions(
        version=game.version,
        actions=[a.to_json() for a, _ in listed],
        previews=[p.to_json() if p is not None else None for _, p in listed],
    )


def action_of(seat: int, payload: Any) -> rules.Action:
    """The action a client asks about, as ``seat`` (``player`` defaults to it): a BadRequest naming what
    is malformed."""
    if not isinstance(payload, dict):
        raise BadRequest("The action must be a JSON object")
    payload = dict(payload)
    if payload.setdefault("player", seat) != seat:
        raise BadRequest("'player': you can only ask about your own seat's actions")
    try:
        return rules.Action.from_json(payload)
    except rules.IllegalAction as error:
        raise BadRequest(f"'action': {error}") from None


def explain_action(game: GameRecord, seat: int, payload: Any, *, board: bool = False) -> Explained:
    """Whether the action is offered to ``seat`` now, why not (the rules' words), what a conquest of its
    region costs, and what it will do; ``board``: also the board as the seat will see it after it."""
    state = _state(game)
    action = action_of(seat, payload)
    try:
        told = rules.explain(state, action)
    except rules.IllegalAction as error:
        raise BadRequest(f"'action': {error}") from None
    after = None
    if board and told.offered:
        try:
            after = rules.board_after(state, action)
        except rules.IllegalAction:
            after = None  # a step that rolls the die: its board is known only once taken
    return Explained(version=game.version, board=after, **told.to_json())


def explain_region(game: GameRecord, seat: int, region: int) -> RegionExplained:
    """What ``seat`` may do on ``region`` now, each with its preview, and, when no conquest of it is
    offered during the conquests, why not (with what it would cost)."""
    state = _state(game)
    if not 0 <= region < len(state.regions):
        raise BadRequest(f"'region': there is no region {region} on this board (0 to {len(state.regions) - 1})")
    offered = [
        Explained(version=game.version, **rules.explain(state, action).to_json())
        for action in rules.legal_actions(state, seat)
        if action.region == region
    ]
    conquest = None
    conquering = any(rules.ACTION_KINDS[e.action["type"]].conquers for e in offered)
    if not conquering and seat in rules.awaiting(state) and state.phase in ("start", "conquer"):
        told = rules.explain(state, rules.Action("conquer", seat, region=region))
        conquest = Explained(version=game.version, **told.to_json())
    return RegionExplained(version=game.version, region=region, offered=offered, conquest=conquest)


def board_after(game: GameRecord, seat: int, payload: Any) -> dict[str, Any]:
    """The board as ``seat`` will see it after the proposed step (a redeployment, markers placed), checked
    by the rules: IllegalMove with the rules' words when they refuse it."""
    state = _state(game)
    action = action_of(seat, payload)
    try:
        return rules.board_after(state, action)
    except rules.IllegalAction as error:
        raise IllegalMove(str(error)) from None
