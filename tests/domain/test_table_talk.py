"""Table talk (ARCHITECTURE §9, ``service.domain.table_talk``): what a message may be, who gets it by mail, the
rate limit per seat, a reply posted once, the host's "hide"."""

from __future__ import annotations

import doctest
from datetime import timedelta

import pytest
from sqlmodel import Session, select

from emails.table_talk import LONGEST
from service.domain import lobby, table_talk
from service.domain.errors import BadRequest, Conflict, Forbidden, NotFound, TooMany
from service.domain.links import LinkMaker
from service.domain.models import ChatNotice, Game, MessageSource, OutboxMail, Seat, utcnow
from service.domain.schemas import CreateGame
from tests.factories import confirmed_game


def new_game(session: Session, links: LinkMaker, *, players: int = 3, confirm: bool = True, **extra: object) -> Game:
    request = CreateGame.model_validate(
        {
            "name": "Talkers",
            "players": [{"name": f"P{i}", "email": f"p{i}@example.org"} for i in range(players)],
            "settings": {"start_when_all_accepted": False},
            **extra,
        }
    )
    if not confirm:
        return lobby.create_game(session, request, links)
    game, _ = confirmed_game(session, request, links)
    return game


def talk_mails(session: Session, game_id: int) -> list[OutboxMail]:
    query = select(OutboxMail).where(OutboxMail.game_id == game_id, OutboxMail.template == "table_talk")
    return list(session.exec(query.order_by(OutboxMail.id)).all())  # type: ignore[arg-type]


def test_a_message_is_stored_and_mailed_once_to_every_other_seat(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)
    message = table_talk.post_message(db_session, game, 1, "  Good luck, **all**!\r\n", MessageSource.PAGE)
    assert message.text == "Good luck, **all**!" and message.author_name == "P1" and message.seat == 1
    mails = talk_mails(db_session, game.id or 0)
    assert sorted(m.to_email for m in mails) == ["p0@example.org", "p2@example.org"]
    assert {m.dedupe_key for m in mails} == {
        f"game:{game.id}:talk:{message.id}:0",
        f"game:{game.id}:talk:{message.id}:2",
    }
    assert all(m.context["author"] == "P1" and m.context["text"] == "Good luck, **all**!" for m in mails)
    shown = table_talk.messages_of(db_session, game.id or 0)
    assert [(m.author, m.text) for m in shown] == [("P1", "Good luck, **all**!")]


def test_the_game_s_chat_hears_the_message_and_nothing_else(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, chat_url="json://chat.example/hook")
    message = table_talk.post_message(db_session, game, 0, "Hello\nthere", MessageSource.PAGE)
    notice = db_session.exec(select(ChatNotice).where(ChatNotice.kind == "talk")).one()
    assert notice.title == "Talkers: P0 at the table" and notice.body == "Hello there"
    assert notice.dedupe_key == f"game:{game.id}:talk:{message.id}"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "write something first"),
        ("   \n\t ", "write something first"),
        ("x" * (LONGEST + 1), "at most 2,000 characters (this one has 2,001)"),
        ("evil \u202e text", "U+202E"),
        ("bell \x07", "U+0007"),
        (
            "my seat: https://smallworld.example/play/eyJnIjoxLCJzIjowLCJrIjoiYWJjIn0.Z1x2Yw.abcdefghijklmnop",
            "personal link",
        ),
        (None, "write it as text"),
    ],
)
def test_a_message_that_cannot_be_posted_is_refused_naming_the_field(
    db_session: Session, links: LinkMaker, text: object, words: str
) -> None:
    game = new_game(db_session, links)
    with pytest.raises(BadRequest) as refused:
        table_talk.post_message(db_session, game, 0, text, MessageSource.PAGE)  # type: ignore[arg-type]
    assert words in refused.value.message and refused.value.message.startswith("Your message")
    assert refused.value.extra["field"] == "text"
    assert table_talk.messages_of(db_session, game.id or 0) == []


def test_the_longest_message_is_taken(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)
    text = ("word " * LONGEST)[: LONGEST - 1] + "!"
    assert len(table_talk.post_message(db_session, game, 0, text).text) == LONGEST


def test_a_seat_may_post_RATE_messages_in_the_window_then_is_told_when_it_may_again(
    db_session: Session, links: LinkMaker
) -> None:
    game = new_game(db_session, links)
    start = utcnow()
    for n in range(table_talk.RATE):
        table_talk.post_message(db_session, game, 0, f"message {n}", now=start + timedelta(seconds=n))
    later = start + timedelta(seconds=60)
    with pytest.raises(TooMany) as refused:
        table_talk.post_message(db_session, game, 0, "one too many", now=later)
    assert refused.value.extra["field"] == "text"
    # The first message leaves the window 10 minutes after it was posted: 540 s after "later".
    assert refused.value.extra["retry_after"] == 541
    # Another seat is not held back; and the first, once the window has moved on.
    table_talk.post_message(db_session, game, 1, "my turn to talk", now=later)
    table_talk.post_message(db_session, game, 0, "again", now=start + table_talk.RATE_WINDOW + timedelta(seconds=1))


def test_a_reply_by_mail_posts_once_whatever_number_of_times_it_arrives(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)
    first = table_talk.post_message(db_session, game, 2, "From my inbox", MessageSource.MAIL, source_key="<r1@mail>")
    again = table_talk.post_message(db_session, game, 2, "From my inbox", MessageSource.MAIL, source_key="<r1@mail>")
    assert again.id == first.id and first.source == MessageSource.MAIL
    assert len(table_talk.messages_of(db_session, game.id or 0)) == 1
    assert len(talk_mails(db_session, game.id or 0)) == 2


def test_the_host_hides_a_message_for_everyone(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)
    other = new_game(db_session, links)
    message = table_talk.post_message(db_session, game, 1, "something rude")
    table_talk.hide_message(db_session, game, message.id or 0, "host")
    table_talk.hide_message(db_session, game, message.id or 0, "host")  # twice: the same
    [shown] = table_talk.messages_of(db_session, game.id or 0)
    assert shown.hidden and shown.text is None and shown.author == "P1"
    with pytest.raises(NotFound):
        table_talk.hide_message(db_session, other, message.id or 0, "host")
    assert table_talk.messages_since(db_session, [game.id or 0], message.created_at - timedelta(seconds=1)) == {}


def test_no_talk_before_the_host_confirms_the_game_nor_from_a_removed_seat(
    db_session: Session, links: LinkMaker
) -> None:
    game = new_game(db_session, links)
    unconfirmed = new_game(db_session, links, confirm=False)
    with pytest.raises(Conflict):
        table_talk.post_message(db_session, unconfirmed, 0, "hello?")
    seat = db_session.exec(select(Seat).where(Seat.game_id == game.id, Seat.seat == 2)).one()
    seat.removed = True
    db_session.add(seat)
    db_session.commit()
    with pytest.raises(Forbidden):
        table_talk.post_message(db_session, game, 2, "I am still here")
    table_talk.post_message(db_session, game, 0, "Bye P2")
    assert sorted(m.to_email for m in talk_mails(db_session, game.id or 0)) == ["p1@example.org"]


def test_the_doctests() -> None:
    assert doctest.testmod(table_talk).failed == 0


def _every_personal_link(links: LinkMaker) -> list[str]:
    return [
        # An address's links carry its serial once it signed out everywhere: both shapes, 0 and after.
        links.turn_url(1, 0, "seat-secret-abc", serial=0),
        links.turn_url(1, 0, "seat-secret-abc", serial=2),
        links.invite_url(1, 2, "seat-secret-abc", serial=0),
        links.admin_url(1, "host-secret-abc"),
        links.login_url(7, "admin-secret-abc", 3),
        links.sign_in_url(9, "sign-in-secret", serial=0),
        links.sign_in_url(9, "sign-in-secret", serial=5),
        links.confirm_url(1, "host-secret-abc", "Europe/Paris"),
        links.choices_url(4, serial=0),
        links.unsubscribe_url(4, "reminders"),
        links.block_url("p1@example.org"),
        links.address_calendar_url(4, serial=0, calendar_serial=0),
        links.address_calendar_url(4, serial=1, calendar_serial=3),
    ]


def _disguised(link: str) -> list[str]:
    """The ways a link was slipped past the filter: its path or token escaped, or the token on another path."""
    path = link.removeprefix("https://smallworld.example")
    kind, token = path[1:].split("/", 1)[0], path.rsplit("/", 1)[1].removesuffix(".ics")
    wide = kind.translate({c: c + 0xFEE0 for c in range(0x61, 0x7B)})  # ｐｌａｙ
    return [
        f"my link: {link}",
        f"my link: https://smallworld.example/{kind[:2]}%{ord(kind[2]):02x}{kind[3:]}{path[1 + len(kind) :]}",
        "my link: https://smallworld.example" + path.replace("/", "%252F"),
        "my link: https://smallworld.example" + path.replace("/", "&#47;").replace(".", "&period;"),
        f"the token alone: {token}",
        f"elsewhere: https://short.example/r/{token}?x=1",
        f"escaped token: {token.replace('.', '%2E')}",
        f"full-width path: https://smallworld.example/{wide}/{token}",
    ]


def test_a_personal_link_is_refused_however_it_is_written(db_session: Session, links: LinkMaker) -> None:
    # Issue 32, finding 8: /pl%61y/<token>, /sign-in/… and /admin/login/… links went through.
    game = new_game(db_session, links)
    for link in _every_personal_link(links):
        for text in _disguised(link):
            with pytest.raises(BadRequest) as refused:
                table_talk.post_message(db_session, game, 0, text, MessageSource.PAGE)
            assert "personal link" in refused.value.message, text
            assert refused.value.extra["field"] == "text"
    assert table_talk.messages_of(db_session, game.id or 0) == []


@pytest.mark.parametrize(
    "text",
    [
        "I attack Hill.Forest next: see https://rules.example.org/page.html#conquest",
        "100% sure: 50%25 of the time it works &amp; that's fine",
        "version 1.2.3 vs 10.20.30, eyJ is how base64 JSON starts",
        "Tokens on my turn: 4 Ratmen. 2 Trolls. GG!",
    ],
)
def test_ordinary_talk_with_dots_links_and_escapes_is_taken(db_session: Session, links: LinkMaker, text: str) -> None:
    game = new_game(db_session, links)
    posted = table_talk.post_message(db_session, game, 0, text, MessageSource.PAGE)
    assert posted.text == text


@pytest.mark.parametrize(
    "character",
    ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u2066", "\u202e", "\U000e0041", "\ue000"],
)
def test_a_format_character_is_refused_as_in_names(db_session: Session, links: LinkMaker, character: str) -> None:
    # Issue 32, finding 8: zero-width characters were taken in table talk while names refused them.
    game = new_game(db_session, links)
    with pytest.raises(BadRequest) as refused:
        table_talk.post_message(db_session, game, 0, f"my pl{character}ay link", MessageSource.PAGE)
    assert f"U+{ord(character):04X}" in refused.value.message and refused.value.extra["field"] == "text"
    assert table_talk.messages_of(db_session, game.id or 0) == []
