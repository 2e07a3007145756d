"""What one 2-core box holds: ten minutes of many bot games through the production process set (gunicorn with
2 web processes, two Celery workers, beat, PostgreSQL, Redis, an SMTP server), with the rate limits counted
in Redis as deployed.

Slow (run by hand: ``pytest -m slow tests/deploy/test_capacity.py -s``). Every game that ends must pass the
demo's checks, no mail may arrive twice and the outbox must drain; the step round trip (p50/p95/p99) as the
bots' client measures it and as the server logs it, the steps per second and the load average are printed
for bench/README.md's capacity section, never asserted (ARCHITECTURE §8: speed targets are ratios to a reference
measured on a quiet machine, in ``bench/``). Each game's bots run in a process of their own.

``SMALLWORLD_CAPACITY_SECONDS`` (600), ``SMALLWORLD_CAPACITY_GAMES`` (40 at once, each replaced by a new one
when it ends) and ``SMALLWORLD_CAPACITY_THINK`` (0.5 s on average before a bot's step) set the run: about
40 steps a second, each with the two reads the demo's bots make before it.

The quick tests here check the run's own parts: how the mail reaches each game's bots, and how the server's
times are read from its log.
"""

from __future__ import annotations

import doctest
import os
import smtplib
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from bench import access_log
from tests.smtp import SMTPServer

from . import capacity
from .capacity_bots import GameMailbox
from .stack import Stack, running_stack, wait_until


@pytest.fixture
def stack(redis_url: str, smtp_server: SMTPServer, tmp_path: Path) -> Iterator[Stack]:
    with running_stack(redis_url, smtp_server, tmp_path, "smallworld-capacity", web_args=capacity.WEB_ARGS) as stack:
        yield stack


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.processes
@pytest.mark.slow
def test_ten_minutes_of_many_games_on_one_box(stack: Stack) -> None:
    seconds = float(os.environ.get("SMALLWORLD_CAPACITY_SECONDS", "600"))
    games = int(os.environ.get("SMALLWORLD_CAPACITY_GAMES", "40"))
    think = float(os.environ.get("SMALLWORLD_CAPACITY_THINK", "0.5"))

    figures = capacity.run(stack, games=games, seconds=seconds, think=think)

    print(f"\ncapacity run ({games} games at once, think {think} s): {figures.summary()}")
    assert not figures.failures, figures.failures[:5]
    assert figures.finished >= games  # every slot ended at least one whole game
    assert not figures.doubled, figures.doubled[:5]
    assert figures.unsent == 0 and figures.failed_mails == 0
    assert stack.alive() == {"web": True, "w1": True, "w2": True, "beat": True}
    # The server logged every step the bots saw accepted (one sent again after a lost answer: twice).
    assert len(figures.served) >= len(figures.steps) > 0


def mail(to: str, message_id: str, thread: str | None) -> bytes:
    message = EmailMessage()
    message["To"], message["Subject"], message["Message-ID"] = to, f"mail {message_id}", message_id
    if thread:
        message["References"] = thread
    message.set_content("hello")
    return message.as_bytes()


def test_each_mail_is_filed_for_the_bots_of_its_game_and_a_mail_received_twice_is_found(
    smtp_server: SMTPServer, tmp_path: Path
) -> None:
    filer = capacity.MailFiler(smtp_server.mailbox, tmp_path / "mail")
    sent = [
        ("a@demo.example.org", "<m1@x>", "<game-7.20261127222301000000@x>"),
        ("b@demo.example.org", "<m2@x>", "<game-8.20261127222302000000@x>"),
        ("a@demo.example.org", "<m3@x>", "<game-7.20261127222301000000@x>"),
        ("c@demo.example.org", "<m4@x>", None),
        ("a@demo.example.org", "<m3@x>", "<game-7.20261127222301000000@x>"),  # the same mail again
    ]
    with smtplib.SMTP("127.0.0.1", smtp_server.port) as client:
        for to, message_id, thread in sent:
            client.sendmail("game@x", [to], mail(to, message_id, thread))
    wait_until(lambda: len(filer.received) == len(sent), 10, "the mail to be filed")

    inbox = GameMailbox(tmp_path / "mail")
    assert inbox.new() == []  # no game yet
    inbox.follow(7)
    # (in the order written, but mails filed within one tick of the file system's clock may come in any order)
    assert sorted((m.message_id, m.game) for m in inbox.new()) == [("<m1@x>", 7), ("<m3@x>", 7)]
    # The copy is one delivery, kept apart as a copy (the demo's mailbox: a mail sent again after a crash).
    assert [(m.message_id, m.game) for m in inbox.copies] == [("<m3@x>", 7)]
    assert inbox.new() == []
    assert filer.doubled() == (5, ["<m3@x>"])
    assert not list((tmp_path / "mail").rglob(".*"))  # no file left half written


def test_the_server_times_are_read_from_either_access_log_line() -> None:
    result = doctest.testmod(access_log)
    assert (result.attempted, result.failed) == (4, 0)
