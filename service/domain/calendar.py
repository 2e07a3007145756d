"""Calendar feeds (ARCHITECTURE §10): every deadline as an event of an ``.ics`` feed a calendar app subscribes to.

Two feeds, each behind a signed link (purpose ``calendar``, ``service.domain.links``):

- **an address's** (:func:`address_feed`): the current deadline of every running game in which the
  address holds a seat, each event linking to My games (``/me``), never to a seat: a feed is fetched for
  months, by calendar services, and its link is in every turn mail's footer, so it must not open a seat.
  It is given only to that address, in its turn mails and on its game pages and My games. Its link carries
  the address's ``links_serial`` and ``calendar_serial`` (``service.domain.links``): "make a new calendar
  link" on My games (:func:`new_calendar_link`) ends the old one alone, "sign out everywhere" ends it with
  the address's other links; the old one then gets 410 and a page saying so (``service.web.calendar_feeds``).
- **a game's** (:func:`game_feed`): the same deadlines of one game, public information only: whose turn
  it is and until when. No link, no coins.

Computed on each request from the game rows, which the clock (``service.domain.clock``) keeps: a
deadline that moves (an extension, a vacation, a pause, the outage guard) moves its event at the next
refresh, and a game that ends, is cancelled or paused has no event. An event is one step of one game
awaited from one seat: its UID names the game, the seat and the step, so calendar apps update it rather
than add another; its SEQUENCE is the game's version and its DTSTAMP the time that version was made. It
ends (DTEND) a quarter of an hour after it starts (RFC 5545 wants an end later than the start), and rings
(a VALARM each) at the game's reminder times, as the reminder mails come.

A feed (:class:`Feed`) comes with what a calendar app asks again with (``service.web.calendar_feeds``): a weak
ETag of its deadlines alone (what each event says and when; not the versions and stamps that move with every
step taken in a turn), so that it changes only when the deadlines do, and a Last-Modified: the latest change of
any game the feed covers (its events come and go and move only with a new version of a game).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.domain.clock import Clock
from service.domain.links import LinkMaker, serial_of
from service.domain.models import Game, GameAction, GameStatus, Player, Seat
from service.domain.play import awaited_seat
from service.domain.schemas import GameSettings

if TYPE_CHECKING:
    from icalendar import Alarm, Calendar, Event

#: How often calendar apps are asked to fetch a feed again (most take it as a hint at best); also
#: ``X-PUBLISHED-TTL`` below.
REFRESH = timedelta(hours=1)
PRODID = "-//Small World by Mail//Deadlines//EN"
#: How long an event lasts: it starts at the deadline (RFC 5545 §3.8.2.2: DTEND is later than DTSTART).
LENGTH = timedelta(minutes=15)


@dataclass(frozen=True)
class Feed:
    """A feed's body, and the validators a calendar app asks again with."""

    body: bytes
    #: A weak ETag's value (``W/"…"`` on the wire): a hash of the feed's deadlines alone.
    etag: str
    #: The latest change of any game the feed covers; ``None`` when it covers none.
    last_modified: datetime | None


@dataclass(frozen=True)
class Deadline:
    """One awaited step of a running game, as a feed shows it."""

    game_id: int
    game_name: str
    version: int
    step_key: str
    seat: int
    name: str
    at: datetime
    changed_at: datetime
    defending: bool
    #: The game's reminders, in seconds before the deadline (its ``reminders_before_seconds``).
    reminders: tuple[int, ...] = ()

    @property
    def turn(self) -> int:
        return int(self.step_key.split(":", 1)[0])


def address_feed(session: Session, player_id: int, links: LinkMaker) -> bytes:
    """Every current deadline of every running game of the address (player row), each linking to My games."""
    return address_calendar(session, player_id, links).body


def game_feed(session: Session, game_id: int, links: LinkMaker) -> bytes:
    """The current deadline of one game, public information only (whose turn, until when)."""
    return game_calendar(session, game_id, links).body


def address_calendar(session: Session, player_id: int, links: LinkMaker) -> Feed:
    """:func:`address_feed`, with its validators."""
    seats = session.exec(
        select(Seat.game_id, Seat.seat)
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(Seat.player_id == player_id, Seat.removed == sa.false(), Game.status == GameStatus.ACTIVE)
    ).all()
    mine = dict(seats)
    calendar = _calendar("Small World by Mail: my deadlines", links)
    # My games, where a signed-in browser opens each seat (a sign-in link comes by mail): no link of the feed
    # opens a seat by itself, so the feed is the same at every fetch and a leaked one acts for nobody.
    my_games = links.url("/me")
    for deadline in _deadlines(session, mine):
        yours = deadline.seat == mine[deadline.game_id]
        what = ("your redeployment" if deadline.defending else "your turn") if yours else _whose(deadline)
        event = _event(deadline, links, summary=f"{what[0].upper()}{what[1:]}: {deadline.game_name}")
        event.add(
            "description",
            f"Deadline of {what} in {deadline.game_name} (game turn {deadline.turn}). "
            f"{'Play it' if yours else 'Your games'} from your game mail, or from My games: {my_games}",
        )
        event.add("url", my_games)
        calendar.add_component(event)
    every_game = select(Seat.game_id).where(Seat.player_id == player_id)  # a seat given away, a game ended too
    return _feed(calendar, _last_change(session, every_game))


def game_calendar(session: Session, game_id: int, links: LinkMaker) -> Feed:
    """:func:`game_feed`, with its validators."""
    game = session.get(Game, game_id)
    calendar = _calendar(f"Small World by Mail: {game.name if game else 'a game'}", links)
    if game is not None and game.status == GameStatus.ACTIVE:
        for deadline in _deadlines(session, [game_id]):
            what = _whose(deadline)
            event = _event(deadline, links, summary=f"{what[0].upper()}{what[1:]}: {deadline.game_name}")
            event.add("description", f"Deadline of {what} in {deadline.game_name} (game turn {deadline.turn}).")
            calendar.add_component(event)
    return _feed(calendar, _last_change(session, sa.select(sa.literal(game_id))))


def address_feed_url(session: Session, email: str, links: LinkMaker) -> str | None:
    """The link of the calendar feed of an address (every deadline of its games); ``None`` for an address
    that is no player's. For the pages that list an address's games ("My games")."""
    player = session.exec(select(Player).where(Player.email == email.strip().lower())).first()
    if player is None or player.id is None:
        return None
    return links.address_calendar_url(player.id, serial=player.links_serial, calendar_serial=player.calendar_serial)


def new_calendar_link(session: Session, email: str) -> bool:
    """ "Make a new calendar link" (My games): move the address's ``calendar_serial`` on, so the feed's old link
    gets 410 (a calendar app or service that had it stops getting deadlines) and a new one is shown. Nothing
    else of the address changes. Returns whether the address is a player's (only then has it a feed)."""
    moved = session.exec(
        sa.update(Player)
        .where(col(Player.email) == email.strip().lower())
        .values(calendar_serial=col(Player.calendar_serial) + 1)
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return bool(moved.rowcount)


def feed_is_current(player: Player, payload: dict[str, Any]) -> bool:
    """Whether an address's feed link (its token's ``payload``) carries the player's serials as they are now:
    not replaced by a new calendar link, not made before the address signed out everywhere."""
    calendar_serial = payload.get("c", 0)
    current = isinstance(calendar_serial, int) and calendar_serial == player.calendar_serial
    return current and serial_of(payload) == player.links_serial


# -- internals --------------------------------------------------------------------------------------------
def _whose(deadline: Deadline) -> str:
    return f"{deadline.name}'s {'redeployment' if deadline.defending else 'turn'}"


def _deadlines(session: Session, game_ids: Iterable[int]) -> list[Deadline]:
    """The awaited step of each running game of ``game_ids`` that has a deadline, soonest first."""
    ids = list(game_ids)
    if not ids:
        return []
    games = session.execute(
        sa.select(
            col(Game.id),
            col(Game.name),
            col(Game.version),
            col(Game.step_key),
            col(Game.started_at),
            col(Game.settings),
            *Clock.columns(),
        ).where(
            col(Game.id).in_(ids),
            col(Game.status) == GameStatus.ACTIVE,
            Clock.running_clause(),
            col(Game.step_key).is_not(None),
        )
    ).all()
    if not games:
        return []
    found = [g[0] for g in games]
    names = {
        (game_id, seat): name
        for game_id, seat, name in session.exec(
            select(Seat.game_id, Seat.seat, Seat.display_name).where(col(Seat.game_id).in_(found))
        ).all()
    }
    # When each game's current version was made: the event log's entry of that version (none for the
    # version the game started at: then its start).
    made = dict(
        session.exec(
            select(GameAction.game_id, GameAction.created_at)
            .join(Game, sa.and_(col(Game.id) == col(GameAction.game_id), col(Game.version) == col(GameAction.version)))
            .where(col(GameAction.game_id).in_(found))
        ).all()
    )
    deadlines = []
    for row in games:
        at = Clock.read(row).deadline
        assert row.step_key is not None and at is not None
        seat = awaited_seat(row.step_key)
        deadlines.append(
            Deadline(
                game_id=row.id,
                game_name=row.name,
                version=row.version,
                step_key=row.step_key,
                seat=seat,
                name=names.get((row.id, seat), f"Player {seat + 1}"),
                at=at,
                changed_at=made.get(row.id) or row.started_at or at,
                defending=not row.step_key.endswith(":-"),
                reminders=tuple(GameSettings.model_validate(row.settings or {}).reminders_before_seconds),
            )
        )
    return sorted(deadlines, key=lambda d: (d.at, d.game_id))


def _calendar(name: str, links: LinkMaker) -> Calendar:
    from icalendar import Calendar  # imported by the feeds that use it, not by every process of the service

    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("x-wr-calname", name)
    calendar.add("x-wr-caldesc", "Deadlines of Small World by Mail games; updated as they move.")
    calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", "PT1H")  # the same hint, as Outlook reads it
    return calendar


def _event(deadline: Deadline, links: LinkMaker, *, summary: str) -> Event:
    from icalendar import Event

    event = Event()
    # One event per game, seat and step: a moved deadline updates it, the next step is another event.
    event.add(
        "uid", f"game-{deadline.game_id}-seat-{deadline.seat}-step-{deadline.step_key.replace(':', '-')}@{_host(links)}"
    )
    event.add("dtstamp", deadline.changed_at)
    event.add("last-modified", deadline.changed_at)
    event.add("sequence", deadline.version)
    # A deadline is a moment: the event starts then, and lasts a short while (an end is later than the start).
    event.add("dtstart", deadline.at)
    event.add("dtend", deadline.at + LENGTH)
    event.add("summary", summary)
    event.add("transp", "TRANSPARENT")  # a deadline does not make anyone busy
    event.add("status", "CONFIRMED")
    for before in sorted(set(deadline.reminders), reverse=True):
        event.add_component(_alarm(before, summary))
    return event


def _alarm(before: int, summary: str) -> Alarm:
    """A reminder ``before`` seconds ahead of the deadline, as the reminder mails come (RFC 5545 §3.6.6)."""
    from icalendar import Alarm

    alarm = Alarm()
    alarm.add("action", "DISPLAY")
    alarm.add("description", summary)
    alarm.add("trigger", -timedelta(seconds=before))
    return alarm


def _feed(calendar: Calendar, last_modified: datetime | None) -> Feed:
    """The feed's body and validators: a weak ETag of what its events say and when (not their SEQUENCE and
    DTSTAMP, which move with every step of a turn), and the latest change of the games it covers."""
    said = []
    for event in calendar.walk("VEVENT"):
        said.append(
            "|".join(str(event.get(name, "")) for name in ("uid", "summary", "description", "url"))
            + f"|{event.decoded('dtstart').isoformat()}|"
            + ",".join(str(alarm.decoded("trigger")) for alarm in event.walk("VALARM"))
        )
    digest = hashlib.sha256("\n".join([str(calendar.get("x-wr-calname", "")), *said]).encode()).hexdigest()[:32]
    return Feed(bytes(calendar.to_ical()), digest, last_modified)


def _last_change(session: Session, game_ids: sa.Select[Any]) -> datetime | None:
    """The latest change of the games ``game_ids`` selects: a new version (each step, each act that moves a
    deadline), a start, an end."""
    newest_action = session.exec(
        select(sa.func.max(GameAction.created_at)).where(col(GameAction.game_id).in_(game_ids))
    ).one()
    times = session.execute(
        sa.select(sa.func.max(col(Game.created_at)), sa.func.max(col(Game.finished_at))).where(
            col(Game.id).in_(game_ids)
        )
    ).one()
    found = [t for t in (newest_action, *times) if t is not None]
    return max(found) if found else None


def _host(links: LinkMaker) -> str:
    return urlsplit(links.base_url).hostname or "smallworld.invalid"
