"""Every door a signed link opens, tried with every kind of bad link: tampered, truncated, expired, revoked,
for another purpose, for another game. Each is refused (403) and the refusal tells nothing about any game:
no game name, no player's name or address, no coins (ARCHITECTURE §7).

The doors: the JSON API (player and admin, bearer tokens), the pages that open a link (``/play/…``,
``/invite/…``, the host's ``/admin/…``, a site admin's ``/admin/login/…``, ``/unsubscribe/…``), and the pages
that a link's session opens (the turn, game and history pages, the game's admin page).
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

from service.domain.links import LinkMaker, signer_for
from service.domain.models import Game, Seat, utcnow
from service.infra.db import get_engine

from .conftest import bearer, create_game, token_of

SECRET_WORDS = ("Secret Game", "Alice Secret", "Bob Secret", "alice.secret@example.org", "bob.secret@example.org")


def new_game(api: Any, outbox: Any, name: str, who: tuple[str, str]) -> dict[str, Any]:
    body = {
        "name": name,
        "players": [{"name": n, "email": f"{n.lower().replace(' ', '.')}@example.org"} for n in who],
        "settings": {"start_when_all_accepted": False},
    }
    created = create_game(api, body)
    assert created.status_code == 201
    game = created.get_json()
    mails = [m for m in outbox("invitation") if m.game_id == game["id"]]
    return {
        "id": game["id"],
        "admin": token_of(game["admin_url"]),
        "turn": outbox.seat_token(mails[0]),
        "invite": token_of(mails[1].context["invite_url"]),
    }


def assert_refused_quietly(response: Any, where: str) -> None:
    assert response.status_code == 403, (where, response.status_code)
    text = response.get_data(as_text=True)
    for word in SECRET_WORDS:
        assert word not in text, f"{where}: the refusal shows {word!r}"
    assert "coins" not in text and "Traceback" not in text, where


def tampered(token: str) -> str:
    middle = len(token) // 2
    return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]


@pytest.fixture
def games(api_app: Flask, api: Any, outbox: Any) -> dict[str, dict[str, Any]]:
    return {
        "mine": new_game(api, outbox, "Secret Game", ("Alice Secret", "Bob Secret")),
        "other": new_game(api, outbox, "Other Game", ("Carl Other", "Dana Other")),
    }


def bad_tokens(app: Flask, games: dict[str, dict[str, Any]], purpose: str) -> dict[str, str]:
    """Bad links for a door that takes a ``purpose`` token of the game "mine"."""
    mine, other = games["mine"], games["other"]
    good = mine[purpose]
    others = {"turn": mine["admin"], "admin": mine["turn"], "invite": mine["admin"]}
    return {
        "tampered": tampered(good),
        "truncated": good[: len(good) * 2 // 3],
        "garbage": "not-a-link",
        "signed with another key": LinkMaker(signer_for("another key"), "").signer.sign(
            purpose, {"g": mine["id"], "s": 0, "k": "x"}
        ),
        "for another purpose": others[purpose],
        "an unsubscribe link": LinkMaker(signer_for(app.config["SECRET_KEY"]), "").unsubscribe_token(1),
        "for another game": other[purpose],
    }


API_DOORS = {
    "turn": [
        ("GET", "/api/games/{id}", None),
        ("GET", "/api/games/{id}/legal-actions", None),
        ("GET", "/api/games/{id}/history", None),
        ("POST", "/api/games/{id}/actions", {"version": 1, "action": {"type": "pick", "combo": 0}}),
        ("POST", "/api/games/{id}/undo", {"version": 1}),
        ("POST", "/api/games/{id}/vacation", {"days": 1}),
    ],
    "admin": [
        ("GET", "/api/admin/games/{id}", None),
        ("POST", "/api/admin/games/{id}/extend", {"hours": 1}),
        ("POST", "/api/admin/games/{id}/pause", {"reason": "tea"}),
        ("POST", "/api/admin/games/{id}/resume", {}),
        ("POST", "/api/admin/games/{id}/pass", {}),
        ("POST", "/api/admin/games/{id}/settings", {"vacation_days": 3}),
        ("POST", "/api/admin/games/{id}/replace", {"seat": 1, "email": "eve@example.org", "name": "Eve"}),
        ("POST", "/api/admin/games/{id}/remove", {"seat": 1}),
        ("POST", "/api/admin/games/{id}/cancel", {"reason": "no"}),
    ],
    "invite": [("POST", "/api/invitations/accept", None)],
}


def game_version(app: Flask, game_id: int) -> tuple[int, str]:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game.version, game.status


@pytest.mark.parametrize("purpose", sorted(API_DOORS))
def test_the_api_refuses_every_bad_link_and_changes_nothing(
    api_app: Flask, api: Any, games: dict[str, dict[str, Any]], purpose: str
) -> None:
    before = game_version(api_app, games["mine"]["id"])
    for kind, token in bad_tokens(api_app, games, purpose).items():
        for method, path, body in API_DOORS[purpose]:
            url = path.format(id=games["mine"]["id"])
            response = api.open(url, method=method, headers=bearer(token), json=body)
            if kind == "for another game" and purpose == "invite":
                # An invitation names its own game: it opens that one (the other game), not this one.
                continue
            assert_refused_quietly(response, f"{method} {url} with a link {kind}")
            assert "error" in response.get_json()
    assert game_version(api_app, games["mine"]["id"]) == before


LINK_PAGES = {"turn": "/play/{token}", "invite": "/invite/{token}", "admin": "/admin/{token}"}


@pytest.mark.parametrize("purpose", sorted(LINK_PAGES))
def test_the_pages_that_open_a_link_refuse_every_bad_one(
    api_app: Flask, games: dict[str, dict[str, Any]], purpose: str
) -> None:
    for kind, token in bad_tokens(api_app, games, purpose).items():
        if kind == "for another game":
            continue  # a good link of another game opens that game: nothing to refuse
        browser = api_app.test_client()
        response = browser.get(LINK_PAGES[purpose].format(token=token))
        assert_refused_quietly(response, f"{purpose} page with a link {kind}")
        # And no session came of it: the game's pages stay closed.
        for page in ("/games/{id}", "/games/{id}/turn", "/games/{id}/history", "/admin/games/{id}"):
            assert_refused_quietly(browser.get(page.format(id=games["mine"]["id"])), f"{page} after a bad link")


def test_unsubscribe_and_sign_in_links_refuse_bad_ones(api_app: Flask, games: dict[str, dict[str, Any]]) -> None:
    browser = api_app.test_client()
    mine = games["mine"]
    for token in (tampered(mine["turn"]), mine["turn"], mine["admin"], "garbage"):
        for method in ("GET", "POST"):
            response = browser.open(f"/unsubscribe/{token}", method=method, data={"List-Unsubscribe": "One-Click"})
            assert_refused_quietly(response, f"{method} /unsubscribe with a link that is not one")
        assert_refused_quietly(
            browser.get(f"/admin/login/{token}"), "a site admin's sign-in with a link that is not one"
        )


def test_a_session_for_one_game_opens_no_other(api_app: Flask, games: dict[str, dict[str, Any]]) -> None:
    browser = api_app.test_client()
    assert browser.get(f"/play/{games['other']['turn']}").status_code == 302
    assert browser.get(f"/admin/{games['other']['admin']}").status_code == 302
    for page in ("/games/{id}", "/games/{id}/turn", "/games/{id}/history", "/admin/games/{id}"):
        assert_refused_quietly(browser.get(page.format(id=games["mine"]["id"])), f"{page} with another game's session")


def test_revoked_and_expired_links_are_refused_everywhere(
    api_app: Flask, api: Any, games: dict[str, dict[str, Any]]
) -> None:
    mine = games["mine"]
    holder = api_app.test_client()
    assert holder.get(f"/play/{mine['turn']}").status_code == 302  # a session opened before the revocation
    with Session(get_engine(api_app)) as session:
        seat = session.exec(select(Seat).where(Seat.game_id == mine["id"], Seat.seat == 0)).one()
        seat.secret = secrets.token_urlsafe(16)  # what giving the seat to someone else does
        game = session.get(Game, mine["id"])
        assert game is not None
        game.admin_secret = secrets.token_urlsafe(24)
        session.add_all([seat, game])
        session.commit()
    assert_refused_quietly(api.get(f"/api/games/{mine['id']}", headers=bearer(mine["turn"])), "API, revoked seat")
    assert_refused_quietly(api.get(f"/api/admin/games/{mine['id']}", headers=bearer(mine["admin"])), "admin API")
    assert_refused_quietly(api_app.test_client().get(f"/play/{mine['turn']}"), "revoked turn link")
    assert_refused_quietly(api_app.test_client().get(f"/admin/{mine['admin']}"), "revoked admin link")
    assert_refused_quietly(holder.get(f"/games/{mine['id']}/turn"), "the revoked seat's open session")

    other = games["other"]
    with Session(get_engine(api_app)) as session:
        game = session.get(Game, other["id"])
        assert game is not None
        game.status, game.finished_at = "finished", utcnow() - timedelta(days=31)
        session.add(game)
        session.commit()
    for response, where in (
        (api.get(f"/api/games/{other['id']}", headers=bearer(other["turn"])), "API, a month after the end"),
        (api.get(f"/api/admin/games/{other['id']}", headers=bearer(other["admin"])), "admin API, expired"),
        (api_app.test_client().get(f"/play/{other['turn']}"), "turn link, expired"),
        (api_app.test_client().get(f"/admin/{other['admin']}"), "admin link, expired"),
    ):
        assert response.status_code == 403, where
        assert "Traceback" not in response.get_data(as_text=True)
