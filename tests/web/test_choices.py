"""The page of mail choices (``/choices/<token>``, every mail's footer): no sign-in, a CSRF-protected form,
a 400 naming the field for what cannot be saved, 403 for a link that is not ours."""

from __future__ import annotations

import html
import re
from typing import Any

from flask import Flask
from sqlmodel import Session, select

from service.domain.models import GameNotification, NotifyMode, Player
from service.infra.db import get_engine
from tests.pages.test_pages import start_game


def token_of(app: Flask, email: str) -> tuple[str, int]:
    with Session(get_engine(app)) as session:
        player = session.exec(select(Player).where(Player.email == email)).one()
        url = app.extensions["smallworld.links"].choices_url(player.id or 0, serial=0)
        return "/" + url.split("/", 3)[3], player.id or 0


def form_of(page: str) -> dict[str, str]:
    """The form as the page fills it in (checked boxes and radios, selected options)."""
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]+)"', page))
    fields["default"] = re.search(r'name="default" value="(\w+)" checked', page).group(1)  # type: ignore[union-attr]
    for name in re.findall(r'name="(wants_\w+)" value="1" checked', page):
        fields[name] = "1"
    for name, options in re.findall(r'<select id="[\w-]+" name="(\w+)">(.*?)</select>', page, re.S):
        fields[name] = re.search(r'value="(\w+)" selected', options).group(1)  # type: ignore[union-attr]
    return fields


def test_the_page_shows_the_choices_and_saves_them(app: Flask) -> None:
    game_id, _ = start_game(app)
    path, player_id = token_of(app, "p1@example.org")
    client = app.test_client()
    page = client.get(path)
    assert page.status_code == 200
    text = html.unescape(page.get_data(as_text=True))
    assert "p1@example.org" in text and "Page test" in text and "the final results of each game" in text
    fields = form_of(page.get_data(as_text=True))
    assert fields["default"] == "every" and fields["digest_hour"] == "18" and fields[f"game_{game_id}"] == "default"
    fields.update({"default": "digest", "digest_hour": "7", f"game_{game_id}": "turns"})
    del fields["wants_messages"]
    saved = client.post(path, data=fields)
    assert saved.status_code == 303
    again = client.get(path)
    assert "the next mails follow them" in again.get_data(as_text=True)
    with Session(get_engine(app)) as session:
        player = session.get(Player, player_id)
        assert player is not None
        assert (player.notify, player.digest_hour, player.wants_messages, player.wants_notices) == (
            NotifyMode.DIGEST,
            7,
            False,
            True,
        )
        assert session.get(GameNotification, (player_id, game_id)).mode == NotifyMode.TURNS  # type: ignore[union-attr]


def test_what_cannot_be_saved_is_a_400_naming_the_field_and_nothing_changes(app: Flask) -> None:
    game_id, _ = start_game(app)
    path, player_id = token_of(app, "p1@example.org")
    client = app.test_client()
    fields = form_of(client.get(path).get_data(as_text=True))
    for change, words in (
        ({"digest_hour": "25"}, "digest_hour: an hour from 0 to 23."),
        ({"default": "sometimes"}, "default: choose one of every, turns, digest."),
        ({f"game_{game_id}": "loud"}, f"game_{game_id}: choose one of every, turns, digest or default."),
        ({"game_999999": "turns"}, "game_999999: not a game of this address."),
        ({"game_x": "turns"}, "game_x: not a game of this address."),
    ):
        refused = client.post(path, data={**fields, "digest_hour": "3", **change})
        assert refused.status_code == 400, change
        assert words in html.unescape(refused.get_data(as_text=True))
    with Session(get_engine(app)) as session:
        player = session.get(Player, player_id)
        assert player is not None and player.digest_hour == 18 and player.notify == NotifyMode.EVERY


def test_a_link_that_is_not_ours_is_refused_and_the_form_needs_its_csrf_token(app: Flask) -> None:
    start_game(app)
    path, _ = token_of(app, "p1@example.org")
    client = app.test_client()
    assert client.get(path[:-3] + "abc").status_code == 403
    assert client.post(path[:-3] + "abc", data={}).status_code in (400, 403)
    assert client.post(path, data={"default": "turns", "digest_hour": "3"}).status_code == 400  # no CSRF token
    # A token of another purpose (an unsubscribe link) does not open it.
    with Session(get_engine(app)) as session:
        player = session.exec(select(Player).where(Player.email == "p1@example.org")).one()
        token = app.extensions["smallworld.links"].unsubscribe_token(player.id or 0, "notices")
    assert client.get(f"/choices/{token}").status_code == 403


def test_the_unsubscribe_page_links_the_choices_and_says_the_results_always_come(app: Flask) -> None:
    start_game(app)
    path, player_id = token_of(app, "p1@example.org")
    url = app.extensions["smallworld.links"].unsubscribe_url(player_id, "notices")
    page = html.unescape(app.test_client().get("/" + url.split("/", 3)[3]).get_data(as_text=True))
    assert "final\nresults always come" in page or "final results always come" in page.replace("\n", " ")
    assert path in page


def test_my_games_links_the_page_of_choices(make_app: Any) -> None:
    from tests.web.test_sign_in import game_of, signed_in_client

    app = make_app(BASE_URL="https://smallworld.example")
    game_of(app, ["ann@example.org", "bob@example.org"])
    page = signed_in_client(app, "ann@example.org").get("/me").get_data(as_text=True)
    path, _ = token_of(app, "ann@example.org")
    assert f'href="https://smallworld.example{path}"' in page and "Choose which mails you get" in page


def test_a_digest_hour_already_past_today_is_said_to_start_tomorrow(app: Flask) -> None:
    """Issue 35: the page says when the first digest comes if its hour has passed today (it is not sent at
    once). Midnight has always passed; an hour still ahead is tests/domain/test_notifications.py's, on a
    clock of its own."""
    start_game(app)
    path, _ = token_of(app, "p1@example.org")
    client = app.test_client()
    fields = form_of(client.get(path).get_data(as_text=True))
    fields.update({"default": "digest", "digest_hour": "0"})
    assert client.post(path, data=fields).status_code == 303
    page = client.get(path).get_data(as_text=True)
    assert "Your first daily digest comes tomorrow at 00:00 (that hour has passed today)." in page
