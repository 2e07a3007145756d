"""Orders by reply (service/domain/inbound.py) through POST /inbound/mail, with the service's own mail going
to a real SMTP server (aiosmtpd)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask
from sqlmodel import col, select

import rules
from tests.mail_players import INBOUND_SECRET, MailTable, mail_settings, post_mail, reply_to
from tests.smtp import Received, SMTPServer, smtp_server  # noqa: F401  (fixture)


@pytest.fixture
def table(make_app: Callable[..., Flask], smtp_server: SMTPServer) -> MailTable:  # noqa: F811
    app = make_app(**mail_settings(smtp_server, INBOUND_ANSWERS_PER_HOUR=3))
    table = MailTable(app, smtp_server, players=2)
    table.create()
    return table


def turn_mail(table: MailTable) -> Received:
    [turn] = [m for m in table.deliver() if "your turn" in (m.headline).lower()]
    return turn


def words(mail: Received) -> str:
    return " ".join(mail.text.split())


def test_a_reply_is_applied_step_by_step_and_answered_with_what_was_done_and_why_not(table: MailTable) -> None:
    turn = turn_mail(table)
    assert (turn.header("Reply-To") or "").startswith("play+") and "pick 1" in turn.text
    version = table.game().version
    answered = post_mail(table.app, reply_to(turn, "Pick 2\nconquer 99\nend"))
    assert answered.status_code == 202, answered.get_data(as_text=True)
    assert answered.get_json()["outcomes"][0]["kind"] == "orders"
    [answer] = table.deliver()
    assert answer.rcpt_tos == ("p0@example.org",)
    text = words(answer)
    assert "Player 0 picked combo 2" in text
    assert 'Not done: "conquer 99" There is no region 99' in text
    assert 'Not tried, as they came after it: "end"' in text
    assert "conquer R" in text, "the legal actions from there"
    assert table.game().version == version + 1
    # The answer asks for the rest of the step: it has a reply address of its own, and the board in words with a
    # link to the seat's page where it is drawn; no picture (it rides on the mails that open a step only).
    assert (answer.header("Reply-To") or "").startswith("play+")
    assert not any(part.get_content_type() == "image/png" for part in answer.message.walk())
    assert "See the map drawn" in answer.html and "The map as it stands" in answer.text


def test_a_reply_is_matched_by_its_address_never_by_its_from(table: MailTable) -> None:
    turn = turn_mail(table)
    version = table.game().version
    # To the sender's plain address, from the player's own: not a reply address, nothing done; the sender is
    # told the address is not read, and how to play.
    plain = reply_to(turn, "pick 1")
    plain.replace_header("To", "smallworld@smallworld.example")
    assert post_mail(table.app, plain).get_json()["outcomes"][0]["kind"] == "unmatched"
    # A reply address with its signature changed: nothing done; told that the address does not work.
    forged = reply_to(turn, "pick 1")
    address = str(forged["To"])
    forged.replace_header("To", address[:-30] + ("0" if address[-30] != "0" else "1") + address[-29:])
    assert post_mail(table.app, forged).get_json()["outcomes"][0]["kind"] == "unmatched"
    assert table.game().version == version
    told, told_again = table.deliver()
    assert told.rcpt_tos == told_again.rcpt_tos == ("p0@example.org",)
    assert "it is not an address Small World by Mail reads" in words(told)
    assert "that reply address no longer works" in words(told_again)
    assert "reply to the latest mail that asks for your orders" in words(told)
    # The right address from another address: the address is the credential (like the turn link).
    done = post_mail(table.app, reply_to(turn, "pick 1", sender="someone.else@example.net"))
    assert done.get_json()["outcomes"][0]["kind"] == "orders"
    assert table.game().version == version + 1
    [answer] = table.deliver()
    assert answer.rcpt_tos == ("p0@example.org",), "the answer goes to the seat's address, not the From"
    # The seat's owner is told who used the address, and what was done (nothing the seat may not see).
    assert "This mail came from someone.else@example.net, not from your address" in words(answer)
    assert "Player 0 picked combo 1" in words(answer)
    assert answer.header("In-Reply-To") == turn.header("In-Reply-To"), "in the game's thread, not the stranger's"


def test_an_answer_replies_to_the_players_own_mail(table: MailTable) -> None:
    turn = turn_mail(table)
    reply = reply_to(turn, "pick 1")
    reply.replace_header("Subject", "RE: Re: " + str(turn.header("Subject")))
    reply["References"] = f"{turn.header('References')} {turn.header('Message-ID')}"
    assert post_mail(table.app, reply).status_code == 202
    [answer] = table.deliver()
    assert answer.header("In-Reply-To") == reply["Message-ID"]
    references = (answer.header("References") or "").split()
    assert references == [*str(reply["References"]).split(), reply["Message-ID"]]
    assert answer.header("Subject") == f"Re: {turn.header('Subject')}", "Re: once, then the subject"
    assert "This mail came from" not in words(answer)


def test_the_endpoint_wants_the_shared_secret_and_refuses_large_or_empty_mail(table: MailTable) -> None:
    client = table.app.test_client()
    assert client.post("/inbound/mail", data=b"x").status_code == 401
    wrong = client.post("/inbound/mail", data=b"x", headers={"Authorization": "Bearer not-the-secret-at-all"})
    assert wrong.status_code == 403
    basic = client.post("/inbound/mail", data=b"  ", auth=("mta", INBOUND_SECRET))
    assert basic.status_code == 400 and "raw mail" in basic.get_json()["error"]
    big = b"Subject: big\r\n\r\n" + b"x" * 1_000_001
    large = client.post("/inbound/mail", data=big, headers={"Authorization": f"Bearer {INBOUND_SECRET}"})
    assert large.status_code == 413
    # A mail larger than any other request body (64 KB) but under the mail limit is read.
    body = b"From: a@example.org\r\nTo: b@example.org\r\nSubject: long\r\n\r\n" + b"words " * 20_000
    assert (
        client.post("/inbound/mail", data=body, headers={"Authorization": f"Bearer {INBOUND_SECRET}"}).status_code
        == 202
    )


def test_without_a_configured_secret_the_endpoint_refuses_everything(
    make_app: Callable[..., Flask],
    smtp_server: SMTPServer,  # noqa: F811
) -> None:
    app = make_app(**{**mail_settings(smtp_server), "INBOUND_SECRET": None})
    answer = app.test_client().post(
        "/inbound/mail", data=b"x", headers={"Authorization": "Bearer anything-at-all-here"}
    )
    assert answer.status_code == 403 and "not enabled" in answer.get_json()["error"]


@pytest.mark.parametrize(
    "header",
    [
        ("Auto-Submitted", "auto-replied"),
        ("Precedence", "bulk"),
        ("X-Autoreply", "yes"),
        ("Precedence", "auto_reply"),
    ],
)
def test_automatic_answers_are_never_read_as_orders_nor_answered(table: MailTable, header: tuple[str, str]) -> None:
    turn = turn_mail(table)
    version = table.game().version
    outcome = post_mail(table.app, reply_to(turn, "pick 1", headers=[header])).get_json()["outcomes"][0]
    assert outcome["kind"] == "auto_reply"
    assert table.game().version == version and not table.deliver()


def test_garbage_is_recorded_never_a_500(table: MailTable) -> None:
    for raw in (
        b"\x00\xff\xfe not a mail at all",
        b"Content-Type: multipart/mixed\r\n\r\n--",
        b"To: play+1-2@x\r\n\r\n",
    ):
        answer = post_mail(table.app, raw)
        assert answer.status_code == 202, answer.get_data(as_text=True)


def test_answers_to_one_address_are_limited_per_hour_but_orders_still_count(table: MailTable) -> None:
    turn = turn_mail(table)
    for _ in range(4):
        post_mail(table.app, reply_to(turn, "help"))
    assert len(table.deliver()) == 3  # SMALLWORLD_INBOUND_ANSWERS_PER_HOUR=3 in this test
    version = table.game().version
    post_mail(table.app, reply_to(turn, "pick 1"))
    assert table.game().version == version + 1 and not table.deliver()


def test_a_reply_to_a_table_talk_mail_is_posted_at_the_table_once(table: MailTable) -> None:
    from service.domain import table_talk
    from service.domain.models import TableMessage
    from service.infra.db import get_session

    table.deliver()
    with table.app.app_context():
        session = get_session()
        table_talk.post_message(session, session.get(type(table.game()), table.game_id), 0, "Peace on the hills?")
    [talk] = [m for m in table.deliver() if "Peace on the hills" in m.text]
    assert talk.rcpt_tos == ("p1@example.org",)
    assert "+talk-" in (talk.header("Reply-To") or "") and "reply to this mail" in words(talk)
    reply = reply_to(talk, "Deal, as long as you stay off my mountains.", signature="Bob")
    for _ in range(2):  # the same reply handed in twice is posted once
        outcome = post_mail(table.app, reply).get_json()["outcomes"][0]
        assert outcome["kind"] == "talk"
    with table.app.app_context():
        posted = get_session().exec(select(TableMessage).order_by(TableMessage.id)).all()  # type: ignore[arg-type]
    assert [(m.seat, m.text, m.source) for m in posted] == [
        (0, "Peace on the hills?", "page"),
        (1, "Deal, as long as you stay off my mountains.", "mail"),
    ]
    [mailed_on] = [m for m in table.deliver() if "stay off my mountains" in m.text]
    assert mailed_on.rcpt_tos == ("p0@example.org",)


def test_a_reply_for_a_seat_the_house_bot_plays_changes_nothing_and_says_how_to_take_it_back(table: MailTable) -> None:
    from service.domain import bot_seats
    from service.infra.db import get_session

    turn = turn_mail(table)
    with table.app.app_context():
        session = get_session()
        game = session.get(type(table.game()), table.game_id)
        bot_seats.give_seat_to_bot(session, game, 0, "the host gave it the seat", actor="host")
        session.commit()
    version = table.game().version
    table.deliver()
    post_mail(table.app, reply_to(turn, "pick 1"))
    assert table.game().version == version
    [answer] = [m for m in table.deliver() if "house bot plays your seat" in m.headline]
    assert "take your seat back" in words(answer) and "/play/" in answer.text


def test_a_mail_that_breaks_the_reading_is_recorded_and_answered_202_never_500(
    table: MailTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rules import orders

    turn = turn_mail(table)

    def broken(text: str) -> None:
        raise RuntimeError("a fault while reading")

    monkeypatch.setattr(orders, "parse", broken)
    answer = post_mail(table.app, reply_to(turn, "pick 1"))
    assert answer.status_code == 202
    assert answer.get_json()["outcomes"][0]["kind"] == "malformed"
    assert [row.kind for row in table.inbound()][-1] == "malformed"
    monkeypatch.undo()
    # The next mail is read as ever.
    assert post_mail(table.app, reply_to(turn, "pick 1")).get_json()["outcomes"][0]["kind"] == "orders"


def test_a_reply_address_made_before_its_player_signed_out_everywhere_is_refused(table: MailTable) -> None:
    """The reply address is the credential, like the turn link: "sign out everywhere" ends those of the mails
    already sent (orders and table talk); the next mail's address works."""
    from service.domain import sign_in, table_talk
    from service.infra.db import get_session

    turn = turn_mail(table)
    version = table.game().version
    with table.app.app_context():
        session = get_session()
        table_talk.post_message(session, session.get(type(table.game()), table.game_id), 0, "Peace on the hills?")
    [talk] = [m for m in table.deliver() if "Peace on the hills" in m.text]
    with table.app.app_context():
        sign_in.sign_out_everywhere(get_session(), "p0@example.org")
        sign_in.sign_out_everywhere(get_session(), "p1@example.org")
    for old in (reply_to(turn, "pick 1"), reply_to(talk, "Deal.", signature="Bob")):
        outcome = post_mail(table.app, old).get_json()["outcomes"][0]
        assert outcome["kind"] == "unmatched", outcome
    assert table.game().version == version
    told = table.deliver()
    assert len(told) == 2 and all("that reply address no longer works" in words(mail) for mail in told)

    with table.app.app_context():
        session = get_session()
        table_talk.post_message(session, session.get(type(table.game()), table.game_id), 0, "Still there?")
    [again] = [m for m in table.deliver() if "Still there" in m.text]
    assert again.header("Reply-To") != talk.header("Reply-To")
    assert post_mail(table.app, reply_to(again, "Yes.", signature="Bob")).get_json()["outcomes"][0]["kind"] == "talk"


@pytest.fixture(params=["sqlite", "postgres"])
def defended_table(
    request: pytest.FixtureRequest,
    make_app: Callable[..., Flask],
    smtp_server: SMTPServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> MailTable:
    """A two-player game in ``ask`` mode, played at random up to a defender's redeployment; on SQLite and on
    PostgreSQL. With two players the defender's own turn comes next: the one a reply must not touch. Dealt
    from a seed, so that every run meets the same defence (in turn 3)."""
    from tests.conftest import deal_games_from
    from tests.pages.steps import play_randomly_until

    deal_games_from(monkeypatch, "a defender's end")

    settings = mail_settings(smtp_server)
    if request.param == "postgres":
        settings |= {"DATABASE_URL": request.getfixturevalue("postgres_url")}
        settings |= {"BROKER_URL": request.getfixturevalue("redis_url")}
    table = MailTable(make_app(**settings), smtp_server, players=2)
    table.create(redeploy="ask")
    reached = play_randomly_until(table.app, table.game_id, seed=3, done=lambda state: state.phase == "defend")
    state = rules.read_state(table.game().state or {})
    assert reached and state.turn < state.turns, "the seed no longer deals a defence before the last turn"
    return table


def test_a_defenders_end_ends_their_redeployment_only_never_their_own_next_turn(defended_table: MailTable) -> None:
    # Issue 32, finding 1: "end" in a reply to "you were attacked" went on into the defender's own turn.
    from service.domain.models import GameAction, OutboxMail
    from service.infra.db import get_session

    table = defended_table
    state = rules.read_state(table.game().state or {})
    defender = state.defenders[0]
    [attacked] = [m for m in table.deliver() if "you were attacked" in (m.headline)]
    assert table.seat_of(attacked) == defender
    version = table.game().version

    outcome = post_mail(table.app, reply_to(attacked, "end\nconquer 1"))
    assert outcome.get_json()["outcomes"][0]["kind"] == "orders"

    game = table.game()
    after = rules.read_state(game.state or {})
    assert after.phase != "defend" and rules.awaiting(after) == {defender}, "the defender's own turn is awaited"
    assert game.step_key == f"{after.turn}:{defender}:-"
    with table.app.app_context():
        session = get_session()
        steps = session.exec(
            select(GameAction).where(GameAction.game_id == table.game_id).order_by(col(GameAction.version))
        ).all()
        kinds = [(step.seat, (step.action or {}).get("type")) for step in steps if step.version > version]
        # In the order written: PostgreSQL returns rows without an ORDER BY in no set order (a row updated
        # when its mail was sent or dropped may come back last).
        turn_mails = session.exec(
            select(OutboxMail)
            .where(OutboxMail.template == "your_turn", OutboxMail.to_email == table.emails[defender])
            .order_by(col(OutboxMail.id))
        ).all()
    # The redeployment only: its placements, then its end; nothing of the defender's own turn.
    assert kinds and kinds[-1] == (defender, "end_turn"), kinds
    assert all(seat == defender for seat, _ in kinds) and [k for _, k in kinds].count("end_turn") == 1, kinds
    assert game.version == version + len(kinds)
    assert turn_mails and turn_mails[-1].step_key == game.step_key, [m.step_key for m in turn_mails]
    assert turn_mails[-1].status != "skipped", "the defender's turn mail goes out"

    mails = table.deliver()
    [answer] = [m for m in mails if m.rcpt_tos == (table.emails[defender],) and "conquer 1" in m.text]
    text = words(answer)
    assert "Your redeployment ended" in text and "not applied" in text, text
    assert '"conquer 1"' in text
    assert any("your turn" in (m.headline).lower() for m in mails if m.rcpt_tos == answer.rcpt_tos)


# -- what one mail may cost (issue 32, finding 2) --------------------------------------------------------------
def wide_reply(turn: Received, parts: int) -> bytes:
    """A reply to ``turn`` with ``parts`` flat MIME parts, ``pick 1`` in the first."""
    head = (
        f"From: {turn.rcpt_tos[0]}\r\nTo: {turn.header('Reply-To')}\r\nSubject: Re: wide\r\n"
        f"Message-ID: <wide-{parts}@example.org>\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
    )
    rest = "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n" * (parts - 1)
    return (head + "--b\r\nContent-Type: text/plain\r\n\r\npick 1\r\n" + rest + "--b--\r\n").encode()


def deep_reply(turn: Received, depth: int) -> bytes:
    """A reply to ``turn`` whose text, ``pick 1``, lies ``depth`` containers deep (a multipart in each)."""
    head = (
        f"From: {turn.rcpt_tos[0]}\r\nTo: {turn.header('Reply-To')}\r\nSubject: Re: deep\r\n"
        f"Message-ID: <deep-{depth}@example.org>\r\nMIME-Version: 1.0\r\n"
    )
    body = "Content-Type: text/plain\r\n\r\npick 1\r\n"
    for level in range(depth):
        body = f'Content-Type: multipart/mixed; boundary="b{level}"\r\n\r\n--b{level}\r\n{body}--b{level}--\r\n'
    return (head + body).encode()


def test_only_the_first_lines_of_a_reply_are_read_and_long_lines_are_kept_whole(table: MailTable) -> None:
    # The reply parser's time grows with the square of the lines: it reads 200 lines at most (InboundSettings).
    turn = turn_mail(table)
    version = table.game().version
    outcome = post_mail(table.app, reply_to(turn, "\n" * 1_000 + "pick 1")).get_json()["outcomes"][0]
    assert outcome["kind"] == "orders" and outcome["detail"].startswith("no_orders"), outcome
    assert table.game().version == version, "an order past the lines read is not carried out"
    [answer] = table.deliver()
    assert "Nothing was done: your mail had no order I could read" in words(answer)
    # A table-talk reply of one long paragraph (a line of 1,500 characters) is posted whole.
    from service.domain import table_talk
    from service.domain.models import TableMessage
    from service.infra.db import get_session

    with table.app.app_context():
        session = get_session()
        table_talk.post_message(session, session.get(type(table.game()), table.game_id), 0, "Peace?")
    [talk] = [m for m in table.deliver() if "Peace?" in m.text]
    paragraph = " ".join(["On the hills we stay, and you keep off the mountains."] * 28)
    assert 1_400 < len(paragraph) < 2_000
    assert post_mail(table.app, reply_to(talk, paragraph, signature="Bob")).get_json()["outcomes"][0]["kind"] == "talk"
    with table.app.app_context():
        posted = get_session().exec(select(TableMessage).order_by(TableMessage.id)).all()  # type: ignore[arg-type]
    assert posted[-1].text == paragraph


def test_a_seat_flooded_with_mail_has_the_rest_refused_before_it_is_parsed(
    make_app: Callable[..., Flask],
    smtp_server: SMTPServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from service.domain import inbound

    table = MailTable(make_app(**mail_settings(smtp_server, INBOUND_MAILS_PER_SEAT_PER_HOUR=2)), smtp_server, 2)
    table.create()
    turn = turn_mail(table)
    for _ in range(2):
        assert post_mail(table.app, reply_to(turn, "help")).status_code == 202
    assert len(table.deliver()) == 2
    parsed = []
    real = inbound.parse_message
    monkeypatch.setattr(inbound, "parse_message", lambda *a, **k: parsed.append(1) or real(*a, **k))
    version = table.game().version
    refused = post_mail(table.app, reply_to(turn, "pick 1"))
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "3600"
    assert refused.get_json()["outcomes"][0] == {
        "kind": "refused",
        "detail": refused.get_json()["outcomes"][0]["detail"],
        "answered": False,
        "duplicate": False,
        "refused": "rate",
    }
    assert not parsed, "the mail's body was parsed before its seat's limit was checked"
    assert table.game().version == version and not table.deliver(), "not carried out, not answered"
    row = table.inbound()[-1]
    assert (row.kind, row.game_id, row.seat, row.answered) == ("refused", table.game_id, 0, False)
    # Another From changes nothing: the reply address names the seat.
    assert post_mail(table.app, reply_to(turn, "help", sender="p1@example.org")).status_code == 429


def test_a_mail_with_too_many_parts_or_too_deep_is_refused_recorded_and_not_answered(
    table: MailTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.domain import inbound

    turn = turn_mail(table)
    version = table.game().version
    # 20,000 flat parts: refused on the raw bytes, never parsed.
    monkeypatch.setattr(inbound, "parse_message", lambda *a, **k: pytest.fail("parsed"))
    wide = post_mail(table.app, wide_reply(turn, 20_000))
    assert wide.status_code == 422 and "more than 100 MIME parts" in wide.get_json()["error"]
    assert wide.get_json()["outcomes"][0]["refused"] == "shape"
    monkeypatch.undo()
    # Just over the limits, as parsed.
    for raw in (wide_reply(turn, 101), deep_reply(turn, 11)):
        refused = post_mail(table.app, raw)
        assert refused.status_code == 422, refused.get_json()
        assert refused.get_json()["outcomes"][0]["kind"] == "refused"
    assert [row.kind for row in table.inbound()] == ["refused"] * 3
    assert table.game().version == version and not table.deliver()
    # At the limits, read.
    assert post_mail(table.app, deep_reply(turn, 10)).status_code == 202
    assert table.game().version == version + 1
    at_most = post_mail(table.app, wide_reply(turn, 100))
    assert at_most.status_code == 202 and at_most.get_json()["outcomes"][0]["kind"] == "orders"


def test_a_mail_over_the_cpu_budget_is_refused_for_now_and_read_when_handed_in_again(
    make_app: Callable[..., Flask],
    smtp_server: SMTPServer,  # noqa: F811
) -> None:
    app = make_app(**mail_settings(smtp_server, INBOUND_CPU_SECONDS=0))
    table = MailTable(app, smtp_server, players=2)
    table.create()
    turn = turn_mail(table)
    version = table.game().version
    message = reply_to(turn, "pick 1")
    over = post_mail(app, message)
    assert over.status_code == 503 and over.headers["Retry-After"] == "60"
    assert over.get_json()["outcomes"][0]["refused"] == "budget"
    assert "of CPU" in over.get_json()["error"]
    assert [row.kind for row in table.inbound()] == ["refused"]
    assert table.game().version == version and not table.deliver()
    app.config["INBOUND_CPU_SECONDS"] = 1.0
    again = post_mail(app, message)
    assert again.status_code == 202 and again.get_json()["outcomes"][0]["kind"] == "orders"
    assert table.game().version == version + 1


# -- delivery reports (issue 32, finding 8) ----------------------------------------------------------------------
def test_a_forged_delivery_report_marks_nobody_and_no_report_text_reaches_a_mail(table: MailTable) -> None:
    from service.domain.models import Player
    from service.infra.db import get_session
    from tests.mail_players import dsn

    phishing = "550 5.1.1 re-confirm your seat at https://evil.example/login"
    table.deliver()
    sent_to_p1 = [m for m in table.smtp.mailbox.all() if m.rcpt_tos == ("p1@example.org",)]
    [sent_to_p0, *_] = [m for m in table.smtp.mailbox.all() if m.rcpt_tos == ("p0@example.org",)]
    # Each mail went out with its own signed bounce address as its envelope sender.
    bounce_p1, bounce_p0 = sent_to_p1[-1].mail_from, sent_to_p0.mail_from
    assert bounce_p1.startswith("bounces+") and bounce_p1.endswith("@play.smallworld.example")
    assert bounce_p1 != bounce_p0

    def bouncing() -> tuple[object, str | None]:
        with table.app.app_context():
            player = get_session().exec(select(Player).where(Player.email == "p1@example.org")).one()
            return player.bouncing_since, player.bounce_reason

    # To the From address (whatever mail it names), to a bounce address whose signature does not hold, or to the
    # bounce address of a mail to p0 that names p1: nobody is marked (the report's row is the one it came to).
    made_up = bounce_p1.replace("bounces+", "bounces+9").split("-")[0] + "-0123456789@play.smallworld.example"
    for to, returned in (
        ("smallworld@smallworld.example", sent_to_p1[-1].header("Message-ID")),
        (made_up, sent_to_p1[-1].header("Message-ID")),
    ):
        outcome = post_mail(table.app, dsn(to, "p1@example.org", diagnostic=phishing, returned=returned)).get_json()
        assert outcome["outcomes"][0]["kind"] == "bounce" and "ignored" in outcome["outcomes"][0]["detail"], outcome
    assert bouncing() == (None, None) and not table.deliver(), "nobody marked, the host not told"

    # A report to the bounce address of a mail we did send to p1: marked, and the host told in fixed words from
    # the status code.
    genuine = dsn(bounce_p1, "p1@example.org", diagnostic=phishing)
    detail = post_mail(table.app, genuine).get_json()["outcomes"][0]["detail"]
    assert detail == "marked p1@example.org as bouncing (5.1.1 mailbox unknown)"
    since, reason = bouncing()
    assert since is not None and reason == "5.1.1 mailbox unknown"
    [alert] = table.deliver()
    assert alert.rcpt_tos == ("p0@example.org",) and "mail to Player 1 bounces" in (alert.headline)
    assert "5.1.1 mailbox unknown" in words(alert)
    for text in (alert.text, alert.html or ""):
        assert "evil.example" not in text and "re-confirm" not in text


@pytest.fixture
def inviting(make_app: Callable[..., Flask], smtp_server: SMTPServer) -> MailTable:  # noqa: F811
    settings = mail_settings(smtp_server, INBOUND_ANSWERS_PER_HOUR=3, OPERATOR_EMAIL="operator@smallworld.example")
    table = MailTable(make_app(**settings), smtp_server, players=2)
    table.create(accept=False)
    return table


def seats_accepted(table: MailTable) -> list[bool]:
    from service.domain.models import Seat
    from service.infra.db import get_session

    with table.app.app_context():
        seats = get_session().exec(select(Seat).where(Seat.game_id == table.game_id).order_by(col(Seat.seat)))
        return [seat.accepted_at is not None for seat in seats]


def test_yes_to_an_invitation_from_the_invited_address_takes_the_seat_and_says_so(inviting: MailTable) -> None:
    invitation = inviting.invitations[0]
    assert 'Or reply "yes" to this mail' in words(invitation) and "played by mail" in words(invitation)
    outcome = post_mail(inviting.app, reply_to(invitation, "Hi there,\n\nYes, count me in!")).get_json()["outcomes"]
    assert outcome[0]["kind"] == "invitation" and outcome[0]["answered"], outcome
    assert seats_accepted(inviting) == [True, False]
    [answer] = inviting.deliver()
    assert answer.rcpt_tos == ("p0@example.org",) and "You took your seat" in words(answer)
    # Once taken, another "yes" changes nothing and says so.
    post_mail(inviting.app, reply_to(invitation, "yes"))
    [again] = inviting.deliver()
    assert "which is no longer open" in words(again)
    # The last seat taken by mail starts the game: its first turn mail follows.
    post_mail(inviting.app, reply_to(inviting.invitations[1], "Join"))
    mails = inviting.deliver()
    assert any("Every seat is taken: the game starts" in words(m) for m in mails)
    assert inviting.game().status == "active" and any(m.header("Reply-To") for m in mails), "a turn mail"


def test_a_reply_to_an_invitation_without_a_yes_or_from_another_address_is_told_how(inviting: MailTable) -> None:
    invitation = inviting.invitations[1]
    post_mail(inviting.app, reply_to(invitation, "Which night do we play?"))
    post_mail(inviting.app, reply_to(invitation, "Yes!", sender="someone.else@example.net"))
    assert seats_accepted(inviting) == [False, False]
    how, other = inviting.deliver()
    assert how.rcpt_tos == other.rcpt_tos == ("p1@example.org",), "to the invited address, never the From"
    assert 'did not say "yes" (its first line was "Which night do we play?")' in words(how)
    assert "came from someone.else@example.net, not from this address" in words(other)


def test_mail_to_postmaster_or_abuse_goes_to_the_operator_even_an_automatic_report(inviting: MailTable) -> None:
    from email.message import EmailMessage

    for role, headers in (("postmaster", {}), ("abuse", {"Auto-Submitted": "auto-generated"})):
        mail = EmailMessage()
        mail["From"] = "desk@isp.example.net"
        mail["To"] = f"{role}@play.smallworld.example"
        mail["Subject"] = f"A word for the {role}"
        mail["Message-ID"] = f"<{role}-1@isp.example.net>"
        for name, value in headers.items():
            mail[name] = value
        mail.set_content(f"Dear {role},\n\nplease look at this.")
        outcome = post_mail(inviting.app, mail).get_json()["outcomes"][0]
        assert outcome["kind"] == "forwarded" and outcome["answered"], outcome
    forwards = inviting.deliver()
    assert [m.rcpt_tos for m in forwards] == [("operator@smallworld.example",)] * 2
    # A forward that came back (the operator's address one of ours, say) is not forwarded again: no loop.
    again = forwards[0].message
    again.replace_header("To", "postmaster@play.smallworld.example")
    outcome = post_mail(inviting.app, again.as_bytes()).get_json()["outcomes"][0]
    assert outcome["kind"] == "forwarded" and not outcome["answered"] and not inviting.deliver(), outcome
    assert "From: desk@isp.example.net" in words(forwards[0]) and "please look at this" in words(forwards[1])


def test_other_mail_to_no_reply_address_is_answered_within_the_limit_never_an_automatic_one(
    inviting: MailTable,
) -> None:
    from email.message import EmailMessage

    def stranger(number: int, **headers: str) -> EmailMessage:
        mail = EmailMessage()
        mail["From"] = "curious@example.net"
        mail["To"] = "smallworld@smallworld.example"
        mail["Subject"] = "How do I play?"
        mail["Message-ID"] = f"<stranger-{number}@example.net>"
        for name, value in headers.items():
            mail[name] = value
        mail.set_content("Hello, how does this work?")
        return mail

    assert post_mail(inviting.app, stranger(0, Precedence="bulk")).get_json()["outcomes"][0]["kind"] == "auto_reply"
    assert not inviting.deliver(), "an automatic mail is never answered"
    outcomes = [post_mail(inviting.app, stranger(n)).get_json()["outcomes"][0] for n in range(1, 6)]
    assert [o["answered"] for o in outcomes] == [True, True, True, False, False], "3 answers an hour to one address"
    told = inviting.deliver()
    assert len(told) == 3 and all(m.rcpt_tos == ("curious@example.net",) for m in told)
    assert "it is not an address Small World by Mail reads" in words(told[0])
