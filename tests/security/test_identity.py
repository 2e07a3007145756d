"""Finding 3, names and time zones squatted per address: the first game that named an address fixed that
person's display name and time zone in every later game (``lobby._player_for``). Now a seat's name is the
seat's own (the host proposes it, the player may change it when accepting), and a time zone is the player's
own choice, made on their pages."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask
from sqlmodel import Session, select

from service.domain.models import Player
from service.infra.db import get_engine
from tests.api.conftest import seat_link

from .conftest import bearer, body, created_and_confirmed, invitations, token_of

BOB = "bob@example.org"


def player(app: Flask, email: str) -> Player:
    with Session(get_engine(app)) as session:
        return session.exec(select(Player).where(Player.email == email)).one()


def seat_names(app: Flask, game_id: int, token: str) -> list[str]:
    view = app.test_client().get(f"/api/games/{game_id}", headers=bearer(token)).get_json()
    return [s["name"] for s in view["seats"]]


def test_the_first_game_to_name_an_address_fixes_nothing_for_the_next(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    squatter = created_and_confirmed(
        app, body(["Mallory", "Bob the Loser"], ["mallory@example.org", BOB], start_when_all_accepted=False)
    )
    friend = created_and_confirmed(
        app, body(["Alice", "Bob"], ["alice@example.org", BOB], name="Friends", start_when_all_accepted=False)
    )
    turn = token_of(seat_link(app, invitations(app, friend["id"])[0]))
    assert seat_names(app, friend["id"], turn) == ["Alice", "Bob"]
    assert [s["name"] for s in friend["seats"]] == ["Alice", "Bob"]
    assert invitations(app, friend["id"])[1].context["player_name"] == "Bob"
    other = token_of(seat_link(app, invitations(app, squatter["id"])[0]))
    assert seat_names(app, squatter["id"], other) == ["Mallory", "Bob the Loser"], "each seat keeps its name"
    assert player(app, BOB).display_name == "", "and the address itself got no name from either host"


def test_a_host_cannot_set_another_player_s_time_zone(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    request = body(["Mallory", "Bob"], ["mallory@example.org", BOB])
    request["players"][1]["time_zone"] = "Pacific/Kiritimati"
    refused = app.test_client().post("/api/games", json=request)
    assert refused.status_code == 400
    assert "players.1.time_zone" in refused.get_json()["error"]
    created_and_confirmed(app, body(["Mallory", "Bob"], ["mallory@example.org", BOB]))
    assert player(app, BOB).time_zone == "UTC"


def test_the_invitee_names_their_seat_and_chooses_their_time_zone_when_accepting(
    any_app: Callable[..., Flask],
) -> None:
    app = any_app()
    game = created_and_confirmed(app, body(["Mallory", "Bob the Loser"], ["mallory@example.org", BOB]))
    invite = token_of(invitations(app, game["id"])[1].context["invite_url"])
    accepted = app.test_client().post(
        "/api/invitations/accept", headers=bearer(invite), json={"name": "  Bob  ", "time_zone": "Asia/Tokyo"}
    )
    assert accepted.status_code == 200, accepted.get_json()
    turn = token_of(accepted.get_json()["turn_url"])
    assert seat_names(app, game["id"], turn) == ["Mallory", "Bob"]
    assert (player(app, BOB).time_zone, player(app, BOB).display_name) == ("Asia/Tokyo", "Bob")

    # A later host proposes another name for their own seat, and cannot touch the zone Bob chose.
    later = created_and_confirmed(app, body(["Eve", "Bobby"], ["eve@example.org", BOB], name="Later"))
    assert [s["name"] for s in later["seats"]] == ["Eve", "Bobby"]
    assert player(app, BOB).time_zone == "Asia/Tokyo"

    # The accept page offers the same choice, as a form (the name is checked like any other).
    invite = invitations(app, later["id"])[1].context["invite_url"].removeprefix("http://127.0.0.1:5000")
    client = app.test_client()
    page = client.get(invite)
    assert page.status_code == 200 and 'value="Bobby"' in page.text and 'value="Asia/Tokyo"' in page.text
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    bad = client.post(invite, data={"csrf_token": token, "name": "\u202eboB", "time_zone": "Asia/Tokyo"})
    assert bad.status_code == 400 and "Your name: contains an invisible character, U+202E" in bad.text
    good = client.post(invite, data={"csrf_token": token, "name": "Bob", "time_zone": "Europe/Lisbon"})
    assert good.status_code == 303
    assert player(app, BOB).time_zone == "Europe/Lisbon"


def test_a_player_changes_their_time_zone_on_their_own_pages(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    game = created_and_confirmed(app, body(["Ann", "Bob"], ["ann@example.org", BOB], start_when_all_accepted=False))
    turn = seat_link(app, invitations(app, game["id"])[0]).removeprefix("http://127.0.0.1:5000")
    client = app.test_client()
    client.get(turn)
    page = client.get(f"/games/{game['id']}/turn")
    assert page.status_code == 200 and "Your time zone: UTC" in page.text
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    path = f"/games/{game['id']}/me/time-zone"
    refused = client.post(path, data={"csrf_token": token, "time_zone": "Mars/Olympus"}, follow_redirects=True)
    assert "unknown time zone" in refused.text
    done = client.post(path, data={"csrf_token": token, "time_zone": "America/Denver"}, follow_redirects=True)
    assert "Times are shown in America/Denver" in done.text
    assert player(app, "ann@example.org").time_zone == "America/Denver"
    # Nobody else's page can do it for Ann: Bob's session changes Bob only.
    other = app.test_client()
    other.get(seat_link(app, invitations(app, game["id"])[1]).removeprefix("http://127.0.0.1:5000"))
    page = other.get(f"/games/{game['id']}")
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    other.post(path, data={"csrf_token": token, "time_zone": "Africa/Cairo"})
    assert player(app, "ann@example.org").time_zone == "America/Denver"
    assert player(app, BOB).time_zone == "Africa/Cairo"
