"""Every error of the JSON API is JSON with a readable message and the right status."""

from __future__ import annotations

from typing import Any

from .conftest import bearer, create_game, new_game_body


def test_malformed_bodies_get_400_with_a_readable_message(api: Any) -> None:
    response = api.post("/api/games", data="{not json", content_type="application/json")
    assert response.status_code == 400 and "error" in response.get_json()
    response = api.post("/api/games", json={"name": "x", "players": [{"name": "a", "email": "not-an-email"}]})
    assert response.status_code == 400
    message = response.get_json()["error"]
    assert "players" in message and "email" in message
    response = api.post("/api/games", json={**new_game_body(2), "players": new_game_body(2)["players"] * 2})
    assert response.status_code == 400 and "different email" in response.get_json()["error"]


def test_an_illegal_move_gets_422_with_the_rules_message(api: Any, outbox: Any) -> None:
    game_id = create_game(api, new_game_body(2, start_when_all_accepted=False)).get_json()["id"]
    token = outbox.seat_token(outbox("invitation")[0])
    response = api.post(
        f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": 1, "action": {"type": "fly"}}
    )
    assert response.status_code == 422 and "Unknown action type 'fly'" in response.get_json()["error"]
    response = api.post(
        f"/api/games/{game_id}/actions",
        headers=bearer(token),
        json={"version": 1, "action": {"type": "conquer", "region": 3}},
    )
    assert response.status_code == 422
    assert "no Active race" in response.get_json()["error"]


def test_not_your_turn_gets_409(api: Any, outbox: Any) -> None:
    game_id = create_game(api, new_game_body(2, start_when_all_accepted=False)).get_json()["id"]
    token = outbox.seat_token(outbox("invitation")[1])
    response = api.post(
        f"/api/games/{game_id}/actions",
        headers=bearer(token),
        json={"version": 1, "action": {"type": "pick", "combo": 0}},
    )
    assert response.status_code == 409 and "not your turn" in response.get_json()["error"]


def test_missing_bearer_gets_403_and_unknown_paths_404_as_json(api: Any) -> None:
    response = api.get("/api/games/1")
    assert response.status_code == 403 and "Bearer" in response.get_json()["error"]
    response = api.get("/api/nothing-here")
    assert response.status_code == 404 and "error" in response.get_json()
    response = api.delete("/api/games")
    assert response.status_code == 405 and "error" in response.get_json()


def test_oversized_bodies_are_refused_cleanly(api: Any) -> None:
    response = api.post("/api/games", data="x" * 200_000, content_type="application/json")
    assert response.status_code == 413 and "error" in response.get_json()


def test_the_openapi_document_describes_the_api(api: Any) -> None:
    document = api.get("/api/openapi.json").get_json()
    paths = document["paths"]
    for path in (
        "/api/games",
        "/api/games/{game_id}",
        "/api/games/{game_id}/legal-actions",
        "/api/games/{game_id}/actions",
        "/api/games/{game_id}/undo",
        "/api/games/{game_id}/history",
        "/api/invitations/accept",
    ):
        assert path in paths, path
    schemas = document["components"]["schemas"]
    assert any("SubmitAction" in name for name in schemas)
    responses = paths["/api/games/{game_id}/actions"]["post"]["responses"]
    assert {"200", "409", "422"} <= set(responses)
