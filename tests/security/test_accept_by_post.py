"""Finding 5, invitations accepted on GET (``links_pages.open_invitation``): a mail scanner that follows the
links of a mail accepted the invitation for the player. Now the invitation link shows the invitation and a
button; only the POST of that form (or of the JSON API) accepts."""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from flask import Flask
from sqlmodel import Session, select

from service.domain.models import Seat
from service.infra.db import get_engine
from tests.api.conftest import seat_link

from .conftest import body, created_and_confirmed, invitations

BASE = "http://127.0.0.1:5000"


def accepted_seats(app: Flask, game_id: int) -> list[int]:
    with Session(get_engine(app)) as session:
        seats = session.exec(select(Seat).where(Seat.game_id == game_id).order_by(Seat.seat)).all()  # type: ignore[arg-type]
        return [s.seat for s in seats if s.accepted_at is not None]


def blocked(app: Flask) -> list[str]:
    engine = get_engine(app)
    if not sa.inspect(engine).has_table("blocked_addresses"):
        return []
    with engine.connect() as connection:
        return [row[0] for row in connection.execute(sa.text("SELECT email FROM blocked_addresses"))]


def test_a_scanner_that_opens_every_link_of_an_invitation_accepts_nothing(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    game = created_and_confirmed(app, body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"]))
    invitation = invitations(app, game["id"])[1]
    scanner = app.test_client()
    # The seat's own link is minted when the mail is sent (ARCHITECTURE §6), the others are in the row.
    links = (invitation.context["invite_url"], seat_link(app, invitation), invitation.context.get("block_url"))
    for link in filter(None, links):
        answer = scanner.get(link.removeprefix(BASE))
        assert answer.status_code < 500, link
    assert accepted_seats(app, game["id"]) == [], "opening the links accepted nothing"
    assert blocked(app) == [], "nor blocked the address"

    # The player presses the button: that accepts.
    player = app.test_client()
    path = invitation.context["invite_url"].removeprefix(BASE)
    page = player.get(path)
    assert page.status_code == 200 and "Accept and take my seat" in page.text and "You are invited" in page.text
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    done = player.post(path, data={"csrf_token": token, "name": "Bob", "time_zone": "UTC"})
    assert done.status_code == 303 and done.headers["Location"].endswith(f"/games/{game['id']}/me")
    assert accepted_seats(app, game["id"]) == [1]
    # Once accepted, the link just opens the seat (no form, nothing changes).
    again = player.get(path)
    assert again.status_code == 302 and accepted_seats(app, game["id"]) == [1]


def test_a_post_from_another_site_cannot_accept_for_the_player(any_app: Callable[..., Flask]) -> None:
    app = any_app()
    game = created_and_confirmed(app, body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"]))
    path = invitations(app, game["id"])[1].context["invite_url"].removeprefix(BASE)
    forged = app.test_client().post(path, data={"name": "Bob"})
    assert forged.status_code == 400 and "out of date" in forged.text
    assert accepted_seats(app, game["id"]) == []
