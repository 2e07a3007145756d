"""Replies as people write them (``service.domain.inbound.reply_text``, ARCHITECTURE §10), one test per entry of
the corpus (tests/reply_corpus.py): the orders read are exactly the orders written, and a table-talk reply
reads as its writer's own words, whichever client wrote it, where the writer put it, and in whichever language
its client wrote the attribution.
"""

from __future__ import annotations

import email
import email.policy
from dataclasses import replace
from email.message import EmailMessage

import pytest

from emails.samples import REPLY_ADDRESS, SAMPLES
from rules import orders as grammar
from service.domain.inbound import InboundSettings, parse_message, reply_text
from tests.reply_corpus import CORPUS, Original, Shape

ORDERS = "conquer 3 5\nredeploy 3:2 5:1\nend"
TALK = "Good game so far. I will take the mountains next turn, watch out!\nSee you at the table."


def original(template: str = "your_turn") -> Original:
    """A mail of ours as sent: the sample's text and HTML, with its reply address (and so its marker)."""
    sample = SAMPLES[template]
    rendered = (
        sample.render() if sample.reply_address else type(sample)(sample.mail, reply_address=REPLY_ADDRESS).render()
    )
    return Original(
        text=rendered.text,
        html=rendered.html,
        sender_name="Small World",
        sender_address=REPLY_ADDRESS,
        subject=rendered.subject,
        message_id="<turn-4.17@smallworld.example>",
        to="bob@example.org",
    )


def read(reply: EmailMessage) -> str:
    message = parse_message(reply.as_bytes())
    return reply_text(message, InboundSettings())


def test_the_mails_answered_carry_the_marker_in_text_and_html() -> None:
    for template in ("your_turn", "table_talk", "orders_answer"):
        mail = original(template)
        # Above all of the mail but its first line, which says what the mail is (one subject for a whole game).
        lines = [line for line in mail.text.splitlines() if line.strip()]
        assert lines[1] == "##- Please type your reply above this line -##", template
        assert "Please type your reply above this line" in mail.html, template


@pytest.mark.parametrize("shape", CORPUS, ids=lambda shape: shape.name)
def test_the_orders_read_are_exactly_those_written(shape: Shape) -> None:
    reply = shape.write(original(), ORDERS)
    read_orders = grammar.parse(read(reply))
    assert [order.text for order in read_orders.orders] == ORDERS.splitlines()
    assert all(order.problem is None for order in read_orders.orders)


@pytest.mark.parametrize("shape", CORPUS, ids=lambda shape: shape.name)
def test_a_table_talk_reply_reads_as_its_writers_words_with_no_attribution(shape: Shape) -> None:
    reply = shape.write(original("table_talk"), TALK)
    said = read(reply)
    assert said.split() == shape.read_as(TALK).split(), said


def test_the_corpus_has_every_client_top_and_bottom_posted_in_four_languages() -> None:
    clients = {shape.client for shape in CORPUS}
    assert clients == {
        "gmail-web",
        "gmail-app",
        "outlook-desktop",
        "outlook-web",
        "apple-mail",
        "thunderbird",
        "k9",
        "fairemail",
    }
    for client in clients - {"outlook-web"}:
        assert {shape.posting for shape in CORPUS if shape.client == client} == {"top", "bottom"}, client
    assert {shape.language for shape in CORPUS} == {"en", "fr", "de", "es"}
    assert any(shape.html_only for shape in CORPUS) and any(shape.greeting for shape in CORPUS)


def test_a_two_line_french_gmail_attribution_is_not_read_as_the_reply() -> None:
    # A shorter reply address than the sample's: Gmail then wraps the line before "écrit :", as it was found.
    talk = replace(original("table_talk"), sender_address="play+9-x@smallworld.example")
    reply = Shape("gmail-web", "top", "fr").write(talk, "Bien joué")
    plain = reply.get_body(preferencelist=("plain",))
    assert plain is not None
    lines = str(plain.get_content()).splitlines()
    assert lines[6:8] == ["Le mar. 3 mars 2026 à 10:12, Small World <play+9-x@smallworld.example> a", "écrit :"]
    assert read(reply).split() == ["Bien", "joué"]


def test_what_follows_the_marker_unquoted_is_the_mail_answered() -> None:
    mail = original()
    reply = EmailMessage()
    reply["From"] = "bob@example.org"
    reply.set_content(f"pick 2\n\n{mail.text}")  # a client that quotes with no prefix nor header at all
    assert grammar.parse(read(reply)).orders[0].text == "pick 2"
    assert "Hello Bob" not in read(reply)


def test_a_bottom_posted_reply_under_a_long_quote_is_read_within_the_bounds() -> None:
    """The quote is dropped by a linear pass over at most ``quote_chars`` characters: the reply under 3,000
    quoted lines (80,000 characters) is read, and what the reply parser gets stays within ``reply_lines``;
    past ``quote_chars``, nothing is read."""
    quote = "\n".join(f"> line {n} of a long mail" for n in range(3_000))
    reply = EmailMessage()
    reply["From"] = "bob@example.org"
    reply.set_content(f"On Tue, 3 Mar 2026 at 10:12, Small World wrote:\n{quote}\n\npick 1\nend\n")
    parsed = email.message_from_bytes(reply.as_bytes(), policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    assert [o.text for o in grammar.parse(reply_text(parsed, InboundSettings(reply_lines=5))).orders] == [
        "pick 1",
        "end",
    ]
