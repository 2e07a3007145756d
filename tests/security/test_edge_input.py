"""Finding 6, smaller ones at the edge: numbers, bodies, addresses and names. Validation is one place for
the API and the forms (``service/domain/schemas.py``, ``service/domain/text.py``): every refusal is a 4xx
naming the field, never a 500."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

from service.domain.models import Player
from service.infra.db import get_engine

from .conftest import bearer, body, created_and_confirmed, token_of


def form_of(client: Any, **fields: str) -> dict[str, str]:
    page = client.get("/games/new")
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    data = {
        "csrf_token": token,
        "name": "Form game",
        "name-0": "Ann",
        "email-0": "ann@example.org",
        "name-1": "Bob",
        "email-1": "bob@example.org",
        "turn_hours": "24",
        "defender_hours": "12",
    }
    return data | fields


@pytest.mark.parametrize("hours", ["inf", "-inf", "nan", "1e400", "1e308", "0", "-3", "721", "x"])
def test_an_impossible_turn_length_in_the_lobby_form_is_a_400_naming_the_field(app: Flask, hours: str) -> None:
    client = app.test_client()
    answer = client.post("/games/new", data=form_of(client, turn_hours=hours))
    assert answer.status_code == 400, hours
    assert "Turn length" in answer.text


@pytest.mark.parametrize("content_type", ["multipart/form-data", "application/x-www-form-urlencoded", "text/xml"])
def test_a_body_the_api_does_not_take_is_a_415_naming_the_content_type(app: Flask, content_type: str) -> None:
    answer = app.test_client().post("/api/games", data=b"name=x", headers={"Content-Type": content_type})
    assert answer.status_code == 415
    assert "Content-Type" in answer.get_json()["error"] and "JSON" in answer.get_json()["error"]


def test_bodies_and_numbers_the_api_does_not_take_name_their_field(app: Flask) -> None:
    game = created_and_confirmed(
        app, body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"], start_when_all_accepted=False)
    )
    admin = bearer(token_of(game["admin_url"]))
    client = app.test_client()
    extend = f"/api/admin/games/{game['id']}/extend"
    big = client.post(extend, headers=admin, data='{"hours": 1e400}', content_type="application/json")
    assert big.status_code == 400 and "hours" in big.get_json()["error"]
    # Moments at the ends of the calendar (found by schemathesis: year 1 less a reminder was an OverflowError).
    for moment in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"):
        far = client.post(extend, headers=admin, json={"to": moment})
        assert far.status_code == 400 and "deadline" in far.get_json()["error"], moment
    settings = {"settings": {"reminders_before_seconds": [10**18]}}
    huge = client.post("/api/games", json=body(["A", "B"], ["a@example.org", "b@example.org"]) | settings)
    assert huge.status_code == 400 and "reminders_before_seconds" in huge.get_json()["error"]
    resume = f"/api/admin/games/{game['id']}/resume"
    no_body = client.post(resume, headers=admin, data="reason=x", content_type="text/plain")
    assert no_body.status_code == 400 and "takes no request body" in no_body.get_json()["error"]


def test_an_address_the_mail_server_cannot_take_is_refused_with_a_clear_message(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    client = app.test_client()
    answer = client.post("/api/games", json=body(["José", "Bob"], ["josé@example.org", "bob@example.org"]))
    assert answer.status_code == 400
    message = answer.get_json()["error"]
    assert "players.0.email" in message and "cannot be mailed from this service" in message and "SMTPUTF8" in message
    page = client.post("/games/new", data=form_of(client, **{"email-0": "josé@example.org"}))
    assert page.status_code == 400 and "Player 1 email: cannot be mailed" in page.text
    for bad in ("ann@localhost", "ann@example.invalid", "ann@@example.org", "a" * 250 + "@example.org"):
        refused = client.post("/api/games", json=body(["Ann", "Bob"], [bad, "bob@example.org"]))
        assert refused.status_code == 400 and "players.0.email" in refused.get_json()["error"], bad

    # An internationalised domain is fine: stored in the ASCII form every mail server takes.
    created_and_confirmed(app, body(["Ann", "Bob"], ["ann@example.org", "Bob@Exämple.org"]))
    with Session(get_engine(app)) as session:
        assert session.exec(select(Player).where(Player.email == "bob@xn--exmple-cua.org")).one()

    # With a mail server known to take SMTPUTF8, such an address is taken.
    utf8 = make_app(SMTP_INTERNATIONAL_ADDRESSES=True, INSTANCE_PATH=app.instance_path + "-utf8")
    taken = utf8.test_client().post("/api/games", json=body(["José", "Bob"], ["josé@example.org", "bob@example.org"]))
    assert taken.status_code == 201


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("   ", "is blank"),
        ("\u200b", "invisible character, U+200B"),
        ("Ann\u200d", "invisible character, U+200D"),
        ("\u202egnp.exe", "invisible character, U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("Ann\u2066x", "invisible character, U+2066"),
        ("Ann\nBob", "control character, U+000A"),
        ("Ann\x07", "control character, U+0007"),
        ("\u0301\u0301", "has no visible character"),
        ("A" * 41, "longer than 40 characters"),
    ],
)
def test_a_name_nobody_can_read_is_refused_by_the_api_and_the_form(app: Flask, name: str, why: str) -> None:
    client = app.test_client()
    answer = client.post("/api/games", json=body([name, "Bob"], ["ann@example.org", "bob@example.org"]))
    assert answer.status_code == 400
    assert "players.0.name" in answer.get_json()["error"] and why in answer.get_json()["error"]
    page = client.post("/games/new", data=form_of(client, **{"name-0": name, "email-0": "ann@example.org"}))
    assert page.status_code == 400 and "Player 1 name" in page.text
    name = "A" * 61 if "longer" in why else name  # a game's name may have 60 characters
    game_name = client.post("/api/games", json=body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"], name=name))
    assert game_name.status_code == 400 and "name" in game_name.get_json()["error"]


def test_names_are_trimmed_and_their_spaces_folded(app: Flask) -> None:
    game = created_and_confirmed(app, body(["  Ann   Lee ", "Zoë"], ["ann@example.org", "zoe@example.org"]))
    assert [s["name"] for s in game["seats"]] == ["Ann Lee", "Zoë"]


def test_text_an_admin_shows_the_players_is_checked_the_same_way(app: Flask) -> None:
    game = created_and_confirmed(
        app, body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"], start_when_all_accepted=False)
    )
    admin = bearer(token_of(game["admin_url"]))
    client = app.test_client()
    paused = client.post(f"/api/admin/games/{game['id']}/pause", headers=admin, json={"reason": "back \u202eson"})
    assert paused.status_code == 400 and "reason" in paused.get_json()["error"]
    replaced = client.post(
        f"/api/admin/games/{game['id']}/replace",
        headers=admin,
        json={"seat": 1, "email": "eve@example.org", "name": "\u200b"},
    )
    assert replaced.status_code == 400 and "name" in replaced.get_json()["error"]
