"""The end of a game, as the worker does it (ARCHITECTURE §9): tally, results, ratings, records, the final table.

The step that ends the last turn only marks the game ``ending`` (:func:`service.domain.games.begin_ending`)
and asks for the tally task once it commits. :func:`tally_game` then does the rest in **one transaction**,
under the game's row lock:

- the final table: ``rules.final_standings`` (rulebook, "Game End": the most Victory coins wins; in the case
  of a tie, the most race tokens, Active and In Decline, still on the board; components, "Tie-break at the
  end": still tied, the players share the place);
- one :class:`~service.domain.models.GameResult` line per seat (unique per game and seat);
- each address's rating (openskill's Plackett–Luce model, for any number of players; a shared place is a
  tie) and record (games finished, deadlines given and missed, resignations) in
  :class:`~service.domain.models.PlayerRecord`;
- the final table mailed to every seat (``emails.messages.GameOver``, one per seat by its dedupe key) and
  told to the game's chat;
- the game marked ``finished``.

Exactly once: the transaction starts by locking the game's row and does nothing unless the game is still
``ending``, so of two workers the second finds it finished; a worker killed midway commits nothing (the
database rolls its transaction back and drops its locks), and the game is tallied again by the task's
redelivery or by the deadline sweep (:func:`tally_left_ending`). The addresses' records are locked in
the order of their ids, so two games sharing players that end together take turns instead of deadlocking.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from openskill.models import PlackettLuce
from sqlmodel import Session, col, select

import rules
from emails.messages import GameOver
from service.domain import chat_notices
from service.domain.games import MendReport, locked_for_job, mend_each
from service.domain.models import (
    ActionKind,
    Game,
    GameAction,
    GameResult,
    GameStatus,
    Player,
    PlayerRecord,
    Seat,
    utcnow,
)
from service.domain.outbox import queue_mail
from service.domain.play import awaited_seat, forget_turn_starts, load_state, replay_steps, step_key
from service.infra.db import dialect_insert
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The rating model: Plackett–Luce ranks any number of players at once (Weng & Lin, 2011), with openskill's
#: defaults (a new address starts at mu 25, sigma 25/3).
MODEL = PlackettLuce()

#: A game left ``ending`` this long is tallied by the deadline sweep (its task was lost: the broker was down
#: when the last step committed, or the worker died and the message was not given back).
LEFT_ENDING_AFTER = timedelta(seconds=60)

#: The reason an auto-pass records when a deadline passed (``service.domain.deadlines``): a missed deadline.
DEADLINE = "deadline"


@dataclass
class SeatTally:
    """How one seat's steps went: the steps it was given a deadline for, and those it let pass."""

    deadlines: int = 0
    missed: int = 0


def tally_game(session: Session, game_id: int, *, now: datetime | None = None, skip_locked: bool = False) -> bool:
    """Tally ``game_id`` if it is ``ending``, in one transaction (committed here); whether this call did it.

    ``skip_locked`` (the sweep): a game whose row another transaction holds (a worker tallying it now) is
    left to that transaction instead of waited for.
    """
    now = now or utcnow()
    game = locked_for_job(session, game_id, skip_locked=skip_locked)
    if game is None or game.status != GameStatus.ENDING:
        session.rollback()
        return False
    state = load_state(game)
    seats = list(
        session.exec(
            select(Seat, Player).where(Seat.game_id == game_id, Seat.player_id == Player.id).order_by(col(Seat.seat))
        ).all()
    )
    names = {seat.seat: seat.display_name for seat, _ in seats}
    standings: list[dict[str, Any]] = [
        row | {"name": names.get(row["player"], f"Player {row['player'] + 1}")} for row in rules.final_standings(state)
    ]
    by_seat = {row["player"]: row for row in standings}
    steps = seat_tallies(session, game)
    records = _lock_records(session, sorted({player.id or 0 for _, player in seats}), now)
    new_ratings = rate(
        {player.id or 0: by_seat[seat.seat]["place"] for seat, player in seats if seat.seat in by_seat}, records
    )
    counted: set[int] = set()
    for seat, player in seats:
        player_id = player.id or 0
        record = records[player_id]
        row = by_seat[seat.seat]
        mu, sigma = new_ratings[player_id]
        tally = steps.get(seat.seat, SeatTally())
        session.add(
            GameResult(
                game_id=game_id,
                seat=seat.seat,
                player_id=player_id,
                place=row["place"],
                coins=row["coins"],
                tokens_on_board=row["tokens_on_board"],
                tie_break=row["tie_break"],
                resigned=seat.resigned_at is not None,
                deadlines=tally.deadlines,
                deadlines_missed=tally.missed,
                rating_mu_before=record.rating_mu,
                rating_sigma_before=record.rating_sigma,
                rating_mu=mu,
                rating_sigma=sigma,
                created_at=now,
            )
        )
        record.deadlines += tally.deadlines
        record.deadlines_missed += tally.missed
        record.resigned += seat.resigned_at is not None
        if player_id not in counted:  # one address holding two seats finished one game
            counted.add(player_id)
            record.games_finished += 1
            record.rating_mu, record.rating_sigma = mu, sigma
        record.updated_at = now
        session.add(record)
    game.status = GameStatus.FINISHED
    game.result = standings
    session.add(game)
    forget_turn_starts(session, game_id)  # a cache for the turn mails (play.told_turns): none come now
    for seat, player in seats:
        over = GameOver(
            game_id=game_id,
            game_name=game.name,
            player_name=seat.display_name,
            standings=standings,
            seed=game.seed,
            your_seat=seat.seat,
        )
        queue_mail(session, player, over, now=now)
    chat_notices.queue_notice(session, game, chat_notices.result_notice(game, standings), now=now)
    session.commit()
    log(logger, logging.INFO, "game.tallied", game=game_id, players=len(seats))
    return True


def rate(places: dict[int, int], records: dict[int, PlayerRecord]) -> dict[int, tuple[float, float]]:
    """The new (mu, sigma) of each address, from its place (1 = first; a shared place is a tie).

    >>> fresh = {n: PlayerRecord(player_id=n, rating_mu=25.0, rating_sigma=25 / 3) for n in (1, 2, 3)}
    >>> new = rate({1: 1, 2: 2, 3: 2}, fresh)
    >>> new[1][0] > 25 > new[2][0] == new[3][0]
    True
    """
    ids = sorted(places)
    if len(ids) < 2:  # nobody to be ranked against
        return {n: (records[n].rating_mu, records[n].rating_sigma) for n in ids}
    teams = [[MODEL.rating(mu=records[n].rating_mu, sigma=records[n].rating_sigma)] for n in ids]
    rated = MODEL.rate(teams, ranks=[float(places[n]) for n in ids])
    return {n: (team[0].mu, team[0].sigma) for n, team in zip(ids, rated, strict=True)}


def seat_tallies(session: Session, game: Game) -> dict[int, SeatTally]:
    """Per seat: the steps it was awaited for (each had a deadline), and those its deadline passed.

    Replayed from the log (ARCHITECTURE §2): each distinct step (``play.step_key``) awaiting a seat is one
    deadline. Steps that began after the seat resigned are not the player's, and do not count; nor do passes
    made after it resigned.
    """
    entries = list(
        session.exec(select(GameAction).where(GameAction.game_id == game.id).order_by(col(GameAction.version))).all()
    )
    resigned_at = {
        seat.seat: seat.resigned_at
        for seat in session.exec(select(Seat).where(Seat.game_id == game.id)).all()
        if seat.resigned_at is not None
    }
    live = [entry for entry in entries if not entry.undone]
    tallies: dict[int, SeatTally] = {}
    seen: set[str] = set()
    began_at = game.started_at
    try:
        for index, state in enumerate(replay_steps(game, live)):
            if index:
                began_at = live[index - 1].created_at
            if state.over or not rules.awaiting(state):
                continue
            key = step_key(state)
            if key in seen:
                continue
            seen.add(key)
            seat = awaited_seat(key)
            quit_at = resigned_at.get(seat)
            if quit_at is not None and began_at is not None and began_at >= quit_at:
                continue
            tallies.setdefault(seat, SeatTally()).deadlines += 1
    except Exception as error:  # a log that no longer replays (a hand-repaired row): count what replayed
        log(logger, logging.ERROR, "game.tally_replay_failed", game=game.id, error=repr(error))
    for entry in live:
        missed = entry.kind == ActionKind.AUTO_PASS and (entry.action or {}).get("reason") == DEADLINE
        quit_at = resigned_at.get(entry.seat) if entry.seat is not None else None
        if quit_at is not None and entry.created_at >= quit_at:
            missed = False  # the seat was no longer its player's
        if missed and entry.seat is not None:
            tallies.setdefault(entry.seat, SeatTally()).missed += 1
    for counted in tallies.values():  # never more missed than given, whatever the log
        counted.deadlines = max(counted.deadlines, counted.missed)
    return tallies


def left_ending(now: datetime, older_than: timedelta = LEFT_ENDING_AFTER) -> sa.ColumnElement[bool]:
    """The games :func:`tally_left_ending` tallies (the sweep asks first whether there are any)."""
    return sa.and_(col(Game.status) == GameStatus.ENDING, col(Game.finished_at) <= now - older_than)


def tally_left_ending(
    session: Session,
    now: datetime,
    *,
    older_than: timedelta = LEFT_ENDING_AFTER,
    stop_at: float | None = None,
    limit: int = 200,
) -> MendReport:
    """The deadline sweep's part: tally every game ``ending`` since before ``now - older_than`` (its task was
    lost), one transaction each; a game a worker is tallying now is skipped, one that fails is logged and the
    others go on."""
    left = list(
        session.exec(
            select(Game.id).where(left_ending(now, older_than)).order_by(col(Game.finished_at)).limit(limit)
        ).all()
    )
    session.rollback()
    return mend_each(
        session,
        left,
        lambda game_id: tally_game(session, game_id, now=now, skip_locked=True),
        stop_at=stop_at,
        logger=logger,
        events=("game.tallied_left_ending", "game.tally_failed"),
    )


# -- internals --------------------------------------------------------------------------------------------


def _lock_records(session: Session, player_ids: Iterable[int], now: datetime) -> dict[int, PlayerRecord]:
    """Each address's record, made if new, locked for this transaction in the order of the ids."""
    ids = sorted(player_ids)
    dialect = session.get_bind().dialect.name
    for player_id in ids:
        session.execute(
            dialect_insert(dialect, PlayerRecord)
            .values(
                player_id=player_id,
                rating_mu=MODEL.mu,
                rating_sigma=MODEL.sigma,
                games_finished=0,
                deadlines=0,
                deadlines_missed=0,
                resigned=0,
                updated_at=now,
            )
            .on_conflict_do_nothing(index_elements=["player_id"])
        )
    query = (
        select(PlayerRecord)
        .where(col(PlayerRecord.player_id).in_(ids))
        .order_by(col(PlayerRecord.player_id))
        .execution_options(populate_existing=True)
    )
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    return {record.player_id: record for record in session.exec(query).all()}
