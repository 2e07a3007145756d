"""Creating, starting and finishing games (DESIGN §1, items 1 and 5)."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, col, select

import rules

from ..links import LinkMaker
from ..models import Game, Player, Seat, utcnow
from ..schemas import CreateGame, GameSettings
from .errors import Conflict, NotFound
from .outbox import queue_mail


def get_game(session: Session, game_id: int, *, lock: bool = False) -> Game:
    game = session.get(Game, game_id, with_for_update=lock or None)
    if game is None:
        raise NotFound(f"There is no game {game_id}")
    return game


def update_if_unmoved(session: Session, game: Game, version: int) -> bool:
    """Write ``game``'s pending changes in one ``UPDATE … WHERE id = ? AND version = ?``; ``False`` (and
    nothing written) if the row's version is no longer ``version``: something else moved the game first.

    The changes are then the ORM's committed state, so the commit's flush writes nothing more for the game.
    Callers change the game under ``session.no_autoflush`` until this runs, or a flush would write it first
    without the guard.
    """
    state = sa.inspect(game)
    changes = {
        attr.key: history.added[0]
        for attr in state.mapper.column_attrs
        if (history := state.attrs[attr.key].history).added
    }
    moved = session.exec(sa.update(Game).where(col(Game.id) == game.id, col(Game.version) == version).values(**changes))
    if moved.rowcount != 1:
        return False
    for key, value in changes.items():
        set_committed_value(game, key, value)
    return True


def seats_of(session: Session, game_id: int) -> list[tuple[Seat, Player]]:
    rows = session.exec(
        select(Seat, Player).where(Seat.game_id == game_id, Seat.player_id == Player.id).order_by(col(Seat.seat))
    ).all()
    return [(seat, player) for seat, player in rows]


def settings_of(game: Game) -> GameSettings:
    return GameSettings.model_validate(game.settings)


def _player_for(session: Session, email: str, name: str, time_zone: str) -> Player:
    email = email.lower()
    player = session.exec(select(Player).where(Player.email == email)).first()
    if player is None:
        player = Player(email=email, display_name=name, time_zone=time_zone)
        session.add(player)
        session.flush()
    return player


def create_game(session: Session, request: CreateGame, links: LinkMaker) -> tuple[Game, str]:
    """Create the game and its seats, mail every player an invitation and the host the admin link.

    Returns the game and the host's admin URL. With ``start_when_all_accepted`` false the game starts at
    once (the invitations still go out, as the players' first link).
    """
    host_email = (request.host_email or request.players[0].email).lower()
    game = Game(
        name=request.name,
        settings=request.settings.model_dump(),
        seed=secrets.token_hex(16),
        admin_secret=secrets.token_urlsafe(24),
        host_email=host_email,
    )
    session.add(game)
    session.flush()
    assert game.id is not None
    for index, entry in enumerate(request.players):
        player = _player_for(session, entry.email, entry.name, entry.time_zone)
        assert player.id is not None  # flushed by _player_for
        seat = Seat(game_id=game.id, player_id=player.id, seat=index, secret=secrets.token_urlsafe(16))
        session.add(seat)
        queue_mail(
            session,
            player=player,
            template="invitation",
            game_id=game.id,
            dedupe_key=f"game:{game.id}:invite:{index}",
            context={
                "game_name": game.name,
                "player_name": entry.name,
                "players": [p.name for p in request.players],
                "invite_url": links.invite_url(game.id, index, seat.secret),
                "turn_url": links.turn_url(game.id, index, seat.secret),
                "turn_length_seconds": request.settings.turn_length_seconds,
                "starts_at_once": not request.settings.start_when_all_accepted,
            },
        )
    admin_url = links.admin_url(game.id, game.admin_secret)
    host = _player_for(session, host_email, request.players[0].name, request.players[0].time_zone)
    queue_mail(
        session,
        player=host,
        template="admin_link",
        game_id=game.id,
        dedupe_key=f"game:{game.id}:admin-link",
        context={"game_name": game.name, "admin_url": admin_url},
    )
    session.flush()
    if not request.settings.start_when_all_accepted:
        start_game(session, game, links)
    session.commit()
    return game, admin_url


def accept_invitation(session: Session, game: Game, seat: Seat, links: LinkMaker) -> None:
    """The seat accepts; when every seat has, the game starts."""
    if seat.accepted_at is None:
        seat.accepted_at = utcnow()
        session.add(seat)
        session.flush()
    if game.status == "inviting" and all(s.accepted_at for s, _ in seats_of(session, game.id or 0)):
        start_game(session, game, links)
    session.commit()


def start_game(session: Session, game: Game, links: LinkMaker, now: datetime | None = None) -> None:
    """Seed and set up the rules state; the first player gets "your turn"."""
    from .play import after_change

    if game.status != "inviting":
        raise Conflict("This game has already started")
    seats = seats_of(session, game.id or 0)
    settings = settings_of(game)
    state = rules.new_game(len(seats), seed=game.seed, options={"redeploy": settings.redeploy})
    game.status = "active"
    game.started_at = now or utcnow()
    game.version += 1  # 1 for a game that had no admin act before it started (admin._commit_before_start)
    after_change(session, game, state, links, now=game.started_at)


def finish_game(session: Session, game: Game, state: rules.GameState, now: datetime) -> None:
    """DESIGN §4, "End of game": tally, mark finished, reveal the seed, mail everyone the final table."""
    seats = seats_of(session, game.id or 0)
    names = {s.seat: p.display_name for s, p in seats}
    standings: list[dict[str, Any]] = [
        row | {"name": names.get(row["player"], f"Player {row['player']}")} for row in rules.final_standings(state)
    ]
    game.status = "finished"
    game.finished_at = now
    game.deadline_at = game.reminders_due_at = None
    game.step_key = None
    game.result = standings
    for seat, player in seats:
        queue_mail(
            session,
            player=player,
            template="game_over",
            game_id=game.id,
            dedupe_key=f"game:{game.id}:over:{seat.seat}",
            context={
                "game_name": game.name,
                "player_name": player.display_name,
                "standings": standings,
                "seed": game.seed,
                "your_seat": seat.seat,
            },
        )
