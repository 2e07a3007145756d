"""Many bot games at once through the production process set, for minutes: what one box holds.

:func:`run` keeps ``games`` five-player games going on a started :class:`~tests.deploy.stack.Stack` for
``seconds``: each is a whole game of ``smallworld demo`` (``service.cli.demo_game``: the bots read their
mail, confirm, accept, play random legal steps, one of them misses turns 2, 5 and 8 on purpose so that
reminders and auto-passes happen), and a new game starts in its place as soon as one ends. Each game slot's
bots run in a process of their own (``tests/deploy/capacity_bots.py``); this process runs the SMTP server,
which files each mail it accepts for the bots of its game to read (:class:`MailFiler`). Every finished
game is checked by the demo's own checks (each mail once, one final table each, every missed turn
auto-passed once with one mail saying so, the public history replays to the final state); at the end the
whole SMTP server's mail is checked for a ``Message-ID`` received twice, and the outbox for a row not sent.

Two times are recorded for every accepted step (the POST of an action): its round trip as the bots'
client measures it, in the bots' process, and the server's own time for it, from gunicorn's access log
(the stack started with ``bench/access_log.py``'s format: from the request read to the answer written).
The client's figure holds the server's, the network, and the bots' process's own work and wait for a
core; the server's holds its wait for PostgreSQL, Redis and a core, not the queue before gunicorn accepts
the connection. With the steps per second and the load average, ``tests/deploy/test_capacity.py`` (a slow
test) prints them. Times are printed, never asserted: the targets are ratios to the floor, measured by
``bench/api_load.py`` on a quiet machine; bench/README.md's capacity section puts the two together.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import queue
import re
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesHeaderParser
from multiprocessing.process import BaseProcess
from pathlib import Path

import psutil
import sqlalchemy as sa
from sqlmodel import func, select

from bench.access_log import FORMAT, served_ms
from service.cli import demo_game
from service.domain.models import MailStatus, OutboxMail
from service.infra.db import get_session
from tests.smtp import Mailbox, Received

from . import capacity_bots
from .capacity_bots import Played
from .stack import Stack, wait_until

#: gunicorn's options for the run: its access log lines carry the server's time of each request.
WEB_ARGS = ("--access-logformat", FORMAT)

_END_OF_HEADERS = re.compile(rb"\r?\n\r?\n")


class MailFiler:
    """Files each mail the SMTP server's ``mailbox`` accepts as ``root/<game id>/<n>.eml`` (the game of its
    thread, ``References``; ``root/none/`` for a mail of no game), written whole under a hidden name first,
    for the bots' processes to read; and keeps them all for the check at the end. Nothing is parsed here
    but the headers' game id."""

    def __init__(self, mailbox: Mailbox, root: Path) -> None:
        self.root = root
        self.received: list[Received] = []
        self._numbers = itertools.count()
        mailbox.on_accept = self._accept

    def _accept(self, received: Received) -> None:  # in the SMTP server's thread, one mail at a time
        headers = _END_OF_HEADERS.split(received.content, maxsplit=1)[0].decode("ascii", "replace")
        thread = demo_game.THREAD.search(headers)
        folder = self.root / (thread.group(1) if thread else "none")
        folder.mkdir(parents=True, exist_ok=True)
        number = next(self._numbers)
        hidden = folder / f".{number}.eml"
        hidden.write_bytes(received.content)
        hidden.rename(folder / f"{number}.eml")
        self.received.append(received)

    def doubled(self) -> tuple[int, list[str]]:
        """How many mails were filed, and the ``Message-ID`` of each received more than once."""
        parser = BytesHeaderParser(policy=policy.default)
        ids = Counter(str(parser.parsebytes(mail.content)["Message-ID"]) for mail in self.received)
        return sum(ids.values()), [message_id for message_id, count in ids.items() if count > 1]


def percentiles(times_ms: list[float]) -> str:
    """``p50 / p95 / p99`` of ``times_ms`` (each the time that so many in a hundred do not exceed)."""
    if not times_ms:
        return "none"
    ordered = sorted(times_ms)
    cut = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in (0.95, 0.99)]
    return f"p50 {statistics.median(ordered):.1f} ms, p95 {cut[0]:.1f} ms, p99 {cut[1]:.1f} ms"


@dataclass
class Figures:
    """What a run measured and found."""

    seconds: float = 0.0
    #: The client's round trip (ms) of each accepted step, and the server's time (ms) of each, as logged.
    steps: list[float] = field(default_factory=list)
    served: list[float] = field(default_factory=list)
    #: The web processes' threads, and how many of them were serving a request on average over the run (every
    #: request's logged time, summed, over the run's time): near all of them, requests wait for a thread.
    threads: int = 0
    busy: float = 0.0
    #: Every request the web server logged over the run (the bots' reads and mail links too).
    requests: int = 0
    finished: int = 0
    failures: list[str] = field(default_factory=list)
    mails: int = 0
    doubled: list[str] = field(default_factory=list)
    #: Outbox rows still waiting a minute after the last game ended, and rows given up on.
    unsent: int = 0
    failed_mails: int = 0
    retried: int = 0
    #: The 1-minute load average when the games started and when the last one ended.
    load: tuple[float, float] = (0.0, 0.0)
    #: CPU seconds used over the run, by part of the box (:func:`cpu_by_part`; "the rest": the bots, the SMTP
    #: server, this process and whatever else ran), and the machine's CPUs.
    cpu: dict[str, float] = field(default_factory=dict)
    cpus: int = 0

    def summary(self) -> str:
        rate = len(self.steps) / self.seconds if self.seconds else 0.0
        return (
            f"{self.finished} games finished in {self.seconds:.0f} s, {len(self.steps)} steps ({rate:.1f}/s), "
            f"load average {self.load[0]:.1f} at the start, {self.load[1]:.1f} at the end;\n"
            f"  step round trip by the bots' client: {percentiles(self.steps)};\n"
            f"  the server's time for the same steps (gunicorn, {len(self.served)} logged): "
            f"{percentiles(self.served)}; of the web processes' {self.threads} threads, "
            f"{self.busy:.1f} were serving a request on average; {self.requests} requests in all "
            f"({self.requests / max(1, len(self.steps)):.1f} a step);\n"
            f"  {self.mails} mails, {len(self.doubled)} received twice, {self.unsent} still waiting, "
            f"{self.failed_mails} given up; {self.retried} requests tried again; {len(self.failures)} games failed"
            + (f";\n  {self.cpu_words()}" if self.cpu else "")
        )

    def cpu_words(self) -> str:
        """Where the box's CPU went: seconds per part, the share of the CPU time the run had, and per step."""
        steps = max(1, len(self.steps))
        had = self.cpus * self.seconds
        parts = ", ".join(
            f"{part} {used:.0f} s ({used / had:.0%}, {used * 1000 / steps:.1f} ms a step)"
            for part, used in self.cpu.items()
        )
        return f"CPU over the run ({self.cpus} CPUs × {self.seconds:.0f} s): {parts}"


def run(stack: Stack, *, games: int, seconds: float, think: float, seed: int = 0) -> Figures:
    """Keep ``games`` games going for ``seconds`` (a game under way then finishes), each slot's bots in a
    process of their own; the figures. The stack's gunicorn must log with :data:`WEB_ARGS`."""
    figures = Figures()
    filer = MailFiler(stack.smtp.mailbox, stack.folder / "mail")
    web_log = stack.folder / "web.log"
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([capacity_bots.__name__])
    start = context.Barrier(games + 1)
    results: multiprocessing.Queue[Played] = context.Queue()
    arguments = (stack.env["SMALLWORLD_BASE_URL"], filer.root, seed, think, seconds, start, results)
    processes = [
        context.Process(target=capacity_bots.keep_playing, args=(slot, *arguments), name=f"capacity-bots-{slot}")
        for slot in range(games)
    ]
    for process in processes:
        process.start()
    try:
        logged_before = web_log.stat().st_size
        start.wait(timeout=300)  # every process is ready: the clock starts
        started, load_before = time.monotonic(), os.getloadavg()[0]
        cpu_before = cpu_by_part(stack)
        played = _collect(results, processes, games, timeout=seconds + 900 + 60)
        figures.seconds = time.monotonic() - started
        figures.load = (load_before, os.getloadavg()[0])
        cpu_after = cpu_by_part(stack)
        figures.cpu = {part: cpu_after[part] - cpu_before.get(part, 0.0) for part in cpu_after}
        figures.cpus = psutil.cpu_count() or 1
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()
    stack.smtp.mailbox.on_accept = None

    for part in sorted(played, key=lambda p: p.slot):
        figures.steps += [step * 1000 for step in part.steps]
        figures.finished += part.finished
        figures.failures += part.failures
        figures.retried += part.retried
    if len(played) < games:
        figures.failures.append(f"{games - len(played)} of the {games} bot processes ended without a report")
    time.sleep(0.5)  # gunicorn writes a request's access log line after its answer
    with web_log.open(errors="replace") as log:
        log.seek(logged_before)
        lines = log.readlines()
    figures.served = served_ms(lines, "POST", "/actions", status=200)
    figures.threads = int(stack.env["WEB_CONCURRENCY"]) * int(stack.env["GUNICORN_THREADS"])
    every_request = served_ms(lines)
    figures.busy = sum(every_request) / 1000 / figures.seconds
    figures.requests = len(every_request)
    figures.mails, figures.doubled = filer.doubled()

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


def cpu_by_part(stack: Stack) -> dict[str, float]:
    """CPU seconds used so far by each part of the box: the web server, the two workers, beat (each process
    with every process under it, those ended and waited for included: gunicorn replaces its workers after
    ``max_requests``), the stack's PostgreSQL backends (those alive now: a connection closed during the run
    takes its backend's share with it), and the rest of the machine (all CPUs' busy time less those)."""
    parts = {
        "web": _tree_cpu(stack.processes["web"].pid),
        "workers": _tree_cpu(stack.processes["w1"].pid) + _tree_cpu(stack.processes["w2"].pid),
        "beat": _tree_cpu(stack.processes["beat"].pid),
        "PostgreSQL": sum(_own_cpu(pid) for pid in _backends(stack)),
    }
    machine = psutil.cpu_times()
    busy = sum(machine) - machine.idle - getattr(machine, "iowait", 0.0)
    parts["the rest"] = busy - sum(parts.values())
    return parts


def _tree_cpu(pid: int) -> float:
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for process in tree:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
    return total


def _own_cpu(pid: int) -> float:
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system


def _backends(stack: Stack) -> list[int]:
    with stack.app.app_context():
        session = get_session()
        try:
            found = session.execute(_BACKENDS, {"name": stack.application_name})
            return [int(pid) for pid in found.scalars()]
        finally:
            session.close()


_BACKENDS = sa.text("SELECT pid FROM pg_stat_activity WHERE application_name = :name AND pid <> pg_backend_pid()")


def _collect(
    results: multiprocessing.Queue[Played], processes: list[BaseProcess], count: int, timeout: float
) -> list[Played]:
    """The reports of the bot processes, until ``count`` came, every process ended, or ``timeout`` passed."""
    played: list[Played] = []
    give_up = time.monotonic() + timeout
    while len(played) < count:
        try:
            played.append(results.get(timeout=5))
        except queue.Empty:
            if time.monotonic() > give_up or not any(process.is_alive() for process in processes):
                break
    return played
