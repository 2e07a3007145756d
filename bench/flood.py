"""A 60-second flood from one client against the service as deployed, with a real game going on beside it.

    python bench/flood.py [--seconds 60] [--baseline 60] [--attacker-mailbox]

Starts the production processes on this machine: gunicorn (2 workers, ``SMALLWORLD_ENV=production``, limits
counted in Redis, one reverse proxy trusted so each client has its own address), a Celery worker and beat,
PostgreSQL (a fresh schema) and Redis as the broker, and an SMTP server (aiosmtpd, in this process) that
receives every mail the service sends. A site admin account exists.

A real game is played throughout by two bot players from addresses of their own: first ``--baseline``
seconds alone, then for ``--seconds`` while one client (one address) floods the service as fast as it can,
in turns:

- creates a game naming the victim as its host (the victim's address as the first player);
- creates a game naming the victim as a player, with a host address the attacker cannot read;
- accepts an invitation and confirms a game with forged tokens;
- asks for a site admin's sign-in link, by the sign-in form (with its CSRF token, as a browser does).

With ``--attacker-mailbox`` the attacker also hosts games from an address whose mail they read: they confirm
those games (inviting the victim), and give seats of their game to the victim's address from its admin API.

Prints what each kind of request got (status counts), every mail that reached the victim and the site admin,
and the real game's step round trip and "your turn" mail delay alone and during the flood.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rules  # noqa: E402
from rules.bots import concrete  # noqa: E402

POSTGRES = os.environ.get("SMALLWORLD_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS = os.environ.get("SMALLWORLD_BENCH_REDIS_URL", "redis://127.0.0.1:6379/8")

VICTIM = "victim@example.org"
ADMIN = "siteadmin@example.org"
ATTACKER_ADDRESS = "203.0.113.66"
ATTACKER_MAILBOX = "mallory@attacker.example"
PLAYER_ADDRESSES = ("198.51.100.10", "198.51.100.11")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the SMTP server ---------------------------------------------------------------------------------------
class Inbox:
    """Every mail the service sends, with when it arrived."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.mails: list[dict[str, Any]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        message = message_from_bytes(envelope.content, policy=policy.default)
        body = message.get_body(preferencelist=("plain",))
        with self.lock:
            self.mails.append(
                {
                    "at": time.monotonic(),
                    "to": [a.lower() for a in envelope.rcpt_tos],
                    "subject": str(message["Subject"]),
                    "text": body.get_content() if body is not None else "",
                }
            )
        return "250 OK"

    def to(self, address: str) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.mails if address in m["to"]]

    def wait_for(self, condition: Callable[[], Any], timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = condition()
            if found:
                return found
            time.sleep(0.05)
        raise SystemExit("a mail did not come in time")


# -- HTTP from a given client address ----------------------------------------------------------------------
class Client:
    """Keep-alive HTTP from one client address (the trusted proxy's ``X-Forwarded-For``), with cookies."""

    def __init__(self, port: int, address: str) -> None:
        self.port = port
        self.address = address
        self.cookies: dict[str, str] = {}
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes, float]:
        headers = {"X-Forwarded-For": self.address, **(headers or {})}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        started = time.monotonic()
        for attempt in range(2):
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                if attempt:
                    raise
        for cookie in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = cookie.partition("=")
            self.cookies[name] = rest.split(";", 1)[0]
        return response.status, data, time.monotonic() - started

    def json(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any, float]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        status, data, took = self.request(
            method, path, json.dumps(body).encode() if body is not None else None, headers
        )
        try:
            return status, json.loads(data) if data else {}, took
        except ValueError:
            return status, {"raw": data[:200]}, took


def token_in(text: str, kind: str) -> str:
    found = re.search(rf"/{kind}/([A-Za-z0-9_\-.]+)", text)
    if not found:
        raise SystemExit(f"no {kind} link in a mail")
    return found.group(1)


# -- the real game -----------------------------------------------------------------------------------------
class RealGame:
    """Two bot players, each from an address of their own, playing a game through the API (``think``
    seconds between steps on average, well within the per-address limits; a page polls once a second while
    the other player acts), recording each step's round trip and how long the next player's "your turn"
    mail took to arrive."""

    def __init__(self, port: int, inbox: Inbox, think: float = 1.0) -> None:
        self.port = port
        self.inbox = inbox
        self.think = think
        self.steps: list[tuple[float, float]] = []  # (when, round trip)
        self.mail_delays: list[tuple[float, float]] = []  # (when, seconds from the step to the mail)
        self.errors: list[tuple[float, int]] = []  # (when, status) of every request refused
        self.emails = [f"real{seat}.{uuid.uuid4().hex[:6]}@example.org" for seat in range(2)]

    def start(self) -> None:
        host = Client(self.port, PLAYER_ADDRESSES[0])
        body = {
            "name": "The real game",
            "players": [{"name": f"Real {i}", "email": e} for i, e in enumerate(self.emails)],
            "settings": {"start_when_all_accepted": False, "turn_length_seconds": 3600},
        }
        status, created, _ = host.json("POST", "/api/games", body)
        assert status == 201, created
        self.game_id = created["id"]
        asking = self.inbox.wait_for(lambda: self.inbox.to(self.emails[0]))[0]
        status, confirmed, _ = host.json("POST", "/api/games/confirm", token=token_in(asking["text"], "games/confirm"))
        assert status == 200, confirmed
        self.inbox.wait_for(
            lambda: len([m for e in self.emails for m in self.inbox.to(e) if "invited" in m["subject"]]) >= 2
        )
        self.tokens = {
            seat: token_in(next(m for m in self.inbox.to(e) if "invited" in m["subject"])["text"], "play")
            for seat, e in enumerate(self.emails)
        }
        self.clients = {seat: Client(self.port, PLAYER_ADDRESSES[seat]) for seat in range(2)}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.play, daemon=True)
        self.thread.start()

    def play(self) -> None:
        rnd = random.Random(1)
        while not self.stop.is_set():
            acted = False
            for seat, token in self.tokens.items():
                client = self.clients[seat]
                status, legal, _ = client.json("GET", f"/api/games/{self.game_id}/legal-actions", token=token)
                if status != 200:
                    self.errors.append((time.monotonic(), status))
                    continue
                if not legal["actions"]:
                    continue
                action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd)
                before = len(self.inbox.to(self.emails[1 - seat]))
                sent_at = time.monotonic()
                status, answer, took = client.json(
                    "POST",
                    f"/api/games/{self.game_id}/actions",
                    {"version": legal["version"], "action": action.to_json()},
                    token=token,
                )
                if status != 200:
                    self.errors.append((sent_at, status))
                    continue
                self.steps.append((sent_at, took))
                acted = True
                if answer["game"]["awaiting"] == [1 - seat]:  # the turn passed: the other player is mailed
                    try:
                        self.inbox.wait_for(lambda s=seat, b=before: len(self.inbox.to(self.emails[1 - s])) > b, 30)
                        self.mail_delays.append((sent_at, time.monotonic() - sent_at))
                    except SystemExit:
                        self.errors.append((sent_at, 0))
                if answer["game"]["status"] == "finished":
                    self.stop.set()
                time.sleep(rnd.expovariate(1 / self.think))
            if not acted:  # waiting for the other player: look again in a second, as a page would
                time.sleep(1)


# -- the flood ---------------------------------------------------------------------------------------------
def flood(port: int, inbox: Inbox, seconds: float, with_mailbox: bool) -> dict[str, Counter[int]]:
    attacker = Client(port, ATTACKER_ADDRESS)
    outcomes: dict[str, Counter[int]] = defaultdict(Counter)
    forged = "eyJnIjoxLCJzIjoxLCJrIjoiZm9yZ2VkIn0.ZZ8aQw.forged-signature"
    stop_at = time.monotonic() + seconds
    n = 0
    while time.monotonic() < stop_at:
        n += 1
        stranger = f"stranger{n}@example.net"
        status, _, _ = attacker.json(
            "POST",
            "/api/games",
            {
                "name": "You won a prize",
                "players": [{"name": "Winner", "email": VICTIM}, {"name": "X", "email": stranger}],
            },
        )
        outcomes["create, victim as host"][status] += 1
        status, _, _ = attacker.json(
            "POST",
            "/api/games",
            {
                "name": "Click here",
                "players": [{"name": "Host", "email": f"host{n}@example.net"}, {"name": "You", "email": VICTIM}],
            },
        )
        outcomes["create, victim as player"][status] += 1
        status, _, _ = attacker.json("POST", "/api/invitations/accept", token=forged)
        outcomes["accept, forged token"][status] += 1
        status, _, _ = attacker.json("POST", "/api/games/confirm", token=forged)
        outcomes["confirm, forged token"][status] += 1
        status, page, _ = attacker.request("GET", "/admin/login")
        csrf = re.search(rb'name="csrf_token" value="([^"]+)"', page)
        if csrf:
            form = f"csrf_token={csrf.group(1).decode()}&email={ADMIN}".encode()
            status, _, _ = attacker.request(
                "POST", "/admin/login", form, {"Content-Type": "application/x-www-form-urlencoded"}
            )
        outcomes["site admin sign-in form"][status] += 1
        if with_mailbox:
            status, created, _ = attacker.json(
                "POST",
                "/api/games",
                {
                    "name": "Friendly game",
                    "players": [{"name": "Mallory", "email": ATTACKER_MAILBOX}, {"name": "You", "email": VICTIM}],
                    "settings": {"start_when_all_accepted": False},
                },
            )
            outcomes["create, attacker as host, victim invited"][status] += 1
            for mail in [m for m in inbox.to(ATTACKER_MAILBOX) if "Confirm your new game" in m["subject"]]:
                if mail.get("used"):
                    continue
                mail["used"] = True
                status, confirmed, _ = attacker.json(
                    "POST", "/api/games/confirm", token=token_in(mail["text"], "games/confirm")
                )
                outcomes["confirm own game"][status] += 1
                if status == 200:
                    own_games_admin[confirmed["id"]] = token_in(confirmed["admin_url"], "admin")
            for game_id, admin in list(own_games_admin.items()):
                status, _, _ = attacker.json(
                    "POST",
                    f"/api/admin/games/{game_id}/replace",
                    {"seat": 1, "email": VICTIM if n % 2 else f"other{n}@example.net", "name": "You again"},
                    token=admin,
                )
                outcomes["admin API: give the victim a seat"][status] += 1
    return outcomes


own_games_admin: dict[int, str] = {}


def quantiles(values: list[float]) -> str:
    if len(values) < 2:
        return "n/a"
    cuts = statistics.quantiles([v * 1000 for v in values], n=100)
    return f"p50 {cuts[49]:.1f} ms, p99 {cuts[98]:.1f} ms (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--baseline", type=float, default=60)
    parser.add_argument("--attacker-mailbox", action="store_true")
    args = parser.parse_args()

    import redis
    import sqlalchemy as sa
    from aiosmtpd.controller import Controller

    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    schema = f"flood_{uuid.uuid4().hex[:8]}"
    admin_engine = sa.create_engine(POSTGRES)
    with admin_engine.connect() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        connection.commit()
    redis.Redis.from_url(REDIS).flushdb()
    port = free_port()
    instance = Path(f"/tmp/{schema}")
    instance.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        SMALLWORLD_ENV="production",
        SMALLWORLD_SECRET_KEY=secrets.token_urlsafe(32),
        SMALLWORLD_DATABASE_URL=f"{POSTGRES}?options=-csearch_path%3D{schema}",
        SMALLWORLD_BROKER_URL=REDIS,
        SMALLWORLD_RATELIMIT_STORAGE_URI=REDIS,
        SMALLWORLD_INSTANCE_PATH=str(instance),
        SMALLWORLD_MAIL_BACKEND="smtp",
        SMALLWORLD_SMTP_HOST="127.0.0.1",
        SMALLWORLD_SMTP_PORT=str(smtp.port),
        SMALLWORLD_BASE_URL=f"http://127.0.0.1:{port}",
        SMALLWORLD_PROXY_COUNT="1",
        SMALLWORLD_SWEEP_SECONDS="5",
    )
    python = sys.executable
    subprocess.run([python, "-m", "service", "db", "upgrade"], env=env, check=True, cwd=ROOT, capture_output=True)
    subprocess.run(
        [python, "-m", "service", "admin", "create", ADMIN], env=env, check=True, cwd=ROOT, capture_output=True
    )
    logs = instance / "logs"
    logs.mkdir()
    children = [
        subprocess.Popen(
            [python, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "2", "service:create_app()"],
            env=env,
            cwd=ROOT,
            start_new_session=True,
            stdout=(logs / "web.log").open("w"),
            stderr=subprocess.STDOUT,
        ),
        subprocess.Popen(
            [python, "-m", "service", "worker", "--concurrency", "2"],
            env=env,
            cwd=ROOT,
            start_new_session=True,
            stdout=(logs / "worker.log").open("w"),
            stderr=subprocess.STDOUT,
        ),
        subprocess.Popen(
            [python, "-m", "service", "beat"],
            env=env,
            cwd=ROOT,
            start_new_session=True,
            stdout=(logs / "beat.log").open("w"),
            stderr=subprocess.STDOUT,
        ),
    ]
    try:
        for _ in range(150):
            try:
                if Client(port, "127.0.0.1").request("GET", "/health")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        game = RealGame(port, inbox)
        game.start()
        time.sleep(args.baseline)
        flood_started = time.monotonic()
        outcomes = flood(port, inbox, args.seconds, args.attacker_mailbox)
        flood_ended = time.monotonic()
        game.stop.set()
        game.thread.join(30)
        time.sleep(10)  # the last mails of the flood, if any, on their way

        print(f"flood: {args.seconds:.0f} s from {ATTACKER_ADDRESS}; attacker reads a mailbox: {args.attacker_mailbox}")
        print("\nrequests (status: count)")
        for kind, counts in outcomes.items():
            print(f"  {kind:45} {dict(sorted(counts.items()))}")
        print(f"\nmails to the victim ({VICTIM}): {len(inbox.to(VICTIM))}")
        for subject, count in Counter(m["subject"] for m in inbox.to(VICTIM)).items():
            print(f"  {count} × {subject}")
        print(f"mails to the site admin ({ADMIN}): {len(inbox.to(ADMIN))}")
        others = [m for m in inbox.mails if not set(m["to"]) & {VICTIM, ADMIN, *game.emails}]
        print(f"mails to anyone else the flood named: {len(others)}")
        for subject, count in Counter(m["subject"] for m in others).items():
            print(f"  {count} × {subject}")

        alone = [t for at, t in game.steps if at < flood_started]
        during = [t for at, t in game.steps if flood_started <= at < flood_ended]
        mail_alone = [d for at, d in game.mail_delays if at < flood_started]
        mail_during = [d for at, d in game.mail_delays if flood_started <= at < flood_ended]
        print("\nthe real game's step round trip")
        print(f"  alone:        {quantiles(alone)}")
        print(f"  during flood: {quantiles(during)}")
        print("the real game's step → next player's 'your turn' mail")
        print(f"  alone:        {quantiles(mail_alone)}")
        print(f"  during flood: {quantiles(mail_during)}")
        refused_alone = Counter(status for at, status in game.errors if at < flood_started)
        refused_during = Counter(status for at, status in game.errors if flood_started <= at < flood_ended)
        print(
            f"the real game's refused requests (status: count): alone {dict(refused_alone)}, "
            f"during the flood {dict(refused_during)}"
        )
    finally:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGTERM)
        for child in children:
            try:
                child.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
        smtp.stop()
        with admin_engine.connect() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
            connection.commit()
        admin_engine.dispose()


if __name__ == "__main__":
    main()
