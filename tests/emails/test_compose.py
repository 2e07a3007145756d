"""emails.compose: headers, threading, one-click unsubscribe, parts; the same row gives the same bytes."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime

import pytest

from emails.compose import WIRE, ComposeError, Envelope, compose, thread_id, to_bytes
from emails.render import BOARD_CID, render
from emails.samples import SAMPLES, Sample

THREAD = thread_id(17, datetime(2026, 2, 20, 18, 0, tzinfo=UTC), "smallworld.invalid")


def composed(name: str, message_id: str = "<row-42@smallworld.invalid>") -> email.message.Message:
    sample: Sample = SAMPLES[name]
    rendered = render(
        sample.message,
        sample.context,
        now=sample.now,
        time_zone=sample.time_zone,
        game_url=sample.game_url,
        unsubscribe_url=sample.unsubscribe_url,
    )
    envelope = Envelope(
        message_id=message_id,
        to="bob@example.org",
        to_name="Bob",
        sender="Small World by Mail <smallworld@smallworld.example>",
        date=sample.now,
        thread_id=THREAD,
        unsubscribe_url=sample.unsubscribe_url,
    )
    return compose(rendered, envelope)


def reparsed(message: email.message.Message) -> email.message.EmailMessage:
    return email.message_from_bytes(to_bytes(message), policy=email.policy.default)  # type: ignore[return-value]


def test_every_mail_of_a_game_is_in_one_thread() -> None:
    first, second = reparsed(composed("your_turn", "<a@x>")), reparsed(composed("reminder", "<b@x>"))
    assert first["Message-ID"] == "<a@x>" and second["Message-ID"] == "<b@x>"
    for mail in (first, second):
        assert mail["In-Reply-To"] == THREAD
        assert mail["References"] == THREAD
    assert THREAD == "<game-17.20260220180000000000@smallworld.invalid>"


def test_reminders_notices_and_table_talk_offer_one_click_unsubscribe_rfc_8058() -> None:
    for name in ("reminder", "auto_passed", "admin_change", "host_alert", "table_talk"):
        mail = reparsed(composed(name))
        assert mail["List-Unsubscribe"] == f"<{SAMPLES[name].unsubscribe_url}>"
        assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    # The final results are never silenced (DESIGN §9): no unsubscribe, as the mails that let one play.
    for name in ("invitation", "admin_link", "your_turn", "redeploy_needed", "game_over"):
        mail = reparsed(composed(name))
        assert mail["List-Unsubscribe"] is None and mail["List-Unsubscribe-Post"] is None


def test_a_mail_has_a_plain_text_part_first_then_the_html() -> None:
    mail = reparsed(composed("reminder"))
    assert mail.get_content_type() == "multipart/alternative"
    parts = list(mail.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    assert "Time left: 2 hours" in parts[0].get_content()
    assert mail["Auto-Submitted"] == "auto-generated"
    assert mail["Date"] == "Tue, 03 Mar 2026 11:00:00 +0000"


def test_the_turn_mail_carries_the_board_picture_inline() -> None:
    mail = reparsed(composed("your_turn"))
    html = mail.get_body(preferencelist=("html",))
    related = [p for p in mail.walk() if p.get_content_type() == "multipart/related"]
    assert len(related) == 1
    picture = next(p for p in mail.walk() if p.get_content_type() == "image/png")
    assert picture["Content-ID"] == f"<{BOARD_CID}>"
    assert picture.get_content().startswith(b"\x89PNG")
    assert f"cid:{BOARD_CID}" in html.get_content()


def test_the_same_row_gives_the_same_bytes() -> None:
    assert to_bytes(composed("your_turn")) == to_bytes(composed("your_turn"))
    assert to_bytes(composed("your_turn")) != to_bytes(composed("your_turn", "<row-43@smallworld.invalid>"))


def test_every_line_is_seven_bit_and_short() -> None:
    for name in SAMPLES:
        raw = to_bytes(composed(name))
        assert raw.isascii(), name
        assert b"\n" not in raw.replace(b"\r\n", b""), "only CRLF line ends"
        assert max(len(line) for line in raw.split(b"\r\n")) <= 998, name


def test_headers_are_written_as_the_header_class_folds_them() -> None:
    # WIRE skips building a Header for a value that fits on its line: the bytes must not change.
    folding = email.policy.compat32.clone(linesep="\r\n", max_line_length=998)
    values = [
        "Small World by Mail <smallworld@smallworld.example>",
        'multipart/alternative; boundary="=_smallworld_0123_0"',
        "  spaces,  commas;\ttabs  ",
        "=?utf-8?q?Zo=C3=AB?= <zoe@example.org>",
        "Zoë <zoe@example.org>",
        "<https://smallworld.example/unsubscribe/" + "x" * 990 + ">",
        "two\r\n lines",
        "",
    ]
    for value in values:
        assert WIRE.fold_binary("X-Test", value) == folding.fold_binary("X-Test", value), value


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("to_name", "Ann\nBcc: eve@example.org"),
        ("to_name", "Ann\r"),
        ("to_name", "Ann\u2028"),
        ("to", "ann@example.org\r\nRCPT TO:<eve@example.org>"),
        ("to", "ann@example.org, eve@example.org"),
        ("to", "Ann <ann@example.org>"),
        ("to", "jörg@example.org"),
        ("to", "ann"),
        ("unsubscribe_url", "https://x.example/u\r\nBcc: eve@example.org"),
    ],
)
def test_a_value_that_would_break_a_header_is_refused_before_anything_is_written(field: str, value: str) -> None:
    sample: Sample = SAMPLES["reminder"]
    rendered = render(sample.message, sample.context, now=sample.now)
    fields = {"message_id": "<row-1@smallworld.invalid>", "to": "bob@example.org", "sender": "sw@example.org"}
    envelope = Envelope(**{**fields, "date": sample.now, field: value})  # type: ignore[arg-type]
    with pytest.raises(ComposeError):
        compose(rendered, envelope)


def test_names_and_addresses_that_are_fine_pass() -> None:
    sample: Sample = SAMPLES["reminder"]
    rendered = render(sample.message, sample.context, now=sample.now)
    for name, address in [('Jörg "the bold" O\'Neil, Esq.', "jorg.o'neil+sw@mail.example.org"), ("Ann", "a@b")]:
        envelope = Envelope(message_id="<r@x.invalid>", to=address, to_name=name, sender="sw@x.org", date=sample.now)
        assert reparsed(compose(rendered, envelope))["To"].addresses[0].addr_spec == address
