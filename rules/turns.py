"""The end of a turn, defenders' redeployment, the next player, the end of the game (ARCHITECTURE §4)."""

from __future__ import annotations

from typing import Any

from .abilities import abilities, hooks_of, names_with, with_state
from .actions import IllegalAction
from .decline import go_into_decline
from .redeploy import auto_redeploy, needs_redeploy, place_declined_hands, place_waiting_pieces, unplaced
from .scoring import score_turn
from .state import DEFEND, OVER, PICK, REDEPLOY, REDEPLOY_AUTO, START, GameState, TurnState


def finish_own_turn(state: GameState, seat: int, *, decline_after: bool = False) -> dict[str, Any]:
    """The abilities finish the turn (``on_end_turn``), the turn is scored, the race declines if asked
    (``declines_after_scoring``), and the turn passes."""
    troop = state.players[seat].active  # an In Decline troop has no hooks
    if troop is not None:
        for ability in hooks_of(troop).on_end_turn:
            ability.on_end_turn(state, seat, state.edit_troop(seat, troop.race))
    score = score_turn(state, seat)
    if decline_after:
        go_into_decline(state, seat)
    pass_turn(state)
    return score


def end_turn(state: GameState, seat: int, decline: bool) -> dict[str, Any]:
    if state.phase != REDEPLOY:
        raise IllegalAction("End your conquests first; then redeploy and end the turn")
    problem = unplaced(state, seat, own_turn=True)
    if problem:
        raise IllegalAction(problem)
    if decline:
        troop = state.players[seat].active
        if troop is None or not any(a.declines_after_scoring for a in abilities(troop)):
            who = names_with("declines_after_scoring")
            raise IllegalAction(f"Only a {who} race may go In Decline at the end of a turn of conquests")
    if state.players[seat].auto_passes:  # copy on write: a player left as it was is shared
        state.edit_player(seat).auto_passes = 0
    return finish_own_turn(state, seat, decline_after=decline)


def pass_turn(state: GameState) -> None:
    """The abilities end the turn on the board (``on_turn_end``); attacked players redeploy (``auto`` rule
    now, or ``ask``: each gets a step), then the next turn."""
    seat = state.current
    n = len(state.players)
    for ability in with_state(state, "on_turn_end"):
        ability.on_turn_end(state)
    for k in range(n):
        if state.players[k].declined:
            place_declined_hands(state, k)
    defenders = []  # in seat order after the active player
    for k in range(1, n):
        if needs_redeploy(state, (seat + k) % n):
            defenders.append((seat + k) % n)
    if state.options.get("redeploy", REDEPLOY_AUTO) == REDEPLOY_AUTO:
        for s in defenders:
            auto_redeploy(state, s, own_turn=False)
        start_next_turn(state)
    elif defenders:
        state.defenders = defenders
        state.phase = DEFEND
    else:
        start_next_turn(state)


def defender_done(state: GameState, seat: int) -> None:
    problem = unplaced(state, seat, own_turn=False)
    if problem:
        raise IllegalAction(problem)
    place_waiting_pieces(state, seat)
    state.defenders = state.defenders[1:]
    if not state.defenders:
        start_next_turn(state)


def start_next_turn(state: GameState) -> None:
    """Rulebook, "Following turns": clockwise; after the last seat the turn marker moves on."""
    n = len(state.players)
    nxt = (state.current + 1) % n
    turn = state.turn + (1 if nxt == 0 else 0)
    state.t = TurnState.fresh()
    state._owned.add("t")
    state.defenders = []
    if turn > state.turns:
        # Rulebook, "End of the game": after the last turn on the track.
        state.phase = OVER
        return
    state.current, state.turn = nxt, turn
    state.phase = PICK if state.players[nxt].active is None else START
    for ability in with_state(state, "on_turn_start"):
        ability.on_turn_start(state)
