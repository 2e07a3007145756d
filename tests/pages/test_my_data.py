"""The player's own data on My games (service/web/pages/me.py, service/domain/privacy.py): "Download my
data" is a JSON file of the signed-in address's data; "Delete my address" is a page that says what it does,
whose button (a POST with its CSRF token and a box to tick) erases the address and signs the browser out;
``/privacy`` says what is kept and for how long. Flask's test client, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

from service.domain import privacy
from service.domain.models import Player
from service.domain.notifications import player_id_of
from service.infra.db import get_session
from tests.api.conftest import seat_link
from tests.security.conftest import bearer, body, created_and_confirmed, invitations, mails, token_of
from tests.web.test_sign_in import csrf_of, signed_in_client

ANN, BOB, CAT = "ann@example.org", "bob.erased@example.org", "cat@example.org"


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Flask:
    settings: dict[str, Any] = {"BASE_URL": "https://smallworld.example", "MAIL_RETENTION_DAYS": 21}
    if request.param == "postgres":
        settings["DATABASE_URL"] = request.getfixturevalue("postgres_url")
    return make_app(**settings)


def a_running_game(app: Flask) -> dict[str, Any]:
    """Ann, Bob and Cat, every seat accepted: Ann on turn; the host set resigned seats to the house bot."""
    game = created_and_confirmed(
        app, body(["Ann", "Bobby", "Cat"], [ANN, BOB, CAT], resigned_seats="bot", start_when_all_accepted=True)
    )
    client = app.test_client()
    for mail in invitations(app, game["id"]).values():
        accepted = client.post("/api/invitations/accept", headers=bearer(token_of(mail.context["invite_url"])))
        assert accepted.status_code == 200, accepted.get_json()
    return game


def test_my_games_offers_my_data_and_says_what_is_kept(app: Flask) -> None:
    a_running_game(app)
    page = signed_in_client(app, BOB).get("/me").get_data(as_text=True)
    assert 'href="/me/data" download hx-boost="false">Download my data<' in page
    assert 'href="/me/delete">Delete my address<' in page and 'href="/privacy"' in page
    kept = app.test_client().get("/privacy").get_data(as_text=True)
    assert "for 21 days, then it is erased" in kept, "the page tells the retention set"


def test_download_my_data_is_an_attachment_of_json_with_none_of_the_others_addresses(app: Flask) -> None:
    game = a_running_game(app)
    answer = signed_in_client(app, BOB).get("/me/data")
    assert answer.status_code == 200 and answer.mimetype == "application/json"
    assert re.fullmatch(
        r'attachment; filename="smallworld-my-data-\d{4}-\d\d-\d\d\.json"', answer.headers["Content-Disposition"]
    )
    assert answer.headers["Cache-Control"] == "no-store"
    document = json.loads(answer.get_data(as_text=True))
    assert document["address"] == BOB and [g["game"] for g in document["games"]] == [game["id"]]
    assert {m["kind"] for m in document["mails_to_you"]} >= {"invitation"}
    text = answer.get_data(as_text=True)
    assert ANN not in text and CAT not in text and "/play/" not in text and "/invite/" not in text


def test_signed_out_the_data_and_the_delete_page_send_to_sign_in(app: Flask) -> None:
    client = app.test_client()
    for path in ("/me/data", "/me/delete"):
        assert client.get(path).headers["Location"].endswith("/sign-in")
    assert client.post("/me/delete", data={"csrf_token": csrf_of(client), "understood": "yes"}).status_code == 303


def test_delete_asks_for_the_box_then_erases_the_address_and_signs_out(app: Flask) -> None:
    game = a_running_game(app)
    seats = invitations(app, game["id"])
    ann_link, bob_link = (token_of(seat_link(app, seats[n])) for n in (0, 1))
    client = signed_in_client(app, BOB)
    with app.app_context():
        links, bob_id = app.extensions["smallworld.links"], player_id_of(get_session(), BOB)
        assert bob_id is not None
        bob = get_session().get(Player, bob_id)
        assert bob is not None
        personal = [
            links.choices_url(bob_id, serial=bob.links_serial),
            links.address_calendar_url(bob_id, serial=bob.links_serial, calendar_serial=bob.calendar_serial),
        ]
    personal = [url.removeprefix("https://smallworld.example") for url in personal]
    assert all(app.test_client().get(path).status_code == 200 for path in personal)
    bob_browser = app.test_client()
    assert bob_browser.get(f"/play/{bob_link}").status_code == 302, "Bob's seat opens in his browser"
    page = client.get("/me/delete").get_data(as_text=True)
    assert "This erases bob.erased@example.org from Small World by Mail, for good" in page
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token is not None

    # Without its CSRF token the POST is refused; without the box ticked, the page says which field.
    assert client.post("/me/delete", data={"understood": "yes"}).status_code == 400
    unticked = client.post("/me/delete", data={"csrf_token": token.group(1)})
    assert unticked.status_code == 400 and "Tick the box" in unticked.get_data(as_text=True)
    assert mails(app, to=BOB), "nothing was erased yet"

    done = client.post("/me/delete", data={"csrf_token": token.group(1), "understood": "yes"})
    assert done.status_code == 200 and "Your address is deleted" in done.get_data(as_text=True)
    assert client.get("/me").headers["Location"].endswith("/sign-in"), "the browser is signed out"
    assert mails(app, to=BOB) == [], "no mail names the address"
    # The others see "A former player" where Bobby was; the seat is the house bot's.
    ann = app.test_client()
    assert ann.get(f"/play/{ann_link}").status_code == 302
    shown = ann.get(f"/games/{game['id']}").get_data(as_text=True)
    assert privacy.FORMER_PLAYER in shown and "Bobby" not in shown and BOB not in shown
    view = app.test_client().get(f"/api/games/{game['id']}", headers=bearer(ann_link)).get_json()
    assert privacy.FORMER_PLAYER in json.dumps(view) and "Bobby" not in json.dumps(view)
    # Bob's old link no longer opens the seat, nor does the browser it opened it in.
    assert app.test_client().get(f"/play/{bob_link}").status_code == 403
    assert bob_browser.get(f"/games/{game['id']}").status_code == 403
    # Nor do the links of his mails' footers: his page of mail choices, his calendar feed (it would list the
    # seat's new turn link).
    assert [app.test_client().get(path).status_code for path in personal] == [403, 403]
