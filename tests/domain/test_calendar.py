"""service.domain.calendar: an address's feed and a game's feed, read back with icalendar.

Events follow the clock (an extension moves the event, keeping its UID), a finished or cancelled game's
events disappear, the address's feed links to My games (never a seat's turn link) and the game's feed carries
no link; a new calendar link ends the old one alone.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from icalendar import Calendar
from sqlmodel import Session, select

import rules
from service.domain import admin, calendar, play, tally
from service.domain.links import CALENDAR, LinkMaker
from service.domain.models import Game, GameStatus, Player, Seat
from service.domain.schemas import CreateGame, GameSettings
from tests.factories import confirmed_game


def new_game(session: Session, links: LinkMaker, name: str, emails: list[str]) -> Game:
    request = CreateGame.model_validate(
        {
            "name": name,
            "players": [{"name": e.split("@")[0].capitalize(), "email": e} for e in emails],
            "settings": {"start_when_all_accepted": False},
        }
    )
    game, _ = confirmed_game(session, request, links)
    return game


def play_to_the_end(session: Session, game: Game, links: LinkMaker) -> None:
    """Every turn passed at its deadline until the game is over (the sweep's own operation)."""
    for _ in range(200):
        session.refresh(game)
        if game.status == GameStatus.FINISHED:
            return
        if game.status == GameStatus.ENDING:  # the worker's tally (service.domain.tally)
            tally.tally_game(session, game.id or 0)
            continue
        seat = min(rules.awaiting(play.load_state(game)))
        play.auto_pass(session, game.id or 0, seat, links)
    raise AssertionError("the game did not end")


def player(session: Session, email: str) -> Player:
    found = session.exec(select(Player).where(Player.email == email)).one()
    return found


def whole(at: datetime | None) -> datetime:
    """A time as iCalendar carries it: to the second."""
    assert at is not None
    return at.replace(microsecond=0)


def events(feed: bytes) -> list[Any]:
    parsed = Calendar.from_ical(feed)
    assert parsed["version"] == "2.0" and parsed["prodid"] == calendar.PRODID
    return list(parsed.walk("VEVENT"))


def test_an_address_feed_lists_the_deadline_of_each_of_its_games_linking_to_my_games_not_to_a_seat(
    db_session: Session, links: LinkMaker
) -> None:
    """A feed is fetched for months by calendar services and its link is in every turn mail's footer: its events
    link to My games, where a signed-in browser opens the seat, never to the seat's own turn link."""
    first = new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    second = new_game(db_session, links, "Sunday", ["bob@example.org", "cid@example.org"])
    new_game(db_session, links, "Elsewhere", ["dan@example.org", "eve@example.org"])
    bob = player(db_session, "bob@example.org")

    feed = calendar.address_feed(db_session, bob.id or 0, links)
    found = events(feed)
    unfolded = feed.replace(b"\r\n ", b"")
    assert b"/play/" not in unfolded and b"/invite/" not in unfolded

    assert len(found) == 2
    by_game = {str(e["summary"]).rsplit(": ", 1)[1]: e for e in found}
    assert set(by_game) == {"Friday", "Sunday"}
    # In "Friday" Ann (seat 0) plays first; in "Sunday" Bob does.
    assert str(by_game["Friday"]["summary"]) == "Ann's turn: Friday"
    assert str(by_game["Sunday"]["summary"]) == "Your turn: Sunday"
    for game in (first, second):
        db_session.refresh(game)
        event = by_game[game.name]
        seat = db_session.exec(select(Seat).where(Seat.game_id == game.id, Seat.player_id == bob.id)).one()
        assert seat.secret not in unfolded.decode()
        assert str(event["url"]) == links.url("/me")
        assert links.url("/me") in str(event["description"])
        assert event.decoded("dtstart") == whole(game.deadline_at)
        assert int(event["sequence"]) == game.version
        assert str(event["uid"]) == f"game-{game.id}-seat-{0}-step-{game.step_key.replace(':', '-')}@smallworld.example"  # type: ignore[union-attr]
        assert str(event["transp"]) == "TRANSPARENT"
        assert event.decoded("dtstamp").tzinfo is not None


def test_a_game_feed_says_whose_turn_and_until_when_and_carries_no_link(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    feed = calendar.game_feed(db_session, game.id or 0, links)
    (event,) = events(feed)
    assert str(event["summary"]) == "Ann's turn: Friday"
    assert "url" not in event
    assert b"/play/" not in feed and b"http" not in feed.replace(b"\r\n ", b"")
    assert event.decoded("dtstart") == whole(game.deadline_at)


def test_an_extension_moves_the_event_and_keeps_its_uid(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    ann = player(db_session, "ann@example.org")
    (before,) = events(calendar.address_feed(db_session, ann.id or 0, links))

    admin.extend_deadline(db_session, game.id or 0, admin.HOST, links, by=timedelta(hours=24))

    (after,) = events(calendar.address_feed(db_session, ann.id or 0, links))
    (public,) = events(calendar.game_feed(db_session, game.id or 0, links))
    assert str(after["uid"]) == str(before["uid"]) == str(public["uid"])
    assert after.decoded("dtstart") == before.decoded("dtstart") + timedelta(hours=24)
    assert public.decoded("dtstart") == after.decoded("dtstart")
    # Calendar apps take the higher SEQUENCE and the later DTSTAMP as the newer event.
    assert int(after["sequence"]) == int(before["sequence"]) + 1
    assert after.decoded("dtstamp") >= before.decoded("dtstamp")


def test_a_finished_game_and_a_cancelled_one_leave_the_feeds(db_session: Session, links: LinkMaker) -> None:
    finished = new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    cancelled = new_game(db_session, links, "Sunday", ["ann@example.org", "cid@example.org"])
    ann = player(db_session, "ann@example.org")
    assert len(events(calendar.address_feed(db_session, ann.id or 0, links))) == 2

    play_to_the_end(db_session, finished, links)
    admin.cancel(db_session, cancelled.id or 0, admin.HOST, links, "rain")

    assert events(calendar.address_feed(db_session, ann.id or 0, links)) == []
    assert events(calendar.game_feed(db_session, finished.id or 0, links)) == []
    assert events(calendar.game_feed(db_session, cancelled.id or 0, links)) == []


def test_a_paused_game_has_no_event_until_it_resumes(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    admin.pause(db_session, game.id or 0, admin.HOST, links, "holidays")
    assert events(calendar.game_feed(db_session, game.id or 0, links)) == []
    admin.resume(db_session, game.id or 0, admin.HOST, links)
    assert len(events(calendar.game_feed(db_session, game.id or 0, links))) == 1


def test_a_seat_given_to_someone_else_leaves_the_old_players_feed(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    bob = player(db_session, "bob@example.org")
    admin.replace_player(db_session, game.id or 0, admin.HOST, links, 1, "zoe@example.org", "Zoe")
    assert events(calendar.address_feed(db_session, bob.id or 0, links)) == []
    zoe = player(db_session, "zoe@example.org")
    (event,) = events(calendar.address_feed(db_session, zoe.id or 0, links))
    assert str(event["summary"]) == "Ann's turn: Friday"


def test_the_feed_url_of_an_address(db_session: Session, links: LinkMaker) -> None:
    new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    ann = player(db_session, "ann@example.org")
    assert calendar.address_feed_url(db_session, " Ann@Example.org ", links) == links.address_calendar_url(
        ann.id or 0, serial=0, calendar_serial=0
    )
    assert calendar.address_feed_url(db_session, "nobody@example.org", links) is None


def test_a_new_calendar_link_ends_the_old_one_alone(db_session: Session, links: LinkMaker) -> None:
    """ "Make a new calendar link" (My games) moves the address's calendar serial on: its old feed link is no
    longer current, the new one is, and nothing else of the address changes (its turn links keep working)."""
    new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    old = calendar.address_feed_url(db_session, "ann@example.org", links)
    assert old is not None
    old_payload = links.signer.verify(CALENDAR, old.rsplit("/", 1)[1].removesuffix(".ics"))

    assert calendar.new_calendar_link(db_session, "ANN@example.org")
    ann = player(db_session, "ann@example.org")
    db_session.refresh(ann)
    new = calendar.address_feed_url(db_session, "ann@example.org", links)
    assert new is not None and new != old
    new_payload = links.signer.verify(CALENDAR, new.rsplit("/", 1)[1].removesuffix(".ics"))
    assert not calendar.feed_is_current(ann, old_payload)
    assert calendar.feed_is_current(ann, new_payload)
    assert (ann.links_serial, ann.calendar_serial) == (0, 1)
    assert not calendar.new_calendar_link(db_session, "nobody@example.org")


def test_an_event_ends_after_it_starts_and_rings_at_the_games_reminder_times(
    db_session: Session, links: LinkMaker
) -> None:
    game = new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    (event,) = events(calendar.game_feed(db_session, game.id or 0, links))
    assert event.decoded("dtend") == event.decoded("dtstart") + calendar.LENGTH
    reminders = GameSettings.model_validate(game.settings).reminders_before_seconds
    assert reminders, "the default settings remind"
    alarms = list(event.walk("VALARM"))
    assert sorted(-a.decoded("trigger") for a in alarms) == sorted(timedelta(seconds=s) for s in set(reminders))
    assert all(str(a["action"]) == "DISPLAY" and str(a["description"]) == str(event["summary"]) for a in alarms)


def test_the_feeds_etag_changes_with_its_deadlines_only(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, "Friday", ["ann@example.org", "bob@example.org"])
    ann = player(db_session, "ann@example.org")
    first = calendar.address_calendar(db_session, ann.id or 0, links)
    assert first.last_modified is not None
    # A step within the turn (a pick): a new version of the game, the same deadline.
    play.submit_action(db_session, game.id or 0, 0, {"type": "pick", "combo": 0}, game.version, links)
    db_session.refresh(game)
    same = calendar.address_calendar(db_session, ann.id or 0, links)
    assert same.body != first.body, "its SEQUENCE and DTSTAMP moved"
    assert same.etag == first.etag
    assert same.last_modified is not None and same.last_modified >= first.last_modified
    # The deadline moves: another ETag.
    admin.extend_deadline(db_session, game.id or 0, admin.HOST, links, by=timedelta(hours=24))
    moved = calendar.address_calendar(db_session, ann.id or 0, links)
    assert moved.etag != first.etag
    assert calendar.game_calendar(db_session, game.id or 0, links).etag != moved.etag  # another feed, other words
