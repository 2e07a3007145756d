"""The whole mail path with real servers: PostgreSQL, a Celery worker process on Redis (``smallworld
worker``), and an SMTP server (aiosmtpd) in the test process. Players act only through the links in the
mails that server received; deadlines are swept by the worker's own task, with ``now`` moved by the test.

One worker serves the whole module (starting one takes seconds); the tests run in file order and each
plays in its own games, with its own addresses.
"""

from __future__ import annotations

import random
import re
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import select

import rules
from emails.messages import YourTurn
from emails.samples import SAMPLES
from rules.bots import concrete
from service.domain import status
from service.domain.models import Game, GameAction, OutboxMail, Player, utcnow
from service.domain.outbox import insert_mail_row
from service.infra.db import get_session
from tests.rules.builder import Builder
from tests.smtp import Received
from tests.worker.conftest import WorkerStack, wait_until
from worker.tasks.deadlines import SWEEP_DEADLINES
from worker.tasks.mail import DELIVER_OUTBOX

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes]

BASE = "https://smallworld.example"
LINK = re.compile(re.escape(BASE) + r"/(play|invite|admin|unsubscribe)/(\S+)")


WORKER_STACK = {"BASE_URL": BASE}


# -- reading mails ----------------------------------------------------------------------------------------
def link(mail: Received, kind: str) -> str:
    """The token of the first ``kind`` link (play, invite, admin, unsubscribe) in the mail's text part."""
    for found in LINK.finditer(mail.text):
        if found.group(1) == kind:
            return found.group(2)
    raise AssertionError(f"no {kind} link in {mail.headline!r}")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def to(mailbox: Any, address: str, subject_has: str = "") -> list[Received]:
    return [m for m in mailbox.to(address) if subject_has in (m.headline)]


def new_game(stack: WorkerStack, names: list[str], tag: str, **settings: Any) -> tuple[int, list[str]]:
    """A game created through the API and confirmed by its host (the first player) with the link of the
    mail that asks them to (ARCHITECTURE §9: only then go the invitations); the host's time zone Europe/Paris."""
    emails = [f"{name.lower()}.{tag}@example.org" for name in names]
    body = {
        "name": f"Game {tag}",
        "players": [{"name": n, "email": e} for n, e in zip(names, emails, strict=True)],
        "host_time_zone": "Europe/Paris",
        "settings": settings,
    }
    created = stack.client.post("/api/games", json=body)
    assert created.status_code == 201, created.get_json()
    game_id = created.get_json()["id"]
    # The link of the mail asking the host to confirm, from its outbox row: a test may have the SMTP server down.
    [request] = outbox_rows(stack, game_id=game_id, template="confirm_game")
    token = request.context["confirm_url"].rsplit("/", 1)[1]
    confirmed = stack.client.post("/api/games/confirm", headers=bearer(token))
    assert confirmed.status_code == 200, confirmed.get_json()
    return game_id, emails


def game_row(stack: WorkerStack, game_id: int) -> Game:
    with stack.session():
        return get_session().get(Game, game_id)  # type: ignore[return-value]


def outbox_rows(stack: WorkerStack, **where: Any) -> list[OutboxMail]:
    with stack.session():
        query = select(OutboxMail).order_by(OutboxMail.id)  # type: ignore[arg-type]
        for key, value in where.items():
            query = query.where(getattr(OutboxMail, key) == value)
        return list(get_session().exec(query).all())


# -- the tests --------------------------------------------------------------------------------------------
def test_players_play_a_whole_game_only_through_the_links_in_their_mails(stack: WorkerStack) -> None:
    game_id, emails = new_game(stack, ["Ann", "Bob"], "whole", redeploy="ask")
    mailbox = stack.mailbox
    host_mail = mailbox.wait_for(lambda _: to(mailbox, emails[0], "host link"))[0]
    assert link(host_mail, "admin")

    for address in emails:
        invitation = mailbox.wait_for(lambda _, a=address: to(mailbox, a, "invited"))[0]
        accepted = stack.client.post("/api/invitations/accept", headers=bearer(link(invitation, "invite")))
        assert accepted.status_code == 200, accepted.get_json()

    rnd = random.Random(7)
    handled: set[str] = set()
    turns_played = 0
    while True:
        # Wait for the next mail that asks someone to act, or for the end of the game.
        def news(received: list[Received]) -> list[Received]:
            return [
                m
                for m in received
                if set(m.rcpt_tos) & set(emails)
                and m.header("Message-ID") not in handled
                and any(s in (m.headline) for s in ("your turn", "redeploy", "is over"))
            ]

        for mail in mailbox.wait_for(news):
            handled.add(mail.header("Message-ID") or "")
            if "is over" in (mail.headline):
                continue
            token = link(mail, "play")
            turns_played += play_while_awaited(stack, game_id, token, rnd)
        over = [m for m in mailbox.all() if set(m.rcpt_tos) & set(emails) and "is over" in (m.headline)]
        if len(over) == 2:
            break

    final = stack.client.get(f"/api/games/{game_id}", headers=bearer(token)).get_json()
    assert final["status"] == "finished"
    assert turns_played >= 20  # 10 game turns for each of the two players, and any redeployments
    winner = next(row for row in final["result"] if row["place"] == 1)
    for mail in over:
        assert f"{winner['name']} wins with {winner['coins']} coins." in mail.text or "share the victory" in mail.text
        assert final["seed"] in mail.text
    # One thread: every mail of the game refers to the same root; turn mails carry the board picture.
    mine = [m for m in mailbox.all() if set(m.rcpt_tos) & set(emails)]
    assert len({m.header("References") for m in mine}) == 1
    turn_mail = next(m for m in mine if "your turn" in (m.headline))
    assert any(part.get_content_type() == "image/png" for part in turn_mail.message.walk())
    assert len({m.header("Message-ID") for m in mine}) == len(mine)  # no mail twice


def play_while_awaited(stack: WorkerStack, game_id: int, token: str, rnd: random.Random) -> int:
    """The seat of ``token`` plays random legal steps while the game waits for it; 1 if it played."""
    played = 0
    for _ in range(200):
        view = stack.client.get(f"/api/games/{game_id}", headers=bearer(token)).get_json()
        if view["status"] != "active" or view["you"] not in view["awaiting"]:
            return played
        legal = stack.client.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
        action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
        step = stack.client.post(
            f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": legal["version"], "action": action}
        )
        assert step.status_code == 200, step.get_json()
        played = 1
    raise AssertionError("the seat never finished its step")


def test_two_concurrent_sweeps_make_one_auto_pass_and_one_mail_per_deadline(stack: WorkerStack) -> None:
    games = [new_game(stack, ["Cat", "Dan"], f"sweep{n}", start_when_all_accepted=False) for n in range(4)]
    for _, emails in games:
        stack.mailbox.wait_for(lambda _, a=emails[0]: to(stack.mailbox, a, "your turn"))
    due = max(game_row(stack, game_id).deadline_at for game_id, _ in games) + timedelta(seconds=1)  # type: ignore[type-var]

    celery = stack.app.extensions["celery"]
    results = [
        celery.send_task(SWEEP_DEADLINES, kwargs={"now": due.isoformat()}, ignore_result=False) for _ in range(2)
    ]
    reports = [r.get(timeout=60) for r in results]
    assert sum(r["auto_passed"] for r in reports) >= len(games)  # (earlier tests' games may be due too)

    for _game_id, emails in games:
        stack.mailbox.wait_for(lambda _, a=emails[1]: to(stack.mailbox, a, "your turn"))  # the next turn
    wait_until(lambda: not outbox_rows(stack, status="pending"))
    for game_id, emails in games:
        with stack.session():
            passes = (
                get_session()
                .exec(select(GameAction).where(GameAction.game_id == game_id, GameAction.kind == "auto_pass"))
                .all()
            )
        assert [a.seat for a in passes] == [0]
        assert len(to(stack.mailbox, emails[0], "played for you")) == 1


def test_a_worker_killed_between_the_smtp_reply_and_the_commit_sends_the_same_mail_again(stack: WorkerStack) -> None:
    address = "eve.killed@example.org"
    killed: list[bool] = []

    def kill_the_worker(mail: Received) -> None:
        if address in mail.rcpt_tos and not killed:
            stack.kill_worker()  # the server has the mail; the worker never hears "250" nor commits
            killed.append(True)

    stack.mailbox.on_accept = kill_the_worker
    try:
        with stack.session():
            session = get_session()
            eve = Player(email=address, display_name="Eve")
            session.add(eve)
            session.flush()
            turn = {"game_name": "Crash", "player_name": "Eve", "turn": 1, "turns": 9}
            mail = YourTurn(**SAMPLES["your_turn"].context | turn)
            insert_mail_row(session, player=eve, template=mail.template, context=mail.context())  # about no game
            session.commit()  # sends the delivery task to the worker
        stack.mailbox.wait_for(lambda _: to(stack.mailbox, address))
        wait_until(lambda: killed)
    finally:
        stack.mailbox.on_accept = None
    [row] = outbox_rows(stack, to_email=address)
    assert (row.status, row.attempts) == ("pending", 1)  # claimed; the outcome was never recorded

    stack.start_worker()
    assert stack.run(DELIVER_OUTBOX)["sent"] == 0  # its claim still holds: nobody sends it meanwhile
    lapsed = utcnow() + timedelta(minutes=11)
    assert stack.run(DELIVER_OUTBOX, now=lapsed.isoformat())["sent"] >= 1

    first, second = to(stack.mailbox, address)
    assert first.header("Message-ID") == second.header("Message-ID") == row.message_id
    assert first.content == second.content  # the same mail twice, never two different mails
    [row] = outbox_rows(stack, to_email=address)
    assert (row.status, row.attempts) == ("sent", 2)


def test_mail_written_while_the_smtp_server_is_down_goes_out_when_it_is_back(stack: WorkerStack) -> None:
    stack.smtp.stop()
    try:
        game_id, emails = new_game(stack, ["Fay", "Gus"], "smtpdown")

        def tried_or_waiting(found: list[OutboxMail]) -> bool:
            # The worker tried each mail once and recorded why it failed (the attempt is counted when a row is
            # claimed, the error once the try is over), but a mail written after an earlier one of the game to
            # the same address failed: that one waits for it, untried (mail of a game to a reader goes out
            # in the order written, service.domain.delivery).
            return all(
                r.last_error or any(e.to_email == r.to_email and e.id < r.id and e.last_error for e in found)
                for r in found
            )

        rows = wait_until(lambda: (found := outbox_rows(stack, game_id=game_id)) and tried_or_waiting(found) and found)
        tried = [r for r in rows if r.last_error]
        assert {r.to_email for r in tried} == {r.to_email for r in rows}
        assert all(r.status == "pending" and r.attempts == 1 and "unreachable" in (r.last_error or "") for r in tried)
        assert all(r.status == "pending" and r.attempts == 0 for r in rows if not r.last_error)
    finally:
        stack.smtp.start()
    assert stack.run(DELIVER_OUTBOX)["sent"] == 0  # not due again yet (backoff), nor what waits behind it
    assert stack.run(DELIVER_OUTBOX, now=(utcnow() + timedelta(seconds=61)).isoformat())["sent"] >= len(rows)
    for address in emails:
        assert len(to(stack.mailbox, address, "invited")) == 1
        # In the order written, the tried and the waiting alike.
        written = [r.message_id for r in rows if r.to_email == address]
        assert [m.header("Message-ID") for m in stack.mailbox.to(address)] == written
    assert [r.status for r in outbox_rows(stack, game_id=game_id)] == ["sent"] * len(rows)


def test_a_sweep_after_an_hour_without_sweeps_pushes_deadlines_back_instead_of_passing_everyone(
    stack: WorkerStack,
) -> None:
    game_id, emails = new_game(stack, ["Hal", "Ivy"], "outage", start_when_all_accepted=False)
    stack.mailbox.wait_for(lambda _: to(stack.mailbox, emails[0], "your turn"))
    an_hour_ago = utcnow() - timedelta(hours=1)
    with stack.session():
        session = get_session()
        game = session.get(Game, game_id)
        game.deadline_at = utcnow() - timedelta(minutes=30)  # it fell while the service was down
        missed = game.deadline_at
        session.add(game)
        status.record(session, status.LAST_DEADLINE_SWEEP, an_hour_ago)
        session.commit()

    report = stack.run(SWEEP_DEADLINES)  # the worker's own clock: the first sweep after the outage

    assert report["outage"] is not None and report["outage"] > 3600
    game = game_row(stack, game_id)
    with stack.session():
        swept_at = status.recorded_at(get_session(), status.LAST_DEADLINE_SWEEP)
    assert game.deadline_at == missed + (swept_at - an_hour_ago)
    with stack.session():
        passes = get_session().exec(select(GameAction).where(GameAction.game_id == game_id)).all()
    assert passes == []
    notice = stack.mailbox.wait_for(lambda _: to(stack.mailbox, emails[0], "deadline moved"))[0]
    assert "was unavailable from" in notice.text
    assert notice.header("List-Unsubscribe-Post") == "List-Unsubscribe=One-Click"


def test_a_reminder_is_sent_once_across_a_skipped_sweep(stack: WorkerStack) -> None:
    game_id, emails = new_game(
        stack, ["Jo", "Kim"], "remind", start_when_all_accepted=False, reminders_before_seconds=[7200]
    )
    stack.mailbox.wait_for(lambda _: to(stack.mailbox, emails[0], "your turn"))
    remind_at = game_row(stack, game_id).deadline_at - timedelta(hours=2)
    with stack.session():
        status.record(get_session(), status.LAST_DEADLINE_SWEEP, remind_at - timedelta(seconds=70))
        get_session().commit()

    counts = []
    for offset in (-40, -10, 50, 80, 110):  # every 30 s, but the sweep at +20 s did not run
        counts.append(stack.run(SWEEP_DEADLINES, now=(remind_at + timedelta(seconds=offset)).isoformat()))
    assert [c["reminders"] for c in counts] == [0, 0, 1, 0, 0]
    reminder = stack.mailbox.wait_for(lambda _: to(stack.mailbox, emails[0], "Reminder"))
    wait_until(lambda: not outbox_rows(stack, status="pending"))
    assert len(to(stack.mailbox, emails[0], "Reminder")) == 1
    assert "1 hour 59 minutes left." in reminder[0].text
    assert link(reminder[0], "unsubscribe")


def test_the_end_of_game_mail_names_the_winner_by_the_tie_break(stack: WorkerStack) -> None:
    game_id, emails = new_game(stack, ["Lea", "Max"], "tally", start_when_all_accepted=False)
    invitations = [stack.mailbox.wait_for(lambda _, a=a: to(stack.mailbox, a, "invited"))[0] for a in emails]
    # The last turn of the game, seat 1 (Max) redeploying: Max will end with as many coins as Lea, and
    # more race tokens on the board (9 against 2), so the tie-break gives him the game.
    builder = (
        Builder(2, seed=5)
        .clear_board()
        .active(0, "Orcs", "Alchemist", hand=0)
        .active(1, "Giants", "Swamp", hand=0)
        .region(3, seat=0, tokens=1)
        .region(4, seat=0, tokens=1)
        .region(16, seat=1, tokens=3)
        .region(17, seat=1, tokens=3)
        .region(18, seat=1, tokens=3)
        .at(1, "redeploy", turn=10)
    )
    state = builder.build()
    state.players[0].coins = 40
    state.players[1].coins = 40 - rules.turn_score(state, 1)["total"]
    with stack.session():
        session = get_session()
        game = session.get(Game, game_id)
        game.state = state.to_json()
        session.add(game)
        session.commit()

    token = link(invitations[1], "play")  # Max's seat link, from his invitation
    version = stack.client.get(f"/api/games/{game_id}", headers=bearer(token)).get_json()["version"]
    ended = stack.client.post(
        f"/api/games/{game_id}/actions",
        headers=bearer(token),
        json={"version": version, "action": {"type": "end_turn"}},
    )
    assert ended.status_code == 200, ended.get_json()

    for address, you in zip(emails, ["Lea", "Max"], strict=True):
        [over] = stack.mailbox.wait_for(lambda _, a=address: to(stack.mailbox, a, "is over"))
        assert over.headline == "Game tally is over: Max wins"
        assert "Max wins with 40 coins." in over.text
        assert "Tie-break: Max and Lea both had 40 coins" in over.text
        assert "Max had 9, Lea 2." in over.text
        assert f"{you} (you)" in over.text
