"""Spectators (service/domain/watching.py, service/web/pages/watch.py; ARCHITECTURE §9): a game's watch link, a
public game watched without one, the list of public games, and the host's settings on the admin page and API.

On SQLite, and on PostgreSQL with Redis.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

from tests.api.conftest import bearer, create_game, new_game_body, token_of

BASE = "https://smallworld.example"
#: What a watcher must never be given: a seat's, an invitation's or the host's link, or an address.
PRIVATE = re.compile(r"/play/|/invite/|/admin/|/calendar/|/unsubscribe/|@example\.org")


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Flask:
    if request.param == "sqlite":
        return make_app(BASE_URL=BASE)
    return make_app(
        BASE_URL=BASE,
        DATABASE_URL=request.getfixturevalue("postgres_url"),
        BROKER_URL=request.getfixturevalue("redis_url"),
    )


def started_game(app: Flask, name: str = "Watched") -> tuple[int, str]:
    """A game that starts at once; its id and the host's admin token."""
    body = new_game_body(3, start_when_all_accepted=False) | {"name": name}
    created = create_game(app.test_client(), body)
    assert created.status_code == 201
    game = created.get_json()
    return game["id"], token_of(game["admin_url"])


def watching(app: Flask, game_id: int, admin: str, **change: Any) -> dict[str, Any]:
    client = app.test_client()
    if change:
        response = client.post(f"/api/admin/games/{game_id}/watching", headers=bearer(admin), json=change)
    else:
        response = client.get(f"/api/admin/games/{game_id}/watching", headers=bearer(admin))
    assert response.status_code == 200, response.get_json()
    return dict(response.get_json())


def test_the_watch_link_shows_the_board_and_nothing_private(app: Flask) -> None:
    game_id, admin = started_game(app)
    link = watching(app, game_id, admin)["watch_url"]
    assert link.startswith(f"{BASE}/games/{game_id}/watch/")
    page = app.test_client().get(link.removeprefix(BASE))
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "Watched" in text and "Turn 1 of" in text and "<svg" in text
    assert "Mail me my links" in text, "the game's public page offers a player their links by mail"
    assert not PRIVATE.search(text), PRIVATE.search(text)
    assert text.count(">hidden<") == 3, "every seat's coins are hidden"
    # The same link every time it is made: it can be shared and shown again.
    assert watching(app, game_id, admin)["watch_url"] == link


def test_a_tampered_another_game_s_or_replaced_watch_link_is_refused(app: Flask) -> None:
    game_id, admin = started_game(app)
    other_id, other_admin = started_game(app, "Other")
    link = watching(app, game_id, admin)["watch_url"].removeprefix(BASE)
    other = watching(app, other_id, other_admin)["watch_url"].removeprefix(BASE)
    client = app.test_client()
    assert client.get(link[:-2] + ("xx" if not link.endswith("xx") else "yy")).status_code == 403
    swapped = client.get(f"/games/{game_id}/watch/{other.rsplit('/', 1)[-1]}")
    assert swapped.status_code == 403 and "Watched" not in swapped.get_data(as_text=True)
    turn_token = client.get(f"/games/{game_id}/watch/{admin}")
    assert turn_token.status_code == 403, "an admin token is no watch token"
    renewed = watching(app, game_id, admin, new_link=True)["watch_url"].removeprefix(BASE)
    assert renewed != link
    old = client.get(link)
    assert old.status_code == 403 and "made a new one" in old.get_data(as_text=True)
    assert client.get(renewed).status_code == 200


def test_a_public_game_is_watched_without_a_link_and_listed(app: Flask) -> None:
    game_id, admin = started_game(app, "Open table")
    private_id, _ = started_game(app, "Closed table")
    client = app.test_client()
    for gid in (game_id, private_id, 99999):
        refused = client.get(f"/games/{gid}/watch")
        assert refused.status_code == 404 and f"There is no public game {gid}" in refused.get_data(as_text=True)
    assert "Open table" not in client.get("/games/public").get_data(as_text=True)

    answer = watching(app, game_id, admin, public=True)
    assert answer["public"] is True and answer["public_url"] == f"{BASE}/games/{game_id}/watch"
    page = client.get(f"/games/{game_id}/watch")
    assert page.status_code == 200 and not PRIVATE.search(page.get_data(as_text=True))
    listing = client.get("/games/public").get_data(as_text=True)
    assert "Open table" in listing and "Closed table" not in listing
    assert f'href="/games/{game_id}/watch"' in listing and not PRIVATE.search(listing)

    assert watching(app, game_id, admin, public=False)["public_url"] is None
    assert client.get(f"/games/{game_id}/watch").status_code == 404
    assert "Open table" not in client.get("/games/public").get_data(as_text=True)


def test_bad_settings_are_refused_naming_the_field(app: Flask) -> None:
    game_id, admin = started_game(app)
    client = app.test_client()
    url = f"/api/admin/games/{game_id}/watching"
    for body, field in (({}, "public"), ({"public": "yes"}, "public"), ({"public": True, "colour": 1}, "colour")):
        response = client.post(url, headers=bearer(admin), json=body)
        assert response.status_code in (400, 422), (body, response.status_code)
        assert field in response.get_data(as_text=True), body
    again = client.post(url, headers=bearer(admin), json={"public": False})
    assert again.status_code == 400 and "private already" in again.get_json()["error"]
    assert client.post(url, json={"public": True}).status_code in (401, 403), "the host's token is needed"


def test_the_host_makes_the_game_public_on_the_admin_page_and_the_players_see_it_in_the_log(app: Flask) -> None:
    game_id, admin = started_game(app, "Shown")
    host = app.test_client()
    assert host.get(f"/admin/{admin}").status_code == 302
    page = host.get(f"/admin/games/{game_id}").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert csrf and "Make the game public" in page and f"/games/{game_id}/watch/" in page
    done = host.post(f"/admin/games/{game_id}/watching", data={"public": "1", "csrf_token": csrf.group(1)})
    assert done.status_code == 303
    assert "The game is public" in host.get(f"/admin/games/{game_id}").get_data(as_text=True)
    assert app.test_client().get(f"/games/{game_id}/watch").status_code == 200
    assert "made the game public" in host.get(f"/admin/games/{game_id}").get_data(as_text=True)


def test_the_watch_page_shows_the_table_talk_read_only_and_hidden_messages_as_hidden(app: Flask) -> None:
    from service.domain import table_talk
    from service.domain.models import Game
    from service.infra.db import get_session

    game_id, admin = started_game(app, "Chatty")
    with app.app_context():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None
        table_talk.post_message(session, game, 1, "Well *played*")
        rude = table_talk.post_message(session, game, 2, "something rude")
        table_talk.hide_message(session, game, rude.id or 0, "host")
    link = watching(app, game_id, admin)["watch_url"]
    text = app.test_client().get(link.removeprefix(BASE)).get_data(as_text=True)
    board = text[text.index('id="table-talk"') :]
    assert "Well <em>played</em>" in board and "hidden by the host" in board and "something rude" not in board
    assert "<form" not in board.split("</section>")[0], "spectators read, never write nor hide"
    assert not PRIVATE.search(text)


def test_watchers_read_the_history_told_to_nobody(app: Flask) -> None:
    game_id, admin = started_game(app, "Told")
    link = watching(app, game_id, admin)["watch_url"].removeprefix(BASE)
    client = app.test_client()
    page = client.get(link).get_data(as_text=True)
    assert f'href="{link}/history"' in page
    history = client.get(f"{link}/history")
    assert history.status_code == 200
    text = history.get_data(as_text=True)
    assert "History of Told" in text and not PRIVATE.search(text)
    assert f'href="{link}"' in text, "back to the watch page, not to a player's game page"
    assert client.get(f"{link}/history?step=0").status_code == 200
    assert client.get(f"{link}/history?player=9").status_code == 400
    assert client.get(f"{link[:-2]}zz/history").status_code == 403
    assert client.get(f"/games/{game_id}/watch/history").status_code == 404, "not public"
    watching(app, game_id, admin, public=True)
    public = client.get(f"/games/{game_id}/watch/history")
    assert public.status_code == 200 and not PRIVATE.search(public.get_data(as_text=True))
