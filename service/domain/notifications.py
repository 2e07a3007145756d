"""Notification choices (ARCHITECTURE §9): which mail an address wants, per game and by default, and the daily
digest.

What always comes, whatever the choice: invitations, the mails of the player's own turns (your turn,
redeploy), and the final results. What the choice decides, for each game (the game's own choice, else the
address's default, ``Player.notify``):

- ``every``: notices (a turn passed, the host's changes) and table talk, as they happen;
- ``turns``: only the player's turns and the results; the rest stays on the game's pages;
- ``digest``: the same, and once a day, at the local hour of the player's choosing (``Player.digest_hour``
  in ``Player.time_zone``), one mail listing every game that waits for the address and what was said at the
  tables of the games followed by digest since the last one.

Besides the choice, each kind of optional mail has its own off switch, which the unsubscribe link of that
kind's mails turns off (``wants_reminders``, ``wants_notices``, ``wants_messages``): one kind at a time,
never the turns or the results. Delivery (``service.domain.delivery``) applies all of it when it sends, so
a change holds for every mail not yet sent.

The digest is sent by the worker (beat, every sweep: :func:`send_digests`). Each address gets at most one a
day: the day is claimed by a row of ``digests_sent`` (player, local date) written with ``INSERT … ON CONFLICT
DO NOTHING`` in the transaction that queues the mail, whose dedupe key names the same day. Two workers at
once, or a sweep run again, find the day taken. A worker that was down at the chosen hour sends the day's
digest when it comes back, the same local day; a day that has passed is not sent late. A digest with
nothing to tell (no game waiting, nothing said) is claimed but not mailed. A digest hour chosen after that
hour of the day has passed claims the day on choosing (:func:`save_choices`): the first digest comes the
next day at that hour, not at once (issue 35).

The notices about the reader's own turn (:data:`OWN_TURN_NOTICES`: their turn played for them) are mails of
their own turns, which always come whatever the game's choice; only the notices switch stops them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from emails import times
from emails.messages import DailyDigest, DigestGame, DigestTalk
from emails.render import DIGEST, ESSENTIAL, NOTICE, REMINDER, TALK
from service.domain import block_list, my_games, table_talk
from service.domain.errors import BadRequest, NotFound
from service.domain.links import LinkMaker
from service.domain.models import DigestSent, Game, GameNotification, GameStatus, NotifyMode, Player, Seat, utcnow
from service.domain.outbox import queue_mail
from service.infra.db import dialect_insert
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The words of each choice, for pages and mails.
MODE_WORDS = {
    NotifyMode.EVERY: "Every event: my turns, the results, table talk and notices as they happen",
    NotifyMode.TURNS: "Only my turns and the results",
    NotifyMode.DIGEST: "My turns and the results, and a daily digest at the hour I choose",
}
#: The digest lists at most this many messages (the latest); it says how many more there were.
DIGEST_TALK = 30


# -- what a mail may do ----------------------------------------------------------------------------------
#: Notices about the reader's own turn: sent whatever the game's choice (the choices page promises the mails
#: of one's own turns always come), unless notices are turned off.
OWN_TURN_NOTICES = frozenset({"auto_passed"})


def skip_reason(
    category: str,
    mode: NotifyMode | str | None,
    *,
    wants_reminders: bool = True,
    wants_notices: bool = True,
    wants_messages: bool = True,
    own_turn: bool = False,
) -> str | None:
    """Why a mail of ``category`` (``emails.render``) must not go to a reader whose choice for its game is
    ``mode`` and whose switches are as given; ``None``: it goes.

    >>> skip_reason("essential", "turns", wants_notices=False) is None
    True
    >>> skip_reason("talk", "digest")
    'the player chose a daily digest for this game'
    >>> skip_reason("notice", "every", wants_notices=False)
    'the player turned notices off'
    >>> skip_reason("notice", "digest", own_turn=True) is None  # their turn was played for them
    True
    """
    if category in (ESSENTIAL, DIGEST):
        return None
    if category == REMINDER:
        return None if wants_reminders else "the player turned reminders off"
    if category == TALK and not wants_messages:
        return "the player turned table talk off"
    if category == NOTICE and not wants_notices:
        return "the player turned notices off"
    if category == NOTICE and own_turn:
        return None
    chosen = NotifyMode(mode) if mode else NotifyMode.EVERY
    if chosen == NotifyMode.TURNS:
        return "the player chose only their turns and results for this game"
    if chosen == NotifyMode.DIGEST:
        return "the player chose a daily digest for this game"
    return None


# -- the choices page ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GameChoice:
    game_id: int
    name: str
    status: str
    #: The game's own choice; ``None``: the address's default.
    mode: NotifyMode | None


@dataclass(frozen=True)
class Choices:
    """An address's choices, as its page shows them."""

    player_id: int
    email: str
    time_zone: str
    default: NotifyMode
    digest_hour: int
    wants_reminders: bool
    wants_notices: bool
    wants_messages: bool
    games: list[GameChoice] = field(default_factory=list)
    #: Set by :func:`save_choices` when the digest hour had passed today: the first digest comes tomorrow.
    digest_from_tomorrow: bool = False


#: Games whose choice the page offers: those that may still mail (not over).
CHOOSABLE = (GameStatus.INVITING, GameStatus.ACTIVE, GameStatus.PAUSED)


def choices_of(session: Session, player_id: int) -> Choices:
    """The address's choices and its games that may still mail (:class:`NotFound` for an unknown player, or
    one whose address was erased: its old mails' links open nothing)."""
    player = session.get(Player, player_id)
    if player is None or block_list.is_erased(player.email):
        raise NotFound("There is no such address.")
    rows = session.execute(
        sa.select(col(Game.id), col(Game.name), col(Game.status), col(GameNotification.mode))
        .join(Seat, col(Seat.game_id) == col(Game.id))
        .outerjoin(
            GameNotification,
            sa.and_(col(GameNotification.game_id) == col(Game.id), col(GameNotification.player_id) == player_id),
        )
        .where(col(Seat.player_id) == player_id, col(Seat.removed) == sa.false(), col(Game.status).in_(CHOOSABLE))
        .order_by(col(Game.created_at).desc(), col(Game.id).desc())
    ).all()
    return Choices(
        player_id=player_id,
        email=player.email,
        time_zone=player.time_zone,
        default=NotifyMode(player.notify),
        digest_hour=player.digest_hour,
        wants_reminders=player.wants_reminders,
        wants_notices=player.wants_notices,
        wants_messages=player.wants_messages,
        games=[
            GameChoice(game_id=r.id, name=r.name, status=str(r.status), mode=NotifyMode(r.mode) if r.mode else None)
            for r in rows
        ],
    )


def player_of(session: Session, email: str) -> Player | None:
    """The player row of an address, if it has one."""
    return session.exec(select(Player).where(Player.email == email.strip().lower())).first()


def player_id_of(session: Session, email: str) -> int | None:
    """The player row of an address (whose choices the page of choices shows), if it has one."""
    return session.exec(select(Player.id).where(Player.email == email.strip().lower())).first()


def parse_mode(value: object, field_name: str, *, blank: bool = False) -> NotifyMode | None:
    """A choice from a form or the API, or :class:`BadRequest` naming ``field_name``."""
    if blank and value in (None, "", "default"):
        return None
    try:
        return NotifyMode(str(value))
    except ValueError:
        allowed = ", ".join(m.value for m in NotifyMode) + (" or default" if blank else "")
        raise BadRequest(f"{field_name}: choose one of {allowed}.", field=field_name) from None


def parse_hour(value: object) -> int:
    """The digest's local hour, 0 to 23, or :class:`BadRequest` naming ``digest_hour``."""
    try:
        hour = int(str(value))
    except ValueError:
        hour = -1
    if not 0 <= hour <= 23:
        raise BadRequest("digest_hour: an hour from 0 to 23.", field="digest_hour")
    return hour


def save_choices(
    session: Session,
    player_id: int,
    *,
    default: NotifyMode,
    digest_hour: int,
    games: Mapping[int, NotifyMode | None],
    wants_reminders: bool,
    wants_notices: bool,
    wants_messages: bool,
    now: datetime | None = None,
) -> Choices:
    """Store the address's choices and commit. ``games``: a choice per game of the address (``None``: the
    default); a game the address has no seat in is refused (:class:`BadRequest` naming it).

    A digest hour newly chosen (or a digest newly followed) when that hour of the reader's day has passed
    claims the day, so the first digest comes tomorrow at that hour rather than at the next sweep."""
    player = session.get(Player, player_id)
    if player is None:
        raise NotFound("There is no such address.")
    own = set(session.exec(select(Seat.game_id).where(Seat.player_id == player_id, col(Seat.removed).is_(False))).all())
    foreign = sorted(set(games) - own)
    if foreign:
        raise BadRequest(f"game_{foreign[0]}: not a game of this address.", field=f"game_{foreign[0]}")
    before = (player.digest_hour, follows_digest(session, player))
    player.notify = default
    player.digest_hour = digest_hour
    player.wants_reminders = wants_reminders
    player.wants_notices = wants_notices
    player.wants_messages = wants_messages
    session.add(player)
    for game_id, mode in games.items():
        row = session.get(GameNotification, (player_id, game_id))
        if mode is None:
            if row is not None:
                session.delete(row)
        elif row is None:
            session.add(GameNotification(player_id=player_id, game_id=game_id, mode=mode))
        else:
            row.mode = mode
            session.add(row)
    session.flush()
    from_tomorrow = False
    if follows_digest(session, player) and before != (digest_hour, True):
        now = now or utcnow()
        day, hour = local_day(now, player.time_zone)
        if hour >= digest_hour:
            session.execute(
                dialect_insert(session.get_bind().dialect.name, DigestSent)
                .values(player_id=player_id, local_date=day, games=0, messages=0, created_at=now)
                .on_conflict_do_nothing(index_elements=["player_id", "local_date"])
            )
            from_tomorrow = True
    session.commit()
    return replace(choices_of(session, player_id), digest_from_tomorrow=from_tomorrow)


def follows_digest(session: Session, player: Player) -> bool:
    """Whether the address gets a digest: its default, or its choice for one of its running games."""
    if player.notify == NotifyMode.DIGEST:
        return True
    by_game = (
        select(GameNotification.game_id)
        .join(Game, col(Game.id) == GameNotification.game_id)
        .where(
            GameNotification.player_id == player.id,
            GameNotification.mode == NotifyMode.DIGEST,
            col(Game.status).in_(CHOOSABLE),
        )
    )
    return session.exec(by_game).first() is not None


# -- the daily digest ------------------------------------------------------------------------------------
@dataclass
class DigestReport:
    now: datetime
    #: Addresses whose day was claimed now, and of those, how many got a mail.
    claimed: int = 0
    mailed: int = 0
    errors: list[str] = field(default_factory=list)


def local_day(now: datetime, time_zone: str) -> tuple[str, int]:
    """The reader's local date (``YYYY-MM-DD``) and hour at ``now``.

    >>> from datetime import UTC, datetime
    >>> local_day(datetime(2026, 3, 1, 23, 30, tzinfo=UTC), "Europe/Paris")
    ('2026-03-02', 0)
    """
    local = now.astimezone(times.zone(time_zone))
    return local.date().isoformat(), local.hour


def digest_readers(session: Session) -> list[Player]:
    """The addresses that chose a digest, by default or for one of their running games."""
    by_game = (
        select(GameNotification.player_id)
        .join(Game, col(Game.id) == col(GameNotification.game_id))
        .where(GameNotification.mode == NotifyMode.DIGEST, col(Game.status).in_(CHOOSABLE))
    )
    return list(
        session.exec(
            select(Player)
            .where(sa.or_(col(Player.notify) == NotifyMode.DIGEST, col(Player.id).in_(by_game)))
            .order_by(col(Player.id))
        ).all()
    )


def send_digests(session: Session, links: LinkMaker, *, now: datetime | None = None) -> DigestReport:
    """Queue the daily digest of every address whose chosen local hour has come today and whose day is not
    claimed yet; one transaction per address, so one that fails never stops the others."""
    now = now or utcnow()
    report = DigestReport(now=now)
    # Plain values, read at once: a commit (one per address below) expires the rows it loaded.
    readers = [(p.id or 0, p.time_zone, p.digest_hour) for p in digest_readers(session)]
    # The days already claimed, read at once too: every sweep after a reader's hour would otherwise try
    # (and fail) to claim their day again, a write per reader every 30 seconds.
    days = [(now + timedelta(days=shift)).date().isoformat() for shift in (-1, 0, 1)]
    claimed = set(
        session.execute(
            sa.select(col(DigestSent.player_id), col(DigestSent.local_date)).where(col(DigestSent.local_date).in_(days))
        ).all()
    )
    for player_id, time_zone, digest_hour in readers:
        day, hour = local_day(now, time_zone)
        if hour < digest_hour or (player_id, day) in claimed:
            continue
        try:
            player = session.get(Player, player_id)
            if player is None:
                continue
            outcome = send_digest(session, player, links, now=now)
            report.claimed += outcome is not None
            report.mailed += outcome == MAILED
        except Exception as error:  # one address's failure never stops the others'
            session.rollback()
            report.errors.append(f"player {player_id}: {error!r}")
            log(logger, logging.ERROR, "digest.failed", player=player_id, error=repr(error))
    return report


#: What :func:`send_digest` did with a day it claimed: queued the mail, or found nothing to tell.
MAILED, EMPTY = "mailed", "empty"


def send_digest(session: Session, player: Player, links: LinkMaker, *, now: datetime) -> str | None:
    """Claim today's digest of ``player`` if its hour has come, and queue its mail if it has something to
    tell; commit. Returns :data:`MAILED` or :data:`EMPTY`, or ``None`` when it was not its time or the day
    was claimed already."""
    player_id = player.id or 0
    day, hour = local_day(now, player.time_zone)
    if hour < player.digest_hour:
        return None
    claim = (
        dialect_insert(session.get_bind().dialect.name, DigestSent)
        .values(player_id=player_id, local_date=day, games=0, messages=0, created_at=now)
        .on_conflict_do_nothing(index_elements=["player_id", "local_date"])
        .returning(col(DigestSent.player_id))
    )
    if session.execute(claim).first() is None:
        session.rollback()
        return None
    digest = build_digest(session, player, links, day=day, now=now)
    mailed = bool(digest.games or digest.talk)
    if mailed:
        queue_mail(session, player, digest, now=now)
    session.execute(
        sa.update(DigestSent)
        .where(col(DigestSent.player_id) == player_id, col(DigestSent.local_date) == day)
        .values(games=len(digest.games), messages=len(digest.talk) + digest.more_talk)
    )
    session.commit()
    return MAILED if mailed else EMPTY


def build_digest(session: Session, player: Player, links: LinkMaker, *, day: str, now: datetime) -> DailyDigest:
    """The digest of ``player`` for ``day``: every game that waits for the address (their turn, or an
    invitation to answer), and the messages said since the previous digest (else the last day) at the
    tables of the games they follow by digest, by others, not hidden."""
    mine = my_games.my_games(session, player.email, links)
    defending = _defending(session, [g.game_id for g in mine.waiting])
    games: list[DigestGame] = [
        DigestGame(
            game_name=g.name,
            url=g.url,
            waiting="redeploy" if g.game_id in defending else "turn",
            deadline_at=g.clock.deadline.isoformat() if g.clock.deadline else None,
            turn=g.turn,
            turns=g.turns,
        )
        for g in mine.waiting
    ] + [
        DigestGame(game_name=g.name, url=g.url, waiting="invitation", deadline_at=None, turn=None, turns=None)
        for g in mine.invitations
    ]
    previous = session.exec(
        select(DigestSent.created_at)
        .where(DigestSent.player_id == player.id, DigestSent.local_date != day, col(DigestSent.created_at) <= now)
        .order_by(col(DigestSent.created_at).desc())
    ).first()
    since = previous or now - timedelta(days=1)
    followed = _followed_by_digest(session, player)
    seats = {g.game_id: g.seat for g in [*mine.waiting, *mine.invitations, *mine.running, *mine.finished]}
    names = {g.game_id: g.name for g in [*mine.waiting, *mine.invitations, *mine.running, *mine.finished]}
    said = [
        (game_id, m)
        for game_id, messages in table_talk.messages_since(session, sorted(followed & set(seats)), since).items()
        for m in messages
        if m.seat != seats.get(game_id)
    ]
    said.sort(key=lambda pair: (pair[1].at, pair[1].id))
    kept = said[-DIGEST_TALK:]
    talk: list[DigestTalk] = [
        DigestTalk(game_name=names[game_id], author=m.author, text=m.text or "", posted_at=m.at.isoformat())
        for game_id, m in kept
    ]
    return DailyDigest(
        player_name=player.display_name or player.email.split("@")[0],
        player_id=player.id or 0,
        local_date=day,
        games=games,
        talk=talk,
        more_talk=len(said) - len(kept),
    )


def _defending(session: Session, game_ids: list[int]) -> set[int]:
    """Those of ``game_ids`` whose awaited step is a defender's redeployment (``Game.step_key``)."""
    if not game_ids:
        return set()
    rows = session.execute(sa.select(col(Game.id), col(Game.step_key)).where(col(Game.id).in_(game_ids))).all()
    return {game_id for game_id, key in rows if key and not key.endswith(":-")}


def _followed_by_digest(session: Session, player: Player) -> set[int]:
    """The games whose choice for ``player`` is the digest (their own, else the address's default)."""
    rows = session.execute(
        sa.select(col(Seat.game_id), col(GameNotification.mode))
        .outerjoin(
            GameNotification,
            sa.and_(col(GameNotification.game_id) == col(Seat.game_id), col(GameNotification.player_id) == player.id),
        )
        .where(col(Seat.player_id) == player.id, col(Seat.removed) == sa.false())
    ).all()
    default = NotifyMode(player.notify)
    return {game_id for game_id, mode in rows if (NotifyMode(mode) if mode else default) == NotifyMode.DIGEST}


def digest_summary(report: DigestReport) -> dict[str, Any]:
    return {"now": report.now.isoformat(), "claimed": report.claimed, "mailed": report.mailed, "errors": report.errors}
