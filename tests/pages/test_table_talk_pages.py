"""Table talk on the seat's pages through Flask's test client: posting, refusals that keep the text, the
host's "hide", and a message's Markdown shown safely (the browser tests are in ``test_table_talk_browser``)."""

from __future__ import annotations

import html
import re

from flask import Flask
from sqlmodel import Session, select

from emails.table_talk import LONGEST
from service.domain import table_talk
from service.domain.models import OutboxMail
from service.infra.db import get_engine
from tests.pages.test_pages import csrf_of, start_game


def seated(app: Flask, link: str):  # type: ignore[no-untyped-def]
    client = app.test_client()
    assert client.get(link).status_code == 302
    return client


def say(client, game_id: int, text: str, back: str | None = None):  # type: ignore[no-untyped-def]
    page = client.get(f"/games/{game_id}")
    data = {"csrf_token": csrf_of(page.text), "text": text}
    if back:
        data["back"] = back
    return client.post(f"/games/{game_id}/talk", data=data)


def test_a_message_posted_on_the_game_page_is_shown_to_every_seat_and_mailed_to_the_others(app: Flask) -> None:
    game_id, links = start_game(app, players=3)
    ann, bob = seated(app, links[0]), seated(app, links[1])
    posted = say(bob, game_id, "Hello *table*")
    assert posted.status_code == 303 and posted.headers["Location"].endswith(f"/games/{game_id}#table-talk")
    for client in (ann, bob):
        page = client.get(f"/games/{game_id}").text
        assert "<em>table</em>" in page and "Table talk" in page
    with Session(get_engine(app)) as session:
        mails = session.exec(select(OutboxMail).where(OutboxMail.template == "table_talk")).all()
        assert sorted(m.to_email for m in mails) == ["p0@example.org", "p2@example.org"]


def test_the_turn_page_shows_the_board_and_sends_back_to_itself(app: Flask) -> None:
    game_id, links = start_game(app)
    ann = seated(app, links[0])  # seat 0 plays first
    turn = ann.get(f"/games/{game_id}/turn")
    assert turn.status_code == 200 and 'id="table-talk"' in turn.text
    data = {"csrf_token": csrf_of(turn.text), "text": "My move", "back": f"/games/{game_id}/turn"}
    posted = ann.post(f"/games/{game_id}/talk", data=data)
    assert posted.headers["Location"].endswith(f"/games/{game_id}/turn#table-talk")
    assert "My move" in ann.get(f"/games/{game_id}/turn").text
    # A "back" that is not one of the game's own pages goes to the game page.
    data["back"] = "https://evil.example/"
    assert ann.post(f"/games/{game_id}/talk", data=data).headers["Location"].endswith(f"/games/{game_id}#table-talk")


def test_a_message_too_long_is_refused_with_a_400_naming_the_field_and_the_text_is_kept(app: Flask) -> None:
    game_id, links = start_game(app)
    bob = seated(app, links[1])
    text = "x" * (LONGEST + 5)
    refused = say(bob, game_id, text)
    assert refused.status_code == 400
    page = html.unescape(refused.text)
    assert "Your message: at most 2,000 characters (this one has 2,005)." in page
    assert f">{text}</textarea>" in page and 'aria-invalid="true"' in page
    assert table_talk.RATE and "Nobody has written at this table yet." in page


def test_past_the_rate_limit_a_429_says_when_to_try_again(app: Flask) -> None:
    game_id, links = start_game(app)
    bob = seated(app, links[1])
    for n in range(table_talk.RATE):
        assert say(bob, game_id, f"spam {n}").status_code == 303
    refused = say(bob, game_id, "one more")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert "wait" in html.unescape(refused.text) and ">one more</textarea>" in refused.text


def test_the_host_hides_a_message_and_everyone_sees_hidden_by_the_host(app: Flask) -> None:
    game_id, links = start_game(app)
    host, bob = seated(app, links[0]), seated(app, links[1])  # the first player is the host
    say(bob, game_id, "something rude")
    bob_page = bob.get(f"/games/{game_id}").text
    assert "/hide" not in bob_page, "only the host is offered the button"
    host_page = host.get(f"/games/{game_id}").text
    message_id = re.search(rf"/games/{game_id}/talk/(\d+)/hide", host_page).group(1)  # type: ignore[union-attr]
    # Bob cannot hide it, even by posting the form himself.
    bob.post(f"/games/{game_id}/talk/{message_id}/hide", data={"csrf_token": csrf_of(bob_page)})
    assert "something rude" in bob.get(f"/games/{game_id}").text
    hidden = host.post(f"/games/{game_id}/talk/{message_id}/hide", data={"csrf_token": csrf_of(host_page)})
    assert hidden.status_code == 303
    for client in (host, bob):
        page = client.get(f"/games/{game_id}").text
        assert "something rude" not in page and "hidden by the host" in page


def test_a_script_in_a_message_is_shown_as_text_on_the_page(app: Flask) -> None:
    game_id, links = start_game(app)
    bob = seated(app, links[1])
    say(bob, game_id, '<script>alert("x")</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)>')
    page = bob.get(f"/games/{game_id}").text
    talk = page[page.index('id="table-talk"') :]
    assert "<script>alert" not in talk and "<img src=x" not in talk and 'href="javascript' not in talk
    assert "&lt;script&gt;" in talk


def test_posting_needs_the_seat_s_session_and_a_csrf_token(app: Flask) -> None:
    game_id, links = start_game(app)
    assert app.test_client().post(f"/games/{game_id}/talk", data={"text": "hi"}).status_code in (400, 403)
    bob = seated(app, links[1])
    assert bob.post(f"/games/{game_id}/talk", data={"text": "hi"}).status_code == 400  # no CSRF token
