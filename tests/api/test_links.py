"""Signed links (ARCHITECTURE §7): bad ones get 403 and no game data; old keys still verify after rotation."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import Session, select

from service import create_app
from service.domain.links import LinkMaker, signer_for
from service.domain.models import Game, Seat, utcnow
from service.infra.db import get_engine

from .conftest import bearer, create_game, new_game_body, token_of


def started(api: Any, outbox: Any) -> tuple[int, str, dict[str, Any]]:
    created = create_game(api, new_game_body(2, start_when_all_accepted=False))
    game_id = created.get_json()["id"]
    return game_id, outbox.seat_token(outbox("invitation")[0]), created.get_json()


def assert_refused_without_data(response: Any, game_name: str = "A game of 2") -> None:
    assert response.status_code == 403
    text = response.get_data(as_text=True)
    assert game_name not in text and "Player 0" not in text and "coins" not in text
    assert "Traceback" not in text


def tampered(token: str) -> str:
    middle = len(token) // 2
    return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]


def test_a_tampered_token_is_refused(api: Any, outbox: Any) -> None:
    game_id, token, _ = started(api, outbox)
    for bad in (tampered(token), token[:-3], token + "x", "", "not.a.token"):
        response = api.get(f"/api/games/{game_id}", headers=bearer(bad))
        assert_refused_without_data(response)
        assert "error" in response.get_json()


def test_a_token_for_another_purpose_or_game_is_refused(api_app: Any, api: Any, outbox: Any) -> None:
    game_id, token, created = started(api, outbox)
    admin_token = token_of(created["admin_url"])
    assert_refused_without_data(api.get(f"/api/games/{game_id}", headers=bearer(admin_token)))
    invite = token_of(outbox("invitation")[0].context["invite_url"])
    assert_refused_without_data(api.get(f"/api/games/{game_id}", headers=bearer(invite)))
    other = create_game(api, new_game_body(2, start_when_all_accepted=False)).get_json()["id"]
    response = api.get(f"/api/games/{other}", headers=bearer(token))
    assert response.status_code == 403 and "another game" in response.get_json()["error"]


def test_a_revoked_seat_secret_kills_old_links(api_app: Any, api: Any, outbox: Any) -> None:
    game_id, token, _ = started(api, outbox)
    assert api.get(f"/api/games/{game_id}", headers=bearer(token)).status_code == 200
    with Session(get_engine(api_app)) as session:
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 0)).one()
        seat.secret = secrets.token_urlsafe(16)  # what replacing the player does
        session.add(seat)
        session.commit()
    response = api.get(f"/api/games/{game_id}", headers=bearer(token))
    assert_refused_without_data(response)
    assert "no longer valid" in response.get_json()["error"]
    page = api.get(f"/play/{token}")
    assert_refused_without_data(page)


def test_links_expire_a_month_after_the_game_ends(api_app: Any, api: Any, outbox: Any) -> None:
    game_id, token, _ = started(api, outbox)
    with Session(get_engine(api_app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        game.status, game.finished_at = "finished", utcnow() - timedelta(days=31)
        session.add(game)
        session.commit()
    response = api.get(f"/api/games/{game_id}", headers=bearer(token))
    assert_refused_without_data(response)
    assert "expired" in response.get_json()["error"]


def test_an_expired_invitation_is_refused(api_app: Any, api: Any, outbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    create_game(api, new_game_body(2))
    invite = token_of(outbox("invitation")[0].context["invite_url"])
    import time

    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 61 * 24 * 3600)
    response = api.post("/api/invitations/accept", headers=bearer(invite))
    assert response.status_code == 403 and "expired" in response.get_json()["error"]


def test_opening_a_turn_link_starts_a_session_for_the_seat(api: Any, outbox: Any) -> None:
    game_id, token, _ = started(api, outbox)
    response = api.get(f"/play/{token}")
    assert response.status_code == 302
    with api.session_transaction() as session:
        assert session["seat"]["game"] == game_id and session["seat"]["seat"] == 0
    assert_refused_without_data(api.get(f"/play/{tampered(token)}"))


def test_links_signed_with_an_old_key_still_work_after_rotation(make_app: Any, tmp_path: Any) -> None:
    old_app = make_app(SECRET_KEY="old-key", INSTANCE_PATH=str(tmp_path / "rot"))
    client = old_app.test_client()
    created = create_game(client, new_game_body(2, start_when_all_accepted=False)).get_json()
    with Session(get_engine(old_app)) as session:
        seat = session.exec(select(Seat).where(Seat.game_id == created["id"], Seat.seat == 0)).one()
    old_token = LinkMaker(signer_for("old-key"), "").turn_token(created["id"], 0, seat.secret, serial=0)

    rotated = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path / "rot"),
            "SECRET_KEY": "new-key",
            "OLD_SECRET_KEYS": ["old-key"],
        }
    )
    new_client = rotated.test_client()
    assert new_client.get(f"/api/games/{created['id']}", headers=bearer(old_token)).status_code == 200
    new_token = rotated.extensions["smallworld.links"].turn_token(created["id"], 0, seat.secret, serial=0)
    assert new_token != old_token
    dropped = create_app({"TESTING": True, "INSTANCE_PATH": str(tmp_path / "rot"), "SECRET_KEY": "new-key"})
    assert dropped.test_client().get(f"/api/games/{created['id']}", headers=bearer(old_token)).status_code == 403
    for app in (rotated, dropped):
        get_engine(app).dispose()
