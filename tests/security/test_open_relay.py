"""Finding 2, an open mail relay: anyone could create games without signing in, and each game mailed every
player at once (40 games in 1.4 s put 80 mails into one victim's inbox, with a game name and player names of
the attacker's choosing). Now a new game mails only its host until the host confirms it; games, hosts,
invitees and admin acts are limited; every invitation says "never invite me again"."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from flask import Flask
from sqlmodel import Session, select

from service.domain import deadlines, lobby
from service.domain.models import Game, Player
from service.infra.db import get_engine

from .conftest import HOST_MACHINE, STRANGER, bearer, body, created_and_confirmed, invitations, mails, token_of

VICTIM = "victim@example.org"


def from_address(address: str) -> dict[str, Any]:
    return {"environ_base": {"REMOTE_ADDR": address}}


def test_a_new_game_mails_only_its_host_until_the_host_confirms_it(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    client = app.test_client()
    created = client.post(
        "/api/games", json=body(["Ann", "Click here to win"], ["ann@example.org", VICTIM]), **from_address(STRANGER)
    )
    assert created.status_code == 201
    game = created.get_json()
    assert game["status"] == "unconfirmed" and game["admin_url"] is None, "the creator gets no admin link"
    written = mails(app)
    assert [(m.template, m.to_email) for m in written] == [("confirm_game", "ann@example.org")]
    assert mails(app, to=VICTIM) == [], "nothing reaches a player before the host confirms"

    # The host's mail: the game as it would go, a link to confirm it, and "never mail me again".
    [asking] = written
    assert {"name": "Click here to win", "email": VICTIM} in asking.context["players"]
    assert "/never/" in asking.context["block_url"]
    token = token_of(asking.context["confirm_url"])
    page = client.get(f"/games/confirm/{token}")  # what a mail scanner does: nothing changes
    assert page.status_code == 200 and "Confirm and send the invitations" in page.text
    assert mails(app, "invitation") == []

    confirmed = client.post("/api/games/confirm", headers=bearer(token), **from_address(HOST_MACHINE))
    assert confirmed.status_code == 200 and confirmed.get_json()["status"] == "inviting"
    assert confirmed.get_json()["admin_url"].startswith("http")
    assert sorted(m.to_email for m in mails(app, "invitation")) == ["ann@example.org", VICTIM]
    assert [m.to_email for m in mails(app, "admin_link")] == ["ann@example.org"]
    again = client.post("/api/games/confirm", headers=bearer(token))
    assert again.status_code == 200 and len(mails(app, "invitation")) == 2, "confirming twice sends nothing more"


def test_forty_games_naming_one_victim_put_at_most_one_mail_in_their_inbox(any_app: Callable[..., Flask]) -> None:
    """The original attack, with the limits as deployed: the victim as every game's first player (so its host)."""
    app = any_app(RATELIMIT_ENABLED=True)
    client = app.test_client()
    statuses = [
        client.post(
            "/api/games",
            json=body(["You won", f"Friend {n}"], [VICTIM, f"friend{n}@example.org"], name=f"Prize {n}"),
            **from_address(STRANGER),
        ).status_code
        for n in range(40)
    ]
    assert statuses[0] == 201 and set(statuses[1:]) == {429}
    assert [m.template for m in mails(app, to=VICTIM)] == ["confirm_game"]
    assert len(mails(app)) == 1, "and nobody else got anything"


def test_the_cap_on_unconfirmed_games_holds_even_from_many_client_addresses(any_app: Callable[..., Flask]) -> None:
    app = any_app(RATELIMIT_ENABLED=True)
    client = app.test_client()
    answers = [
        client.post(
            "/api/games",
            json=body(["Host", "Other"], [VICTIM, f"other{n}@example.org"]),
            **from_address(f"203.0.113.{n + 1}"),
        )
        for n in range(10)
    ]
    assert [a.status_code for a in answers] == [201] + [429] * 9
    message = answers[1].get_json()["error"]
    assert VICTIM in message and "waiting for the host to confirm" in message
    assert len(mails(app, to=VICTIM)) == 1


def test_a_host_who_confirms_reaches_an_invitee_at_most_the_daily_limit(any_app: Callable[..., Flask]) -> None:
    """An attacker with mailboxes of their own confirms their games: the invitee limit bounds the victim."""
    app = any_app(RATELIMIT_ENABLED=True, RATELIMIT_INVITATIONS_PER_ADDRESS="3 per day")
    for n in range(3):
        created_and_confirmed(app, body(["Me", "You"], [f"attacker{n}@example.net", VICTIM]), f"192.0.2.{n + 1}")
    refused = app.test_client().post(
        "/api/games", json=body(["Me", "You"], ["attacker9@example.net", VICTIM]), **from_address("192.0.2.99")
    )
    assert refused.status_code == 429, refused.get_json()
    assert VICTIM in refused.get_json()["error"] and "invited to too many games" in refused.get_json()["error"]
    assert int(refused.headers["Retry-After"]) > 0
    assert len(mails(app, "invitation", to=VICTIM)) == 3


def test_games_per_client_address_and_per_host_address_are_limited(any_app: Callable[..., Flask]) -> None:
    app = any_app(RATELIMIT_ENABLED=True, RATELIMIT_NEW_GAMES="2 per hour", RATELIMIT_GAMES_PER_HOST="2 per day")
    client = app.test_client()
    for n in range(2):
        created = client.post("/api/games", json=body(["A", "B"], [f"a{n}@example.org", f"b{n}@example.org"]))
        assert created.status_code == 201
    limited = client.post("/api/games", json=body(["A", "B"], ["a9@example.org", "b9@example.org"]))
    assert limited.status_code == 429 and "games created from your address" in limited.get_json()["error"]
    # The lobby's form counts in the same limit (showing it does not).
    form = client.get("/games/new")
    assert form.status_code == 200
    token = form.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    fields = {"csrf_token": token, "name": "Form", "turn_hours": "24", "defender_hours": "12"}
    fields |= {"name-0": "A", "email-0": "a8@example.org", "name-1": "B", "email-1": "b8@example.org"}
    from_form = client.post("/games/new", data=fields)
    assert from_form.status_code == 429 and "Try again in" in from_form.text
    # One host address: two games a day, from wherever.
    for n in range(2):
        request = body(["Hal", "Guest"], ["hal@example.org", f"guest{n}@example.org"])
        assert created_and_confirmed(app, request, f"192.0.2.{n + 1}")["status"] == "inviting"
    third = app.test_client().post(
        "/api/games", json=body(["Hal", "Guest"], ["hal@example.org", "guest9@example.org"]), **from_address(STRANGER)
    )
    assert third.status_code == 429 and "hal@example.org is named as the host" in third.get_json()["error"]


def test_never_invite_me_again_is_one_click_and_the_lobby_honours_it(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    game = created_and_confirmed(app, body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"]))
    invitation = invitations(app, game["id"])[1]
    assert "block_url" in invitation.context, "every invitation carries a never-invite link"
    link = invitation.context["block_url"].removeprefix("http://127.0.0.1:5000")
    client = app.test_client()
    page = client.get(link)
    assert page.status_code == 200 and "Never invite me again" in page.text
    assert created_and_confirmed(app, body(["Cy", "Bob"], ["cy@example.org", "bob@example.org"]))["id"]
    # One click: a POST without a session or a form token (what a mail provider's button sends, too).
    done = app.test_client().post(link, data={"List-Unsubscribe": "One-Click"})
    assert done.status_code == 200 and "No more invitations" in done.text
    refused = app.test_client().post("/api/games", json=body(["Di", "Bob"], ["di@example.org", "bob@example.org"]))
    assert refused.status_code == 400
    assert "bob@example.org asked never to be invited" in refused.get_json()["error"]
    as_host = app.test_client().post("/api/games", json=body(["Bob", "Di"], ["bob@example.org", "di@example.org"]))
    assert as_host.status_code == 400 and "cannot host" in as_host.get_json()["error"]
    # The lobby's form says the same to the host.
    form = client.get("/games/new")
    token = form.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    fields = {
        "csrf_token": token,
        "name": "Form",
        "name-0": "Di",
        "email-0": "di@example.org",
        "name-1": "Bob",
        "email-1": "bob@example.org",
        "turn_hours": "24",
        "defender_hours": "12",
    }
    answer = client.post("/games/new", data=fields)
    assert answer.status_code == 400 and "bob@example.org asked never to be invited" in answer.text
    # The address's owner may allow invitations again, from the same link.
    assert "Invitations allowed" in app.test_client().post(link, data={"act": "allow"}).text
    again = app.test_client().post("/api/games", json=body(["Di", "Bob"], ["di@example.org", "bob@example.org"]))
    assert again.status_code == 201


def test_an_unconfirmed_game_lapses_and_its_host_may_discard_it(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    client = app.test_client()
    first = client.post("/api/games", json=body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"])).get_json()
    with app.app_context(), Session(get_engine(app)) as session:
        game = session.get(Game, first["id"])
        assert game is not None
        report = deadlines.sweep(session, app.extensions["smallworld.links"], now=game.created_at + timedelta(hours=49))
    assert report.lapsed == 1
    [asking] = mails(app, "confirm_game")
    late = client.post("/api/games/confirm", headers=bearer(token_of(asking.context["confirm_url"])))
    assert late.status_code in (403, 409) and mails(app, "invitation") == []
    # The host address may have a new game now; its host discards it from the mail's page.
    second = client.post("/api/games", json=body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"]))
    assert second.status_code == 201
    asking = mails(app, "confirm_game")[-1]
    path = asking.context["confirm_url"].removeprefix("http://127.0.0.1:5000")
    page = client.get(path)
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    discarded = client.post(path, data={"csrf_token": token, "act": "discard"})
    assert discarded.status_code == 200 and "is discarded" in discarded.text
    assert mails(app, "invitation") == [] and len(mails(app)) == 2, "only the two requests to confirm"


def test_admin_acts_over_the_api_are_limited_per_game(any_app: Callable[..., Flask]) -> None:
    app = any_app(RATELIMIT_ENABLED=True, RATELIMIT_ADMIN_ACTS="3 per hour")
    game = created_and_confirmed(
        app, body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"], start_when_all_accepted=False)
    )
    client = app.test_client()
    admin = bearer(token_of(game["admin_url"]))
    acts = ["pause", "resume", "pause", "resume"]
    answers = [
        client.post(
            f"/api/admin/games/{game['id']}/{act}", headers=admin, json={"reason": "tea"} if act == "pause" else None
        )
        for act in acts
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 429], [a.get_json() for a in answers]
    assert "admin acts on this game" in answers[-1].get_json()["error"]
    assert client.get(f"/api/admin/games/{game['id']}", headers=admin).status_code == 200, "reading is not an act"
    assert len(mails(app, "admin_change")) == 3 * 2, "three acts announced to two players, no more"


def test_a_host_s_time_zone_is_theirs_only_once_they_confirm(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    request = body(["Ann", "Bob"], [VICTIM, "bob@example.org"]) | {"host_time_zone": "Pacific/Kiritimati"}
    created = app.test_client().post("/api/games", json=request)
    assert created.status_code == 201
    with Session(get_engine(app)) as session:
        victim = session.exec(select(Player).where(Player.email == VICTIM)).one()
        assert victim.time_zone == "UTC", "a stranger's creation sets nothing of the named host's"
    assert created.get_json()["status"] == lobby.UNCONFIRMED
    [asking] = mails(app, "confirm_game")
    confirmed = app.test_client().post("/api/games/confirm", headers=bearer(token_of(asking.context["confirm_url"])))
    assert confirmed.status_code == 200
    with Session(get_engine(app)) as session:
        victim = session.exec(select(Player).where(Player.email == VICTIM)).one()
        assert victim.time_zone == "Pacific/Kiritimati", "the host confirmed the game, and the zone with it"
