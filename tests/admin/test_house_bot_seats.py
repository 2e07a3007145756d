"""The house bot takes a seat from the host's admin API, admin page and command, and at creation (the API
and the lobby's form); the player takes it back with the button on their page (POST); the history tells
the bot's steps. The bot's play itself: tests/domain/test_house_bot.py; in a real worker:
tests/worker/test_house_bot_worker.py."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

from rules.bots import Budget
from service.domain import house_bot
from service.domain.models import AuditEntry, Seat, SeatController
from service.infra.db import get_engine

from ..api.conftest import bearer, create_game, new_game_body, token_of

SMALL = Budget(worlds=1, breadth=2, deep_worlds=1, shortlist=1)


@pytest.fixture
def game(api: Any, outbox: Any) -> dict[str, Any]:
    """A started 2-player game: its id, the host's admin token and URL, and the seats' turn paths."""
    created = create_game(api, new_game_body(2, start_when_all_accepted=False)).get_json()
    seats = {i: "/play/" + outbox.seat_token(m) for i, m in enumerate(outbox("invitation"))}
    return {
        "id": created["id"],
        "admin": token_of(created["admin_url"]),
        "admin_url": created["admin_url"],
        "seats": seats,
    }


def controllers(app: Flask, game_id: int) -> list[str]:
    with Session(get_engine(app)) as session:
        rows = session.exec(select(Seat).where(Seat.game_id == game_id).order_by(Seat.seat)).all()  # type: ignore[arg-type]
        return [str(s.controller) for s in rows]


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found
    return found.group(1)


def test_the_host_gives_a_seat_to_the_bot_over_the_api(api: Any, api_app: Flask, game: dict, outbox: Any) -> None:
    answer = api.post(f"/api/admin/games/{game['id']}/bot", headers=bearer(game["admin"]), json={"seat": 1})
    assert answer.status_code == 200, answer.get_json()
    assert [s["bot"] for s in answer.get_json()["seats"]] == [False, True]
    assert controllers(api_app, game["id"]) == ["person", "bot"]
    [told] = outbox("seat_to_bot")
    assert told.to_email == "p1@example.org" and told.context["reason"] == "the host gave it your seat"
    again = api.post(f"/api/admin/games/{game['id']}/bot", headers=bearer(game["admin"]), json={"seat": 1})
    assert again.status_code == 409 and "already plays seat 2" in again.get_data(as_text=True)
    missing = api.post(f"/api/admin/games/{game['id']}/bot", headers=bearer(game["admin"]), json={"seat": 4})
    assert missing.status_code == 404
    bad = api.post(f"/api/admin/games/{game['id']}/bot", headers=bearer(game["admin"]), json={"seat": "one"})
    assert bad.status_code == 400 and "seat" in bad.get_data(as_text=True)
    nobody = api.post(f"/api/admin/games/{game['id']}/bot", json={"seat": 0})
    assert nobody.status_code in (401, 403)
    assert controllers(api_app, game["id"]) == ["person", "bot"]


def test_the_admin_command_gives_a_seat_to_the_bot(api_app: Flask, game: dict) -> None:
    runner = api_app.test_cli_runner()
    result = runner.invoke(args=["admin", "bot", str(game["id"]), "0"])
    assert result.exit_code == 0, result.output
    assert f"game {game['id']}: active" in result.output
    assert controllers(api_app, game["id"]) == ["bot", "person"]
    refused = runner.invoke(args=["admin", "bot", str(game["id"]), "0"])
    assert refused.exit_code != 0 and "already plays seat 1" in refused.output
    with Session(get_engine(api_app)) as session:
        [entry] = session.exec(select(AuditEntry).where(AuditEntry.act == "bot")).all()
        assert entry.actor == "site admin (command line)" and entry.details["seat"] == 0


def test_the_admin_page_gives_a_seat_to_the_bot(api_app: Flask, game: dict) -> None:
    host = api_app.test_client()
    page = host.get("/admin/" + game["admin"], follow_redirects=True)
    assert page.status_code == 200 and "to the house bot" in page.get_data(as_text=True)
    done = host.post(
        f"/admin/games/{game['id']}/bot", data={"seat": "1", "csrf_token": csrf_of(page.get_data(as_text=True))}
    )
    assert done.status_code == 303
    shown = host.get(f"/admin/games/{game['id']}").get_data(as_text=True)
    assert "The house bot plays that seat now" in shown and "house bot</span>" in shown
    assert controllers(api_app, game["id"]) == ["person", "bot"]
    page = host.get(f"/admin/games/{game['id']}").get_data(as_text=True)
    host.post(f"/admin/games/{game['id']}/bot", data={"seat": "x", "csrf_token": csrf_of(page)})
    assert "Choose the seat" in host.get(f"/admin/games/{game['id']}").get_data(as_text=True)


def test_the_player_takes_the_seat_back_from_their_page(api_app: Flask, game: dict) -> None:
    api_app.test_cli_runner().invoke(args=["admin", "bot", str(game["id"]), "1"])
    player = api_app.test_client()
    page = player.get(game["seats"][1], follow_redirects=True).get_data(as_text=True)
    assert "The house bot plays your seat" in page and "Take my seat back" in page
    without_token = player.post(f"/games/{game['id']}/turn/take-back")
    assert without_token.status_code == 400 and controllers(api_app, game["id"]) == ["person", "bot"]
    back = player.post(f"/games/{game['id']}/turn/take-back", data={"csrf_token": csrf_of(page)})
    assert back.status_code == 302
    assert controllers(api_app, game["id"]) == ["person", "person"]
    page = player.get(f"/games/{game['id']}").get_data(as_text=True)
    assert "Your seat is yours again" in page and "Take my seat back" not in page
    again = player.post(f"/games/{game['id']}/turn/take-back", data={"csrf_token": csrf_of(page)})
    assert again.status_code == 302
    assert "the house bot does not hold it" in player.get(f"/games/{game['id']}").get_data(as_text=True)
    stranger = api_app.test_client().post(f"/games/{game['id']}/turn/take-back")
    assert stranger.status_code in (400, 403)


def test_while_the_bot_holds_the_seat_the_player_s_steps_are_refused(api_app: Flask, game: dict) -> None:
    api_app.test_cli_runner().invoke(args=["admin", "bot", str(game["id"]), "0"])
    player = api_app.test_client()
    page = player.get(game["seats"][0], follow_redirects=True).get_data(as_text=True)
    version = re.search(r'name="version" value="(\d+)"', page)
    assert version, "the seat is awaited: its turn page shows, with the way back"
    sent = player.post(
        f"/games/{game['id']}/turn",
        data={"csrf_token": csrf_of(page), "version": version.group(1), "type": "pick", "combo": "0"},
        follow_redirects=True,
    )
    assert "take it back first" in sent.get_data(as_text=True)


def test_the_history_tells_the_bot_s_steps(api_app: Flask, game: dict) -> None:
    api_app.test_cli_runner().invoke(args=["admin", "bot", str(game["id"]), "0"])
    with api_app.app_context(), Session(get_engine(api_app)) as session:
        links = api_app.extensions["smallworld.links"]
        assert house_bot.play_bot_turns(session, game["id"], links, budget=SMALL).steps >= 2
    watcher = api_app.test_client()
    watcher.get(game["seats"][1])
    history = watcher.get(f"/games/{game['id']}/history").get_data(as_text=True)
    assert history.count("(played by the house bot)") >= 2
    page = html.unescape(watcher.get(f"/games/{game['id']}").get_data(as_text=True))
    assert "gave Player 0's seat to the house bot" in page  # the audit log, by seat name
    assert "p0@example.org" not in page


def test_a_game_against_bots_is_created_over_the_api(api: Any, api_app: Flask, outbox: Any) -> None:
    body = {
        "name": "Against bots",
        "players": [{"name": "Ann", "email": "ann@example.org"}, {"name": "Bot", "bot": True}],
        "settings": {"start_when_all_accepted": False},
    }
    created = create_game(api, body).get_json()
    assert [s["bot"] for s in created["seats"]] == [False, True]
    assert [m.to_email for m in outbox("invitation")] == ["ann@example.org"]
    refused = api.post(
        "/api/games", json={**body, "players": [{"name": "Ann", "email": "ann@example.org"}, {"name": "B"}]}
    )
    assert refused.status_code == 400 and "email" in refused.get_data(as_text=True)


def test_a_game_against_bots_is_created_from_the_lobby_form(api_app: Flask) -> None:
    client = api_app.test_client()
    form = client.get("/games/new").get_data(as_text=True)
    assert 'name="bot-1"' in form
    data = {
        "csrf_token": csrf_of(form),
        "name": "Lobby bots",
        "name-0": "Ann",
        "email-0": "ann@example.org",
        "name-1": "Robot",
        "bot-1": "1",
        "turn_hours": "48",
        "defender_hours": "12",
        "redeploy": "auto",
        "start": "accepted",
        "bot_after_missed_turns": "4",
    }
    made = client.post("/games/new", data=data)
    assert made.status_code in (302, 303), made.get_data(as_text=True)[:2000]
    with Session(get_engine(api_app)) as session:
        seats = session.exec(select(Seat).order_by(Seat.seat)).all()  # type: ignore[arg-type]
        assert [s.controller for s in seats] == [SeatController.PERSON, SeatController.BOT]
        assert seats[1].accepted_at is not None


def test_while_the_bot_holds_the_seat_the_api_refuses_the_player_s_steps(api: Any, api_app: Flask, game: dict) -> None:
    api_app.test_cli_runner().invoke(args=["admin", "bot", str(game["id"]), "0"])
    token = game["seats"][0].removeprefix("/play/")
    legal = api.get(f"/api/games/{game['id']}/legal-actions", headers=bearer(token)).get_json()
    sent = api.post(
        f"/api/games/{game['id']}/actions",
        headers=bearer(token),
        json={"version": legal["version"], "action": {"type": "pick", "combo": 0}},
    )
    assert sent.status_code == 409 and "take it back" in sent.get_data(as_text=True)
