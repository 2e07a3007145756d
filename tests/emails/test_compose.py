"""emails.compose: headers, threading, one-click unsubscribe, parts; the same row gives the same bytes."""

from __future__ import annotations

import email
import email.policy
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emails.compose import MOST_BYTES, WIRE, ComposeError, Envelope, compose, list_id, thread_id, to_bytes, write
from emails.delivery import envelope_addresses
from emails.render import BOARD_CID, Rendered
from emails.samples import ALL, SAMPLES, Sample

THREAD = thread_id(17, datetime(2026, 2, 20, 18, 0, tzinfo=UTC), "smallworld.invalid")


def rendered_sample(name: str) -> Rendered:
    sample: Sample = SAMPLES[name]
    return sample.mail.render(
        now=sample.now,
        time_zone=sample.time_zone,
        game_url=sample.game_url,
        unsubscribe_url=sample.unsubscribe_url,
    )


def composed(name: str, message_id: str = "<row-42@smallworld.invalid>") -> email.message.Message:
    sample: Sample = SAMPLES[name]
    rendered = rendered_sample(name)
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
    # The final results are never silenced (ARCHITECTURE §9): no unsubscribe, as the mails that let one play.
    for name in ("invitation", "admin_link", "your_turn", "redeploy_needed", "game_over"):
        mail = reparsed(composed(name))
        assert mail["List-Unsubscribe"] is None and mail["List-Unsubscribe-Post"] is None


def test_a_mail_has_a_plain_text_part_first_then_the_html() -> None:
    mail = reparsed(composed("reminder"))
    assert mail.get_content_type() == "multipart/alternative"
    parts = list(mail.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    assert "2 hours left." in parts[0].get_content()
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
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    fields = {"message_id": "<row-1@smallworld.invalid>", "to": "bob@example.org", "sender": "sw@example.org"}
    envelope = Envelope(**{**fields, "date": sample.now, field: value})  # type: ignore[arg-type]
    with pytest.raises(ComposeError):
        compose(rendered, envelope)


def test_names_and_addresses_that_are_fine_pass() -> None:
    sample: Sample = SAMPLES["reminder"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    for name, address in [('Jörg "the bold" O\'Neil, Esq.', "jorg.o'neil+sw@mail.example.org"), ("Ann", "a@b")]:
        envelope = Envelope(message_id="<r@x.invalid>", to=address, to_name=name, sender="sw@x.org", date=sample.now)
        assert reparsed(compose(rendered, envelope))["To"].addresses[0].addr_spec == address


# -- the bytes delivery writes (write) are those of the standard library's build (compose, to_bytes) ---------
ENVELOPES = [
    Envelope(
        message_id="<a@x.invalid>", to="bob@example.org", sender="sw@example.org", date=datetime(2026, 3, 1, tzinfo=UTC)
    ),
    Envelope(
        message_id="<row-42@smallworld.invalid>",
        to="bob@example.org",
        to_name="Bob",
        sender="Small World by Mail <smallworld@smallworld.example>",
        date=datetime(2026, 3, 1, 11, 30, 5, 120000, tzinfo=UTC),
        thread_id=THREAD,
        unsubscribe_url="https://smallworld.example/unsubscribe/" + "x" * 300,
        reply_to="play+17-1-4-1-x-0123456789abcdef0123@smallworld.example",
    ),
    Envelope(
        message_id="<b@x.invalid>",
        to="jorg.o'neil+sw@mail.example.org",
        to_name='Jörg "the bold" O\'Neil, Esq.',
        sender="Zoë <zoe@example.org>",
        date=datetime(2026, 1, 1, tzinfo=UTC),
        thread_id="<b@x.invalid>",
    ),
]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_delivery_writes_the_bytes_the_standard_library_builds(name: str) -> None:
    rendered = rendered_sample(name)
    variants = [
        rendered,
        # A long subject out of ASCII (an encoded, folded header), and text with every kind of line end, a line
        # that ends in spaces and one of quoted-printable's long lines.
        replace(rendered, subject="Zoë's turn " * 12, text=".dot\r\nCR only\rtabs\t \n" + "é" * 80 + "\n\n"),
        replace(rendered, text=rendered.text.rstrip("\n"), html=rendered.html + "\r\n  ends in spaces  "),
        replace(rendered, images={**rendered.images, "second@smallworld": b"\x89PNG more"}),
    ]
    for variant in variants:
        for envelope in ENVELOPES:
            mail = write(variant, envelope)
            built = compose(variant, envelope)
            assert mail.data == to_bytes(built), (name, envelope.message_id)
            # The ranges said to hold no dot are each picture's base64, and hold none.
            assert len(mail.dotless) == len(variant.images)
            for start, end in mail.dotless:
                assert b"." not in mail.data[start:end] and mail.data[start:end].endswith(b"\r\n")
            assert (mail.sender, [mail.recipient]) == envelope_addresses(built)
            assert (mail.date, mail.message_id) == (built["Date"], built["Message-ID"])


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(st.characters(codec="utf-8"), max_size=300),
    html=st.text(st.sampled_from("<p>&é \t\r\n.=-x\u00a0\u2028\x0b\x85"), max_size=300),
    name=st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=30),
)
def test_delivery_writes_the_same_bytes_for_any_text_and_name(text: str, html: str, name: str) -> None:
    sample: Sample = SAMPLES["your_turn"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    rendered = replace(rendered, text=text or "-", html=html or "-")
    envelope = Envelope(
        message_id="<h@x.invalid>", to="ann@example.org", to_name=name or None, sender="sw@x.org", date=sample.now
    )
    mail, built = write(rendered, envelope), compose(rendered, envelope)
    assert mail.data == to_bytes(built)
    assert (mail.sender, [mail.recipient]) == envelope_addresses(built)


def test_a_mail_without_text_is_written_as_the_standard_library_writes_it() -> None:
    sample: Sample = SAMPLES["auto_passed"]
    rendered = replace(sample.mail.render(now=sample.now, game_url=sample.game_url), text="")
    envelope = ENVELOPES[0]
    assert write(rendered, envelope).data == to_bytes(compose(rendered, envelope))


def test_delivery_refuses_what_compose_refuses() -> None:
    sample: Sample = SAMPLES["reminder"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    envelope = Envelope(
        message_id="<r@x.invalid>", to="ann@example.org\r\nRCPT TO:<eve@x.org>", sender="s@x.org", date=sample.now
    )
    with pytest.raises(ComposeError):
        write(rendered, envelope)


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_kind_of_mail_weighs_at_most_30_kb_as_sent(name: str) -> None:
    """ARCHITECTURE §6: each kind's sample, with every link and header it can carry (a long name, a signed reply
    address, the game's list), weighs at most ``MOST_BYTES`` as sent; the board picture rides only on the mails
    that open a step, once."""
    sample: Sample = ALL[name]
    rendered = sample.render()
    envelope = Envelope(
        message_id="<0123456789abcdef0123456789abcdef@smallworld.example>",
        to="a.rather.long.address.of.a.player@mail.example.org",
        to_name="A player with a name of sixty-four characters, as long as may be",
        sender="Small World by Mail <smallworld@smallworld.example>",
        date=sample.now,
        thread_id=THREAD,
        unsubscribe_url=sample.unsubscribe_url,
        reply_to=sample.reply_address,
        list_id=list_id(17, "A game with a long name, as long as a name may be", "play.smallworld.example"),
    )
    mail = write(rendered, envelope)
    assert len(mail.data) <= MOST_BYTES, f"{name}: {len(mail.data)} bytes"
    pictures = [p for p in reparsed(compose(rendered, envelope)).walk() if p.get_content_type() == "image/png"]
    assert len(pictures) == (1 if sample.mail.template in ("your_turn", "redeploy_needed") else 0), name
