"""An undo, and the list of steps it may take back, replayed from the stored start of the turn under way
(``TurnStart``) say and do exactly what the replay from the seed does (issue 21).

Random games are dealt through the domain as in ``test_story_since`` (undos, auto-passes, the host's acts,
steps of the house bot); at every step, every awaited seat's undoable steps are listed both ways, and every
undo's new state is compared with the whole log replayed from the seed.
"""

from __future__ import annotations

import random
from dataclasses import astuple
from typing import Any

import pytest
from sqlmodel import Session, delete

import rules
from service.domain import play
from service.domain.links import LinkMaker
from service.domain.models import Game, GameStatus, TurnStart
from tests.domain.test_story_since import ACTS, new_game, one_step


def whole_log(session: Session, game: Game, seat: int) -> play._UndoLog:
    """What an undo reads without a stored start: the whole live log, replayed from the seed."""
    log = play.live_log(session, game.id or 0)
    return play._UndoLog(log, play.steps_to_undo(log, seat), None)


def from_the_seed(session: Session, monkeypatch: pytest.MonkeyPatch, game_id: int, seat: int) -> list[tuple]:
    """The seat's undoable steps as the replay from the seed lists them (no stored start looked at)."""
    with monkeypatch.context() as patched:
        patched.setattr(play, "_undo_log", whole_log)
        game = play.get_game(session, game_id)
        return [astuple(step) for step in play.undo_steps(session, game, seat)]


def replayed_from_the_seed(session: Session, game: Game) -> dict[str, Any]:
    return play.replay(game, list(reversed(play.live_log(session, game.id or 0)))).to_json()


def without_last(state: dict[str, Any] | None) -> dict[str, Any]:
    """A state's JSON but its ``last`` (an undo's own record of what it did; a replay has the last step's)."""
    return {key: value for key, value in (state or {}).items() if key != "last"}


@pytest.mark.parametrize(("players", "seed", "redeploy"), [(5, 2, "ask"), (3, 7, "auto")])
def test_undo_from_the_stored_start_is_the_replay_from_the_seed(
    db_session: Session, links: LinkMaker, monkeypatch: pytest.MonkeyPatch, players: int, seed: int, redeploy: str
) -> None:
    rnd = random.Random(seed)
    game = new_game(db_session, players, f"undo-{seed}", redeploy)
    recent = {"stored": 0, "seed": 0}
    real = play._undo_log

    def counted(session: Session, game: Game, seat: int) -> play._UndoLog:
        found = real(session, game, seat)
        recent["seed" if found.start is None else "stored"] += 1
        return found

    monkeypatch.setattr(play, "_undo_log", counted)
    listed = undone = steps = 0
    while game.status == GameStatus.ACTIVE:
        what = one_step(db_session, game, links, rnd, ACTS.get(steps, ""))
        steps += 1
        db_session.refresh(game)
        if game.status != GameStatus.ACTIVE:
            break
        state = play.load_state(game)
        for seat in sorted(rules.awaiting(state)):
            stored = [astuple(step) for step in play.undo_steps(db_session, game, seat)]
            assert stored == from_the_seed(db_session, monkeypatch, game.id or 0, seat), (what, game.version, seat)
            listed += len(stored)
        if what == "undo":  # the undo's state is the whole log's, replayed from the seed
            assert without_last(game.state) == without_last(replayed_from_the_seed(db_session, game))
            undone += 1
    assert play.load_state(game).over
    assert listed > 50 and undone >= 3, (listed, undone)
    assert recent["stored"] > recent["seed"], recent  # after the first round, nearly all from a stored start


def test_an_undo_without_stored_starts_replays_from_the_seed(
    db_session: Session, links: LinkMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    rnd = random.Random(3)
    game = new_game(db_session, 2, "undo-no-starts")
    while True:  # into a turn after the first round, with a step to undo
        one_step(db_session, game, links, rnd)
        db_session.refresh(game)
        state = play.load_state(game)
        seat = min(rules.awaiting(state))
        if state.turn >= 3 and play.undo_steps(db_session, game, seat):
            break
    listed = [astuple(step) for step in play.undo_steps(db_session, game, seat)]
    db_session.exec(delete(TurnStart))  # type: ignore[call-overload]
    assert play._undo_log(db_session, game, seat).start is None
    assert [astuple(step) for step in play.undo_steps(db_session, game, seat)] == listed
    play.undo(db_session, game.id or 0, seat, game.version, links)
    db_session.refresh(game)
    assert without_last(game.state) == without_last(replayed_from_the_seed(db_session, game))
