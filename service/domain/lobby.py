"""Creating a game, its host's confirmation, accepting its invitations and starting it (ARCHITECTURE §1 item 1, §9).

Anyone may create a game without signing in, so a new game is ``unconfirmed`` and mails only its host: one
mail with a link to confirm it (or discard it). Only the host's confirmation, which proves they read that
mail, sends the invitations (and starts the game at once if the host asked for that). A host address has
at most ``unconfirmed_cap`` games waiting for confirmation, and an unconfirmed game lapses after a while
(``expire_unconfirmed``, run by the deadline sweep), so naming a stranger as host mails them once.

A seat's name is the seat's own: the host proposes it, the player may change it when accepting. A time zone
is the player's own choice (``choose_time_zone``, on their pages); nobody who merely names an address sets
anything of that address's.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import SelectOfScalar

import rules
from emails.messages import AdminLink, GameToConfirm, Invitation
from service.domain import block_list, records
from service.domain.errors import Conflict, Forbidden, TooMany
from service.domain.games import get_game, seats_of, settings_of
from service.domain.links import LinkMaker
from service.domain.models import Game, GameStatus, Player, Seat, SeatController, utcnow
from service.domain.outbox import queue_mail
from service.domain.play import after_change
from service.domain.schemas import HOUSE_BOT_EMAIL, CreateGame

UNCONFIRMED = GameStatus.UNCONFIRMED
INVITING = GameStatus.INVITING

#: How long a game waits for its host's confirmation before it lapses (the sweep cancels it).
UNCONFIRMED_MAX_AGE = timedelta(hours=48)


def player_for(session: Session, email: str) -> Player:
    """The player row of ``email``, made if the address is new. A new row has no name and the default time
    zone: both are the address owner's to choose, not whoever names them first."""
    email = email.lower()
    player = session.exec(select(Player).where(Player.email == email)).first()
    if player is None:
        player = Player(email=email, display_name="")
        session.add(player)
        session.flush()
    return player


def _lock_host(session: Session, host_email: str) -> None:
    # Two creations naming the same host at once must not both pass the cap on unconfirmed games: on
    # PostgreSQL they take turns on a lock named by the address (SQLite runs one writer at a time anyway).
    if session.get_bind().dialect.name == "postgresql":
        session.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"host:{host_email}"})


def create_game(
    session: Session,
    request: CreateGame,
    links: LinkMaker,
    *,
    unconfirmed_cap: int = 1,
    confirm_within: timedelta = UNCONFIRMED_MAX_AGE,
    now: datetime | None = None,
) -> Game:
    """Create the game and its seats, unconfirmed; mail its host the link to confirm it, and nobody else.

    Refused (nothing written) when an address named asked never to be invited (:mod:`block_list`), or when
    the host has ``unconfirmed_cap`` games waiting for confirmation already (:class:`TooMany`).
    """
    now = now or utcnow()
    host_email = request.host
    block_list.refuse_blocked(session, [p.email for p in request.players if p.email], host=host_email)
    _lock_host(session, host_email)
    waiting = session.exec(
        select(sa.func.count())
        .select_from(Game)
        .where(col(Game.status) == UNCONFIRMED, col(Game.host_email) == host_email)
    ).one()
    if waiting >= unconfirmed_cap:
        session.rollback()
        hours = int(confirm_within.total_seconds() // 3600)
        raise TooMany(
            f"{host_email} already has {'a game' if waiting == 1 else f'{waiting} games'} waiting for the host to "
            f"confirm it by the link we mailed. Confirm or discard {'it' if waiting == 1 else 'them'} from that mail "
            f"first (an unconfirmed game lapses after {hours} hours)."
        )
    game = Game(
        name=request.name,
        status=UNCONFIRMED,
        settings=request.settings.model_dump(),
        seed=secrets.token_hex(16),
        admin_secret=secrets.token_urlsafe(24),
        host_email=host_email,
        created_at=now,
        chat_url=request.chat_url,
    )
    session.add(game)
    session.flush()
    assert game.id is not None
    for index, entry in enumerate(request.players):
        player = player_for(session, entry.address)
        assert player.id is not None
        session.add(
            Seat(
                game_id=game.id,
                player_id=player.id,
                seat=index,
                display_name=entry.name,
                secret=secrets.token_urlsafe(16),
                # Play against bots (ARCHITECTURE §10): the house bot's seat needs no invitation.
                controller=SeatController.BOT if entry.bot else SeatController.PERSON,
                accepted_at=now if entry.bot else None,
            )
        )
    host = player_for(session, host_email)
    to_confirm = GameToConfirm(
        game_id=game.id,
        game_name=game.name,
        host_email=host_email,
        players=[{"name": p.name, "email": p.address} for p in request.players],
        confirm_url=links.confirm_url(game.id, game.admin_secret, request.host_time_zone),
        confirm_hours=int(confirm_within.total_seconds() // 3600),
        turn_length_seconds=request.settings.turn_length_seconds,
        starts_at_once=not request.settings.start_when_all_accepted,
        block_url=links.block_url(host_email),
    )
    queue_mail(session, host, to_confirm, now=now)
    session.commit()
    return game


@dataclass(frozen=True)
class Confirmed:
    game: Game
    admin_url: str
    #: False when the game had been confirmed before (confirming is idempotent).
    now: bool


def confirm_game(
    session: Session,
    game_id: int,
    admin_secret: str,
    links: LinkMaker,
    *,
    time_zone: str | None = None,
    seat_host: bool = False,
    host_seat_name: str | None = None,
    now: datetime | None = None,
) -> Confirmed:
    """The host confirms the game by the mailed link: the invitations go out, the host gets the admin link,
    and a game set to start at once starts. ``time_zone`` is the host's own choice, made on confirming.

    ``seat_host``: the host, when they hold a seat, takes it on confirming (the confirm page asks the seat's
    name, ``host_seat_name``, and the time zone once): their seat is accepted and no invitation goes to them.

    Confirming again answers the same (the link holds the admin secret, so it grants nothing new); a
    discarded or lapsed game is refused (:class:`Conflict`).
    """
    now = now or utcnow()
    game = get_game(session, game_id, lock=True)
    if not secrets.compare_digest(game.admin_secret, admin_secret):
        raise Forbidden("This confirmation link is not valid.")
    admin_url = links.admin_url(game_id, game.admin_secret)
    if game.status == GameStatus.CANCELLED and game.confirmed_at is None:
        session.rollback()
        raise Conflict(
            "This game was discarded, or not confirmed in time, and its players were never told. "
            "Create it again if you still want it."
        )
    if game.status != UNCONFIRMED:
        session.rollback()
        return Confirmed(game, admin_url, now=False)
    seats = seats_of(session, game_id)
    block_list.refuse_blocked(
        session, [p.email for s, p in seats if s.controller == SeatController.PERSON], host=game.host_email
    )
    host = player_for(session, game.host_email)
    if time_zone:
        host.time_zone = time_zone
        session.add(host)
    seated = host_seat(seats, game.host_email) if seat_host else None
    if seated is not None:
        seated.accepted_at = now
        if host_seat_name:
            seated.display_name = host_seat_name
            host.display_name = host_seat_name  # this address's default name when it is next invited
        session.add(seated)
        session.add(host)
    game.status = INVITING
    game.confirmed_at = now
    settings = settings_of(game)
    names = [s.display_name for s, _ in seats]
    # Each player's record beside their name (ARCHITECTURE §9): finished games only.
    held = records.records_of(session, [p.id or 0 for _, p in seats])
    beside_names = [
        f"{s.display_name}: " + ("the house bot" if p.email == HOUSE_BOT_EMAIL else held[p.id or 0].words)
        for s, p in seats
    ]
    for seat, player in seats:
        if player.email == HOUSE_BOT_EMAIL:
            continue  # the house bot's seat: accepted from the start, nobody to invite
        if seat is seated:
            continue  # the host took their seat on confirming: no invitation to themselves
        invitation = Invitation(
            game_id=game_id,
            game_name=game.name,
            player_name=seat.display_name,
            players=names,
            invite_url=links.invite_url(game_id, seat.seat, seat.secret, serial=player.links_serial),
            turn_length_seconds=settings.turn_length_seconds,
            starts_at_once=not settings.start_when_all_accepted,
            seat=seat.seat,
            block_url=links.block_url(player.email),
            records=beside_names,
        )
        queue_mail(session, player, invitation, now=now)
    queue_mail(session, host, AdminLink(game_id=game_id, game_name=game.name, admin_url=admin_url), now=now)
    session.flush()
    if not settings.start_when_all_accepted:
        start_game(session, game, links, now=now)
    else:  # every seat the house bot's: accepted at creation, so nobody is left to accept
        start_if_all_accepted(session, game, links, now=now)
    session.add(game)
    session.commit()
    return Confirmed(game, admin_url, now=True)


def discard_game(session: Session, game_id: int, admin_secret: str, now: datetime | None = None) -> Game:
    """The host discards a game they have not confirmed (a mistake, or a game they never asked for). Nobody
    is mailed: its players never heard of it."""
    game = get_game(session, game_id, lock=True)
    if not secrets.compare_digest(game.admin_secret, admin_secret):
        raise Forbidden("This confirmation link is not valid.")
    if game.status != UNCONFIRMED:
        session.rollback()
        if game.status == GameStatus.CANCELLED and game.confirmed_at is None:
            return game  # discarded already
        raise Conflict("This game is confirmed already: cancel it from its admin page instead.")
    game.status = GameStatus.CANCELLED
    game.finished_at = now or utcnow()
    session.add(game)
    session.commit()
    return game


def unconfirmed_too_long(now: datetime, max_age: timedelta = UNCONFIRMED_MAX_AGE) -> sa.ColumnElement[bool]:
    """The games :func:`expire_unconfirmed` cancels (the sweep asks first whether there are any)."""
    return sa.and_(col(Game.status) == UNCONFIRMED, col(Game.created_at) <= now - max_age)


def expire_unconfirmed(session: Session, now: datetime, max_age: timedelta = UNCONFIRMED_MAX_AGE) -> int:
    """Cancel every game still unconfirmed ``max_age`` after its creation (in one statement); how many."""
    lapsed = session.exec(
        sa.update(Game)
        .where(unconfirmed_too_long(now, max_age))
        .values(status=GameStatus.CANCELLED, finished_at=now)
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return int(lapsed.rowcount or 0)


def host_seat(seats: Sequence[tuple[Seat, Player]], host_email: str) -> Seat | None:
    """The seat a person plays under the host's own address, if any."""
    return next(
        (s for s, p in seats if p.email == host_email and s.controller == SeatController.PERSON),
        None,
    )


def accept_invitation(
    session: Session,
    game_id: int,
    seat_no: int,
    links: LinkMaker,
    *,
    name: str | None = None,
    time_zone: str | None = None,
    now: datetime | None = None,
) -> Game:
    """The seat accepts, under its own name if it gives one (and its own time zone); when every seat has
    accepted, the game starts, exactly once.

    The game's row is locked first (``SELECT … FOR UPDATE`` on PostgreSQL), so of two last accepts landing
    together the second waits, then sees the first's accept, and exactly one of them starts the game; the
    deadline sweep starts any game left fully accepted but not started (:func:`start_if_all_accepted`).
    """
    now = now or utcnow()
    game = get_game(session, game_id, lock=True)
    if game.status == UNCONFIRMED:
        session.rollback()
        raise Conflict("This game waits for its host to confirm it.")
    if game.status == GameStatus.CANCELLED:
        session.rollback()
        raise Conflict("This game was cancelled by its host.")
    seat = session.exec(
        select(Seat).where(Seat.game_id == game_id, Seat.seat == seat_no).execution_options(populate_existing=True)
    ).one()
    player = session.get(Player, seat.player_id)
    assert player is not None
    if seat.accepted_at is None:
        seat.accepted_at = now
    if name:
        seat.display_name = name
        player.display_name = name  # this address's default name when it is next invited
    if time_zone:
        player.time_zone = time_zone
    session.add(seat)
    session.add(player)
    session.flush()
    start_if_all_accepted(session, game, links, now=now)
    session.commit()
    return game


def start_if_all_accepted(session: Session, game: Game, links: LinkMaker, now: datetime | None = None) -> bool:
    """Start ``game`` (locked by the caller) if it is inviting and every seat has accepted; whether it did."""
    if game.status != INVITING:
        return False
    pending = session.exec(
        select(sa.func.count()).select_from(Seat).where(Seat.game_id == game.id, col(Seat.accepted_at).is_(None))
    ).one()
    if pending:
        return False
    start_game(session, game, links, now=now)
    return True


def left_inviting(since: datetime | None = None) -> SelectOfScalar[int | None]:
    """The ids of the games still inviting though every seat has accepted (a start that was lost); with
    ``since``, only among the games a seat of which accepted after ``since``.

    Without ``since`` it reads every inviting game and every seat not yet accepted (two partial indexes; 21 ms
    on a million games); with it, only the seats accepted since (``ix_seats_accepted_at``), next to nothing.
    A game becomes fully accepted only by an accept (:func:`accept_invitation`, which starts it in the same
    transaction): at creation the house bot's seats are accepted, and a game whose every seat is the bot's
    starts when its host confirms it; replacing a player before the start unaccepts the seat; no seat is
    removed before the start. So a look since the previous one finds every start lost by an accept, and a
    full look now and then (the sweep's, hourly) finds the rest: hand-repaired rows, older games.
    """
    unanswered = select(Seat.id).where(col(Seat.game_id) == col(Game.id), col(Seat.accepted_at).is_(None)).exists()
    query = select(col(Game.id)).where(col(Game.status) == INVITING, ~unanswered)
    if since is not None:
        query = query.where(col(Game.id).in_(select(Seat.game_id).where(col(Seat.accepted_at) > since)))
    return query


def stuck_inviting(session: Session, since: datetime | None = None, limit: int = 100) -> list[int]:
    """The first ``limit`` games of :func:`left_inviting`, for the sweep."""
    query = left_inviting(since).order_by(col(Game.id)).limit(limit)
    return [game_id for game_id in session.exec(query).all() if game_id is not None]


def choose_time_zone(session: Session, player_id: int, time_zone: str) -> Player:
    """The player's own choice of time zone (their pages), for every game of theirs and every mail."""
    player = session.get(Player, player_id)
    if player is None:
        raise Conflict("There is no such player")
    player.time_zone = time_zone
    session.add(player)
    session.commit()
    return player


def start_game(session: Session, game: Game, links: LinkMaker, now: datetime | None = None) -> None:
    """Seed and set up the rules state; the first player gets "your turn"."""
    if game.status != INVITING:
        raise Conflict("This game has already started")
    seats = seats_of(session, game.id or 0)
    settings = settings_of(game)
    state = rules.new_game(len(seats), seed=game.seed, options={"redeploy": settings.redeploy})
    game.status = GameStatus.ACTIVE
    game.started_at = now or utcnow()
    game.version += 1  # 1 for a game that had no admin act before it started (admin._commit_before_start)
    after_change(session, game, state, links, now=game.started_at)
