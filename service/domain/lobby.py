"""Creating a game, accepting its invitations and starting it (DESIGN §1, item 1)."""

from __future__ import annotations

import secrets
from datetime import datetime

from sqlmodel import Session, select

import rules
from emails.messages import AdminLink, Invitation
from service.domain.errors import Conflict
from service.domain.games import seats_of, settings_of
from service.domain.links import LinkMaker
from service.domain.models import Game, GameStatus, Player, Seat, utcnow
from service.domain.outbox import queue_mail
from service.domain.play import after_change
from service.domain.schemas import CreateGame


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
        chat_url=request.chat_url,
    )
    session.add(game)
    session.flush()
    assert game.id is not None
    for index, entry in enumerate(request.players):
        player = _player_for(session, entry.email, entry.name, entry.time_zone)
        assert player.id is not None  # flushed by _player_for
        seat = Seat(game_id=game.id, player_id=player.id, seat=index, secret=secrets.token_urlsafe(16))
        session.add(seat)
        invitation = Invitation(
            game_id=game.id,
            game_name=game.name,
            player_name=entry.name,
            players=[p.name for p in request.players],
            invite_url=links.invite_url(game.id, index, seat.secret),
            turn_url=links.turn_url(game.id, index, seat.secret),
            turn_length_seconds=request.settings.turn_length_seconds,
            starts_at_once=not request.settings.start_when_all_accepted,
            seat=index,
        )
        queue_mail(session, player, invitation)
    admin_url = links.admin_url(game.id, game.admin_secret)
    host = _player_for(session, host_email, request.players[0].name, request.players[0].time_zone)
    queue_mail(session, host, AdminLink(game_id=game.id, game_name=game.name, admin_url=admin_url))
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
    if game.status == GameStatus.INVITING and all(s.accepted_at for s, _ in seats_of(session, game.id or 0)):
        start_game(session, game, links)
    session.commit()


def start_game(session: Session, game: Game, links: LinkMaker, now: datetime | None = None) -> None:
    """Seed and set up the rules state; the first player gets "your turn"."""
    if game.status != GameStatus.INVITING:
        raise Conflict("This game has already started")
    seats = seats_of(session, game.id or 0)
    settings = settings_of(game)
    state = rules.new_game(len(seats), seed=game.seed, options={"redeploy": settings.redeploy})
    game.status = GameStatus.ACTIVE
    game.started_at = now or utcnow()
    game.version += 1  # 1 for a game that had no admin act before it started (admin._commit_before_start)
    after_change(session, game, state, links, now=game.started_at)
