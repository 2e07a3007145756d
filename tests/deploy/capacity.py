"""Many bot games at once through the production process set, for minutes: what one box holds.

:func:`run` keeps ``games`` five-player games going on a started :class:`~tests.deploy.stack.Stack` for
``seconds``: each is a whole game of ``smallworld demo`` (``service.cli.demo_game``: the bots read their
mail, confirm, accept, play random legal steps, one of them misses turns 2, 5 and 8 on purpose so that
reminders and auto-passes happen), and a new game starts in its place as soon as one ends. Every finished
game is checked by the demo's own checks (each mail once, one final table each, every missed turn
auto-passed once with one mail saying so, the public history replays to the final state); at the end the
whole SMTP server's mail is checked for a ``Message-ID`` received twice, and the outbox for a row not sent.

The step round trip (the POST of an action, as the client measures it) is recorded for every step of
every game, with the steps per second over the run, for ``tests/deploy/test_capacity.py`` (a slow test) to
print. Times are printed, never asserted: the targets are ratios to the floor, measured by
``bench/api_load.py`` on a quiet machine; bench/README.md's capacity section puts the two together.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import func, select

from service.cli import demo_game
from service.cli.demo_game import DemoFailed, Http, Inbox, Mail
from service.domain.models import MailStatus, OutboxMail
from service.infra.db import get_session

from .stack import Stack, wait_until

#: Seconds a seat has for a turn: the lazy bot's three missed turns cost a game about 3 × this.
TURN_SECONDS = 8


class SharedInbox:
    """Every mail the stack's SMTP server accepts, parsed once (in the server's thread), in order."""

    def __init__(self, stack: Stack) -> None:
        self.mails: list[Mail] = []
        self.lock = threading.Lock()
        stack.smtp.mailbox.on_accept = self._accept

    def _accept(self, received: Any) -> None:
        mail = Mail.parse(received.content)
        with self.lock:
            self.mails.append(mail)

    def view(self) -> GameInbox:
        return GameInbox(self)


class GameInbox(Inbox):
    """One game's reader of the shared server: :meth:`new` gives what arrived since it last asked (the
    demo's game keeps only its own thread's mail of that)."""

    def __init__(self, shared: SharedInbox) -> None:
        super().__init__()
        self.shared = shared
        self.read = 0

    def new(self) -> list[Mail]:
        with self.shared.lock:
            fresh = self.shared.mails[self.read :]
            self.read = len(self.shared.mails)
        self.all.extend(fresh)
        return fresh


class TimedHttp(Http):
    """The demo's patient client, recording the round trip of each accepted step; ``think`` seconds (on
    average, exponentially distributed) before each step, as a player reads the board."""

    def __init__(self, base: str, think: float, rnd: random.Random, record: Figures) -> None:
        super().__init__(base, patience=120.0)
        self.think, self.rnd, self.record = think, rnd, record

    def call(self, method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        if not (method == "POST" and path.endswith("/actions")):
            return super().call(method, path, token, body)
        if self.think:
            time.sleep(self.rnd.expovariate(1 / self.think))
        started = time.perf_counter()
        status, answer = super().call(method, path, token, body)
        if status == 200:
            self.record.step(time.perf_counter() - started)
        return status, answer


@dataclass
class Figures:
    """What a run measured and found."""

    seconds: float = 0.0
    steps: list[float] = field(default_factory=list)
    finished: int = 0
    failures: list[str] = field(default_factory=list)
    mails: int = 0
    doubled: list[str] = field(default_factory=list)
    #: Outbox rows still waiting a minute after the last game ended, and rows given up on.
    unsent: int = 0
    failed_mails: int = 0
    retried: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def step(self, seconds: float) -> None:
        with self.lock:
            self.steps.append(seconds)

    def percentile(self, q: float) -> float:
        ordered = sorted(self.steps)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")

    def summary(self) -> str:
        rate = len(self.steps) / self.seconds if self.seconds else 0.0
        median = statistics.median(self.steps) * 1000 if self.steps else float("nan")
        return (
            f"{self.finished} games finished in {self.seconds:.0f} s, {len(self.steps)} steps ({rate:.1f}/s), "
            f"step round trip p50 {median:.1f} ms, p95 {self.percentile(0.95):.1f} ms, "
            f"p99 {self.percentile(0.99):.1f} ms; {self.mails} mails, {len(self.doubled)} received twice, "
            f"{self.unsent} still waiting, {self.failed_mails} given up; {self.retried} requests tried again; "
            f"{len(self.failures)} games failed"
        )


def run(stack: Stack, *, games: int, seconds: float, think: float, seed: int = 0) -> Figures:
    """Keep ``games`` games going for ``seconds`` (a game under way then finishes); the figures."""
    figures = Figures()
    shared = SharedInbox(stack)
    base = stack.env["SMALLWORLD_BASE_URL"]
    stop_at = time.monotonic() + seconds
    started = time.monotonic()

    def keep_playing(slot: int) -> None:
        number = 0
        while time.monotonic() < stop_at:
            game_seed = seed + slot * 1000 + number
            number += 1
            http = TimedHttp(base, think, random.Random(game_seed), figures)
            try:
                demo_game._play(http, shared.view(), 5, game_seed, TURN_SECONDS, lambda *_: None, 900)
            except DemoFailed as failure:
                figures.failures.append(f"game of seed {game_seed}: {failure}")
            else:
                with figures.lock:
                    figures.finished += 1
            figures.retried += http.retried

    threads = [threading.Thread(target=keep_playing, args=(slot,), daemon=True) for slot in range(games)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    figures.seconds = time.monotonic() - started
    stack.smtp.mailbox.on_accept = None

    with shared.lock:
        ids = Counter(mail.message_id for mail in shared.mails)
    figures.mails = sum(ids.values())
    figures.doubled = [message_id for message_id, count in ids.items() if count > 1]

    def outbox_count(status: MailStatus) -> int:
        with stack.app.app_context():
            session = get_session()
            try:
                return int(
                    session.exec(select(func.count()).select_from(OutboxMail).where(OutboxMail.status == status)).one()
                )
            finally:
                session.close()

    with contextlib.suppress(AssertionError):  # what is still waiting is counted below
        wait_until(lambda: outbox_count(MailStatus.PENDING) == 0, 60, "the outbox to drain")
    figures.unsent = outbox_count(MailStatus.PENDING)
    figures.failed_mails = outbox_count(MailStatus.FAILED)
    return figures
