"""My games (ARCHITECTURE §9): every game of an address, as its signed-in owner sees them.

Games that wait for the address come first (soonest deadline first), then invitations to accept, then the
other running games, then the finished and cancelled ones (latest first). Each row carries the seat's own
signed link (:func:`seat_link`: the turn link, or the invitation while it is not accepted), which the page
makes only when the row is opened: a page of 200 games signs no link, and holds none.

Built from two queries whatever the number of games, and without reading any game's rules state: whose
turn it is comes from the game's ``step_key`` (``service.domain.play.awaited_seat``), the number of turns
from the board of its player count, the results from the stored final table. So nothing here could show
another seat's coins before the end: they are never read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

import rules
from service.domain.clock import Clock
from service.domain.links import LinkMaker
from service.domain.models import CONFIRMED, Game, GameStatus, Player, Seat
from service.domain.play import awaited_seat

#: Games of these kinds are listed; an unconfirmed game is its host's business alone until confirmed.
LISTED = CONFIRMED


@dataclass(frozen=True)
class MyGame:
    """One game of the address, from its seat."""

    game_id: int
    name: str
    status: str
    seat: int
    seat_name: str
    to_accept: bool
    waiting_for_me: bool
    #: The names of the seats the game waits for (a running game).
    awaited: list[str]
    #: The game's clock (ask it the deadline, or the time kept while paused).
    clock: Clock
    turn: int | None
    turns: int | None
    finished_at: datetime | None
    #: A finished game: this seat's row of the final table, and the winners' names.
    #: The seat's own signed link, when asked for (:func:`my_games` with ``links``); empty otherwise.
    url: str = ""
    place: int | None = None
    coins: int | None = None
    winners: list[str] = field(default_factory=list)
    players: int = 0


@dataclass(frozen=True)
class MyGames:
    email: str
    time_zone: str
    waiting: list[MyGame]
    invitations: list[MyGame]
    running: list[MyGame]
    finished: list[MyGame]

    @property
    def count(self) -> int:
        return len(self.waiting) + len(self.invitations) + len(self.running) + len(self.finished)


def my_games(session: Session, email: str, links: LinkMaker | None = None) -> MyGames:
    """Every listed game in which ``email`` holds a seat (removed seats are no longer theirs); with ``links``,
    each with its seat's signed link (``url``: a mail needs them, the page makes each when it is opened)."""
    email = email.strip().lower()
    rows = session.execute(
        sa.select(
            col(Seat.seat),
            col(Seat.secret),
            col(Seat.display_name),
            col(Seat.accepted_at),
            col(Player.time_zone),
            col(Player.links_serial),
            col(Game.id),
            col(Game.name),
            col(Game.status),
            col(Game.step_key),
            *Clock.columns(),
            col(Game.finished_at),
            col(Game.created_at),
            col(Game.result),
        )
        .join(Player, col(Player.id) == col(Seat.player_id))
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(col(Player.email) == email, col(Seat.removed) == sa.false(), col(Game.status).in_(LISTED))
    ).all()
    time_zone = rows[0].time_zone if rows else _time_zone(session, email)
    names: dict[int, dict[int, str]] = defaultdict(dict)
    if rows:
        for game_id, seat, name in session.execute(
            sa.select(col(Seat.game_id), col(Seat.seat), col(Seat.display_name)).where(
                col(Seat.game_id).in_({row.id for row in rows})
            )
        ).all():
            names[game_id][seat] = name
    waiting: list[tuple[Any, MyGame]] = []
    invitations: list[tuple[Any, MyGame]] = []
    running: list[tuple[Any, MyGame]] = []
    finished: list[tuple[Any, MyGame]] = []
    for row in rows:
        seats = names[row.id]
        status = GameStatus(row.status)
        to_accept = row.accepted_at is None and status in (GameStatus.INVITING, GameStatus.ACTIVE, GameStatus.PAUSED)
        awaited_seats = [awaited_seat(row.step_key)] if status == GameStatus.ACTIVE and row.step_key else []
        turn = int(row.step_key.split(":", 1)[0]) if row.step_key else None
        result = row.result or []
        mine = next((r for r in result if r.get("player") == row.seat), None)
        clock = Clock.read(row)
        game = MyGame(
            game_id=row.id,
            name=row.name,
            status=status.value,
            seat=row.seat,
            seat_name=row.display_name,
            url=_link(links, row.id, row.seat, row.secret, row.accepted_at is not None, row.links_serial)
            if links
            else "",
            to_accept=to_accept,
            # A game started at once waits for a seat that has not accepted yet: its invitation comes first.
            waiting_for_me=row.seat in awaited_seats,
            awaited=[seats.get(s, f"Player {s + 1}") for s in awaited_seats],
            clock=clock,
            turn=turn,
            turns=_turns(len(seats)),
            finished_at=row.finished_at,
            place=mine.get("place") if mine else None,
            coins=mine.get("coins") if mine and status == GameStatus.FINISHED else None,
            winners=[r.get("name", "") for r in result if r.get("place") == 1] if status == GameStatus.FINISHED else [],
            players=len(seats),
        )
        if status in (GameStatus.ENDING, GameStatus.FINISHED, GameStatus.CANCELLED):
            finished.append((-(row.finished_at or row.created_at).timestamp(), game))
        elif game.waiting_for_me:
            waiting.append(((clock.deadline is None, clock.deadline or row.created_at, row.id), game))
        elif to_accept:
            invitations.append(((row.created_at, row.id), game))
        else:
            running.append(((clock.deadline is None, clock.deadline or row.created_at, row.id), game))
    return MyGames(
        email=email,
        time_zone=time_zone,
        waiting=_sorted(waiting),
        invitations=_sorted(invitations),
        running=_sorted(running),
        finished=_sorted(finished),
    )


def seat_link(session: Session, email: str, game_id: int, seat: int, links: LinkMaker) -> str | None:
    """The signed link of ``email``'s seat ``seat`` in game ``game_id`` (its turn link, or its invitation while
    not accepted), or ``None`` if that seat is not the address's in a listed game."""
    row = session.execute(
        sa.select(col(Seat.secret), col(Seat.accepted_at), col(Player.links_serial))
        .join(Player, col(Player.id) == col(Seat.player_id))
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(
            col(Seat.game_id) == game_id,
            col(Seat.seat) == seat,
            col(Seat.removed) == sa.false(),
            col(Player.email) == email.strip().lower(),
            col(Game.status).in_(LISTED),
        )
    ).first()
    if row is None:
        return None
    return _link(links, game_id, seat, row.secret, row.accepted_at is not None, row.links_serial)


def _link(links: LinkMaker, game_id: int, seat: int, secret: str, accepted: bool, serial: int) -> str:
    """The seat's link, with its player's ``links_serial``: "sign out everywhere" ends it with the others."""
    if accepted:
        return links.turn_url(game_id, seat, secret, serial=serial)
    return links.invite_url(game_id, seat, secret, serial=serial)


def _sorted(keyed: list[tuple[Any, MyGame]]) -> list[MyGame]:
    return [game for _, game in sorted(keyed, key=lambda pair: pair[0])]


def _turns(players: int) -> int | None:
    try:
        return rules.board_for_players(players).turns
    except ValueError:
        return None


def _time_zone(session: Session, email: str) -> str:
    zone = session.exec(select(Player.time_zone).where(Player.email == email)).first()
    return zone or "UTC"
