"""Chat notices (ARCHITECTURE §10): what a game's chat hears, queued with the change, sent by their own task.

A game whose host gave it a chat address (``Game.chat_url``, an apprise URL: ``service.infra.chat``) gets
a notice in that chat when the turn changes (whose turn, until when), when a turn is passed for a player,
when an admin acts, when the service's outage moved a deadline, and at the end (the final table: every
coin count is public then). **Public information only**: no coins before the end, no signed link, no
address. A chat is shared by people we do not know: anything there is public.

Like mail (``service.domain.outbox`` and ``service.domain.delivery``), and for the same reasons:

- a notice is a row of ``chat_notices``, written **in the transaction of the change** it tells of, with a
  dedupe key naming the event, so a retried task or two sweeps at once write it once;
- :func:`deliver_due_notices` (the ``chat`` queue's task, ``worker/tasks/chat.py``) is mail's drain
  (``service.drain``) on this table: it claims due rows under a lease that a live drain keeps, posts them,
  and records each outcome: sent; retried later with backoff; failed after ``CHAT_MAX_ATTEMPTS`` attempts or
  at once when retrying is vain (``last_error`` says why, on the admin page); skipped when the game's chat was
  removed, or a turn notice whose turn is over (:class:`NoticeQueue` says only that, and how a notice is
  posted). A worker killed between the chat's answer and the record sends that notice again once its lease
  ends: **at least once** after a crash, as mail, and a chat has no ``Message-ID`` to drop the repeat; without
  a crash, **never twice**.

A chat that is down or refuses never holds up mail: its notices are other rows, sent by another task on
another queue, and every failure stays in those rows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from emails import admin_acts, times
from emails.table_talk import excerpt
from service.domain.clock import Clock
from service.domain.models import ChatNotice, Game, NoticeStatus, utcnow
from service.domain.rows import GameRecord
from service.drain.queue import (
    Claims,
    DrainReport,
    DrainSettings,
    Failure,
    Queue,
    claim_statement,
    drain,
    outcome_statement,
)
from service.infra import chat
from service.infra.db import dialect_insert
from service.infra.mail_wakeup import CHAT_WRITTEN

TURN, AUTO_PASS, RESULT, ADMIN, OUTAGE, CONNECTED = "turn", "auto_pass", "result", "admin", "outage", "chat"
TALK = "talk"


@dataclass(frozen=True)
class Notice:
    """One notice: what the chat shows (title, text, apprise's type) and the event it is about."""

    kind: str
    title: str
    body: str
    dedupe_key: str
    notify_type: str = "info"
    step_key: str | None = None


# -- queueing, in the caller's transaction ---------------------------------------------------------------
def queue_notice(session: Session, game: GameRecord, notice: Notice, *, now: datetime | None = None) -> bool:
    """Add ``notice`` for the game's chat, if it has one; a second notice of the same event is not written.

    One ``INSERT … ON CONFLICT (dedupe_key) DO NOTHING``, as the outbox does. Returns whether it was written.
    """
    if not game.chat_url or game.id is None:
        return False
    values = {
        "game_id": game.id,
        "kind": notice.kind,
        "title": notice.title[:250],
        "body": notice.body[:4000],
        "notify_type": notice.notify_type,
        "step_key": notice.step_key,
        "dedupe_key": notice.dedupe_key,
        "status": NoticeStatus.PENDING,
        "attempts": 0,
        "created_at": now or utcnow(),
        "next_attempt_at": utcnow(),
    }
    insert = dialect_insert(session.get_bind().dialect.name, ChatNotice).values(**values)
    insert = insert.on_conflict_do_nothing(index_elements=["dedupe_key"])
    written = session.execute(insert.returning(col(ChatNotice.id))).first() is not None
    if written:
        session.info[CHAT_WRITTEN] = True
    return written


# -- what each event says --------------------------------------------------------------------------------
def _when(at: datetime | None) -> str:
    # A chat has readers in many time zones: UTC, said so.
    return times.local_time(at, "UTC") if at is not None else "a time set when the game resumes"


def turn_notice(
    game: GameRecord,
    *,
    step_key: str,
    turn: int,
    turns: int,
    name: str,
    defending: bool,
    deadline_at: datetime | None,
    removed: bool = False,
    first: bool = False,
) -> Notice:
    """The game waits for someone new: who, and until when.

    >>> from datetime import UTC, datetime
    >>> game = Game(id=7, name="Friday", seed="s", admin_secret="a", host_email="h@example.org", settings={})
    >>> n = turn_notice(game, step_key="3:1:-", turn=3, turns=10, name="Ann", defending=False,
    ...                 deadline_at=datetime(2026, 3, 3, 12, tzinfo=UTC))
    >>> n.title, n.dedupe_key
    ('Friday: Ann to play', 'game:7:turn:3:1:-')
    >>> print(n.body)
    Game turn 3 of 10: it is Ann's turn. Deadline: Tuesday 3 March 2026, 12:00 UTC.
    """
    if defending:
        title = f"{game.name}: {name} to redeploy"
        what = f"{name} was attacked and redeploys their tokens"
    else:
        title = f"{game.name}: {name} to play"
        what = f"it is {name}'s turn"
    lead = "The game has begun. " if first else ""
    if removed:
        tail = f"{name} was removed from the game: the turn is passed automatically."
    elif deadline_at is None:
        tail = "The game is paused: the clock starts when it resumes."
    else:
        tail = f"Deadline: {_when(deadline_at)}."
    return Notice(
        kind=TURN,
        title=title,
        body=f"{lead}Game turn {turn} of {turns}: {what}. {tail}",
        dedupe_key=f"game:{game.id}:turn:{step_key}",
        step_key=step_key,
    )


def auto_pass_notice(game: Game, *, name: str, reason: str, defending: bool, version: int) -> Notice:
    what = "redeployment" if defending else "turn"
    if reason == "deadline":
        body = f"{name} missed the deadline: their {what} was completed for them (what they did stands)."
    else:
        body = f"{admin_acts.who(reason)} passed {name}'s {what}: it was completed for them (what they did stands)."
    return Notice(
        kind=AUTO_PASS,
        title=f"{game.name}: {name}'s {what} was passed",
        body=body,
        dedupe_key=f"game:{game.id}:auto-pass:{version}",
        notify_type="warning",
    )


def result_notice(game: Game, standings: Sequence[Mapping[str, Any]]) -> Notice:
    """The final table. Every coin count is public once the game is over (ARCHITECTURE §1, item 5).

    >>> game = Game(id=7, name="Friday", seed="s", admin_secret="a", host_email="h@example.org", settings={})
    >>> rows = [dict(player=1, name="Bob", coins=40, tokens_on_board=9, place=1, tie_break=False),
    ...         dict(player=0, name="Ann", coins=31, tokens_on_board=12, place=2, tie_break=False)]
    >>> n = result_notice(game, rows)
    >>> n.title
    'Friday is over: Bob wins'
    >>> print(n.body)
    Final table:
    1. Bob: 40 coins, 9 tokens on the map
    2. Ann: 31 coins, 12 tokens on the map
    """
    rows = sorted(standings, key=lambda r: (int(r.get("place", 0)), int(r.get("player", 0))))
    winners = [str(r.get("name")) for r in rows if r.get("place") == 1]
    verdict = f"{winners[0]} wins" if len(winners) == 1 else " and ".join(winners) + " share the victory"
    lines = [
        f"{r.get('place')}. {r.get('name')}: {r.get('coins')} coins, {r.get('tokens_on_board')} tokens on the map"
        + (" (tie-break)" if r.get("tie_break") else "")
        for r in rows
    ]
    return Notice(
        kind=RESULT,
        title=f"{game.name} is over: {verdict}",
        body="Final table:\n" + "\n".join(lines),
        dedupe_key=f"game:{game.id}:result",
        notify_type="success",
    )


def admin_notice(
    game: Game, *, actor: str, act: str, details: Mapping[str, Any], version: int, names: Sequence[str]
) -> Notice:
    """An admin act (or a player's vacation), in the words of ``emails.admin_acts``; never an address."""
    told = admin_acts.AdminAct(act, actor, details, deadline=Clock.read(game).deadline)
    return Notice(
        kind=ADMIN,
        title=f"{game.name}: {admin_acts.title(act)}",
        body=admin_acts.told(told, admin_acts.Reader("chat", names=names)),
        dedupe_key=f"game:{game.id}:admin:{version}",
        notify_type=admin_acts.ACTS[act].notify_type,
    )


def outage_notice(game: Game, *, since: datetime, now: datetime, deadline_at: datetime | None) -> Notice:
    told = admin_acts.AdminAct("outage", "system", {"from": since.isoformat(), "to": now.isoformat()}, deadline_at)
    return Notice(
        kind=OUTAGE,
        title=f"{game.name}: {admin_acts.title('outage')}",
        body=admin_acts.told(told, admin_acts.Reader("chat")),
        dedupe_key=f"game:{game.id}:outage:{since.isoformat()}",
        notify_type=admin_acts.ACTS["outage"].notify_type,
    )


def connected_notice(game: Game, *, audit_id: int) -> Notice:
    return Notice(
        kind=CONNECTED,
        title=f"{game.name}: notices come here now",
        body=(
            f"This chat now hears of the game {game.name}: whose turn it is and until when, turns passed for a "
            "player, the host's changes, and the final table."
        ),
        dedupe_key=f"game:{game.id}:chat:{audit_id}",
    )


def talk_notice(game: Game, author: str, text: str, message_id: int) -> Notice:
    """A message written at the game's table: what every player reads on the game's pages, nothing more.

    >>> game = Game(id=7, name="Friday", seed="s", admin_secret="a", host_email="h@example.org", settings={})
    >>> n = talk_notice(game, "Ann", "Good luck   all!", 3)
    >>> n.title, n.body, n.dedupe_key
    ('Friday: Ann at the table', 'Good luck all!', 'game:7:talk:3')
    """
    return Notice(
        kind=TALK,
        title=f"{game.name}: {author} at the table",
        body=excerpt(text, 1000),
        dedupe_key=f"game:{game.id}:talk:{message_id}",
    )


# -- delivery ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class NoticeSettings(DrainSettings):
    """The drain's settings for chat notices (``SMALLWORLD_CHAT_*``)."""

    max_attempts: int = 8
    batch_size: int = 50
    #: Far longer than a batch of sends (each capped by the chat timeout). A drain that lives keeps its rows
    #: however late its renewal is (``service.drain.leases``); a row whose drain died is due again this long
    #: after the drain's last renewal.
    lease_seconds: float = 1800
    #: Each outcome is committed before the next notice is posted: a chat takes a round trip of its own per
    #: notice anyway, and a chat has no ``Message-ID`` to drop a repeat.
    record_seconds: float = 0

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> NoticeSettings:
        return cls.configured(config, "CHAT")


@dataclass(frozen=True)
class _Job:
    id: int
    game_id: int
    kind: str
    title: str
    body: str
    notify_type: str
    step_key: str | None
    attempts: int
    chat_url: str | None
    game_step_key: str | None
    #: A chat cannot tell whether a notice reached it before its drain died: a notice is sent again or skipped.
    may_have_left: bool = False

    @property
    def told(self) -> dict[str, Any]:
        return {"notice": self.id, "game": self.game_id, "kind": self.kind}


Sender = Callable[[str, str, str, str], None]


def deliver_due_notices(
    session: Session,
    settings: NoticeSettings,
    policy: chat.ChatPolicy,
    *,
    now: datetime | None = None,
    sender: Sender | None = None,
) -> DrainReport:
    """Send every due notice, batch by batch, until none is left or the time budget is spent.

    ``now`` fixes the clock (tests move it); ``sender`` posts one notice (default: apprise, under ``policy``).
    """
    return drain(session, NoticeQueue(policy, sender), settings, now=now)


_NOTICES = ChatNotice.metadata.tables[ChatNotice.__tablename__]
#: The chat notices as their drains claim them and their leases hold them (``service.drain.leases``).
_CLAIMS = Claims(_NOTICES, NoticeStatus.PENDING, "chat")


class NoticeQueue(Queue[_Job]):
    """The chat notices as the drain sends them: each posted through ``sender`` (apprise under ``policy``)."""

    claims = _CLAIMS
    record = outcome_statement(_CLAIMS)

    def __init__(self, policy: chat.ChatPolicy, sender: Sender | None = None) -> None:
        self.post = sender or (lambda url, title, body, kind: chat.send(url, title, body, kind, policy))

    def statements(self, dialect: str, batch_size: int) -> tuple[sa.Update, sa.Select[Any]]:
        return _claim_statements(dialect, batch_size)

    def job(self, row: sa.RowMapping) -> _Job:
        return _Job(**dict(row))

    def skip_reason(self, job: _Job) -> str | None:
        if not job.chat_url:
            return "the game has no chat any more"
        if job.kind == TURN and job.step_key != job.game_step_key:
            return "the turn it announced is over"
        return None

    def send(self, connection: None, job: _Job, prepared: None) -> None:
        self.post(job.chat_url or "", job.title, job.body, job.notify_type)  # a notice without a chat is skipped

    def failure(self, error: Exception) -> Failure:
        # A chat's failure, whatever it is, stays in its row; the far side's words never do (service.infra.chat).
        if isinstance(error, chat.ChatSendError):
            return Failure(str(error), permanent=error.permanent)
        return Failure(f"unexpected error: {error!r}")


@functools.cache
def _claim_statements(dialect: str, batch_size: int) -> tuple[sa.Update, sa.Select[Any]]:
    """The claim of a batch (``service.drain.queue.claim_statement``) and the read of what its posts need."""
    columns: list[Any] = [
        col(ChatNotice.id),
        col(ChatNotice.game_id),
        col(ChatNotice.kind),
        col(ChatNotice.title),
        col(ChatNotice.body),
        col(ChatNotice.notify_type),
        col(ChatNotice.step_key),
        col(ChatNotice.attempts),
        col(Game.chat_url),
        col(Game.step_key).label("game_step_key"),
    ]
    read = (
        sa.select(*columns)
        .join(Game, col(Game.id) == col(ChatNotice.game_id))
        .where(col(ChatNotice.id).in_(sa.bindparam("ids", expanding=True)))
        .order_by(col(ChatNotice.id))
    )
    return claim_statement(_CLAIMS, dialect, batch_size), read


def notices_of(session: Session, game_id: int, limit: int = 60) -> list[ChatNotice]:
    """The game's notices, failed first, then the newest (the admin page and API)."""
    return list(
        session.exec(
            select(ChatNotice)
            .where(ChatNotice.game_id == game_id)
            .order_by(sa.case((col(ChatNotice.status) == NoticeStatus.FAILED, 0), else_=1), col(ChatNotice.id).desc())
            .limit(limit)
        ).all()
    )
