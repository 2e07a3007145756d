"""Every game as site admins see it (``/admin/games``): whom it waits on, its deadline, what looks stuck.

Filters: a player (part of a name or an address; optionally only the games waiting on that player), the
status, stalled games, and games with failed mail. Soonest deadline first; games without a deadline after.

"Stalled" means one of: the deadline passed more than :data:`OVERDUE` ago (the sweep, every ~30 s, should
have passed it: is the worker running?); a seat was auto-passed its game's ``auto_pass_alert_after`` times
in a row (the host was told and may replace the player); or the game has waited for its invitations to
be accepted for more than :data:`INVITING_TOO_LONG`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

import rules
from service.domain.clock import Clock
from service.domain.models import Game, GameStatus, MailStatus, OutboxMail, Player, Seat, utcnow

OVERDUE = timedelta(minutes=10)
INVITING_TOO_LONG = timedelta(days=3)
PAGE_SIZE = 50

#: The status filter's choices: name → the statuses it shows.
STATUSES: dict[str, tuple[GameStatus, ...]] = {
    "running": (GameStatus.INVITING, GameStatus.ACTIVE, GameStatus.PAUSED),
    **{status.value: (status,) for status in GameStatus},
    "all": tuple(GameStatus),
}


@dataclass(frozen=True)
class GameFilters:
    #: Part of a player's name or email address ("" for any).
    player: str = ""
    #: Only the games that wait on a player matching ``player``.
    waiting_only: bool = False
    status: str = "running"
    stalled: bool = False
    failed_mail: bool = False
    page: int = 1


@dataclass(frozen=True)
class GameRow:
    id: int
    name: str
    status: str
    #: The game's clock (ask it the deadline, or the time kept while paused).
    clock: Clock
    pause_reason: str | None
    players: list[str]
    waiting_on: list[str]
    #: Why the game looks stuck, in words; empty when it does not.
    stalled: list[str]
    failed_mails: int


@dataclass(frozen=True)
class GamesPage:
    rows: list[GameRow]
    page: int
    has_next: bool
    filters: GameFilters = field(default_factory=GameFilters)


def list_games(session: Session, filters: GameFilters, now: datetime | None = None) -> GamesPage:
    now = now or utcnow()
    page = max(1, filters.page)
    query = select(Game).where(col(Game.status).in_(STATUSES.get(filters.status, STATUSES["running"])))
    text = filters.player.strip().lower()
    if text:
        query = query.where(col(Game.id).in_(_games_of_players_matching(text)))
    if filters.failed_mail:
        query = query.where(col(Game.id).in_(_games_with_failed_mail()))
    if filters.stalled:
        query = query.where(
            sa.or_(
                sa.and_(col(Game.status) == GameStatus.ACTIVE, Clock.overdue_clause(now, OVERDUE)),
                sa.and_(col(Game.status) == GameStatus.INVITING, col(Game.created_at) < now - INVITING_TOO_LONG),
                col(Game.id).in_(_repeatedly_auto_passed(session) or {-1}),
            )
        )
    # Soonest deadline first; no deadline (inviting, paused, over) after; then the newest game first.
    query = query.order_by(Clock.soonest_first(), col(Game.id).desc())
    if filters.waiting_only and text:
        # Whom a game waits on is in its rules state: the player's games are few, so filter them here.
        candidates = list(session.exec(query).all())
        seats = _seats(session, [g.id or 0 for g in candidates])
        games = [g for g in candidates if _waits_on_match(g, seats.get(g.id or 0, []), text)]
        chosen, has_next = games[(page - 1) * PAGE_SIZE : page * PAGE_SIZE], len(games) > page * PAGE_SIZE
    else:
        found = list(session.exec(query.offset((page - 1) * PAGE_SIZE).limit(PAGE_SIZE + 1)).all())
        chosen, has_next = found[:PAGE_SIZE], len(found) > PAGE_SIZE
    return GamesPage(rows=_rows(session, chosen, now), page=page, has_next=has_next, filters=filters)


def stalled_reasons(game: Game, now: datetime, seat_names: dict[int, str], removed: set[int]) -> list[str]:
    """Why ``game`` looks stuck, in words (empty when it does not)."""
    reasons = []
    if game.status == GameStatus.ACTIVE and Clock.read(game).overdue(now) > OVERDUE:
        reasons.append("deadline passed, not auto-passed yet")
    if game.status == GameStatus.INVITING and game.created_at < now - INVITING_TOO_LONG:
        reasons.append(f"inviting for {(now - game.created_at).days} days")
    if game.status in (GameStatus.ACTIVE, GameStatus.PAUSED):
        limit = int((game.settings or {}).get("auto_pass_alert_after", 2))
        for seat, passes in _auto_passes(game.state).items():
            if passes >= limit and seat not in removed:
                reasons.append(f"{seat_names.get(seat, f'seat {seat + 1}')} auto-passed {passes} times in a row")
    return reasons


# -- internals --------------------------------------------------------------------------------------------
def _games_of_players_matching(text: str) -> Any:
    return (
        select(Seat.game_id)
        .join(Player, col(Player.id) == col(Seat.player_id))
        .where(
            sa.or_(
                sa.func.lower(Seat.display_name).contains(text, autoescape=True),
                sa.func.lower(Player.email).contains(text, autoescape=True),
            )
        )
    )


def _games_with_failed_mail() -> Any:
    return select(OutboxMail.game_id).where(
        col(OutboxMail.status) == MailStatus.FAILED, col(OutboxMail.game_id).is_not(None)
    )


def _repeatedly_auto_passed(session: Session) -> set[int]:
    """Running games with a seat auto-passed ``auto_pass_alert_after`` times in a row (or more).

    The count is in each game's rules state; only the players' part of it is read (a JSON path).
    """
    players = sa.type_coerce(Game.state, sa.JSON)["players"]
    rows = session.execute(
        select(Game.id, players, Game.settings).where(col(Game.status).in_((GameStatus.ACTIVE, GameStatus.PAUSED)))
    ).all()
    found = set()
    for game_id, seats, settings in rows:
        limit = int((settings or {}).get("auto_pass_alert_after", 2))
        if any(isinstance(p, dict) and int(p.get("auto_passes", 0)) >= limit for p in seats or []):
            found.add(game_id)
    return found


def _auto_passes(state: dict[str, Any] | None) -> dict[int, int]:
    players = (state or {}).get("players") or []
    return {seat: int(p.get("auto_passes", 0)) for seat, p in enumerate(players) if isinstance(p, dict)}


def _awaited(game: Game) -> set[int]:
    if game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED) or game.state is None:
        return set()
    return set(rules.awaiting(rules.read_state(game.state)))


def _waits_on_match(game: Game, seats: list[tuple[Seat, Player]], text: str) -> bool:
    awaited = _awaited(game)
    for seat, player in seats:
        if seat.seat in awaited and (text in seat.display_name.lower() or text in player.email.lower()):
            return True
    return False


def _seats(session: Session, game_ids: list[int]) -> dict[int, list[tuple[Seat, Player]]]:
    rows = session.exec(
        select(Seat, Player)
        .where(col(Seat.game_id).in_(game_ids), col(Seat.player_id) == col(Player.id))
        .order_by(col(Seat.game_id), col(Seat.seat))
    ).all()
    out: dict[int, list[tuple[Seat, Player]]] = {}
    for seat, player in rows:
        out.setdefault(seat.game_id, []).append((seat, player))
    return out


def _rows(session: Session, games: list[Game], now: datetime) -> list[GameRow]:
    ids = [g.id or 0 for g in games]
    seats = _seats(session, ids)
    failed = dict(
        session.execute(
            select(OutboxMail.game_id, sa.func.count())
            .where(col(OutboxMail.game_id).in_(ids), col(OutboxMail.status) == MailStatus.FAILED)
            .group_by(col(OutboxMail.game_id))
        ).all()
    )
    rows = []
    for game in games:
        held = seats.get(game.id or 0, [])
        names = {s.seat: s.display_name for s, _ in held}
        removed = {s.seat for s, _ in held if s.removed}
        awaited = _awaited(game)
        rows.append(
            GameRow(
                id=game.id or 0,
                name=game.name,
                status=game.status,
                clock=Clock.read(game),
                pause_reason=game.pause_reason,
                players=[names[s] for s in sorted(names)],
                waiting_on=[names.get(s, f"seat {s + 1}") for s in sorted(awaited)],
                stalled=stalled_reasons(game, now, names, removed),
                failed_mails=int(failed.get(game.id, 0)),
            )
        )
    return rows
