"""Who plays a seat (ARCHITECTURE §10): its player, or the house bot; giving a seat to the bot, taking it back.

A seat's ``controller`` is its player or the house bot. The house bot takes a seat when the host gives it
one (``smallworld admin bot``, the admin API and page), when its player missed the game's
``bot_after_missed_turns`` turns in a row (``play.auto_pass``), when the host makes the seat a bot seat at
creation (play against bots: ``lobby.create_game``), or by :func:`give_seat_to_bot` from any other domain
operation (a resignation). No turn mail, reminder or "played for you" mail goes to a bot seat's address;
its player gets :class:`emails.messages.SeatToBot` with their link, whose turn page takes the seat back
(:func:`take_seat_back`). The bot's steps are played by ``service.domain.house_bot``.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from emails import admin_acts
from emails.messages import SeatToBot
from service.domain.errors import Conflict, NotFound
from service.domain.games import get_game
from service.domain.links import LinkMaker, current_links
from service.domain.models import AuditEntry, Game, GameStatus, Player, Seat, SeatController, utcnow
from service.domain.outbox import queue_mail
from service.domain.schemas import HOUSE_BOT_EMAIL
from service.infra.mail_wakeup import wake_bot_after_commit

HOUSE_BOT_NAME = "House bot"


def is_bot(seat: Seat) -> bool:
    return seat.controller == SeatController.BOT


def give_seat_to_bot(
    session: Session,
    game: Game,
    seat: int,
    reason: str,
    *,
    actor: str = "system",
    links: LinkMaker | None = None,
    now: datetime | None = None,
) -> Seat:
    """The house bot plays ``seat`` of ``game`` from now on, in the caller's transaction (the caller
    commits). ``reason`` is told to the seat's player ("the host gave it the seat", "you missed 3 turns in
    a row", "you resigned"); ``actor`` goes to the audit log. The seat's player is mailed their link to
    take the seat back (:class:`SeatToBot`); if the game waits for the seat now, the bot plays it once the
    transaction commits. Raises ``Conflict`` if the bot plays the seat already, ``NotFound`` for no seat.
    """
    now = now or utcnow()
    row = seat_row(session, game.id or 0, seat)
    if is_bot(row):
        raise Conflict(f"The house bot already plays seat {seat + 1}")
    row.controller = SeatController.BOT
    session.add(row)
    entry = AuditEntry(game_id=game.id or 0, actor=actor, act="bot", details={"seat": seat, "reason": reason})
    session.add(entry)
    session.flush()
    player = session.get(Player, row.player_id)
    if player is not None and player.email != HOUSE_BOT_EMAIL:
        links = links or current_links()
        message = SeatToBot.to_seat(
            game,
            row,
            seat=seat,
            reason=reason,
            take_back_url=links.turn_url(game.id or 0, seat, row.secret, serial=player.links_serial),
            event=entry.id or 0,
        )
        queue_mail(session, player, message, now=now)
    if game.status == GameStatus.ACTIVE and game.step_key and _awaited_seat(game.step_key) == seat:
        wake_bot_after_commit(session, game.id or 0)
    return row


def host_gives_seat_to_bot(session: Session, game_id: int, seat: int, actor: str, links: LinkMaker) -> Game:
    """The host's (or a site admin's) act: ``give_seat_to_bot``, committed."""
    game = get_game(session, game_id, lock=True)
    if game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED, GameStatus.INVITING):
        raise Conflict(f"The game is {game.status}: no seat to give")
    who = admin_acts.who(actor, capital=False)
    give_seat_to_bot(session, game, seat, f"{who} gave it your seat", actor=actor, links=links)
    session.commit()
    return game


def take_seat_back(session: Session, game_id: int, seat: int) -> Seat:
    """The seat's player plays it again (the button on their turn page): from the step under way, with the
    deadline as it stands. Refused with ``Conflict`` if the bot does not play the seat."""
    game = get_game(session, game_id, lock=True)
    if game.status in (GameStatus.ENDING, GameStatus.FINISHED, GameStatus.CANCELLED):
        raise Conflict(f"The game is {game.status}")
    row = seat_row(session, game_id, seat)
    if row.resigned_at is not None:
        raise Conflict("You resigned from this game: the house bot keeps the seat to the end")
    if not is_bot(row):
        raise Conflict("You play this seat already: the house bot does not hold it")
    player = session.get(Player, row.player_id)
    if player is not None and player.email == HOUSE_BOT_EMAIL:
        raise Conflict("This seat was made for the house bot: the host may give it to a player instead")
    row.controller = SeatController.PERSON
    session.add(row)
    session.add(AuditEntry(game_id=game_id, actor=f"seat {seat}", act="unbot", details={"seat": seat}))
    session.commit()
    return row


def seat_row(session: Session, game_id: int, seat: int) -> Seat:
    # Read again, not taken from the session: another transaction may have changed who plays it.
    query = select(Seat).where(Seat.game_id == game_id, Seat.seat == seat).execution_options(populate_existing=True)
    row = session.exec(query).first()
    if row is None:
        raise NotFound(f"There is no seat {seat} in this game")
    return row


def bot_seats(session: Session, game_id: int) -> set[int]:
    """The seats of the game the house bot plays."""
    query = select(Seat.seat).where(Seat.game_id == game_id, col(Seat.controller) == SeatController.BOT)
    return set(session.exec(query).all())


def _awaited_seat(step_key: str) -> int:
    """``play.awaited_seat`` (the seat a step key waits for), without importing ``play``, which imports this."""
    _, current, defender = step_key.split(":")
    return int(current) if defender == "-" else int(defender)
