"""A rematch (ARCHITECTURE §9): one click of the host on a finished game's page makes a new game with the same
players and the same settings, hosted by the same address.

Only the host proposes it (the issue: "the host the same"): the new game is theirs to manage, and only they
may have the service mail its players. It is made through the lobby's own path (``lobby.create_game``, by
``service.web.hosting``, so every limit on what a host may have mailed applies, and every address that asked
never to be invited again is refused), then confirmed at once: the host's seat link was mailed to the host's
address, so their session proves what the confirmation mail would (that they read mail sent there).

A game has at most one rematch: :func:`claim` records it, under the game's row lock, before the new game is
made, so two clicks (or two tabs) make one game.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.domain.errors import Conflict, Forbidden
from service.domain.games import get_game, seats_of, settings_of
from service.domain.models import AuditEntry, GameStatus, MailStatus, OutboxMail
from service.domain.schemas import GAME_NAME_LENGTH, HOUSE_BOT_EMAIL, CreateGame

#: The audit act of a rematch; its details name the new game once it is made.
ACT = "rematch"


def claim(session: Session, game_id: int, seat_no: int) -> tuple[int, CreateGame]:
    """Record that the host of finished game ``game_id`` (playing ``seat_no``) starts its rematch, and return
    the record's id and the new game's request (same players, settings, chat and host). Committed.

    Refused: the game is not finished (:class:`Conflict`), the seat is not the host's (:class:`Forbidden`), or
    a rematch was started already (:class:`Conflict`).
    """
    game = get_game(session, game_id, lock=True)
    if game.status != GameStatus.FINISHED:
        session.rollback()
        raise Conflict("A rematch can be started once the game is over and its final table is out")
    seats = seats_of(session, game_id)
    mine = next(((s, p) for s, p in seats if s.seat == seat_no), None)
    if mine is None or mine[1].email != game.host_email:
        session.rollback()
        raise Forbidden("Only the game's host can start a rematch")
    if started(session, game_id) is not None:
        session.rollback()
        raise Conflict("A rematch of this game was started already: its invitations went to every player")
    players: list[dict[str, Any]] = []
    for seat, player in seats:
        if player.email == HOUSE_BOT_EMAIL:  # a seat made for the house bot: the bot again
            players.append({"name": seat.display_name, "bot": True})
        else:
            players.append({"name": seat.display_name, "email": player.email})
    request = CreateGame.model_validate(
        {
            "name": rematch_name(game.name),
            "players": players,
            "host_email": game.host_email,
            "settings": settings_of(game).model_dump(),
            "chat_url": game.chat_url,
        }
    )
    entry = AuditEntry(game_id=game_id, actor=f"seat {seat_no}", act=ACT, details={"game": None})
    session.add(entry)
    session.commit()
    return entry.id or 0, request


def done(session: Session, claim_id: int, new_game_id: int) -> None:
    """The rematch's game is made and confirmed: name it in the record, and drop the confirmation mail the
    lobby queued for the host (confirmed already, it would only puzzle them)."""
    entry = session.get(AuditEntry, claim_id)
    if entry is not None:
        entry.details = {"game": new_game_id}
        session.add(entry)
    session.exec(
        sa.update(OutboxMail)
        .where(
            col(OutboxMail.game_id) == new_game_id,
            col(OutboxMail.template) == "confirm_game",
            col(OutboxMail.status) == MailStatus.PENDING,
            # One a drain holds now may be with the SMTP server: left to that drain's outcome.
            col(OutboxMail.claimed_by).is_(None),
            col(OutboxMail.may_have_left) == sa.false(),
        )
        .values(status=MailStatus.SKIPPED, last_error="confirmed at once: the host started it from their seat")
    )
    session.commit()


def release(session: Session, claim_id: int) -> None:
    """The rematch could not be made (a limit, a blocked address): forget the claim, so the host may retry."""
    session.rollback()
    entry = session.get(AuditEntry, claim_id)
    if entry is not None and (entry.details or {}).get("game") is None:
        session.delete(entry)
        session.commit()


def started(session: Session, game_id: int) -> AuditEntry | None:
    """The record of the game's rematch, if one was started."""
    return session.exec(
        select(AuditEntry).where(AuditEntry.game_id == game_id, AuditEntry.act == ACT).order_by(col(AuditEntry.id))
    ).first()


def rematch_name(name: str) -> str:
    """The new game's name: the old one, marked.

    >>> rematch_name("Friday night")
    'Friday night (rematch)'
    >>> rematch_name("Friday night (rematch)")
    'Friday night (rematch 2)'
    >>> rematch_name("Friday night (rematch 2)")
    'Friday night (rematch 3)'
    """
    base, number = name, 1
    if name.endswith(" (rematch)"):
        base, number = name[: -len(" (rematch)")], 2
    elif name.endswith(")") and " (rematch " in name:
        head, _, tail = name.rpartition(" (rematch ")
        if tail[:-1].isdigit():
            base, number = head, int(tail[:-1]) + 1
    suffix = " (rematch)" if number == 1 else f" (rematch {number})"
    return base[: GAME_NAME_LENGTH - len(suffix)] + suffix
