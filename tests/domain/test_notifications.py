"""Notification choices and the daily digest (ARCHITECTURE §9, ``service.domain.notifications``)."""

from __future__ import annotations

import doctest
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, select

from service.domain import lobby, notifications, table_talk
from service.domain.errors import BadRequest
from service.domain.links import LinkMaker
from service.domain.models import DigestSent, Game, NotifyMode, OutboxMail, Player, Seat, utcnow
from service.domain.schemas import CreateGame
from tests.factories import confirmed_game


def new_game(session: Session, links: LinkMaker, name: str = "Digest game", players: int = 2) -> Game:
    request = CreateGame.model_validate(
        {
            "name": name,
            "players": [{"name": f"P{i}", "email": f"p{i}@example.org"} for i in range(players)],
            "settings": {"start_when_all_accepted": False},
        }
    )
    game, _ = confirmed_game(session, request, links)
    # Every player accepted their invitation (a game that starts at once lists an unanswered one as such).
    for seat in session.exec(select(Seat).where(Seat.game_id == game.id)).all():
        seat.accepted_at = utcnow()
        session.add(seat)
    session.commit()
    return game


def player(session: Session, email: str) -> Player:
    return session.exec(select(Player).where(Player.email == email)).one()


def digests(session: Session) -> list[OutboxMail]:
    query = select(OutboxMail).where(OutboxMail.template == "daily_digest").order_by(OutboxMail.id)  # type: ignore[arg-type]
    return list(session.exec(query).all())


def choose(
    session: Session,
    who: Player,
    default: NotifyMode,
    hour: int = 18,
    now: datetime | None = None,
    **games: NotifyMode | None,
) -> None:
    notifications.save_choices(
        session,
        who.id or 0,
        default=default,
        digest_hour=hour,
        games={int(k.removeprefix("g")): v for k, v in games.items()},
        wants_reminders=True,
        wants_notices=True,
        wants_messages=True,
        now=now,
    )


#: Before every day the tests send digests on: a choice made then takes effect from the next digest hour.
CHOSEN_AT = datetime(2026, 2, 27, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("category", "mode", "switches", "skipped"),
    [
        ("essential", NotifyMode.TURNS, {"wants_notices": False, "wants_messages": False}, False),
        ("reminder", NotifyMode.TURNS, {}, False),
        ("reminder", NotifyMode.EVERY, {"wants_reminders": False}, True),
        ("notice", NotifyMode.EVERY, {}, False),
        ("notice", NotifyMode.TURNS, {}, True),
        ("notice", NotifyMode.DIGEST, {}, True),
        ("notice", NotifyMode.EVERY, {"wants_notices": False}, True),
        ("talk", NotifyMode.EVERY, {}, False),
        ("talk", NotifyMode.EVERY, {"wants_messages": False}, True),
        ("talk", NotifyMode.TURNS, {}, True),
        ("talk", None, {}, False),
        ("digest", NotifyMode.TURNS, {"wants_notices": False}, False),
        # A notice about the reader's own turn (played for them) is a mail of their own turns (issue 35).
        ("notice", NotifyMode.DIGEST, {"own_turn": True}, False),
        ("notice", NotifyMode.TURNS, {"own_turn": True}, False),
        ("notice", NotifyMode.DIGEST, {"own_turn": True, "wants_notices": False}, True),
    ],
)
def test_what_a_choice_lets_through(category: str, mode: NotifyMode | None, switches: dict, skipped: bool) -> None:
    assert (notifications.skip_reason(category, mode, **switches) is not None) == skipped


def test_choices_are_stored_per_game_over_the_address_default(db_session: Session, links: LinkMaker) -> None:
    first, second = new_game(db_session, links, "First"), new_game(db_session, links, "Second")
    ann = player(db_session, "p0@example.org")
    choices = notifications.choices_of(db_session, ann.id or 0)
    assert choices.default == NotifyMode.EVERY and choices.digest_hour == 18
    assert [(g.name, g.mode) for g in choices.games] == [("Second", None), ("First", None)]
    choose(db_session, ann, NotifyMode.TURNS, 7, **{f"g{first.id}": NotifyMode.DIGEST, f"g{second.id}": None})
    choices = notifications.choices_of(db_session, ann.id or 0)
    assert choices.default == NotifyMode.TURNS and choices.digest_hour == 7
    assert {g.name: g.mode for g in choices.games} == {"First": NotifyMode.DIGEST, "Second": None}
    choose(db_session, ann, NotifyMode.TURNS, 7, **{f"g{first.id}": None})
    assert {g.name: g.mode for g in notifications.choices_of(db_session, ann.id or 0).games} == {
        "First": None,
        "Second": None,
    }


def test_a_choice_for_a_game_of_another_address_is_refused_naming_it(db_session: Session, links: LinkMaker) -> None:
    new_game(db_session, links)
    stranger_game = lobby.create_game(
        db_session,
        CreateGame.model_validate(
            {
                "name": "Strangers",
                "players": [{"name": "X", "email": "x@example.org"}, {"name": "Y", "email": "y@example.org"}],
            }
        ),
        links,
    )
    ann = player(db_session, "p0@example.org")
    with pytest.raises(BadRequest) as refused:
        choose(db_session, ann, NotifyMode.EVERY, **{f"g{stranger_game.id}": NotifyMode.TURNS})
    assert refused.value.extra["field"] == f"game_{stranger_game.id}"
    with pytest.raises(BadRequest):
        notifications.parse_hour("24")
    with pytest.raises(BadRequest) as bad_mode:
        notifications.parse_mode("sometimes", "default")
    assert bad_mode.value.extra["field"] == "default"


def test_the_digest_goes_once_a_local_day_at_the_chosen_hour(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)  # P0 (Ann) is on turn
    ann = player(db_session, "p0@example.org")
    lobby.choose_time_zone(db_session, ann.id or 0, "Asia/Tokyo")
    choose(db_session, ann, NotifyMode.DIGEST, 8)
    # 22:30 UTC on 1 March is 07:30 on 2 March in Tokyo: not yet.
    before = datetime(2026, 3, 1, 22, 30, tzinfo=UTC)
    assert notifications.send_digests(db_session, links, now=before).claimed == 0
    at = datetime(2026, 3, 1, 23, 5, tzinfo=UTC)  # 08:05 in Tokyo
    report = notifications.send_digests(db_session, links, now=at)
    assert (report.claimed, report.mailed) == (1, 1)
    # Again, and later the same local day: nothing more.
    for later in (at, at + timedelta(minutes=1), at + timedelta(hours=14)):
        assert notifications.send_digests(db_session, links, now=later).claimed == 0
    [mail] = digests(db_session)
    assert mail.to_email == "p0@example.org" and mail.dedupe_key == f"digest:{ann.id}:2026-03-02"
    assert mail.game_id is None
    [waiting] = mail.context["games"]
    assert waiting["game_name"] == game.name and waiting["waiting"] == "turn" and "/play/" in waiting["url"]
    # The next local day: the next digest.
    report = notifications.send_digests(db_session, links, now=at + timedelta(days=1))
    assert report.mailed == 1 and len(digests(db_session)) == 2


def test_the_digest_tells_what_others_said_at_the_tables_followed_by_digest(
    db_session: Session, links: LinkMaker
) -> None:
    followed, other = new_game(db_session, links, "Followed"), new_game(db_session, links, "Every event")
    bob = player(db_session, "p1@example.org")  # not on turn in either game
    choose(db_session, bob, NotifyMode.EVERY, 9, **{f"g{followed.id}": NotifyMode.DIGEST})
    start = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    table_talk.post_message(db_session, followed, 0, "Hello *Bob*", now=start - timedelta(hours=3))
    table_talk.post_message(db_session, followed, 1, "Bob's own words", now=start - timedelta(hours=2))
    hidden = table_talk.post_message(db_session, followed, 0, "rude", now=start - timedelta(hours=1))
    table_talk.hide_message(db_session, followed, hidden.id or 0, "host")
    table_talk.post_message(db_session, other, 0, "In the other game", now=start - timedelta(hours=1))
    notifications.send_digests(db_session, links, now=start)
    [mail] = [m for m in digests(db_session) if m.to_email == "p1@example.org"]
    assert mail.context["games"] == []
    assert [(t["game_name"], t["author"], t["text"]) for t in mail.context["talk"]] == [
        ("Followed", "P0", "Hello *Bob*")
    ]
    # The next day's digest tells only what was said since this one.
    table_talk.post_message(db_session, followed, 0, "Next day", now=start + timedelta(hours=5))
    notifications.send_digests(db_session, links, now=start + timedelta(days=1))
    latest = [m for m in digests(db_session) if m.to_email == "p1@example.org"][-1]
    assert [t["text"] for t in latest.context["talk"]] == ["Next day"]


def test_a_day_with_nothing_to_tell_is_claimed_without_a_mail(db_session: Session, links: LinkMaker) -> None:
    new_game(db_session, links)
    bob = player(db_session, "p1@example.org")  # nothing waits for Bob, nobody talks
    choose(db_session, bob, NotifyMode.DIGEST, 0, now=CHOSEN_AT)
    report = notifications.send_digests(db_session, links, now=datetime(2026, 3, 1, 12, tzinfo=UTC))
    assert (report.claimed, report.mailed) == (1, 0) and digests(db_session) == []
    day = db_session.get(DigestSent, (bob.id, "2026-03-01"))
    assert day is not None and (day.games, day.messages) == (0, 0)


def test_the_doctests() -> None:
    assert doctest.testmod(notifications).failed == 0


def test_one_address_whose_digest_fails_never_stops_the_others(
    db_session: Session, links: LinkMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_game(db_session, links)
    ann, bob = player(db_session, "p0@example.org"), player(db_session, "p1@example.org")
    chosen = utcnow() - timedelta(days=1)
    choose(db_session, ann, NotifyMode.DIGEST, 0, now=chosen)
    choose(db_session, bob, NotifyMode.DIGEST, 0, now=chosen)
    table_talk.post_message(db_session, table_talk_game(db_session), 0, "For Bob's digest")
    real = notifications.my_games.my_games

    def failing_for_ann(session: Session, email: str, *args: object, **kwargs: object) -> object:
        if email == "p0@example.org":
            raise RuntimeError("a broken row")
        return real(session, email, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(notifications.my_games, "my_games", failing_for_ann)
    report = notifications.send_digests(db_session, links, now=utcnow() + timedelta(hours=1))
    assert report.mailed == 1 and len(report.errors) == 1 and "a broken row" in report.errors[0]
    assert [m.to_email for m in digests(db_session)] == ["p1@example.org"]
    # Ann's day was not claimed: the next sweep tries again, and sends it once the row is mended.
    monkeypatch.setattr(notifications.my_games, "my_games", real)
    assert notifications.send_digests(db_session, links, now=utcnow() + timedelta(hours=1)).mailed == 1


def table_talk_game(session: Session) -> Game:
    return session.exec(select(Game).order_by(Game.id.desc())).first()  # type: ignore[union-attr, return-value]


def test_a_digest_hour_already_past_today_sends_from_tomorrow_not_at_once(
    db_session: Session, links: LinkMaker
) -> None:
    """Issue 35: choosing 08:00 at 19:41 sent a digest at once; now the day is claimed on choosing."""
    new_game(db_session, links)  # P0 (Ann) is on turn: her digest always has something to tell
    ann = player(db_session, "p0@example.org")
    evening = datetime(2026, 3, 1, 19, 41, tzinfo=UTC)
    choose(db_session, ann, NotifyMode.DIGEST, 8, now=evening)
    assert notifications.send_digests(db_session, links, now=evening + timedelta(minutes=1)).claimed == 0
    assert digests(db_session) == []
    report = notifications.send_digests(db_session, links, now=datetime(2026, 3, 2, 8, 1, tzinfo=UTC))
    assert (report.claimed, report.mailed) == (1, 1)
    # Saving the same choice again the next evening claims nothing new; a new hour before now does not
    # either, since that day's digest went already.
    choose(db_session, ann, NotifyMode.DIGEST, 8, now=datetime(2026, 3, 2, 20, tzinfo=UTC))
    choose(db_session, ann, NotifyMode.DIGEST, 6, now=datetime(2026, 3, 2, 20, tzinfo=UTC))
    assert [d.local_date for d in db_session.exec(select(DigestSent).order_by(DigestSent.local_date))] == [
        "2026-03-01",
        "2026-03-02",
    ]
    # An hour still ahead today claims nothing: the digest comes at that hour.
    choose(db_session, ann, NotifyMode.DIGEST, 22, now=datetime(2026, 3, 3, 20, tzinfo=UTC))
    assert notifications.send_digests(db_session, links, now=datetime(2026, 3, 3, 21, tzinfo=UTC)).claimed == 0
    assert notifications.send_digests(db_session, links, now=datetime(2026, 3, 3, 22, 1, tzinfo=UTC)).mailed == 1
