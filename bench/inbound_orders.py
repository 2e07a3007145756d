"""Orders by mail: what reading one reply costs, next to the API's legal-actions answer in the same run.

    PYTHONPATH=. .venv/bin/python bench/inbound_orders.py [--replies 100]

One two-player game on SQLite in a temporary folder. Three timings, each over ``--replies`` requests:

- the reference: ``GET /api/games/<id>/legal-actions`` with the seat's token (read the game, list what may be
  done, answer JSON);
- ``POST /inbound/mail`` with a reply saying ``help`` (parse the mail, check its reply address, strip the quote
  and signature, read the orders, record the mail, write the answer with what may be done and the board);
- the same reply handed to the SMTP listener with smtplib (one connection per mail, as an MTA would).

Prints milliseconds per request and each one's ratio to the reference. No answer mail is sent (rendering the
answer, with its board picture, is the mail worker's: ``bench/mail.py``).
"""

from __future__ import annotations

import argparse
import smtplib
import tempfile
import time
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient
from sqlmodel import select

from service import create_app
from service.cli.inbound import listener
from service.domain import announce
from service.domain.links import current_links
from service.domain.models import OutboxMail, Player, Seat
from service.infra.db import get_engine, get_session, upgrade_database
from tests.api.conftest import bearer, create_game, read_outbox, seat_link, token_of
from tests.processes import free_port

SECRET = "bench-inbound-secret-0123456789"
DOMAIN = "play.bench.example"


def reply(mail: OutboxMail, address: str, text: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = mail.to_email
    message["To"] = address
    message["Subject"] = "Re: Your turn"
    message["Message-ID"] = make_msgid(domain="bench.example")
    message.set_content(f"{text}\n\n-- \nAnn\n\nOn Tuesday, Small World wrote:\n> It is your turn\n> pick 1\n")
    return message


def started_game(app: Flask) -> tuple[FlaskClient, int, OutboxMail, str]:
    """A new two-player game on ``app``'s fresh database, its invitations accepted through the API: the client,
    the game, the first seat's "your turn" mail and that mail's reply address."""
    upgrade_database(get_engine(app))
    client = app.test_client()
    body = {"name": "Bench", "players": [{"name": f"P{i}", "email": f"p{i}@bench.example"} for i in range(2)]}
    game_id = create_game(client, body).get_json()["id"]
    for mail in read_outbox(app, "invitation"):
        client.post("/api/invitations/accept", headers=bearer(token_of(mail.context["invite_url"])))
    with app.app_context():
        # The first step's announcement (its turn mail) is a worker's job after the start commits: made here.
        announce.announce(get_session(), game_id, current_links())
    [turn] = read_outbox(app, "your_turn")
    with app.app_context():
        seat = get_session().exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 0)).one()
        player = get_session().get(Player, seat.player_id)
        assert player is not None
        address = app.extensions["smallworld.reply_addresses"].for_step(
            game_id, 0, seat.secret, turn.step_key, serial=player.links_serial
        )
    return client, game_id, turn, address


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replies", type=int, default=100)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-inbound-"))
    app = create_app(
        {
            "INSTANCE_PATH": str(folder),
            "RATELIMIT_ENABLED": False,
            "INBOUND_SECRET": SECRET,
            "INBOUND_DOMAIN": DOMAIN,
            "INBOUND_ANSWERS_PER_HOUR": 10**6,
        }
    )
    client, game_id, turn, address = started_game(app)
    token = token_of(seat_link(app, turn))

    def api() -> None:
        assert client.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).status_code == 200

    def http() -> None:
        sent = client.post(
            "/inbound/mail",
            data=reply(turn, address, "help").as_bytes(),
            headers={"Authorization": f"Bearer {SECRET}"},
        )
        assert sent.status_code == 202 and sent.get_json()["outcomes"][0]["kind"] == "orders"

    server = listener(app, port=free_port())
    server.start()

    def smtp() -> None:
        with smtplib.SMTP("127.0.0.1", server.port) as connection:
            connection.send_message(reply(turn, address, "help"))

    results = {}
    try:
        for name, run in (
            ("api legal-actions (reference)", api),
            ("POST /inbound/mail", http),
            ("SMTP listener", smtp),
        ):
            run()  # warm up
            started = time.perf_counter()
            for _ in range(args.replies):
                run()
            results[name] = (time.perf_counter() - started) / args.replies * 1000
    finally:
        server.stop()
    reference = results["api legal-actions (reference)"]
    print(f"{args.replies} requests each, SQLite, one game of 2")
    for name, ms in results.items():
        print(f"{name:32} {ms:8.2f} ms  {ms / reference:5.2f}x")


if __name__ == "__main__":
    main()
