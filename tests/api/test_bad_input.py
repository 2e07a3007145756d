"""Oversized and malformed bodies, on every endpoint of the app: refused cleanly (4xx, readable), never a 500.

Each request carries a token that would be accepted, so a refusal is about the body, not the caller.
Runs on SQLite and PostgreSQL (which cannot store a NUL character in text: that must be a 400, not a 500).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask

from .conftest import bearer, create_game, new_game_body, token_of

LIMIT = 64 * 1024


@pytest.fixture
def game(api: Any, outbox: Any) -> dict[str, Any]:
    created = create_game(api, new_game_body(3, start_when_all_accepted=False)).get_json()
    invitations = outbox("invitation")
    return {
        "id": created["id"],
        "admin": token_of(created["admin_url"]),
        "seat": outbox.seat_token(invitations[0]),
        "invite": token_of(invitations[1].context["invite_url"]),
    }


def endpoints(app: Flask, game: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    """Every (method, URL, headers) of the app that takes a body, aimed at ``game`` with a fitting token."""
    found = []
    for rule in app.url_map.iter_rules():
        methods = sorted((rule.methods or set()) & {"POST", "PUT", "PATCH", "DELETE"})
        if not methods or rule.endpoint == "static":
            continue
        if rule.rule == "/inbound/mail":
            # Whole mails, with their own larger limit (SMALLWORLD_INBOUND_MAX_BYTES), refused with 413 over it
            # in tests/domain/test_inbound.py; and only once the MTA's secret is shown.
            continue
        url = rule.rule
        token = game["admin"] if "/admin" in url else game["invite"] if "invit" in url else game["seat"]
        url = re.sub(r"<int:game_id>", str(game["id"]), url)
        url = re.sub(r"<(?:[^:<>]+:)?token>", token, url)
        url = re.sub(r"<[^<>]+>", "1", url)
        found.extend((method, url, bearer(token)) for method in methods)
    return found


def test_every_body_over_the_limit_is_refused_with_413_before_anything_happens(
    api_app: Flask, api: Any, game: dict[str, Any]
) -> None:
    targets = endpoints(api_app, game)
    assert len(targets) >= 14
    for method, url, headers in targets:
        for content_type in ("application/json", "application/x-www-form-urlencoded", "text/plain"):
            response = api.open(url, method=method, headers=headers, data="x" * (LIMIT + 1), content_type=content_type)
            assert response.status_code == 413, (method, url, content_type, response.status_code)
            if url.startswith("/api/"):
                assert "larger than" in response.get_json()["error"]
    # Nothing was done on the way: the game is as it was created.
    view = api.get(f"/api/admin/games/{game['id']}", headers=bearer(game["admin"])).get_json()
    assert view["game"]["version"] == 1 and view["game"]["status"] == "active" and view["audit"] == []


MALFORMED = [
    ("{not json", "not valid JSON"),
    ('{"version": 1,', "not valid JSON"),
    (b"\xff\xfe{\x00}", "not valid JSON"),
    ("[" * 30_000, "not valid JSON"),  # a nesting bomb under the size limit
    ('{"a":' * 5_000 + "1" + "}" * 5_000, "not valid JSON"),
    ('{"version": NaN, "action": {}}', "not valid JSON"),  # NaN and Infinity are not JSON (RFC 8259)
    ('{"hours": Infinity}', "not valid JSON"),
    ("[]", "must be a JSON object"),
    ("null", "must be a JSON object"),
    ("0", "must be a JSON object"),
    ('"text"', "must be a JSON object"),
    ('{"reason": "a\\u0000b", "name": "x"}', "NUL"),
]


def test_malformed_json_is_refused_with_a_readable_400_on_every_api_endpoint(
    api_app: Flask, api: Any, game: dict[str, Any]
) -> None:
    targets = [(method, url, headers) for method, url, headers in endpoints(api_app, game) if url.startswith("/api/")]
    for body, expected in MALFORMED:
        for method, url, headers in targets:
            response = api.open(url, method=method, headers=headers, data=body, content_type="application/json")
            assert response.status_code == 400, (
                body[:40],
                method,
                url,
                response.status_code,
                response.get_data()[:200],
            )
            message = response.get_json()["error"]
            assert expected in message and "Traceback" not in message, (url, message)
    assert api.get(f"/api/admin/games/{game['id']}", headers=bearer(game["admin"])).get_json()["game"]["version"] == 1


def nul_requests(game: dict[str, Any]) -> list[tuple[str, dict[str, str], dict[str, Any]]]:
    """A NUL character in each text field the API stores: (URL, headers, body)."""
    nul, game_id = "Ann\x00e", game["id"]
    requests = []
    for field in ("name", "player name", "player email", "host_email"):
        body = new_game_body(2)
        if field == "name":
            body["name"] = nul
        elif field == "player name":
            body["players"][1]["name"] = nul
        elif field == "player email":
            body["players"][1]["email"] = "a\x00@example.org"
        else:
            body["host_email"] = "h\x00@example.org"
        requests.append(("/api/games", {}, body))
    seat, admin = bearer(game["seat"]), bearer(game["admin"])
    step = {"version": 1, "action": {"type": "pick", "combo": 0}}
    return [
        *requests,
        (f"/api/games/{game_id}/actions", seat, {**step, "idempotency_key": nul}),
        (f"/api/games/{game_id}/actions", seat, {"version": 1, "action": {"type": "pick", "combo": 0, nul: 1}}),
        (f"/api/games/{game_id}/actions", seat, {"version": 1, "action": {"type": nul}}),
        (f"/api/admin/games/{game_id}/pause", admin, {"reason": nul}),
        (f"/api/admin/games/{game_id}/cancel", admin, {"reason": nul}),
        (f"/api/admin/games/{game_id}/replace", admin, {"seat": 1, "email": "new@example.org", "name": nul}),
    ]


def test_a_nul_character_anywhere_is_a_400_not_a_database_error(api: Any, game: dict[str, Any]) -> None:
    for url, headers, body in nul_requests(game):
        response = api.post(url, headers=headers, json=body)
        assert response.status_code == 400, (url, body, response.get_data(as_text=True))
        assert "NUL" in response.get_json()["error"]


def test_json_types_are_not_coerced(api: Any, game: dict[str, Any]) -> None:
    # JSON true is not the seat 1, and "1" is not the version 1: the document's types are the contract.
    game_id = game["id"]
    for body in ({"seat": True}, {"seat": "1"}, {"seat": 1.0}):
        response = api.post(f"/api/admin/games/{game_id}/remove", headers=bearer(game["admin"]), json=body)
        assert response.status_code == 400 and "seat" in response.get_json()["error"], body
    response = api.post(
        f"/api/games/{game_id}/actions",
        headers=bearer(game["seat"]),
        json={"version": "1", "action": {"type": "pick", "combo": 0}},
    )
    assert response.status_code == 400 and "version" in response.get_json()["error"]


def test_form_posts_with_a_nul_character_are_refused(api_app: Flask, api: Any, game: dict[str, Any]) -> None:
    for method, url, _headers in endpoints(api_app, game):
        if url.startswith("/api/") or method != "POST":
            continue
        response = api.open(url, method=method, data={"field": "a\x00b"})
        assert response.status_code == 400, (url, response.status_code)
