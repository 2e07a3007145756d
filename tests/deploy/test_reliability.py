"""Faults in the production process set (tests/deploy/stack.py): workers killed mid-task, the service's
PostgreSQL connections cut, a second beat started by mistake, Redis restarted. Through all of it: no action,
mail or auto-pass lost or doubled, and every game finishes.

Each run has two kinds of game. **Deadline games** play themselves: their turn lasts one second and the
sweep (beat, every second) auto-passes each seat in turn, so the workers always have sweeps and mail in hand
when they are killed. A **played game** is played over HTTP by bots with the links from their mails; each
step carries an idempotency key, and a step whose answer was lost (a 500 while the database connection was
cut, a dropped connection) is sent again with the same key, as a client should.

The checks, at the end:

- every game finished; the event log of each has one entry per version, none missing;
- a deadline game has exactly one auto-pass per seat and game turn, each after the deadline its step was
  given (a doubled auto-pass would have passed the next step before its deadline);
- the played game's log holds exactly the steps the bots were told were applied, each once;
- every mail of the outbox was sent and received; a mail received twice (its worker killed between the SMTP
  server's "250" and its commit) is the same mail under the same Message-ID: same headers, same text and HTML
  (its links are signed again when it is sent again, so their tokens carry a newer timestamp).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import random
import re
import signal
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis
from sqlmodel import select

import rules
from rules.bots import concrete
from service.domain.delivery import STEP_MAILS
from service.domain.models import Game, GameAction, OutboxMail, utcnow
from service.infra.db import get_session
from tests.api.conftest import seat_link, token_of
from tests.processes import OwnRedis
from tests.smtp import Received, SMTPServer
from worker.tasks.mail import DELIVER_OUTBOX

from .stack import Client, Stack, confirm_by_mail, running_stack, terminate_connections, wait_until

# About a minute each: run by hand (make test PYTEST_ARGS="-m slow tests/deploy"); deploy/README.md has the results.
pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes, pytest.mark.slow]

#: Players of every game; a 2-player game has 10 game turns.
PLAYERS = 2


# -- the games -----------------------------------------------------------------------------------------------
def create_game(stack: Stack, client: Client, tag: str, **settings: Any) -> tuple[int, list[str]]:
    emails = [f"{tag}.{seat}@example.org" for seat in range(PLAYERS)]
    body = {
        "name": f"Game {tag}",
        "players": [{"name": f"{tag} {seat}", "email": e} for seat, e in enumerate(emails)],
        "settings": settings,
    }
    status, created = client.post("/api/games", body, retries=5)
    assert status == 201, created
    confirm_by_mail(stack, client, emails[0], retries=5)
    return created["id"], emails


def deadline_games(stack: Stack, client: Client, count: int) -> list[int]:
    """Games nobody plays: every step is auto-passed at its deadline (the house bot is told never to take a
    seat over, so that the log is auto-passes only and each is checked against its deadline)."""
    return [
        create_game(
            stack,
            client,
            f"deadline{n}",
            turn_length_seconds=1,
            start_when_all_accepted=False,
            bot_after_missed_turns=0,
        )[0]
        for n in range(count)
    ]


@dataclass
class Bots:
    """Players of one game over HTTP, from the links in their mails; they remember what was applied."""

    stack: Stack
    game_id: int
    tokens: dict[int, str]
    applied: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    retried: int = 0

    def play(self, stop: threading.Event) -> None:
        client = self.stack.http()
        rnd = random.Random(self.game_id)
        try:
            while not stop.is_set():
                status, view = client.get(f"/api/games/{self.game_id}", token=self.tokens[0], retries=20)
                assert status == 200, view
                if view["status"] == "finished":
                    return
                if not view["awaiting"]:
                    time.sleep(0.05)
                    continue
                seat = view["awaiting"][0]
                status, legal = client.get(
                    f"/api/games/{self.game_id}/legal-actions", token=self.tokens[seat], retries=20
                )
                assert status == 200, legal
                if not legal["actions"]:
                    continue
                key = uuid.uuid4().hex
                action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
                body = {"version": legal["version"], "action": action, "idempotency_key": key}
                status, step = client.post(
                    f"/api/games/{self.game_id}/actions", body, token=self.tokens[seat], retries=20
                )
                if status == 200:
                    self.applied.append(key)
                else:
                    assert status == 409, (status, step)  # the game moved on meanwhile: look again
        except BaseException as error:
            self.errors.append(repr(error))
            raise
        finally:
            self.retried += client.retried


def join(stack: Stack, tag: str) -> Bots:
    """A game whose players accept the invitations in their mails (the answer gives each its turn link)."""
    client = stack.http()
    game_id, emails = create_game(stack, client, tag, start_when_all_accepted=True)
    base = stack.env["SMALLWORLD_BASE_URL"]
    tokens = {}
    for seat, address in enumerate(emails):
        [mail] = stack.smtp.mailbox.wait_for(
            lambda got, a=address: [m for m in got if a in m.rcpt_tos and "invited" in (m.headline)],
            timeout=30,
        )
        invite = re.findall(re.escape(base) + r"/invite/([A-Za-z0-9_\-.]+)", mail.text)[0]
        status, accepted = client.post("/api/invitations/accept", None, token=invite, retries=5)
        assert status == 200, accepted
        tokens[seat] = accepted["turn_url"].rsplit("/", 1)[-1]
    return Bots(stack, game_id, tokens)


# -- the checks ------------------------------------------------------------------------------------------------
def games(stack: Stack, ids: list[int]) -> list[Game]:
    with stack.app.app_context():
        return [get_session().get(Game, game_id) for game_id in ids]  # type: ignore[misc]


def log_of(stack: Stack, game_id: int) -> list[GameAction]:
    with stack.app.app_context():
        query = select(GameAction).where(GameAction.game_id == game_id).order_by(GameAction.version)  # type: ignore[arg-type]
        return list(get_session().exec(query).all())


def outbox(stack: Stack) -> list[OutboxMail]:
    with stack.app.app_context():
        return list(get_session().exec(select(OutboxMail)).all())


@dataclass
class Findings:
    auto_passes: int = 0
    steps: int = 0
    mails: int = 0
    received: int = 0
    redelivered: int = 0
    identical_bytes: int = 0
    #: Turn mails dropped, not sent, because their step was over when they could go (ARCHITECTURE §6).
    dropped: int = 0
    #: Of those, the ones a worker killed holding them may have sent first (``maybe_sent``, not ``skipped``).
    maybe_sent: int = 0
    notes: list[str] = field(default_factory=list)


def dropped_as_stale(mail: OutboxMail) -> bool:
    """A mail about a step of its game, not sent because the game had moved past it (or ended) by then:
    ``skipped``, or ``maybe_sent`` when a worker killed holding it may have sent it before."""
    reason = mail.last_error or ""
    if mail.status == "maybe_sent":
        reason = reason.rpartition("not sent again: ")[2]
    return (
        mail.status in ("skipped", "maybe_sent")
        and mail.template in STEP_MAILS
        and (reason.startswith("the step") or reason.startswith("the game is"))
    )


def check_everything(stack: Stack, deadline_ids: list[int], bots: Bots) -> Findings:
    found = Findings()
    all_ids = [*deadline_ids, bots.game_id]
    wait_until(lambda: all(g.status == "finished" for g in games(stack, all_ids)), 120, "every game to finish")
    for game in games(stack, all_ids):
        log = log_of(stack, game.id or 0)
        assert [a.version for a in log] == list(range(2, 2 + len(log))), f"game {game.id}: a version is missing"
    for game_id in deadline_ids:
        log = log_of(stack, game_id)
        turns = rules.read_state(games(stack, [game_id])[0].state or {}).turns
        assert [a.kind for a in log] == ["auto_pass"] * (turns * PLAYERS), f"game {game_id}"
        assert [a.seat for a in log] == [n % PLAYERS for n in range(turns * PLAYERS)]
        # Each step's "your turn" mail holds the deadline it was given: no auto-pass came before its own
        # deadline (a doubled one would have passed the next step early), and there is one mail per step.
        turn_mails = sorted(
            (m for m in outbox(stack) if m.game_id == game_id and m.template == "your_turn"), key=lambda m: m.id or 0
        )
        assert len(turn_mails) == len(log), f"game {game_id}: {len(turn_mails)} turn mails for {len(log)} steps"
        for passed, mail in zip(log, turn_mails, strict=True):
            deadline = datetime.fromisoformat(mail.context["deadline_at"])
            assert passed.created_at >= deadline, f"game {game_id}: auto-passed before its deadline ({deadline})"
        found.auto_passes += len(log)
    log = log_of(stack, bots.game_id)
    keys = [a.idempotency_key for a in log if a.kind == "action"]
    assert Counter(keys) == Counter(bots.applied), "the played game's log is not the steps the bots were told of"
    found.steps = len(keys)

    # Mail: claims left by killed workers lapse after their lease; a drain "11 minutes later" sends them. A
    # turn mail whose step was over by the time it could go is dropped instead (ARCHITECTURE §6).
    celery = stack.app.extensions["celery"]
    later = (utcnow() + timedelta(minutes=11)).isoformat()
    wait_until(
        lambda: (
            celery.send_task(DELIVER_OUTBOX, kwargs={"now": later}, ignore_result=False).get(timeout=30) is not None
            and all(m.status == "sent" or dropped_as_stale(m) for m in outbox(stack))
        ),
        60,
        "every mail to be sent",
    )
    rows = outbox(stack)
    found.mails = sum(r.status == "sent" for r in rows)
    found.dropped = sum(dropped_as_stale(r) for r in rows)
    found.maybe_sent = sum(r.status == "maybe_sent" for r in rows)
    received: dict[str, list[Received]] = {}
    for mail in stack.smtp.mailbox.all():
        received.setdefault(mail.header("Message-ID") or "", []).append(mail)
    missing = [r.message_id for r in rows if r.status == "sent" and r.message_id not in received]
    assert not missing, f"{len(missing)} mails never arrived"
    assert set(received) <= {r.message_id for r in rows}, "a mail arrived that the outbox never held"
    # A dropped mail arrived at most once: sent while its step was on, by a worker killed before it recorded it;
    # and then it says so (maybe_sent): a mail recorded as skipped never left.
    assert all(len(received.get(r.message_id, [])) <= 1 for r in rows if dropped_as_stale(r))
    assert not [r.message_id for r in rows if r.status == "skipped" and r.message_id in received]
    for message_id, copies in received.items():
        for copy in copies[1:]:
            assert same_mail(copies[0], copy), (
                f"two different mails under {message_id}:\n"
                + "\n".join(
                    difflib.unified_diff(
                        mail_text(copies[0]).splitlines(), mail_text(copy).splitlines(), lineterm="", n=0
                    )
                )[:3000]
            )
            found.redelivered += 1
            found.identical_bytes += copy.content == copies[0].content
    # Written once and stored (outbox.rendered): a mail sent again is the same bytes.
    assert found.identical_bytes == found.redelivered, f"{found.redelivered - found.identical_bytes} copies differ"
    found.received = sum(len(c) for c in received.values())
    return found


SIGNED = re.compile(r"/(play|invite|admin|unsubscribe)/[A-Za-z0-9_\-.]+")
HEADERS = ("Message-ID", "Date", "From", "To", "Subject", "In-Reply-To", "References", "List-Unsubscribe-Post")


def mail_text(mail: Received) -> str:
    """The mail as its reader sees it: its headers and its text and HTML parts, decoded; the signed tokens in
    its links left out (a link signed again at a resend carries a newer timestamp, and works the same)."""
    headers = [f"{name}: {mail.header(name)}" for name in HEADERS]
    return SIGNED.sub(r"/\1/…", "\n".join([*headers, mail.text, mail.html]))


def same_mail(first: Received, second: Received) -> bool:
    return mail_text(first) == mail_text(second)


# -- faults ------------------------------------------------------------------------------------------------------
def worker_talking_to_smtp(stack: Stack) -> str | None:
    """The worker (w1, w2) one of whose processes holds a connection to the SMTP server, if one does."""
    for name, process in list(stack.processes.items()):
        if not name.startswith("w"):
            continue
        with contextlib.suppress(psutil.Error):
            family = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
            for member in family:
                if any(c.raddr and c.raddr.port == stack.smtp.port for c in member.net_connections("tcp")):
                    return name
    return None


def kill_the_worker_delivering(stack: Stack, killed: list[str]) -> Any:
    """An SMTP hook: when a mail arrives, SIGKILL the worker whose process sent it, before it hears "250"."""

    def hook(_mail: Received) -> None:
        if len(killed) >= 2:
            return
        for name, process in list(stack.processes.items()):
            if not name.startswith("w"):
                continue
            with contextlib.suppress(psutil.Error):
                family = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
                for member in family:
                    if any(c.raddr and c.raddr.port == stack.smtp.port for c in member.net_connections("tcp")):
                        os.killpg(process.pid, signal.SIGKILL)
                        killed.append(name)
                        return

    return hook


def restart_dead_workers(stack: Stack) -> int:
    """Start again every worker that is gone (killed by the test, or by the SMTP hook), as a supervisor would."""
    restarted = 0
    for name in ("w1", "w2"):
        if not stack.alive().get(name, False):
            if name in stack.processes:
                stack.kill(name)  # reap it, and whatever of its pool is left
            stack.start_worker(name)
            restarted += 1
    return restarted


# -- the tests -----------------------------------------------------------------------------------------------------
def test_workers_killed_mid_task_connections_cut_and_a_second_beat(
    redis_url: str, smtp_server: SMTPServer, tmp_path: Path
) -> None:
    started = time.monotonic()
    with running_stack(redis_url, smtp_server, tmp_path) as stack:
        lock = redis.Redis.from_url(redis_url)
        lock_key = stack.app.extensions["celery"].conf.redbeat_key_prefix + ":lock"
        wait_until(lambda: lock.exists(lock_key), 20, "beat to take the RedBeat lock")
        stack.start_beat("beat2")  # by mistake: it must wait for the lock, not send every sweep twice

        client = stack.http()
        deadline_ids = deadline_games(stack, client, 3)
        bots = join(stack, "played")
        stop = threading.Event()
        player = threading.Thread(target=bots.play, args=(stop,), daemon=True)
        player.start()

        killed_delivering: list[str] = []
        stack.smtp.mailbox.on_accept = kill_the_worker_delivering(stack, killed_delivering)
        faults: Counter[str] = Counter()
        try:
            for round_ in range(12):
                time.sleep(1.5)
                if round_ % 3 == 0:
                    # A burst, as a database failover would: requests and tasks in flight lose their connection.
                    for _ in range(10):
                        faults["database connections cut"] += terminate_connections(stack.application_name)
                        time.sleep(0.1)
                else:
                    victim = f"w{1 + round_ % 2}"
                    if stack.alive().get(victim):
                        stack.kill(victim)  # SIGKILL to the worker and its pool: mid-sweep or mid-drain
                        faults["workers killed (SIGKILL, random moment)"] += 1
                faults["workers restarted"] += restart_dead_workers(stack)
        finally:
            stack.smtp.mailbox.on_accept = None
        faults["workers killed between the SMTP reply and the commit"] = len(killed_delivering)
        for _ in range(20):  # a worker the SMTP hook killed may take a moment to be seen dead
            faults["workers restarted"] += restart_dead_workers(stack)
            time.sleep(0.1)
        for name in ("w1", "w2"):
            stack.wait_for_worker(name, timeout=60)

        player.join(timeout=120)
        stop.set()
        assert not bots.errors, bots.errors
        found = check_everything(stack, deadline_ids, bots)
        assert stack.alive()["beat"] and stack.alive()["beat2"]  # the second one waited all along
        senders = [line for line in stack.log("beat2").splitlines() if "Sending due task" in line]
        assert not senders, f"the second beat sent tasks while the first held the lock: {senders[:3]}"
        # Stopped (SIGTERM), the first beat releases the lock, and the second takes over at its next try
        # (every --max-interval: 5 s, as in compose.yaml).
        stack.stop("beat")
        wait_until(lambda: "Sending due task" in stack.log("beat2"), 30, "the second beat to take over")
        lock.close()

    assert faults["workers killed (SIGKILL, random moment)"] >= 6 and faults["database connections cut"] >= 1
    print(
        f"\nfaults: {dict(faults)}; client retries: {bots.retried}\n"
        f"result: {found.auto_passes} auto-passes and {found.steps} played steps, each once; "
        f"{found.mails} mails sent, {found.dropped} turn mails dropped as stale ({found.maybe_sent} of them "
        f"maybe sent first), {found.received} received "
        f"({found.redelivered} sent again, the same mail; "
        f"{found.identical_bytes} of them byte for byte); "
        f"{time.monotonic() - started:.0f} s"
    )


def test_redis_restarted_while_games_run(own_redis: OwnRedis, smtp_server: SMTPServer, tmp_path: Path) -> None:
    started = time.monotonic()
    with running_stack(own_redis.url, smtp_server, tmp_path) as stack:
        # As deployed (compose.yaml: restart: unless-stopped; deploy/systemd: Restart=always), whatever exits is
        # started again; but nothing should need it: beat waits for Redis and takes its lock and schedule again
        # (service/infra/beat.py), the workers reconnect every few seconds, the web server rides it out.
        supervising = threading.Event()
        supervisor = threading.Thread(target=stack.restart_policy, args=(supervising,), daemon=True)
        supervisor.start()
        client = stack.http()
        deadline_ids = deadline_games(stack, client, 2)
        bots = join(stack, "played")
        stop = threading.Event()
        player = threading.Thread(target=bots.play, args=(stop,), daemon=True)
        player.start()

        time.sleep(3)
        own_redis.stop()  # the broker, the rate-limit counters and RedBeat's lock and schedule: all gone
        down_at = time.monotonic()
        time.sleep(4)
        status, health = client.get("/health", retries=3)
        assert status == 503 and health["broker"]["reachable"] is False  # says so, and the site still serves
        own_redis.start()
        outage = time.monotonic() - down_at

        for name in ("w1", "w2"):
            stack.wait_for_worker(name, timeout=60)
        wait_until(lambda: client.get("/health")[0] == 200, 30, "/health to be ok again")
        player.join(timeout=120)
        stop.set()
        assert not bots.errors, bots.errors
        found = check_everything(stack, deadline_ids, bots)
        supervising.set()
        supervisor.join()
        alive = stack.alive()
    # Everything runs again, and without a hand: no process exited, so the restart policy restarted nothing.
    assert alive == {"web": True, "w1": True, "w2": True, "beat": True}, alive
    assert "web" not in stack.restarts, f"the web server must ride out a Redis restart: {stack.restarts}"
    assert not stack.restarts, f"every process must ride out a Redis restart on its own: {stack.restarts}"
    # The outage is said once, not once per poll.
    beat_log = stack.log("beat")
    assert beat_log.count("beat.broker_lost") == 1 and beat_log.count("beat.broker_back") == 1, beat_log[-3000:]
    outage_lines = {name: len(stack.log(name).splitlines()) for name in ("beat", "w1", "w2", "web")}
    print(
        f"\nRedis down {outage:.1f} s; restarted by the restart policy: {stack.restarts or 'nothing'}; "
        f"log lines in all (the whole run): {outage_lines}; "
        f"client retries: {bots.retried}\n"
        f"result: {found.auto_passes} auto-passes and {found.steps} played steps, each once; "
        f"{found.mails} mails sent, {found.dropped} turn mails dropped as stale ({found.maybe_sent} of them "
        f"maybe sent first), {found.received} received "
        f"({found.redelivered} sent again, the same mail; "
        f"{found.identical_bytes} of them byte for byte); "
        f"{time.monotonic() - started:.0f} s"
    )


def test_a_worker_killed_holding_mail_and_a_turn_played_before_its_mail_left(
    redis_url: str, smtp_server: SMTPServer, tmp_path: Path
) -> None:
    """Beat every 30 s as in production. (1) The worker sending a game's first mails is killed while the SMTP
    server holds its first RCPT: it dies holding the whole batch; the other worker sends every one of them,
    each once, within a minute (its lease, MAIL_LEASE_SECONDS, then beat's next drain). (2) A player's "your
    turn" mail cannot leave (the server says 451, try later) until that turn has been played: it is dropped,
    not sent."""
    started = time.monotonic()
    with running_stack(redis_url, smtp_server, tmp_path, SWEEP_SECONDS="30", MAIL_RETRY_SECONDS="5") as stack:
        client = stack.http()
        mailbox = stack.smtp.mailbox

        # (1) a worker killed while it holds claimed mail. The host's first mail asks them to confirm the game;
        # only the confirmation sends the game's first batch (the invitations, the host's admin link), and the
        # first of those, to the host, is held at RCPT TO.
        host = "held.0@example.org"

        def stall_once_confirmed(mail: Received) -> None:
            if host in mail.rcpt_tos and "Confirm your new game" in (mail.headline):
                mailbox.stall[host] = 20.0

        mailbox.on_accept = stall_once_confirmed
        held_game, _ = create_game(stack, client, "held", start_when_all_accepted=True)
        wait_until(lambda: mailbox.stalling, 30, "the first mail of the batch to reach RCPT TO")
        mailbox.on_accept = None
        holder = worker_talking_to_smtp(stack)
        assert holder is not None
        claimed = [m for m in outbox(stack) if m.game_id == held_game and m.template != "confirm_game"]
        assert claimed and all(m.status == "pending" and m.claimed_by for m in claimed), claimed
        stack.kill(holder)  # SIGKILL, mid-SMTP-session, holding the whole batch
        killed_at = time.monotonic()
        ids = {m.message_id for m in claimed}

        def arrived() -> set[str]:
            return {r.header("Message-ID") or "" for r in mailbox.all()} & ids

        wait_until(lambda: arrived() == ids, 90, "the dead worker's mail to go out")
        takeover = time.monotonic() - killed_at
        copies = Counter(r.header("Message-ID") for r in mailbox.all() if r.header("Message-ID") in ids)
        wait_until(lambda: all(m.status == "sent" for m in outbox(stack) if m.game_id == held_game), 10, "sent")
        stack.start_worker(holder)

        # (2) a turn played before its mail left
        # The host's mail is refused for a while once they have confirmed the game (their confirmation
        # request must reach them): their invitation, admin link and first "your turn" wait.
        stale = "stale.0@example.org"

        def refuse_once_confirmed(mail: Received) -> None:
            if stale in mail.rcpt_tos and "Confirm your new game" in (mail.headline):
                mailbox.data_refuse[stale] = "451 4.3.0 Try again later"

        mailbox.on_accept = refuse_once_confirmed
        stale_game, _ = create_game(stack, client, "stale", start_when_all_accepted=False)
        mailbox.on_accept = None
        wait_until(
            lambda: [m for m in outbox(stack) if m.to_email == stale and m.template == "your_turn" and m.last_error],
            30,
            "the first try of the turn mail",
        )
        [turn_mail] = [m for m in outbox(stack) if m.to_email == stale and m.template == "your_turn"]
        token = token_of(seat_link(stack.app, turn_mail))
        steps = play_turn(client, stale_game, token, seat=0)
        del mailbox.data_refuse[stale]
        wait_until(
            lambda: [m for m in outbox(stack) if m.id == turn_mail.id and m.status == "skipped"],
            60,
            "the stale turn mail to be dropped",
        )
        [dropped] = [m for m in outbox(stack) if m.id == turn_mail.id]
        wait_until(lambda: all(m.status in ("sent", "skipped") for m in outbox(stack)), 60, "the rest of the mail")
        to_stale = [r.headline for r in mailbox.to(stale)]
        to_next = [r.headline for r in mailbox.to("stale.1@example.org")]

    assert takeover < 60, f"mail held by a dead worker went out {takeover:.1f} s after it died"
    assert set(copies.values()) == {1}, copies  # each once: the stalled one never got past RCPT TO
    assert dropped.last_error == "the step it was about is over"
    assert not [s for s in to_stale if "your turn (turn 1" in s], to_stale  # no stale "your turn"
    assert [s for s in to_stale if "invited" in s]  # its other mail went out once the server took it
    assert [s for s in to_next if "your turn (turn 1" in s], to_next
    print(
        f"\nworker killed holding {len(ids)} claimed mails: all delivered {takeover:.1f} s after, each once "
        f"(lease 20 s, beat's drain every 30 s); turn played in {steps} steps before its mail could leave: "
        f"the mail dropped ({dropped.last_error!r}), the next player's mail sent; {time.monotonic() - started:.0f} s"
    )


def play_turn(client: Client, game_id: int, token: str, seat: int) -> int:
    """Random legal steps for ``seat`` until the game waits for someone else; how many steps."""
    rnd = random.Random(game_id)
    for step in range(500):
        status, view = client.get(f"/api/games/{game_id}", token=token, retries=5)
        assert status == 200, view
        if seat not in view["awaiting"]:
            return step
        status, legal = client.get(f"/api/games/{game_id}/legal-actions", token=token, retries=5)
        assert status == 200, legal
        action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
        body = {"version": legal["version"], "action": action, "idempotency_key": uuid.uuid4().hex}
        status, answer = client.post(f"/api/games/{game_id}/actions", body, token=token, retries=5)
        assert status in (200, 409), answer
    raise AssertionError("the turn did not end in 500 steps")
