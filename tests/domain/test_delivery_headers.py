"""The game's mails as they arrive at a real SMTP server (aiosmtpd), through the outbox's drain
(``service.domain.delivery``, ``emails.compose``): one conversation per game, and light (ARCHITECTURE §6)."""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Callable

import pytest
from flask import Flask
from sqlmodel import select

from emails.compose import Envelope, list_id, to_bytes, write
from emails.samples import SAMPLES
from service.domain import delivery
from service.domain.models import MailStatus, OutboxMail, utcnow
from service.infra.db import get_session
from tests.mail_players import INBOUND_DOMAIN, MailTable, mail_settings, post_mail, reply_to
from tests.smtp import SMTPServer, smtp_server  # noqa: F401  (fixture)


@pytest.fixture
def table(make_app: Callable[..., Flask], smtp_server: SMTPServer) -> MailTable:  # noqa: F811
    table = MailTable(make_app(**mail_settings(smtp_server)), smtp_server, players=2)
    table.create()
    return table


def test_every_mail_of_a_game_is_one_conversation_with_one_subject_and_one_list(table: MailTable) -> None:
    [turn] = [m for m in table.deliver() if "your turn" in m.headline]
    reply = reply_to(turn, "pick 1")
    assert post_mail(table.app, reply).status_code == 202
    table.deliver()
    mails = table.smtp.mailbox.all()
    kinds = {m.headline.split(":")[-1].split("(")[0].strip() for m in mails}
    assert len(mails) >= 5 and len(kinds) >= 4, kinds  # invitations, the host's link, a turn, an answer...
    game = table.game_id
    root = turn.header("References")
    assert root and re.fullmatch(rf"<game-{game}\.\d+@smallworld\.example>", root)
    answers = 0
    for mail in mails:
        # The answer to the reply replies to the player's own mail ("Re:" its subject), in the conversation still.
        answer = mail.header("In-Reply-To") == reply["Message-ID"]
        answers += answer
        assert mail.header("Subject") == ("Re: " if answer else "") + "Small World: By mail", mail.headline
        # What the mail is: its text's first line (and its HTML's preheader), not its subject.
        assert mail.text.splitlines()[0] == mail.headline != mail.header("Subject")
        assert mail.headline in mail.html
        if answer:
            # The root first, though this reply (as some clients write them) named only the mail it answers.
            assert "References" not in reply
            assert (mail.header("References") or "").split() == [root, reply["Message-ID"]]
        else:
            assert mail.header("In-Reply-To") == mail.header("References") == root
        assert mail.header("List-Id") == f'"Small World: By mail" <game-{game}.{INBOUND_DOMAIN}>'
        # Outlook's out-of-office and RFC 3834 vacation responders keep to themselves.
        assert mail.header("X-Auto-Response-Suppress") == "All"
        assert mail.header("Auto-Submitted") == "auto-generated"
    assert answers == 1


def test_a_game_named_in_another_script_has_its_list_named_so() -> None:
    sample = SAMPLES["your_turn"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    envelope = Envelope(
        message_id="<m1@smallworld.example>",
        to="ann@example.org",
        sender="Small World <sw@smallworld.example>",
        date=sample.now,
        list_id=list_id(3, "Ça « roule »", "play.example"),
    )
    parsed = email.message_from_bytes(to_bytes(write(rendered, envelope)), policy=email.policy.default)
    assert str(parsed["List-Id"]) == "Small World: Ça « roule » <game-3.play.example>"


def test_the_picture_rides_on_the_turn_mail_once_and_a_mail_it_would_make_too_heavy_goes_without_it(
    table: MailTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    [turn] = [m for m in table.deliver() if "your turn" in m.headline]
    pictures = [p for p in turn.message.walk() if p.get_content_type() == "image/png"]
    assert len(pictures) == 1 and len(turn.content) <= delivery.MOST_BYTES
    # The same mail, were it allowed less than it weighs: the board in words and the link to the seat's page.
    monkeypatch.setattr(delivery, "MOST_BYTES", len(turn.content) - 1)
    # (The row sent again, as an admin may send a mail again.)
    with table.app.app_context():
        row = get_session().exec(select(OutboxMail).where(OutboxMail.template == "your_turn")).first()
        assert row is not None
        row.status, row.rendered, row.attempts, row.next_attempt_at = MailStatus.PENDING, None, 0, utcnow()
        get_session().add(row)
        get_session().commit()
    [again] = [m for m in table.deliver() if "your turn" in m.headline]
    assert not any(p.get_content_type() == "image/png" for p in again.message.walk())
    assert "See the map drawn" in again.html and len(again.content) < len(turn.content)
