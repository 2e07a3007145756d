"""The house bot's turns in a real worker: PostgreSQL, a ``smallworld worker`` process on Redis, an SMTP
server (aiosmtpd) in the test process.

The host gives the seat on turn to the house bot over the API; that commit wakes the bot's task, and the
worker plays the whole turn, each step once, marked as the bot's; the seat's player gets "the house bot
plays your seat" and no turn mail; when the turn comes back to the seat, the worker plays it again.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlmodel import col, select

import rules
from service.domain.models import Game, GameAction
from service.infra.db import get_session
from tests.api.conftest import create_game
from tests.worker.conftest import WorkerStack, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes]


def game_and_log(app: Any, game_id: int) -> tuple[Game, list[GameAction]]:
    with app.app_context():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None
        log = session.exec(
            select(GameAction).where(GameAction.game_id == game_id).order_by(col(GameAction.version))
        ).all()
        return game, list(log)


def awaited(game: Game) -> int | None:
    waiting = rules.awaiting(rules.read_state(game.state)) if game.state else set()
    return min(waiting) if waiting else None


def test_a_real_worker_plays_the_bot_seat_s_turns_once_and_mails_it_none(stack: WorkerStack) -> None:
    app, smtp = stack.app, stack.smtp
    client = app.test_client()
    body = {
        "name": "Bot night",
        "players": [{"name": "Ann", "email": "ann@example.org"}, {"name": "Bob", "email": "bob@example.org"}],
        "settings": {"start_when_all_accepted": False, "redeploy": "ask"},
    }
    created = create_game(client, body)
    assert created.status_code == 201, created.get_json()
    game_id, admin = created.get_json()["id"], created.get_json()["admin_url"].rsplit("/", 1)[-1]
    smtp.mailbox.wait_for(lambda _: [m for m in smtp.mailbox.to("ann@example.org") if "your turn" in m.headline])

    given = client.post(
        f"/api/admin/games/{game_id}/bot", headers={"Authorization": f"Bearer {admin}"}, json={"seat": 0}
    )
    assert given.status_code == 200, given.get_json()
    # The commit woke the bot's task: the worker plays Ann's whole turn; the game then waits for Bob.
    wait_until(lambda: awaited(game_and_log(app, game_id)[0]) == 1, "the bot to play its turn", timeout=180)
    game, log = game_and_log(app, game_id)
    assert log and all(entry.by_bot and entry.seat == 0 for entry in log)
    assert len({entry.idempotency_key for entry in log}) == len(log)  # each step once
    told = smtp.mailbox.wait_for(lambda _: [m for m in smtp.mailbox.to("ann@example.org") if "house bot" in m.headline])
    assert "Take my seat back" in told[0].text and "/play/" in told[0].text

    # Bob's turn is passed by the host: the turn comes back to the bot's seat, and the worker plays it.
    passed = client.post(f"/api/admin/games/{game_id}/pass", headers={"Authorization": f"Bearer {admin}"}, json={})
    assert passed.status_code == 200, passed.get_json()
    wait_until(
        lambda: (g := game_and_log(app, game_id)[0]).state is not None and g.state["turn"] == 2 and awaited(g) == 1,
        "the bot to play its second turn",
        timeout=180,
    )
    game, log = game_and_log(app, game_id)
    versions = [entry.version for entry in log]
    assert versions == sorted(set(versions))
    assert [e.seat for e in log if e.by_bot] and {e.seat for e in log if e.by_bot} == {0}
    assert [e.seat for e in log if not e.by_bot] == [1]  # Bob's auto-pass, by the host
    time.sleep(1)  # a late or repeated task would find nothing to play
    assert game_and_log(app, game_id)[0].version == game.version
    turn_mails = [m for m in smtp.mailbox.to("ann@example.org") if "your turn" in (m.headline)]
    assert len(turn_mails) == 1, "no turn mail to the bot seat's address after the bot took it"
    assert "bot.played" in stack.log.read_text()
