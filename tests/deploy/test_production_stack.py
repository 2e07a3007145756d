"""The production process set, on this machine, without Docker: gunicorn (deploy/gunicorn.conf.py, 2 worker
processes), two Celery workers, one beat (RedBeat), PostgreSQL, Redis and an SMTP server. A whole game is
played through it over HTTP, each player acting only with the links in the mails the SMTP server received,
and nothing a player receives before the end holds another player's coins.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import select

import rules
from rules.bots import concrete
from service.domain import status
from service.domain.models import Game, GameAction, OutboxMail, utcnow
from service.infra.db import get_session
from tests.hidden_information import CoinWatch, plant_canaries
from tests.smtp import Received, SMTPServer

from .stack import Client, Stack, confirm_by_mail, running_stack, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes]


@pytest.fixture
def stack(redis_url: str, smtp_server: SMTPServer, tmp_path: Path) -> Iterator[Stack]:
    with running_stack(redis_url, smtp_server, tmp_path, "smallworld-stack") as stack:
        yield stack


def links(mail: Received, base: str, kind: str) -> list[str]:
    return re.findall(re.escape(base) + rf"/{kind}/([A-Za-z0-9_\-.]+)", mail.text)


def test_a_whole_game_through_gunicorn_two_workers_and_beat(stack: Stack) -> None:
    started = time.monotonic()
    assert stack.web_workers() == 2
    base = stack.env["SMALLWORLD_BASE_URL"]
    client: Client = stack.http()
    emails = ["ann@example.org", "bob@example.org"]
    seat_of = {address: seat for seat, address in enumerate(emails)}
    status_code, created = client.post(
        "/api/games",
        {
            "name": "Production",
            "players": [{"name": n, "email": e} for n, e in zip(["Ann", "Bob"], emails, strict=True)],
            "settings": {"redeploy": "ask"},
        },
    )
    assert status_code == 201, created
    game_id = created["id"]
    mailbox = stack.smtp.mailbox
    confirm_by_mail(stack, client, emails[0])

    for address in emails:
        [invitation] = mailbox.wait_for(
            lambda got, a=address: [m for m in got if a in m.rcpt_tos and "invited" in (m.headline)]
        )
        [token] = links(invitation, base, "invite")[:1]
        status_code, accepted = client.post("/api/invitations/accept", None, token=token)
        assert status_code == 200, accepted
    assert accepted["status"] == "active"

    # Canary coins for the scanner, set while nobody acts (seat 0's first turn mail is on its way).
    watch = CoinWatch(2)
    with stack.app.app_context():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None
        game.state = plant_canaries(game.state or {})
        session.add(game)
        session.commit()
        watch.note(game.state)

    rnd = random.Random(5)
    handled: set[str] = set()
    steps = 0
    while True:
        news = mailbox.wait_for(
            lambda got: [
                m
                for m in got
                if m.header("Message-ID") not in handled
                and any(s in (m.headline) for s in ("your turn", "redeploy", "is over"))
            ],
            timeout=30,
        )
        over = False
        for mail in news:
            handled.add(mail.header("Message-ID") or "")
            if "is over" in (mail.headline):
                over = True
                continue
            [token] = links(mail, base, "play")[:1]
            steps += play_while_awaited(client, game_id, token, seat_of[mail.rcpt_tos[0]], rnd, watch, stack)
        if over:
            break

    with stack.app.app_context():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None and game.status == "finished"
        log = session.exec(select(GameAction).where(GameAction.game_id == game_id).order_by(GameAction.version)).all()
        assert [a.version for a in log] == list(range(2, 2 + len(log)))  # one entry per version, none lost
        swept = status.recorded_at(session, status.LAST_DEADLINE_SWEEP)
        assert swept is not None and (utcnow() - swept).total_seconds() < 10  # beat → worker sweeps run
    wait_until(lambda: all(m.status == "sent" for m in outbox(stack, game_id)), 20, "every mail to be sent")
    rows = outbox(stack, game_id)
    received = [m for m in mailbox.all() if set(m.rcpt_tos) & set(emails)]
    assert sorted(m.header("Message-ID") for m in received) == sorted(r.message_id for r in rows)  # each once

    # Hidden information: every mail a seat got before the game's end, scanned for the other's coins.
    for mail in received:
        if "is over" not in (mail.headline):
            seat = seat_of[mail.rcpt_tos[0]]
            watch.scan_text(mail.text, seat, f"mail {mail.headline!r}")
            watch.scan_text(mail.html, seat, f"mail {mail.headline!r} (HTML)")
    watch.assert_no_leaks()
    watch.confirm_own_coins_seen([0, 1])
    assert steps >= 20
    assert stack.alive() == {"web": True, "w1": True, "w2": True, "beat": True}
    print(
        f"whole game through the production processes: {steps} turns, {len(rows)} mails, "
        f"{time.monotonic() - started:.1f} s"
    )


def outbox(stack: Stack, game_id: int) -> list[OutboxMail]:
    with stack.app.app_context():
        return list(get_session().exec(select(OutboxMail).where(OutboxMail.game_id == game_id)).all())


def play_while_awaited(
    client: Client, game_id: int, token: str, seat: int, rnd: random.Random, watch: CoinWatch, stack: Stack
) -> int:
    """The seat plays random legal steps while the game waits for it; 1 if it played."""
    played = 0
    for _ in range(300):
        with stack.app.app_context():
            game = get_session().get(Game, game_id)
            watch.note(game.state if game else None)
        status_code, view = client.get(f"/api/games/{game_id}", token=token)
        assert status_code == 200, view
        if view["status"] != "active" or seat not in view["awaiting"]:
            return played
        watch.scan_json(view, seat, "GET game")
        status_code, legal = client.get(f"/api/games/{game_id}/legal-actions", token=token)
        assert status_code == 200, legal
        action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
        status_code, step = client.post(
            f"/api/games/{game_id}/actions", {"version": legal["version"], "action": action}, token=token
        )
        assert status_code == 200, step
        if step["game"]["status"] != "finished":
            watch.scan_json(step, seat, f"POST {action['type']}")
        played = 1
    raise AssertionError("the seat never finished its step")
