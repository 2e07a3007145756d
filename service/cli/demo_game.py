"""``smallworld demo``: a whole game played by bots through the real stack.

The bots behave like people with a mail client and a browser: they read their mail (the ``.eml`` files of
the ``file`` backend, or what the service sends over SMTP to the demo's own SMTP server), follow the signed
links in it, read the legal actions over HTTP and submit random ones. One bot misses some deadlines on
purpose, so that reminders and auto-passes happen. The worker delivers the mail, sweeps the deadlines and
mails the final table. At the end the demo checks that the game finished and that its invariants held:

- every mail has its own Message-ID, and every player got exactly one final table; a mail received again
  with a Message-ID already received (sent again after a worker died before recording it: at least once,
  ARCHITECTURE §6) is one delivery, counted and reported apart, and must be the same bytes;
- every deadline missed on purpose was auto-passed, once, with one mail saying so;
- the game replays from its revealed seed and its public history to exactly the final state shown.

Only the mail of the demo's own game counts (the game's thread id, in ``References``), so several demos
may share one mail folder or SMTP server. The bots are patient clients: an answer that says "again later"
(429, or 503 with ``Retry-After``) or a connection that fails is tried again, within a bound.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import rules
from emails.render import read_headline
from rules.bots import concrete
from service.domain.models import ActionKind, GameStatus

LINK = re.compile(r"https?://[^\s<>\"']+/(play|invite|admin|unsubscribe|games/confirm)/([A-Za-z0-9_\-.]+)")
#: A game's thread id (emails.compose.thread_id), which every mail of the game names in ``References``.
THREAD = re.compile(r"<game-(\d+)\.\d+@")


class DemoFailed(Exception):
    pass


# -- the mailbox ------------------------------------------------------------------------------------------
@dataclass
class Mail:
    to: str
    #: What the mail is: its subject, or the first line of a mail of a game's conversation
    #: (``emails.render.read_headline``).
    subject: str
    message_id: str
    text: str
    #: The game the mail belongs to (its thread), ``None`` for a mail of no game.
    game: int | None = None
    #: The mail as received: a copy of it (the same Message-ID) must be the same bytes.
    raw: bytes = field(default=b"", repr=False)

    @classmethod
    def parse(cls, raw: bytes) -> Mail:
        message = BytesParser(policy=policy.default).parsebytes(raw)
        body = message.get_body(preferencelist=("plain",))
        thread = THREAD.search(str(message["References"] or ""))
        text = body.get_content() if body is not None else ""
        return cls(
            to=str(message["To"]),
            subject=read_headline(str(message["Subject"]), text),
            message_id=str(message["Message-ID"]),
            text=text,
            game=int(thread.group(1)) if thread else None,
            raw=raw,
        )

    def links(self, kind: str) -> list[str]:
        return [token for found_kind, token in LINK.findall(self.text) if found_kind == kind]


class Inbox:
    """Where the bots' mail arrives: :meth:`new` gives what came since it was last asked, ``all`` keeps it.

    A mail received again (a Message-ID received before) is one delivery: it is not given again, and is kept in
    ``copies`` (the service sends a mail again after a worker died between the SMTP server's acceptance and its
    record, as the same bytes: a mail client keeps one)."""

    def __init__(self) -> None:
        self.all: list[Mail] = []
        self.copies: list[Mail] = []
        self._first: dict[str, Mail] = {}

    def new(self) -> list[Mail]:
        raise NotImplementedError

    def _first_deliveries(self, mails: list[Mail]) -> list[Mail]:
        """``mails`` but the copies of a mail received before, which are kept apart."""
        fresh = []
        for mail in mails:
            if mail.message_id in self._first:
                self.copies.append(mail)
            else:
                self._first[mail.message_id] = mail
                fresh.append(mail)
        self.all.extend(fresh)
        return fresh

    def changed_copies(self, game_id: int) -> list[str]:
        """The Message-IDs of the game's mails received again with other bytes than the first time."""
        return [m.message_id for m in self.copies if m.game == game_id and m.raw != self._first[m.message_id].raw]


class Mailbox(Inbox):
    """The ``.eml`` files the ``file`` backend writes, read in the order they were written."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.seen: set[Path] = set()

    def new(self) -> list[Mail]:
        if not self.folder.exists():
            return []
        # The file backend writes each mail under a temporary ".writing-…" name first, then renames it.
        written = (p for p in self.folder.rglob("*.eml") if not p.name.startswith("."))
        fresh = sorted((p for p in written if p not in self.seen), key=lambda p: p.stat().st_mtime_ns)
        mails = [Mail.parse(path.read_bytes()) for path in fresh]
        self.seen.update(fresh)
        return self._first_deliveries(mails)


class SmtpMailbox(Inbox):
    """An SMTP server of the demo's own (aiosmtpd) that the service sends its mail to (``smtp`` backend):
    every message it accepts, in the order it accepted them. Listens from ``__enter__`` to ``__exit__``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__()
        self.host, self.port = host, port or free_port()
        self._received: list[bytes] = []
        self._lock = threading.Lock()
        self._controller: Any = None

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self._lock:
            self._received.append(envelope.original_content or envelope.content)
        return "250 OK"

    def __enter__(self) -> SmtpMailbox:
        from aiosmtpd.controller import Controller

        self._controller = Controller(self, hostname=self.host, port=self.port)
        try:
            self._controller.start()
        except Exception as error:  # the port taken, or the address not ours
            raise DemoFailed(f"cannot receive mail on {self.host}:{self.port}: {error}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._controller.stop()

    def new(self) -> list[Mail]:
        with self._lock:
            raw, self._received = self._received, []
        return self._first_deliveries([Mail.parse(data) for data in raw])


# -- HTTP -------------------------------------------------------------------------------------------------
class Http:
    """The service's JSON API, as a patient client uses it.

    The answers the service documents as temporary are tried again: 429 (a rate limit) and 503 with
    ``Retry-After`` (the database out of reach for a moment; nothing of the request was committed), after
    the time the answer asks for; and a connection refused, dropped or timed out, with a growing pause.
    Each request gives up after ``patience`` seconds. Steps carry an idempotency key, so sending one again
    after a lost answer never applies it twice.
    """

    #: Longest single wait, whatever ``Retry-After`` says.
    MAX_WAIT = 30.0

    def __init__(self, base: str, patience: float = 120.0) -> None:
        self.base = base.rstrip("/")
        self.patience = patience
        #: Requests sent again, and why (the last reason).
        self.retried = 0

    def call(self, method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        give_up = time.monotonic() + self.patience
        for attempt in range(1, 10_000):
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status, _json(response.read())
            except urllib.error.HTTPError as error:
                retry_after = _retry_after(error.headers.get("Retry-After"))
                if not (error.code == 429 or (error.code == 503 and retry_after is not None)):
                    return error.code, _json(error.read())
                reason = f"{error.code} {error.reason}"
                wait = 1.0 if retry_after is None else retry_after
            except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
                reason = repr(getattr(error, "reason", error))
                wait = min(0.25 * 2 ** (attempt - 1), 5.0)
            wait = min(wait, self.MAX_WAIT)
            if time.monotonic() + wait > give_up:
                raise DemoFailed(
                    f"{method} {path}: the service still answered {reason} after {attempt} tries "
                    f"in {self.patience:.0f} s"
                )
            self.retried += 1
            time.sleep(wait)
        raise AssertionError("unreachable")


def _json(data: bytes) -> Any:
    try:
        return json.loads(data or b"null")
    except ValueError:  # a page from a proxy in front of the service, say
        return data.decode(errors="replace")


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: a number of seconds or an HTTP date.

    >>> _retry_after("5"), _retry_after(None), _retry_after("soon")
    (5.0, None, None)
    """
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# -- the bots ---------------------------------------------------------------------------------------------
@dataclass
class Bot:
    seat: int
    name: str
    email: str
    lazy: bool = False
    token: str | None = None
    skipped_turns: set[int] = field(default_factory=set)
    actions: int = 0

    def wants_to_skip(self, turn: int) -> bool:
        """The lazy bot misses its turns 2, 5 and 8 (and every reminder about them)."""
        if self.lazy and turn in (2, 5, 8):
            self.skipped_turns.add(turn)
            return True
        return False


def play_while_awaited(http: Http, game_id: int, bot: Bot, rnd: random.Random) -> None:
    """The bot plays random legal steps while the game awaits it. It reads the game and its legal actions
    once; after that each step's answer says what it may do next (``legal_actions``, null once the game
    awaits another seat), as a client of the API should."""
    assert bot.token is not None
    view: Any = None
    legal: Any = None
    for _ in range(500):
        if legal is None:
            status, view = http.call("GET", f"/api/games/{game_id}", bot.token)
            if status != 200:
                raise DemoFailed(f"{bot.name} could not read the game: {view}")
        if view["status"] != GameStatus.ACTIVE or bot.seat not in view["awaiting"]:
            return
        if view["state"]["phase"] != "defend" and bot.wants_to_skip(view["state"]["turn"]):
            return
        if legal is None:
            status, legal = http.call("GET", f"/api/games/{game_id}/legal-actions", bot.token)
            if status != 200:
                raise DemoFailed(f"{bot.name} could not read its legal actions: {legal}")
        if not legal["actions"]:
            return
        action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
        # The key makes the step safe to send again when its answer was lost (a dropped connection).
        step = {"version": legal["version"], "action": action, "idempotency_key": secrets.token_hex(16)}
        status, answer = http.call("POST", f"/api/games/{game_id}/actions", bot.token, step)
        if status == 409:  # the deadline passed meanwhile, or another step came first: look again
            legal = None
            continue
        if status != 200:
            raise DemoFailed(f"{bot.name}'s legal action {action} was refused: {answer}")
        bot.actions += 1
        view, legal = answer["game"], answer.get("legal_actions")
        if legal is None:  # the game awaits another seat now, or it is over
            return


# -- the embedded stack -----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class EmbeddedStack:
    """``smallworld serve`` in a fresh instance folder, with a fast deadline sweep; stopped with Ctrl-C.
    With ``smtp`` (host, port) its mail goes there over SMTP instead of into files."""

    def __init__(self, sweep_seconds: float, smtp: tuple[str, int] | None = None) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="smallworld-demo-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.sweep_seconds = sweep_seconds
        self.smtp = smtp
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def mail_dir(self) -> Path:
        return self.folder / "mail"

    def __enter__(self) -> EmbeddedStack:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SMALLWORLD_")}
        env |= {
            "SMALLWORLD_INSTANCE_PATH": str(self.folder),
            "SMALLWORLD_BASE_URL": self.url,
            "SMALLWORLD_SWEEP_SECONDS": str(self.sweep_seconds),
            # Every bot plays from 127.0.0.1: as many people behind one address as there are bots.
            "SMALLWORLD_RATELIMIT_LINKS": "3000 per minute",
            # The demo's own port for orders by mail: two demos (or a demo and a service) never collide.
            "SMALLWORLD_INBOUND_PORT": str(free_port()),
        }
        if self.smtp is not None:  # mail goes out over SMTP (to the demo's own server)
            host, port = self.smtp
            env |= {"SMALLWORLD_MAIL_BACKEND": "smtp", "SMALLWORLD_SMTP_HOST": host, "SMALLWORLD_SMTP_PORT": str(port)}
        self.log = (self.folder / "serve.log").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service", "serve", "--port", str(self.port)],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise DemoFailed(f"the service did not start; see {self.folder / 'serve.log'}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as response:
                    if response.status == 200:
                        return self
            except (OSError, urllib.error.HTTPError):
                pass
            time.sleep(0.3)
        raise DemoFailed("the service did not answer /health within 60 s")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


# -- the game ---------------------------------------------------------------------------------------------
def run(
    players: int,
    seed: int,
    turn_seconds: int,
    url: str | None,
    mail_dir: Path | None,
    out: Any = print,
    time_limit: float = 900,
    smtp: str | None = None,
) -> dict[str, Any]:
    """Play one game; return the final game view. Raises :class:`DemoFailed` when an invariant breaks.

    The bots read their mail from ``mail_dir`` (a service with the ``file`` backend) or, with ``smtp``
    (``HOST:PORT``, or ``""`` for a free port on 127.0.0.1), from an SMTP server the demo runs there, which
    the service must send to. With ``url`` the service is already running; without, the demo starts one
    (and points its ``smtp`` backend at the demo's server when ``smtp`` is given).
    """
    if url is not None and (mail_dir is None) == (smtp is None):
        raise DemoFailed(
            "with --url, give either --mail-dir (the folder where that service writes its mail) or "
            "--smtp HOST:PORT (where the demo receives the mail that service sends)"
        )
    if smtp is None:
        if url is not None:
            assert mail_dir is not None
            return _play(Http(url), Mailbox(mail_dir), players, seed, turn_seconds, out, time_limit)
        with EmbeddedStack(sweep_seconds=1) as stack:
            out(f"Service started at {stack.url} (instance folder {stack.folder})")
            return _play(Http(stack.url), Mailbox(stack.mail_dir), players, seed, turn_seconds, out, time_limit)
    with SmtpMailbox(*_host_and_port(smtp)) as mailbox:
        out(f"Receiving the mail over SMTP on {mailbox.host}:{mailbox.port}")
        if url is not None:
            return _play(Http(url), mailbox, players, seed, turn_seconds, out, time_limit)
        with EmbeddedStack(sweep_seconds=1, smtp=(mailbox.host, mailbox.port)) as stack:
            out(f"Service started at {stack.url} (instance folder {stack.folder})")
            return _play(Http(stack.url), mailbox, players, seed, turn_seconds, out, time_limit)


def _host_and_port(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1), or empty (a free port)."""
    host, _, port = text.rpartition(":")
    try:
        return host or "127.0.0.1", int(port) if port else 0
    except ValueError:
        raise DemoFailed(f"--smtp wants HOST:PORT, not {text!r}") from None


def _play(
    http: Http, mailbox: Inbox, players: int, seed: int, turn_seconds: int, out: Any, time_limit: float
) -> dict[str, Any]:
    rnd = random.Random(seed)
    tag = f"{seed}-{secrets.token_hex(4)}"  # addresses of this run only, even beside another demo
    bots = [
        Bot(seat=i, name=f"Bot {i}", email=f"bot{i}.{tag}@demo.example.org", lazy=(i == players - 1))
        for i in range(players)
    ]
    redeploy = "ask" if seed % 2 else "auto"
    mailbox.new()  # mail from before this game is not ours
    status, created = http.call(
        "POST",
        "/api/games",
        body={
            "name": f"Demo game {seed}",
            "players": [{"name": b.name, "email": b.email} for b in bots],
            "settings": {
                "turn_length_seconds": turn_seconds,
                "defender_turn_length_seconds": turn_seconds,
                "reminders_before_seconds": [max(1, turn_seconds * 2 // 3)],
                "redeploy": redeploy,
            },
        },
    )
    if status != 201:
        raise DemoFailed(f"could not create the game: {created}")
    game_id = created["id"]
    by_email = {b.email: b for b in bots}
    started = time.time()
    final: dict[str, Any] | None = None
    over_mails: Counter[str] = Counter()
    while time.time() - started < time_limit:
        for mail in mailbox.new():
            if mail.game != game_id:  # another game's (another demo sharing the folder or the server)
                continue
            bot = next((b for e, b in by_email.items() if e in mail.to), None)
            if bot is None:
                continue
            if "is over" in mail.subject:
                over_mails[bot.email] += 1
            for token in mail.links("games/confirm"):  # the host (the first bot) confirms the new game
                status, answer = http.call("POST", "/api/games/confirm", token)
                if status != 200:
                    raise DemoFailed(f"{bot.name} could not confirm the game: {answer}")
            for token in mail.links("invite"):
                status, answer = http.call("POST", "/api/invitations/accept", token)
                if status != 200:
                    raise DemoFailed(f"{bot.name} could not accept the invitation: {answer}")
                bot.token = answer["turn_url"].rsplit("/", 1)[-1]
            for token in mail.links("play"):
                bot.token = token
        for bot in bots:
            if bot.token:
                play_while_awaited(http, game_id, bot, rnd)
        reader = next((b for b in bots if b.token), None)
        if reader is None:
            time.sleep(0.2)
            continue
        status, view = http.call("GET", f"/api/games/{game_id}", reader.token)
        if status != 200:
            raise DemoFailed(f"{reader.name} could not read the game: {view}")
        _progress(out, view, bots, mailbox, game_id)
        if view["status"] == GameStatus.FINISHED and sum(over_mails.values()) >= players:
            final = view
            break
        time.sleep(0.2)
    out("")
    if final is None:
        raise DemoFailed(f"the game did not finish within {time_limit:.0f} s")
    _check(http, final, bots, mailbox, over_mails, game_id, redeploy)
    _table(out, final, time.time() - started, mailbox, bots, game_id)
    return final


def _mails_of(mailbox: Inbox, game_id: int) -> list[Mail]:
    """The mail of this demo's game, of all the mail the inbox received."""
    return [m for m in mailbox.all if m.game == game_id]


#: How long the final check waits for the game's mail still on its way (see :func:`await_mail`).
MAIL_SETTLE_SECONDS = 30.0


def await_mail(
    mailbox: Inbox, game_id: int, arrived: Callable[[list[Mail]], bool], seconds: float = MAIL_SETTLE_SECONDS
) -> list[Mail]:
    """The game's mail once ``arrived`` holds for it, or when ``seconds`` have passed (the caller's check then
    finds what is missing); what arrives meanwhile is read from the inbox."""
    give_up = time.monotonic() + seconds
    while True:
        mails = _mails_of(mailbox, game_id)
        if arrived(mails) or time.monotonic() >= give_up:
            return mails
        time.sleep(0.1)
        mailbox.new()


def _passed_mails(mails: list[Mail]) -> list[Mail]:
    return [m for m in mails if "played for you" in m.subject]


_last_line = [""]


def _progress(out: Any, view: dict[str, Any], bots: list[Bot], mailbox: Inbox, game_id: int) -> None:
    """One live line: the turn, whose turn it is, how many mails went out (printed when it changes)."""
    state = view.get("state") or {}
    waiting = ", ".join(bots[s].name for s in view.get("awaiting", [])) or "-"
    mails = len(_mails_of(mailbox, game_id))
    line = f"turn {state.get('turn', '?')}/{state.get('turns', '?')} · waiting for {waiting} · mails {mails}"
    if line != _last_line[0]:
        _last_line[0] = line
        out(line)


def _check(
    http: Http,
    final: dict[str, Any],
    bots: list[Bot],
    mailbox: Inbox,
    over_mails: Counter[str],
    game_id: int,
    redeploy: str,
) -> None:
    token = bots[0].token
    status, history = http.call("GET", f"/api/games/{game_id}/history", token)
    if status != 200:
        raise DemoFailed(f"could not read the game's history: {history}")
    entries = history["entries"]
    passes = [e for e in entries if e["kind"] == ActionKind.AUTO_PASS and not e["undone"]]
    # Mail goes out asynchronously, several deliveries at once: the mail of the game's last auto-pass can
    # arrive just after the final tables. Wait for it (within MAIL_SETTLE_SECONDS), then count.
    mails = await_mail(mailbox, game_id, lambda mails: len(_passed_mails(mails)) >= len(passes))
    changed = mailbox.changed_copies(game_id)
    if changed:
        raise DemoFailed(f"mails sent again with other bytes than the first time: {changed[:3]}")
    if any(over_mails[b.email] != 1 for b in bots):
        raise DemoFailed(f"final tables received: {dict(over_mails)} (one each expected)")
    lazy = bots[-1]
    lazy_passes = [e for e in passes if e["seat"] == lazy.seat]
    if len(lazy_passes) < len(lazy.skipped_turns):
        raise DemoFailed(
            f"{lazy.name} missed {len(lazy.skipped_turns)} turns but was auto-passed {len(lazy_passes)} times"
        )
    passed_mails = _passed_mails(mails)
    if len(passed_mails) != len(passes):
        raise DemoFailed(f"{len(passes)} auto-passes but {len(passed_mails)} mails saying so")
    # The seed is public now: the public history must replay to exactly the final state.
    state = rules.new_game(len(bots), seed=final["seed"], options={"redeploy": redeploy})
    for entry in entries:
        if entry["undone"]:
            continue
        if entry["kind"] == ActionKind.ACTION:
            state = rules.apply(state, entry["action"])
        elif entry["kind"] == ActionKind.AUTO_PASS:
            state = rules.auto_pass(state, entry["seat"])
        elif entry["kind"] == ActionKind.OPTIONS:
            state = rules.with_options(state, entry["action"]["options"])
    replayed = rules.player_view(state, 0)
    shown = dict(final["state"])
    if {k: v for k, v in replayed.items() if k != "last"} != {k: v for k, v in shown.items() if k != "last"}:
        raise DemoFailed("the history does not replay to the final state")


def _table(out: Any, final: dict[str, Any], seconds: float, mailbox: Inbox, bots: list[Bot], game_id: int) -> None:
    names = {s["seat"]: s["name"] for s in final["seats"]}
    lazy = bots[-1]
    mails = _mails_of(mailbox, game_id)
    reminders = sum(1 for m in mails if m.subject.startswith("Reminder"))
    passes = sum(1 for m in mails if "played for you" in m.subject)
    missed = ", ".join(map(str, sorted(lazy.skipped_turns))) or "none"
    out(f"Game over in {seconds:.0f} s: {sum(b.actions for b in bots)} steps by the bots, {len(mails)} mails.")
    copies = [m for m in mailbox.copies if m.game == game_id]
    if copies:  # at least once: a worker died after the SMTP server took them, before recording it
        out(f"{len(copies)} mails arrived again, the same bytes with the same Message-ID: one delivery each.")
    out(f"{lazy.name} ignored its turns {missed}: {reminders} reminders and {passes} auto-passes followed.")
    out(f"Final table (seed {final['seed']}):")
    out(f"{'place':>5}  {'player':<8} {'coins':>5} {'tokens on board':>16}")
    for row in final["result"]:
        tie = " (tie-break)" if row.get("tie_break") else ""
        out(f"{row['place']:>5}  {names[row['player']]:<8} {row['coins']:>5} {row['tokens_on_board']:>16}{tie}")
