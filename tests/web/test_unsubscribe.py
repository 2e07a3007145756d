"""The unsubscribe link of reminders and notices: a page on GET, the change on POST (RFC 8058 one-click)."""

from __future__ import annotations

from flask import Flask
from sqlmodel import select

from service.domain.links import LinkMaker
from service.domain.models import Player
from service.infra.db import get_session


def player_and_links(app: Flask) -> tuple[int, LinkMaker]:
    with app.app_context():
        session = get_session()
        player = Player(email="ann@example.org", display_name="Ann")
        session.add(player)
        session.commit()
        return player.id or 0, app.extensions["smallworld.links"]


def flags(app: Flask) -> tuple[bool, bool]:
    with app.app_context():
        player = get_session().exec(select(Player)).one()
        return player.wants_reminders, player.wants_notices


def path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def test_opening_the_link_changes_nothing_and_offers_a_button(app: Flask) -> None:
    player_id, links = player_and_links(app)
    page = app.test_client().get(path(links.unsubscribe_url(player_id, "reminders")))
    assert page.status_code == 200
    assert b"Stop reminders before your deadlines" in page.data and b'method="post"' in page.data
    assert flags(app) == (True, True)


def test_the_one_click_post_of_a_mail_provider_turns_reminders_off(app: Flask) -> None:
    player_id, links = player_and_links(app)
    response = app.test_client().post(
        path(links.unsubscribe_url(player_id, "reminders")),
        data={"List-Unsubscribe": "One-Click"},
    )
    assert response.status_code == 200
    assert flags(app) == (False, True)


def test_a_notices_link_turns_notices_off_only(app: Flask) -> None:
    player_id, links = player_and_links(app)
    app.test_client().post(path(links.unsubscribe_url(player_id, "notices")))
    assert flags(app) == (True, False)


def test_a_tampered_or_foreign_token_is_refused_with_a_readable_page(app: Flask) -> None:
    player_id, links = player_and_links(app)
    url = path(links.unsubscribe_url(player_id, "notices"))
    tampered = app.test_client().post(url[:-3] + "abc")
    assert tampered.status_code == 403 and b"This link does not work" in tampered.data
    turn_token = links.turn_token(1, 0, "secret", serial=0)  # type: ignore[attr-defined]
    assert app.test_client().post(f"/unsubscribe/{turn_token}").status_code == 403
    assert flags(app) == (True, True)


def test_a_table_talk_link_turns_table_talk_off_only(app: Flask) -> None:
    player_id, links = player_and_links(app)
    page = app.test_client().get(path(links.unsubscribe_url(player_id, "messages")))
    assert page.status_code == 200 and b"Stop mails of table talk" in page.data
    app.test_client().post(path(links.unsubscribe_url(player_id, "messages")))
    assert flags(app) == (True, True)
    with app.app_context():
        assert get_session().exec(select(Player)).one().wants_messages is False
