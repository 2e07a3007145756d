"""The player's own data (ARCHITECTURE §9): "Download my data" and "Delete my address", from My games, and the same
for a site admin who received the request by other means (``smallworld admin export-address`` and
``forget-address``). What is kept, and for how long, is told in ``docs/PRIVACY.md``.

**Download** (:func:`export`): one JSON document of what the service keeps about an address: its games and
seats (the final table of a finished game, nothing of a running game's hidden state), the games it hosts, its
own messages at the tables, its mail choices, its rating and results, the mails written to it (kind, times,
subject and text while the body is kept: ``service.domain.retention``), the mails that came from it, its
sign-ins. It holds nothing another player may not see: no other address (each is replaced by "[an address]"),
no link at all (signed links are credentials: "[a link]"), no secret, no coin of a game under way.

**Delete** (:func:`forget_address`): the address and its names are erased everywhere, and "A former player"
takes their place in every game; the history still replays (the games' states and their log of steps are
untouched: only names and addresses change). In order:

1. One transaction: the player's row keeps its id under a stand-in address (``former-player-<id>@`` the
   reserved ``erased.invalid``, to which the outbox writes nothing: ``block_list.is_erased``), its name
   "A former player", its choices reset; the pending mails to it are cancelled (``skipped``) and the body of
   every mail to it emptied; its seats take the new name and a new secret (every link mailed to it, and every
   browser session opened by one, stops working); a game it hosts gets the stand-in as host and a new admin
   secret; its sign-ins, mail choices per game, digests and rating are deleted; its messages at the tables
   are signed "A former player" (their words stay, as said at the table, but its names in them go); the
   address and names are replaced wherever the service wrote them (:data:`ADDRESS_COLUMNS`, and the names in
   the generated text of its games: mails, chat notices, the audit, the admin entries of the log, the final
   table); a digest of the address joins the block list (``block_list.forget``): no game may name it again,
   until its owner allows invitations again by an old mail's "never invite me again" link.
2. Then, game by game, each seat it held in a running game leaves it as a resignation does
   (``admin.resign``): announced to the others, its steps passed at once or played by the house bot, as the
   host set (``GameSettings.resigned_seats``). A seat of a game not started yet is accepted and resigned at
   once, so the game starts without waiting for it. Should this step fail for a game (the game moved on
   under it three times), the seat is still renamed and mailed nothing: its deadlines pass it, and the
   house bot takes it after the game's ``bot_after_missed_turns``.
"""

from __future__ import annotations

import functools
import logging
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, SQLModel, col, select

from emails import messages
from service.domain import admin, block_list, lobby
from service.domain.errors import Conflict, DomainError
from service.domain.games import get_game, settings_of
from service.domain.links import LinkMaker
from service.domain.models import (
    ActionKind,
    AuditEntry,
    BlockedAddress,
    ChatNotice,
    DigestSent,
    Game,
    GameAction,
    GameNotification,
    GameResult,
    GameStatus,
    InboundMail,
    MailStatus,
    NotifyMode,
    OutboxMail,
    Player,
    PlayerRecord,
    Seat,
    SeatController,
    SignIn,
    TableMessage,
    utcnow,
)
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The name an erased player's seats, messages and results take.
FORMER_PLAYER = "A former player"
#: What the download puts in place of another address, and of a link.
AN_ADDRESS = "[an address]"
A_LINK = "[a link]"

#: Games whose seats are running: their player's seat leaves as a resignation does.
_RUNNING = (GameStatus.ACTIVE, GameStatus.PAUSED)
#: Games not started: the erased seat is accepted and resigned at once, so the game need not wait for it.
_NOT_STARTED = (GameStatus.UNCONFIRMED, GameStatus.INVITING)

#: Every text or JSON column where the service may have written an address it was given (``table.column``),
#: searched for the erased address (case-insensitively) and rewritten with what stands in for it there.
#: ``tests/domain/test_privacy.py`` checks that every text column of every table is here or in
#: :data:`NEVER_AN_ADDRESS`, so that a new column is a decision, not an oversight.
ADDRESS_COLUMNS: dict[str, str] = {
    "players.display_name": FORMER_PLAYER,
    "players.bounce_reason": AN_ADDRESS,
    "games.name": AN_ADDRESS,
    "games.pause_reason": AN_ADDRESS,
    "seats.display_name": FORMER_PLAYER,
    "inbound_mail.sender": "",
    "inbound_mail.outcome": AN_ADDRESS,
    "outbox.context": AN_ADDRESS,
    "outbox.last_error": AN_ADDRESS,
    "chat_notices.title": AN_ADDRESS,
    "chat_notices.body": AN_ADDRESS,
    "chat_notices.last_error": AN_ADDRESS,
    "table_messages.author_name": FORMER_PLAYER,
    "table_messages.text": AN_ADDRESS,
    "table_messages.hidden_by": AN_ADDRESS,
    "audit.actor": AN_ADDRESS,
    "audit.details": AN_ADDRESS,
}
#: Columns of bytes that may hold an address or a name as written (a mail as it went to the SMTP server): not
#: rewritten but emptied for the erased address's mails and its games' (:func:`_drop_rendered`).
DROPPED_BYTES = {"outbox.rendered": "a mail's bytes, kept only while it may go out again"}
#: Text columns that never hold an address a player gave, with the reason (or that are rewritten by name
#: in :func:`forget_address` itself: ``players.email``, ``games.host_email``, ``outbox.to_email``, ``sign_ins``).
NEVER_AN_ADDRESS = {
    "players.email": "the player's own address: replaced by the stand-in",
    "players.time_zone": "a zone name",
    "players.notify": "a choice",
    "games.status": "a status",
    "games.settings": "numbers and choices",
    "games.state": "the rules state: no names nor addresses",
    "games.seed": "random",
    "games.admin_secret": "random; replaced for a game the address hosts",
    "games.host_email": "replaced by the stand-in for a game the address hosts",
    "games.step_key": "numbers",
    "games.announced_key": "numbers",
    "games.result": "the final table: its names are rewritten by seat",
    "games.chat_url": "a chat's webhook, given by the host",
    "seats.secret": "random; replaced",
    "seats.controller": "a choice",
    "inbound_mail.message_key": "a digest",
    "inbound_mail.via": "a word",
    "inbound_mail.kind": "a kind",
    "actions.kind": "a kind",
    "actions.action": "steps (numbers) and admin acts, which name roles, never addresses; names rewritten by game",
    "actions.idempotency_key": "a client's random key",
    "turn_starts.state": "the rules state",
    "outbox.to_email": "replaced by the stand-in for the mails to the address",
    "outbox.template": "a kind",
    "outbox.message_id": "random",
    "outbox.dedupe_key": "event names: numbers and random secrets",
    "outbox.status": "a status",
    "outbox.claimed_by": "a worker's host and pid",
    "outbox.step_key": "numbers",
    "chat_notices.kind": "a kind",
    "chat_notices.notify_type": "a kind",
    "chat_notices.step_key": "numbers",
    "chat_notices.dedupe_key": "event names",
    "chat_notices.status": "a status",
    "chat_notices.claimed_by": "a worker's host and pid",
    "notification_choices.mode": "a choice; the address's rows are deleted",
    "digests_sent.local_date": "a date; the address's rows are deleted",
    "table_messages.source": "a word",
    "table_messages.source_key": "a reply's Message-ID, made by the player's mail program",
    "reminders_sent.step_key": "numbers",
    "audit.act": "a word",
    "site_admins.email": "a site admin's account, not a player's: its own command removes it",
    "site_admins.secret": "random",
    "sign_ins.email": "the address's rows are deleted",
    "sign_ins.link_secret": "random",
    "sign_ins.session_secret": "random",
    "blocked_addresses.email": "the address's row is deleted (its digest takes its place)",
    "erased_addresses.digest": "a digest",
    "service_status.name": "a name of ours",
}


# -- download -------------------------------------------------------------------------------------------------
def export(session: Session, email: str, now: datetime | None = None) -> dict[str, Any]:
    """Everything the service keeps about ``email``, as one JSON-ready document (see the module's docstring)."""
    now = now or utcnow()
    email = email.strip().lower()
    player = session.exec(select(Player).where(Player.email == email)).first()
    player_id = player.id if player is not None else None
    seated = (
        session.exec(
            select(Seat, Game)
            .join(Game, col(Game.id) == col(Seat.game_id))
            .where(Seat.player_id == player_id)
            .order_by(col(Game.id), col(Seat.seat))
        ).all()
        if player_id is not None
        else []
    )
    hosted = session.exec(select(Game).where(Game.host_email == email).order_by(col(Game.id))).all()
    document: dict[str, Any] = {
        "address": email,
        "exported_at": now.isoformat(),
        "about": "What Small World by Mail keeps about this address (docs/PRIVACY.md says for how long). Other "
        "players' addresses and every link are left out: a link opens a seat, so it is not copied here.",
        "games": [_game_entry(seat, game, email) for seat, game in seated],
        "hosted_games": [_hosted_entry(game) for game in hosted],
        "messages_at_the_tables": _messages(session, seated),
        "mail_choices": _choices(session, player),
        "rating": _rating(session, player_id),
        "mails_to_you": _mails(session, email, player),
        "mails_from_you": _mails_in(session, email, player_id),
        "sign_ins": [
            {"asked_at": _iso(row.created_at), "used_at": _iso(row.used_at), "ended_at": _iso(row.ended_at)}
            for row in session.exec(select(SignIn).where(SignIn.email == email).order_by(col(SignIn.id))).all()
        ],
        "never_invite_me_again": bool(block_list.blocked_among(session, [email])),
    }
    return _without_others(document, email)


def _game_entry(seat: Seat, game: Game, email: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "game": game.id,
        "name": game.name,
        "status": str(game.status),
        "seat": seat.seat,
        "seat_name": seat.display_name,
        "you_host_it": game.host_email == email,
        "created_at": _iso(game.created_at),
        "started_at": _iso(game.started_at),
        "finished_at": _iso(game.finished_at),
        "accepted_at": _iso(seat.accepted_at),
        "resigned_at": _iso(seat.resigned_at),
        "removed_by_the_host": seat.removed,
        "played_by": "the house bot" if seat.controller == SeatController.BOT else "you",
    }
    if game.status == GameStatus.FINISHED:
        # Public once the game is over (ARCHITECTURE §4); never before: a running game's coins are not read here.
        entry["final_table"] = [
            {"seat": row.get("player"), "name": row.get("name"), "place": row.get("place"), "coins": row.get("coins")}
            for row in game.result or []
        ]
    return entry


def _hosted_entry(game: Game) -> dict[str, Any]:
    return {
        "game": game.id,
        "name": game.name,
        "status": str(game.status),
        "created_at": _iso(game.created_at),
        "confirmed_at": _iso(game.confirmed_at),
        "finished_at": _iso(game.finished_at),
    }


def _messages(session: Session, seated: Iterable[tuple[Seat, Game]]) -> list[dict[str, Any]]:
    """The address's own messages: those of its seats since it took them (a seat may have changed hands)."""
    since = {(seat.game_id, seat.seat): seat.accepted_at for seat, _ in seated}
    if not since:
        return []
    rows = session.exec(
        select(TableMessage)
        .where(col(TableMessage.game_id).in_({game_id for game_id, _ in since}))
        .order_by(col(TableMessage.id))
    ).all()
    return [
        {
            "game": row.game_id,
            "written_at": _iso(row.created_at),
            "as": row.author_name,
            "by": str(row.source),
            "text": row.text,
            "hidden_by_the_host": row.hidden_at is not None,
        }
        for row in rows
        if (row.game_id, row.seat) in since and _since(row.created_at, since[(row.game_id, row.seat)])
    ]


def _since(moment: datetime, start: datetime | None) -> bool:
    return start is None or moment >= start


def _choices(session: Session, player: Player | None) -> dict[str, Any] | None:
    if player is None:
        return None
    per_game = session.exec(select(GameNotification).where(GameNotification.player_id == player.id)).all()
    return {
        "time_zone": player.time_zone,
        "default": str(player.notify),
        "digest_hour": player.digest_hour,
        "reminders": player.wants_reminders,
        "notices": player.wants_notices,
        "table_talk": player.wants_messages,
        "games": [{"game": row.game_id, "mails": str(row.mode)} for row in per_game],
        "mail_bounces_since": _iso(player.bouncing_since),
    }


def _rating(session: Session, player_id: int | None) -> dict[str, Any] | None:
    if player_id is None:
        return None
    record = session.get(PlayerRecord, player_id)
    results = session.exec(
        select(GameResult).where(GameResult.player_id == player_id).order_by(col(GameResult.id))
    ).all()
    return {
        "record": None
        if record is None
        else {
            "rating_mu": record.rating_mu,
            "rating_sigma": record.rating_sigma,
            "games_finished": record.games_finished,
            "deadlines": record.deadlines,
            "deadlines_missed": record.deadlines_missed,
            "resigned": record.resigned,
        },
        "finished_games": [
            {
                "game": row.game_id,
                "seat": row.seat,
                "place": row.place,
                "coins": row.coins,
                "resigned": row.resigned,
                "rating_mu_before": row.rating_mu_before,
                "rating_mu_after": row.rating_mu,
            }
            for row in results
        ],
    }


def _mails(session: Session, email: str, player: Player | None) -> list[dict[str, Any]]:
    """The mails written to the address: their kind and times, and their subject and text while the body is
    kept (rendered as the mail said them, without the links, which are signed anew at each sending)."""
    to_address = col(OutboxMail.to_email) == email
    mine = sa.or_(to_address, col(OutboxMail.player_id) == player.id) if player is not None else to_address
    rows = session.exec(select(OutboxMail).where(mine).order_by(col(OutboxMail.id))).all()
    time_zone = player.time_zone if player is not None else "UTC"
    return [_mail_entry(row, time_zone) for row in rows]


def _mail_entry(row: OutboxMail, time_zone: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": row.template,
        "game": row.game_id,
        "status": str(row.status),
        "written_at": _iso(row.created_at),
        "sent_at": _iso(row.sent_at),
        "subject": None,
        "text": None,
        "body_purged_at": _iso(row.body_purged_at),
    }
    if row.body_purged_at is None:
        try:
            rendered = messages.from_json(row.template, row.context).render(
                now=row.created_at, time_zone=time_zone, pictures=False
            )
        except Exception as error:  # an old row that no longer renders: its kind and times still go out
            log(logger, logging.WARNING, "privacy.export_mail", outbox=row.id, error=repr(error)[:200])
        else:
            entry["subject"], entry["text"] = rendered.subject, rendered.text
    return entry


def _mails_in(session: Session, email: str, player_id: int | None) -> list[dict[str, Any]]:
    """The mails that came in from the address (or to its seats' reply addresses): what each was and what was
    done, never their text (which is not kept)."""
    sender = sa.func.lower(col(InboundMail.sender)) == email
    mine = sa.or_(sender, col(InboundMail.player_id) == player_id) if player_id is not None else sender
    rows = session.exec(select(InboundMail).where(mine).order_by(col(InboundMail.id))).all()
    return [
        {
            "received_at": _iso(row.received_at),
            "kind": str(row.kind),
            "game": row.game_id,
            "seat": row.seat,
            "what_was_done": row.outcome,
        }
        for row in rows
    ]


_ADDRESS = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+", re.UNICODE)
_URL = re.compile(r"\b(?:https?|webcal)://[^\s<>\"')\]]+", re.IGNORECASE)


def _without_others(node: Any, email: str) -> Any:
    """``node`` with every link, and every address but ``email``, replaced (:data:`A_LINK`, :data:`AN_ADDRESS`)."""

    def clean(text: str) -> str:
        text = _URL.sub(A_LINK, text)
        return _ADDRESS.sub(lambda found: found.group(0) if found.group(0).lower() == email else AN_ADDRESS, text)

    return _rewritten(node, clean)


# -- delete ---------------------------------------------------------------------------------------------------
@dataclass
class Forgotten:
    """What :func:`forget_address` did."""

    #: Whether the service knew the address at all (a player, a host, a sign-in, a mail from it).
    known: bool
    games: list[int] = field(default_factory=list)
    #: Seats of running or inviting games that left them, by game: ``"bot"`` or ``"auto_pass"``.
    seats_left: dict[int, str] = field(default_factory=dict)
    #: Seats whose leaving failed (the game moved on under it each time): their deadlines pass them.
    seats_not_settled: list[int] = field(default_factory=list)
    mails_cancelled: int = 0
    rows_rewritten: int = 0


def stand_in(player_id: int | None) -> str:
    """The address an erased player's row keeps: reserved (RFC 2606), never mailed."""
    return f"former-player-{player_id or 0}@{block_list.ERASED_DOMAIN}"


def forget_address(session: Session, email: str, links: LinkMaker, now: datetime | None = None) -> Forgotten:
    """Erase ``email`` from the service (see the module's docstring). Safe to run again: it finds nothing left.

    Refused (:class:`Conflict`) for an erased player's stand-in address itself.
    """
    now = now or utcnow()
    email = email.strip().lower()
    if block_list.is_erased(email):
        raise Conflict("That address is an erased player's stand-in already")
    player = session.exec(select(Player).where(Player.email == email)).first()
    hosted = session.exec(select(Game).where(Game.host_email == email)).all()
    if player is None and hosted:
        player = lobby.player_for(session, email)  # a host without a row of its own: its stand-in names one
    forgotten = Forgotten(known=player is not None or _mentioned(session, email))
    replacement = stand_in(player.id if player is not None else None)
    seats = session.exec(select(Seat).where(Seat.player_id == player.id)).all() if player is not None else []
    names = {seat.display_name for seat in seats} | ({player.display_name} if player is not None else set())
    names = {name for name in names if name.strip() and name != FORMER_PLAYER}
    rename = _renaming(names)
    games = {game.id or 0: game for game in hosted}
    for seat in seats:
        games.setdefault(seat.game_id, get_game(session, seat.game_id))
    forgotten.games = sorted(games)

    # Mail: nothing pending goes out; the bodies of the mails to the address go now.
    to_it = col(OutboxMail.to_email) == email
    if player is not None:
        to_it = sa.or_(to_it, col(OutboxMail.player_id) == player.id)
    cancelled = session.exec(
        sa.update(OutboxMail)
        .where(to_it, col(OutboxMail.status) == MailStatus.PENDING)
        .values(
            # A mail a drain that died may already have sent is never recorded skipped (ARCHITECTURE §6).
            status=sa.case((col(OutboxMail.may_have_left), MailStatus.MAYBE_SENT), else_=MailStatus.SKIPPED),
            last_error="the address was erased on its owner's request",
        )
        .execution_options(synchronize_session=False)
    )
    forgotten.mails_cancelled = int(cancelled.rowcount or 0)
    session.exec(
        sa.update(OutboxMail)
        .where(to_it)
        .values(to_email=replacement, context={}, body_purged_at=now)
        .execution_options(synchronize_session=False)
    )

    if player is not None:
        player.email = replacement
        player.display_name = FORMER_PLAYER
        player.time_zone = "UTC"
        player.notify = NotifyMode.TURNS
        player.wants_reminders = player.wants_notices = player.wants_messages = False
        player.bouncing_since, player.bounce_reason = None, None
        session.add(player)
        for model in (GameNotification, DigestSent, PlayerRecord):
            session.exec(sa.delete(model).where(col(model.player_id) == player.id))
        session.exec(sa.update(InboundMail).where(col(InboundMail.player_id) == player.id).values(sender=""))
    session.exec(sa.delete(SignIn).where(col(SignIn.email) == email))
    for game in hosted:
        game.host_email = replacement
        game.admin_secret = secrets.token_urlsafe(24)  # the admin link was mailed to the address only
        session.add(game)

    running: list[tuple[int, int]] = []
    for seat in seats:
        game = games[seat.game_id]
        was = seat.display_name
        seat.display_name = FORMER_PLAYER
        seat.secret = secrets.token_urlsafe(16)  # every link of the seat, and the sessions they opened, end
        leaves = not seat.removed and seat.resigned_at is None
        if leaves and game.status in _NOT_STARTED:
            seat.accepted_at = seat.accepted_at or now
            seat.resigned_at = now
            seat.controller = _as_host_set(game)
            forgotten.seats_left[game.id or 0] = str(settings_of(game).resigned_seats)
        elif leaves and game.status in _RUNNING:
            running.append((seat.game_id, seat.seat))
            if settings_of(game).resigned_seats == "auto_pass":
                seat.controller = SeatController.PERSON  # the host's choice for a seat left: passed, not played
        session.add(seat)
        # Its own messages keep their words, but not its names.
        own = sa.and_(
            col(TableMessage.game_id) == seat.game_id,
            col(TableMessage.seat) == seat.seat,
            col(TableMessage.author_name) == was,
        )
        forgotten.rows_rewritten += _rewrite_column(session, _column("table_messages.text"), own, rename)
        session.exec(
            sa.update(TableMessage)
            .where(
                col(TableMessage.game_id) == seat.game_id,
                col(TableMessage.seat) == seat.seat,
                col(TableMessage.author_name) == was,
            )
            .values(author_name=FORMER_PLAYER)
            .execution_options(synchronize_session=False)
        )
        _rename_in_result(game, seat.seat)
    session.flush()
    forgotten.rows_rewritten += _rewrite_names(session, sorted(games), rename) + _rewrite_address(session, email)
    _drop_rendered(session, sorted(games), to_it)
    block_list.forget(session, email)
    session.commit()
    log(logger, logging.INFO, "privacy.forgotten", games=len(games), seats=len(seats), player=replacement)

    for game_id, seat_no in running:
        if _leave(session, game_id, seat_no, links):
            forgotten.seats_left[game_id] = str(settings_of(get_game(session, game_id)).resigned_seats)
        else:
            forgotten.seats_not_settled.append(game_id)
    for game in games.values():
        if game.status == GameStatus.INVITING:
            locked = get_game(session, game.id or 0, lock=True)
            lobby.start_if_all_accepted(session, locked, links, now=now)
            session.commit()
    return forgotten


def _as_host_set(game: Game) -> SeatController:
    return SeatController.BOT if settings_of(game).resigned_seats == "bot" else SeatController.PERSON


def _leave(session: Session, game_id: int, seat_no: int, links: LinkMaker) -> bool:
    """The erased seat leaves its running game as a resignation does; whether it did."""
    for _ in range(3):
        try:
            admin.resign(session, game_id, seat_no, links)
            return True
        except Conflict as error:
            session.rollback()
            if "first" not in error.message:  # not a race: resigned or removed meanwhile
                return True
        except DomainError as error:
            session.rollback()
            log(logger, logging.WARNING, "privacy.leave_failed", game=game_id, seat=seat_no, error=error.message)
            return False
    log(logger, logging.WARNING, "privacy.leave_failed", game=game_id, seat=seat_no, error="the game kept moving")
    return False


def _rename_in_result(game: Game, seat_no: int) -> None:
    if game.result:
        game.result = [row | {"name": FORMER_PLAYER} if row.get("player") == seat_no else row for row in game.result]


def _mentioned(session: Session, email: str) -> bool:
    """Whether any row names ``email`` (a sign-in asked for, a mail from it, the block list) though it has no
    player row."""
    signed = session.exec(select(SignIn.id).where(SignIn.email == email).limit(1)).first()
    sent = session.exec(select(InboundMail.id).where(sa.func.lower(col(InboundMail.sender)) == email).limit(1)).first()
    return signed is not None or sent is not None or session.get(BlockedAddress, email) is not None


def _renaming(names: set[str]) -> Callable[[str], str]:
    """A text with each of ``names`` (as a whole word) replaced by :data:`FORMER_PLAYER`."""
    if not names:
        return lambda text: text
    longest_first = sorted(names, key=len, reverse=True)
    pattern = re.compile("|".join(rf"(?<!\w){re.escape(name)}(?!\w)" for name in longest_first))
    return functools.partial(pattern.sub, FORMER_PLAYER)


def _rewrite_names(session: Session, game_ids: list[int], rename: Callable[[str], str]) -> int:
    """The erased player's names, in the text the service wrote about its games: mails, chat notices, the
    audit, the admin entries of the log (never a step: the history replays as it was)."""
    if not game_ids:
        return 0
    in_games = {
        "outbox.context": col(OutboxMail.game_id).in_(game_ids),
        "chat_notices.title": col(ChatNotice.game_id).in_(game_ids),
        "chat_notices.body": col(ChatNotice.game_id).in_(game_ids),
        "audit.details": col(AuditEntry.game_id).in_(game_ids),
        "actions.action": sa.and_(
            col(GameAction.game_id).in_(game_ids), col(GameAction.kind).in_((ActionKind.ADMIN, ActionKind.OPTIONS))
        ),
    }
    changed = 0
    for name, where in in_games.items():
        changed += _rewrite_column(session, _column(name), where, rename)
    return changed


def _drop_rendered(session: Session, game_ids: list[int], to_it: sa.ColumnElement[bool]) -> None:
    """The stored bytes of the mails to the address and of its games' mails (:data:`DROPPED_BYTES`): they hold
    the address or its names as written, and cannot be rewritten like text. A mail still to go is rendered
    again from its rewritten context (``service.domain.delivery``): the erasure outweighs sending the very
    same bytes again."""
    where = sa.or_(to_it, col(OutboxMail.game_id).in_(game_ids)) if game_ids else to_it
    session.exec(
        sa.update(OutboxMail)
        .where(where, col(OutboxMail.rendered).is_not(None))
        .values(rendered=None)
        .execution_options(synchronize_session=False)
    )


def _rewrite_address(session: Session, email: str) -> int:
    """``email`` wherever the service wrote it (:data:`ADDRESS_COLUMNS`), replaced by what stands in for it
    there: "A former player" for a name, "[an address]" in a text (a host's mail naming its players)."""
    pattern = re.compile(re.escape(email), re.IGNORECASE)
    changed = 0
    for name, instead in ADDRESS_COLUMNS.items():
        column = _column(name)
        where = sa.func.lower(sa.cast(column, sa.Text)).contains(email, autoescape=True)
        changed += _rewrite_column(session, column, where, functools.partial(pattern.sub, instead))
    return changed


def _column(name: str) -> sa.Column[Any]:
    table, column = name.split(".")
    return SQLModel.metadata.tables[table].c[column]


def _rewrite_column(session: Session, column: sa.Column[Any], where: Any, change: Callable[[str], str]) -> int:
    """Apply ``change`` to every string in ``column`` (text, or JSON walked) of the rows ``where`` selects."""
    table = column.table
    key = table.primary_key.columns.values()
    rows = session.execute(sa.select(*key, column).where(where)).all()
    changed = 0
    for row in rows:
        value = row[-1]
        new = _rewritten(value, change)
        if new != value:
            session.execute(
                sa.update(table).where(*(k == row[i] for i, k in enumerate(key))).values({column.name: new})
            )
            changed += 1
    return changed


def _rewritten(node: Any, change: Callable[[str], str]) -> Any:
    """``node`` (a string, or JSON) with ``change`` applied to every string in it, keys left as they are."""
    if isinstance(node, str):
        return change(node)
    if isinstance(node, dict):
        return {key: _rewritten(value, change) for key, value in node.items()}
    if isinstance(node, list):
        return [_rewritten(value, change) for value in node]
    return node


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
