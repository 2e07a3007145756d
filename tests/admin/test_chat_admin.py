"""A game's chat through the create request and form, the admin API and the admin page: checked at the edge
(4xx naming the field), shown back masked, never shown to the players."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

from service.domain.links import current_links
from service.domain.models import AuditEntry, ChatNotice, Game, Seat
from service.infra.db import get_engine

from ..api.conftest import bearer, create_game, new_game_body, token_of

DISCORD = "discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js"
SECRET = "JHMHI8qBe7bk2ZwO5U711o3dV_js"
OTHER = "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ"


@pytest.fixture(params=["sqlite", "postgres"])
def chat_app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Flask:
    if request.param == "sqlite":
        return make_app()
    return make_app(DATABASE_URL=request.getfixturevalue("postgres_url"))


def create(client: Any, chat_url: Any) -> Any:
    body = new_game_body(2, start_when_all_accepted=False) | {"chat_url": chat_url}
    return create_game(client, body)


def game_row(app: Flask, game_id: int) -> Game:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game


@pytest.mark.parametrize("bad", ["nonsense", "mailto://u:p@gmail.com", "json://127.0.0.1/hook", 12])
def test_a_chat_address_apprise_cannot_use_is_refused_naming_the_field(chat_app: Flask, bad: Any) -> None:
    response = create(chat_app.test_client(), bad)
    assert response.status_code == 400
    assert "chat_url" in response.get_json()["error"]
    with Session(get_engine(chat_app)) as session:
        assert session.exec(select(Game)).first() is None


def test_the_host_sees_the_chat_masked_and_the_players_never_see_it(chat_app: Flask) -> None:
    client = chat_app.test_client()
    created = create(client, DISCORD)
    assert created.status_code == 201
    game_id, admin = created.get_json()["id"], token_of(created.get_json()["admin_url"])
    assert game_row(chat_app, game_id).chat_url == DISCORD
    assert SECRET not in created.get_data(as_text=True)

    view = client.get(f"/api/admin/games/{game_id}", headers=bearer(admin)).get_json()
    assert view["chat"]["service"] == "Discord"
    assert view["chat"]["url"].startswith("discord://") and SECRET not in view["chat"]["url"]
    assert [n["kind"] for n in view["chat"]["notices"]] == ["turn"]

    # The admin page (the host's browser) shows it masked too.
    assert client.get(f"/admin/{admin}").status_code == 302
    page = client.get(f"/admin/games/{game_id}").get_data(as_text=True)
    assert "discord://" in page and SECRET not in page

    # A player's API view and pages: no trace of the address.
    with Session(get_engine(chat_app)) as session:
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 0)).one()
    with chat_app.app_context():
        token = token_of(current_links().turn_url(game_id, 0, seat.secret, serial=0))
    player = chat_app.test_client()
    answer = player.get(f"/api/games/{game_id}", headers=bearer(token)).get_data(as_text=True)
    assert "discord" not in answer.lower()
    assert player.get(f"/play/{token}").status_code == 302
    for path in (f"/games/{game_id}", f"/games/{game_id}/turn", f"/games/{game_id}/history"):
        text = player.get(path, follow_redirects=True).get_data(as_text=True)
        assert SECRET not in text and "discord://" not in text, path


def test_the_admin_api_connects_changes_and_disconnects_the_chat(chat_app: Flask) -> None:
    client = chat_app.test_client()
    created = create(client, None).get_json()
    game_id, admin = created["id"], token_of(created["admin_url"])

    def set_chat(value: Any) -> Any:
        return client.post(f"/api/admin/games/{game_id}/chat", headers=bearer(admin), json={"chat_url": value})

    refused = set_chat("discord://")
    assert refused.status_code == 400 and "chat_url" in refused.get_json()["error"]
    assert set_chat("").status_code == 400  # no chat to remove
    connected = set_chat(DISCORD)
    assert connected.status_code == 200
    assert connected.get_json()["service"] == "Discord" and SECRET not in connected.get_data(as_text=True)
    assert set_chat(DISCORD).status_code == 400  # the same again: nothing changes
    assert set_chat(OTHER).get_json()["service"] == "Slack"
    gone = set_chat(None)
    assert gone.status_code == 200 and gone.get_json()["url"] is None
    assert game_row(chat_app, game_id).chat_url is None
    # Another game's admin link cannot touch it.
    other = create(client, None).get_json()
    foreign = client.post(
        f"/api/admin/games/{game_id}/chat", headers=bearer(token_of(other["admin_url"])), json={"chat_url": DISCORD}
    )
    assert foreign.status_code == 403

    with Session(get_engine(chat_app)) as session:
        entries = session.exec(select(AuditEntry).where(AuditEntry.game_id == game_id, AuditEntry.act == "chat")).all()
        greetings = session.exec(select(ChatNotice).where(ChatNotice.game_id == game_id, ChatNotice.kind == "chat"))
        assert len(list(greetings)) == 2  # one for each chat connected
    assert [e.details for e in entries] == [{"service": "Discord"}, {"service": "Slack"}, {"service": None}]
    # The game page's log tells the players which service, never the address.
    log = client.get(f"/api/admin/games/{game_id}", headers=bearer(admin)).get_json()["game"]["audit"]
    assert SECRET not in str(log)


def test_the_admin_page_form_connects_a_chat_and_refuses_a_bad_one(chat_app: Flask) -> None:
    client = chat_app.test_client()
    created = create(client, None).get_json()
    game_id = created["id"]
    assert client.get(f"/admin/{token_of(created['admin_url'])}").status_code == 302
    page = client.get(f"/admin/games/{game_id}").get_data(as_text=True)
    csrf = page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    bad = client.post(f"/admin/games/{game_id}/chat", data={"csrf_token": csrf, "chat_url": "nonsense"})
    assert bad.status_code == 303
    shown = client.get(f"/admin/games/{game_id}").get_data(as_text=True)
    assert "chat_url: apprise cannot read this chat address" in shown
    good = client.post(f"/admin/games/{game_id}/chat", data={"csrf_token": csrf, "chat_url": DISCORD})
    assert good.status_code == 303
    shown = client.get(f"/admin/games/{game_id}").get_data(as_text=True)
    assert "The chat is connected" in shown and "Notices go to Discord" in shown and SECRET not in shown
    assert game_row(chat_app, game_id).chat_url == DISCORD


def test_the_create_form_names_the_chat_field_when_it_is_wrong(chat_app: Flask) -> None:
    client = chat_app.test_client()
    form = client.get("/games/new").get_data(as_text=True)
    csrf = form.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    data = {
        "csrf_token": csrf,
        "name": "Formed",
        "name-0": "Ann",
        "email-0": "ann@example.org",
        "name-1": "Bob",
        "email-1": "bob@example.org",
        "turn_hours": "48",
        "defender_hours": "12",
        "chat_url": "nonsense",
    }
    refused = client.post("/games/new", data=data)
    assert refused.status_code == 400
    assert "Chat address: apprise cannot read this chat address" in refused.get_data(as_text=True)
    accepted = client.post("/games/new", data=data | {"chat_url": DISCORD})
    assert accepted.status_code == 303
    with Session(get_engine(chat_app)) as session:
        game = session.exec(select(Game).where(Game.name == "Formed")).one()
        assert game.chat_url == DISCORD


def test_the_admin_command_connects_and_removes_the_chat(chat_app: Flask) -> None:
    game_id = create(chat_app.test_client(), None).get_json()["id"]
    runner = chat_app.test_cli_runner()
    connected = runner.invoke(args=["admin", "chat", str(game_id), DISCORD])
    assert connected.exit_code == 0, connected.output
    assert "chat discord://" in connected.output and SECRET not in connected.output
    refused = runner.invoke(args=["admin", "chat", str(game_id), "nonsense"])
    assert refused.exit_code != 0 and "chat_url: apprise cannot read" in refused.output
    removed = runner.invoke(args=["admin", "chat", str(game_id), "--remove"])
    assert removed.exit_code == 0 and "chat none" in removed.output
    assert game_row(chat_app, game_id).chat_url is None
