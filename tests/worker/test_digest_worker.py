"""The daily digest with real parts: PostgreSQL, a ``smallworld worker`` process (two worker processes) on
Redis, and an SMTP server (aiosmtpd) in the test process. The worker's own task
(``worker.tasks.digests.send_daily_digests``, which beat sends with every sweep) is sent several times at
once, with ``now`` moved by the test: each address gets one digest for its local day, delivered by the
worker's mail task, and the next one the next day."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlmodel import select

from service.domain import lobby, notifications, table_talk
from service.domain.models import DigestSent, Game, NotifyMode, Player, Seat, utcnow
from service.domain.schemas import CreateGame
from service.infra.db import get_session
from tests.factories import confirmed_game
from tests.smtp import SMTPServer
from tests.worker.conftest import WorkerStack
from worker.tasks.digests import SEND_DIGESTS

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes]

ANN, BOB, CY = "ann.digest@example.org", "bob.digest@example.org", "cy.digest@example.org"


WORKER_STACK = {"BASE_URL": "https://smallworld.example"}


def a_game_with_digests(app: Any) -> int:
    """Ann (on turn), Bob and Cy; Ann and Bob chose a digest at 08:00 in Paris, Cy every event."""
    request = CreateGame.model_validate(
        {
            "name": "Digest night",
            "players": [{"name": n, "email": e} for n, e in (("Ann", ANN), ("Bob", BOB), ("Cy", CY))],
            "settings": {"start_when_all_accepted": False},
        }
    )
    with app.app_context():
        session = get_session()
        game, _ = confirmed_game(session, request, app.extensions["smallworld.links"])
        for seat in session.exec(select(Seat).where(Seat.game_id == game.id)).all():
            seat.accepted_at = utcnow()
            session.add(seat)
        session.commit()
        for email in (ANN, BOB):
            player = session.exec(select(Player).where(Player.email == email)).one()
            lobby.choose_time_zone(session, player.id or 0, "Europe/Paris")
            notifications.save_choices(
                session,
                player.id or 0,
                default=NotifyMode.DIGEST,
                digest_hour=8,
                games={},
                wants_reminders=True,
                wants_notices=True,
                wants_messages=True,
            )
        game = session.get(Game, game.id)
        assert game is not None
        table_talk.post_message(session, game, 2, "Cy says hello", now=datetime(2026, 3, 1, 18, tzinfo=UTC))
        return game.id or 0


def digests_to(smtp: SMTPServer, address: str) -> list[Any]:
    return [m for m in smtp.mailbox.to(address) if "your day" in (m.headline)]


def test_the_worker_sends_one_digest_per_address_and_local_day_whatever_runs_at_once(stack: WorkerStack) -> None:
    app, smtp = stack.app, stack.smtp
    a_game_with_digests(app)
    celery = app.extensions["celery"]

    def round_of(now: datetime, tasks: int = 4) -> list[dict[str, Any]]:
        sent = [
            celery.send_task(SEND_DIGESTS, kwargs={"now": now.isoformat()}, ignore_result=False) for _ in range(tasks)
        ]
        return [result.get(timeout=60) for result in sent]

    # 06:59 UTC on 2 March is 07:59 in Paris: not yet.
    assert sum(r["claimed"] for r in round_of(datetime(2026, 3, 2, 6, 59, tzinfo=UTC))) == 0
    # 08:01 in Paris: four tasks at once claim the day of each address once.
    at = datetime(2026, 3, 2, 7, 1, tzinfo=UTC)
    reports = round_of(at)
    assert sum(r["claimed"] for r in reports) == 2 and sum(r["mailed"] for r in reports) == 2
    assert all(r["errors"] == [] for r in reports)
    smtp.mailbox.wait_for(lambda _: digests_to(smtp, ANN) and digests_to(smtp, BOB), timeout=30)
    # Later the same day, and again: nothing more.
    round_of(at + timedelta(hours=10), tasks=2)
    time.sleep(2)  # time for a mail the worker should not send
    assert len(digests_to(smtp, ANN)) == 1 and len(digests_to(smtp, BOB)) == 1 and digests_to(smtp, CY) == []
    [ann] = digests_to(smtp, ANN)
    assert "Digest night: your turn" in ann.text and "Cy says hello" in ann.text
    assert "/choices/" in ann.text
    with app.app_context():
        days = get_session().exec(select(DigestSent).order_by(DigestSent.player_id)).all()  # type: ignore[arg-type]
        assert [d.local_date for d in days] == ["2026-03-02", "2026-03-02"]
    # The next local day: the next digest, with what was said since (Bob, on nobody's turn, would get
    # none on a day with nothing to tell).
    with app.app_context():
        session = get_session()
        game = session.exec(select(Game).where(Game.name == "Digest night")).one()
        table_talk.post_message(session, game, 2, "Cy again", now=at + timedelta(hours=12))
    round_of(at + timedelta(days=1), tasks=2)
    smtp.mailbox.wait_for(lambda _: len(digests_to(smtp, ANN)) == 2 and len(digests_to(smtp, BOB)) == 2, timeout=30)
