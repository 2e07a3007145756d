"""service.domain.delivery: one bad mail never stops the others (ARCHITECTURE §6).

Each kind of failure of ONE mail (a header that cannot be written, an address that is not one, a template
or context that cannot be rendered, the SMTP server refusing it, the SMTP server down) marks that mail failed
with its reason, or retries it later when the failure is transient; every other game's mail still goes out
in the same drain, and no row stays claimed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlmodel import select

from service.domain.models import OutboxMail, Player
from service.domain.schemas import CreateGame
from service.infra.db import get_session
from tests.factories import confirmed_game
from tests.smtp import SMTPServer

from .conftest import drain, outbox


def game_of(app: Flask, tag: str) -> int:
    """A two-player game confirmed by its host and started at once, its players ``<tag>0@example.org`` and
    ``<tag>1@example.org``."""
    request = CreateGame.model_validate(
        {
            "name": f"Game {tag}",
            "players": [{"name": f"{tag} {i}", "email": f"{tag}{i}@example.org"} for i in range(2)],
            "settings": {"start_when_all_accepted": False},
        }
    )
    with app.app_context():
        game, _ = confirmed_game(get_session(), request, app.extensions["smallworld.links"])
        return game.id or 0


def first_mail(app: Flask, game_id: int) -> OutboxMail:
    return outbox(app, game_id=game_id)[0]


def change(app: Flask, model: Any, row_id: int, **values: Any) -> None:
    """Write ``values`` into a row as it may lie in the database already (written before names were checked)."""
    with app.app_context():
        session = get_session()
        session.execute(sa.update(model).where(model.id == row_id).values(**values))
        session.commit()


def smtp(app: Flask) -> SMTPServer:
    return app.extensions["test.smtp"]


def received_ids_of(app: Flask, game_id: int) -> list[str]:
    ids = {m.message_id for m in outbox(app, game_id=game_id)}
    return [r.header("Message-ID") or "" for r in smtp(app).mailbox.all() if r.header("Message-ID") in ids]


def assert_delivered(app: Flask, game_id: int) -> None:
    """Every mail of the game was sent, once."""
    rows = outbox(app, game_id=game_id)
    assert rows and [m.status for m in rows] == ["sent"] * len(rows)
    assert sorted(received_ids_of(app, game_id)) == sorted(m.message_id for m in rows)


def assert_nothing_claimed(app: Flask) -> None:
    assert [m.id for m in outbox(app) if m.status == "pending"] == []


@pytest.mark.parametrize(
    "name",
    ["Ann\nBcc: eve@example.org", "Ann\r\nX-Injected: yes", "Ann\n", "Jörg\u2028Müller"],
    ids=["injected-bcc", "crlf", "trailing-newline", "unicode-line-separator"],
)
def test_a_name_with_a_line_break_fails_its_own_mail_and_the_other_games_mail_goes_out(
    mail_app: Flask, name: str
) -> None:
    bad, good = game_of(mail_app, "a"), game_of(mail_app, "b")
    victim = first_mail(mail_app, bad)
    with mail_app.app_context():
        player_id = get_session().exec(select(Player.id).where(Player.email == victim.to_email)).one()
    change(mail_app, Player, player_id, display_name=name)

    report = drain(mail_app)

    failed = [m for m in outbox(mail_app) if m.status == "failed"]
    assert {m.to_email for m in failed} == {victim.to_email}  # every mail to that player, and no other
    assert all("line break" in (m.last_error or "") for m in failed)
    assert report.failed == len(failed) and report.sent == len(outbox(mail_app)) - len(failed)
    assert_delivered(mail_app, good)
    assert all(m.status == "sent" for m in outbox(mail_app, game_id=bad) if m.to_email != victim.to_email)
    assert not any("eve@example.org" in r.rcpt_tos for r in smtp(mail_app).mailbox.all())
    assert all(r.header("X-Injected") is None for r in smtp(mail_app).mailbox.all())
    assert_nothing_claimed(mail_app)


@pytest.mark.parametrize(
    "address",
    [
        "jörg@example.org",  # needs SMTPUTF8: smtplib cannot even say it
        "ann@example.org\r\nRCPT TO:<eve@example.org>",
        "ann@example.org, eve@example.org",
        "Ann <ann@example.org>",
        "not an address",
        "",
    ],
    ids=["non-ascii", "smtp-injection", "a-list", "display-name", "no-at", "empty"],
)
def test_a_bad_address_fails_its_own_mail_and_the_other_games_mail_goes_out(mail_app: Flask, address: str) -> None:
    bad, good = game_of(mail_app, "a"), game_of(mail_app, "b")
    victim = first_mail(mail_app, bad)
    change(mail_app, OutboxMail, victim.id, to_email=address)

    report = drain(mail_app)

    [failed] = [m for m in outbox(mail_app) if m.status == "failed"]
    assert failed.id == victim.id and "not one plain mail address" in (failed.last_error or "")
    assert report.failed == 1
    assert_delivered(mail_app, good)
    assert not any("eve@example.org" in r.rcpt_tos for r in smtp(mail_app).mailbox.all())
    assert_nothing_claimed(mail_app)


@pytest.mark.parametrize(
    ("bad_context", "reason"),
    [
        (["not", "an", "object"], "not an object"),
        ("a string", "not an object"),
        ({"game_name": "x", "player_name": "p", "turn": 1, "turns": 9, "board": "x"}, "board"),
        ({"game_name": "x"}, "missing"),
    ],
    ids=["a-list", "a-string", "a-board-that-is-not-one", "missing-keys"],
)
def test_a_mail_that_cannot_be_rendered_fails_and_the_other_games_mail_goes_out(
    mail_app: Flask, bad_context: Any, reason: str
) -> None:
    bad, good = game_of(mail_app, "a"), game_of(mail_app, "b")
    victim = [m for m in outbox(mail_app, game_id=bad) if m.template == "your_turn"][0]
    change(mail_app, OutboxMail, victim.id, context=bad_context)

    report = drain(mail_app)

    [failed] = [m for m in outbox(mail_app) if m.status == "failed"]
    assert failed.id == victim.id
    assert (failed.last_error or "").startswith("cannot render the mail") and reason in (failed.last_error or "")
    assert report.failed == 1
    assert_delivered(mail_app, good)
    assert_nothing_claimed(mail_app)


def test_a_mail_of_a_template_that_does_not_exist_fails_and_the_other_games_mail_goes_out(mail_app: Flask) -> None:
    bad, good = game_of(mail_app, "a"), game_of(mail_app, "b")
    victim = first_mail(mail_app, bad)
    change(mail_app, OutboxMail, victim.id, template="no_such_mail")
    drain(mail_app)
    [failed] = [m for m in outbox(mail_app) if m.status == "failed"]
    assert failed.id == victim.id and "no_such_mail" in (failed.last_error or "")
    assert_delivered(mail_app, good)
    assert_nothing_claimed(mail_app)


def test_a_mail_the_smtp_server_refuses_for_good_fails_and_the_other_games_mail_goes_out(mail_app: Flask) -> None:
    bad, good = game_of(mail_app, "a"), game_of(mail_app, "b")
    smtp(mail_app).mailbox.data_refuse["a0@example.org"] = "554 5.7.1 Message rejected as spam"
    smtp(mail_app).mailbox.refuse["a1@example.org"] = "550 5.1.1 No such user"

    report = drain(mail_app)

    failed = [m for m in outbox(mail_app) if m.status == "failed"]
    assert {m.to_email for m in failed} == {"a0@example.org", "a1@example.org"}
    assert all(m.game_id == bad for m in failed)
    assert {(m.last_error or "")[:18] for m in failed} == {"refused: 554 5.7.1", "recipient refused:"}
    assert report.failed == len(failed) and report.retried == 0
    assert_delivered(mail_app, good)
    assert_nothing_claimed(mail_app)


def test_with_the_smtp_server_down_mail_waits_and_every_games_mail_goes_out_once_it_is_back(
    mail_app: Flask,
) -> None:
    bad, good = game_of(mail_app, "a"), game_of(mail_app, "b")
    victim = first_mail(mail_app, bad)
    change(mail_app, OutboxMail, victim.id, to_email="ann@example.org\r\nRCPT TO:<eve@example.org>")
    server = smtp(mail_app)
    server.stop()

    down = drain(mail_app)

    rows = outbox(mail_app)
    assert down.failed == 1 and down.retried == len(rows) - 1 and down.sent == 0
    assert all(m.status == "pending" and "unreachable" in (m.last_error or "") for m in rows if m.id != victim.id)
    server.start()
    later = max(m.next_attempt_at for m in rows if m.next_attempt_at is not None)
    back = drain(mail_app, later)
    assert back.sent == len(rows) - 1
    assert_delivered(mail_app, good)
    assert [m.status for m in outbox(mail_app, game_id=bad)].count("failed") == 1


def test_the_file_backend_leaves_no_temporary_file_for_a_mail_it_cannot_write(make_app: Any, tmp_path: Path) -> None:
    app = make_app(MAIL_DIR=str(tmp_path / "mailbox"))
    bad, good = game_of(app, "a"), game_of(app, "b")
    victim = first_mail(app, bad)
    with app.app_context():
        player_id = get_session().exec(select(Player.id).where(Player.email == victim.to_email)).one()
    change(app, Player, player_id, display_name="Ann\nBcc: eve@example.org")

    drain(app)

    names = sorted(p.name for p in (tmp_path / "mailbox").iterdir())
    assert not [n for n in names if n.startswith(".writing-")], names
    assert all(n.endswith(".eml") for n in names)
    assert all(m.status == "sent" for m in outbox(app, game_id=good))
    assert len(names) == sum(m.status == "sent" for m in outbox(app))
