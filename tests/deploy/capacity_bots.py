"""The bots of the capacity run (``tests/deploy/capacity.py``), in processes of their own.

Each process keeps one game going: a whole game of ``smallworld demo`` (``service.cli.demo_game``), then a
new one in its place, until the run's time is up (the game under way then finishes). Its client times the
round trip of each accepted step (the POST of an action). With every game's bots in a process of its own,
that time holds no wait for the test process's SMTP server, its handling of the mail or another game's bots
(all of which shared one interpreter lock with the bots before); what is left besides the server's time is
this process's own work and the wait for a core on a busy machine.

The mail reaches a game's bots as it reaches ``smallworld demo --mail-dir``'s (``demo_game.Mailbox``): the
test's SMTP server files each mail under ``<root>/<game id>/`` (``capacity.MailFiler``), and the bots read
their game's folder from the moment the game is created.

This module imports the demo and the standard library only: a process of it is forked from a server that
imported it once (``multiprocessing``'s ``forkserver``), not started anew.
"""

from __future__ import annotations

import random
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from service.cli import demo_game
from service.cli.demo_game import DemoFailed, Http, Mailbox

#: Seconds a seat has for a turn: the lazy bot's three missed turns cost a game about 3 × this.
TURN_SECONDS = 8


@dataclass
class Played:
    """What one process's games did: the round trip (s) of every accepted step, in order."""

    slot: int
    steps: list[float] = field(default_factory=list)
    finished: int = 0
    failures: list[str] = field(default_factory=list)
    #: Requests the demo's patient client sent again (a 429, a 503 with Retry-After, a dropped connection).
    retried: int = 0


class GameMailbox(Mailbox):
    """The mail of one game, each a file under ``root/<game id>/``; nothing until the game is known."""

    def __init__(self, root: Path) -> None:
        super().__init__(root / "no-game-yet")
        self.root = root

    def follow(self, game_id: int) -> None:
        self.folder = self.root / str(game_id)


class TimedHttp(Http):
    """The demo's patient client, recording the round trip of each accepted step in ``steps``; ``think``
    seconds (on average, exponentially distributed) before each step, as a player reads the board. The game
    it creates is the one whose mail ``inbox`` reads."""

    def __init__(self, base: str, think: float, rnd: random.Random, inbox: GameMailbox, steps: list[float]) -> None:
        super().__init__(base, patience=120.0)
        self.think, self.rnd, self.inbox, self.steps = think, rnd, inbox, steps

    def call(self, method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        if method == "POST" and path == "/api/games":
            status, answer = super().call(method, path, token, body)
            if status == 201:
                self.inbox.follow(answer["id"])
            return status, answer
        if not (method == "POST" and path.endswith("/actions")):
            return super().call(method, path, token, body)
        if self.think:
            time.sleep(self.rnd.expovariate(1 / self.think))
        started = time.perf_counter()
        status, answer = super().call(method, path, token, body)
        if status == 200:
            self.steps.append(time.perf_counter() - started)
        return status, answer


def keep_playing(
    slot: int,
    base: str,
    mail_root: Path,
    seed: int,
    think: float,
    seconds: float,
    start: Barrier,
    results: Queue[Played],
) -> None:
    """One process's part of the run: wait at ``start`` until every process is ready, then play game after
    game for ``seconds``; put what it did in ``results``, whatever happened (an error is a failure)."""
    played = Played(slot)
    try:
        start.wait()
        stop_at = time.monotonic() + seconds
        number = 0
        while time.monotonic() < stop_at:
            game_seed = seed + slot * 1000 + number
            number += 1
            inbox = GameMailbox(mail_root)
            http = TimedHttp(base, think, random.Random(game_seed), inbox, played.steps)
            try:
                demo_game._play(http, inbox, 5, game_seed, TURN_SECONDS, lambda *_: None, 900)
            except DemoFailed as failure:
                played.failures.append(f"game of seed {game_seed}: {failure}")
            else:
                played.finished += 1
            played.retried += http.retried
    except BaseException:
        played.failures.append(f"the bots of slot {slot} stopped: {traceback.format_exc()}")
    finally:
        results.put(played)
