"""Spectators (ARCHITECTURE §9: watch links show only what the rules make public; a host may make a game public).

Every game has a read-only watch link, ``/games/<id>/watch/<token>`` (purpose ``watch``, naming the game and
its ``watch_serial``): its host finds it on the admin page and shares it; making a new one ends every link
shared before. A game its host made public may also be watched without a link, at ``/games/<id>/watch``, and
is listed at ``/games/public``.

Watchers are nobody in particular: they see ``rules.player_view(state, None)`` (every seat's coins hidden
until the end), the steps as told to nobody, and the final table once the game is over. No seat link, no
address, no admin link ever reaches them. Changing who may watch is audited (shown to the players on the
game page) but neither mailed nor a new version of the game: play does not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col

from service.domain.admin import Actor
from service.domain.clock import Clock
from service.domain.errors import BadRequest, Forbidden, NotFound
from service.domain.games import get_game
from service.domain.links import WATCH, LinkError, LinkMaker
from service.domain.models import CONFIRMED, AuditEntry, Game, GameStatus, Seat
from service.domain.play import awaited_seat

#: Games that may be watched: an unconfirmed game is nobody's to see but its host's.
WATCHABLE = CONFIRMED
#: Games on the public list (a cancelled game is left off).
LISTED = (GameStatus.INVITING, GameStatus.ACTIVE, GameStatus.PAUSED, GameStatus.ENDING, GameStatus.FINISHED)

NOT_VALID = "This watch link is not valid: it may have been cut short or changed. Ask a player for it again."
REPLACED = "This watch link no longer works: the game's host made a new one. Ask a player for it."
NOT_PUBLIC = "There is no public game {game_id}. A private game is watched by its watch link: ask a player for it."


def watch_url(game: Game, links: LinkMaker) -> str:
    return links.watch_url(game.id or 0, game.watch_serial)


def game_from_watch_token(session: Session, links: LinkMaker, game_id: int, token: str) -> Game:
    """The game a watch link opens; :class:`Forbidden` (saying nothing of the game) if it does not."""
    try:
        payload = links.signer.verify(WATCH, token)
    except LinkError:
        raise Forbidden(NOT_VALID) from None
    if payload.get("g") != game_id or not isinstance(payload.get("n"), int):
        raise Forbidden(NOT_VALID)
    game = session.get(Game, game_id)
    if game is None or game.status not in WATCHABLE:
        raise Forbidden(NOT_VALID)
    if payload["n"] != game.watch_serial:
        raise Forbidden(REPLACED)
    return game


def public_game(session: Session, game_id: int) -> Game:
    """A game its host made public; :class:`NotFound` for any other (the same words whether it exists)."""
    game = session.get(Game, game_id)
    if game is None or not game.public or game.status not in WATCHABLE:
        raise NotFound(NOT_PUBLIC.format(game_id=game_id))
    return game


def set_public(session: Session, game_id: int, actor: Actor, public: bool) -> Game:
    """Make the game public (anyone may watch it, and it is listed) or private again; audited."""
    game = get_game(session, game_id)
    if game.status not in WATCHABLE:
        raise BadRequest(f"public: the game is {game.status}; it can be made public once its host confirmed it")
    if game.public == public:
        raise BadRequest(f"public: the game is {'public' if public else 'private'} already")
    game.public = public
    session.add(game)
    session.add(AuditEntry(game_id=game_id, actor=actor.label, act="watching", details={"public": public}))
    session.commit()
    return game


def new_watch_link(session: Session, game_id: int, actor: Actor) -> Game:
    """Make a new watch link: every one shared before stops working. Audited."""
    game = get_game(session, game_id, lock=True)
    game.watch_serial += 1
    session.add(game)
    session.add(AuditEntry(game_id=game_id, actor=actor.label, act="watching", details={"new_link": True}))
    session.commit()
    return game


@dataclass(frozen=True)
class PublicGame:
    """One game of the public list: public facts only."""

    game_id: int
    name: str
    status: str
    players: list[str]
    awaited: str | None
    turn: int | None
    clock: Clock
    finished_at: datetime | None


#: Games per page of the public list.
PAGE_SIZE = 50


def public_games(session: Session, page: int = 1) -> tuple[list[PublicGame], bool]:
    """The public games, running ones first (soonest deadline first), then the latest finished; and whether
    there is a next page."""
    rows = session.execute(
        sa.select(
            col(Game.id),
            col(Game.name),
            col(Game.status),
            col(Game.step_key),
            col(Game.finished_at),
            *Clock.columns(),
        )
        .where(col(Game.public) == sa.true(), col(Game.status).in_(LISTED))
        .order_by(
            (col(Game.status) == GameStatus.FINISHED).asc(),
            Clock.soonest_first(),
            col(Game.finished_at).desc().nulls_last(),
            col(Game.id).desc(),
        )
        .offset((max(page, 1) - 1) * PAGE_SIZE)
        .limit(PAGE_SIZE + 1)
    ).all()
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    names: dict[int, dict[int, str]] = {}
    if rows:
        for game_id, seat, name in session.execute(
            sa.select(col(Seat.game_id), col(Seat.seat), col(Seat.display_name))
            .where(col(Seat.game_id).in_([row.id for row in rows]))
            .order_by(col(Seat.seat))
        ).all():
            names.setdefault(game_id, {})[seat] = name
    games = []
    for row in rows:
        seats = names.get(row.id, {})
        awaited = awaited_seat(row.step_key) if row.status == GameStatus.ACTIVE and row.step_key else None
        games.append(
            PublicGame(
                game_id=row.id,
                name=row.name,
                status=str(row.status),
                players=list(seats.values()),
                awaited=seats.get(awaited, f"Player {awaited + 1}") if awaited is not None else None,
                turn=int(row.step_key.split(":", 1)[0]) if row.step_key else None,
                clock=Clock.read(row),
                finished_at=row.finished_at,
            )
        )
    return games, more
