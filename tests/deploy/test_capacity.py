"""What one 2-core box holds: ten minutes of many bot games through the production process set (gunicorn with
2 web processes, two Celery workers, beat, PostgreSQL, Redis, an SMTP server), with the rate limits counted
in Redis as deployed.

Slow (run by hand: ``pytest -m slow tests/deploy/test_capacity.py -s``). Every game that ends must pass the
demo's checks, no mail may arrive twice and the outbox must drain; the step round trip (p50/p95/p99) and
steps per second are printed for bench/README.md's capacity section, never asserted (DESIGN §8: speed
targets are ratios to a reference measured on a quiet machine, in ``bench/``).

``SMALLWORLD_CAPACITY_SECONDS`` (600), ``SMALLWORLD_CAPACITY_GAMES`` (40 at once, each replaced by a new one
when it ends) and ``SMALLWORLD_CAPACITY_THINK`` (0.5 s on average before a bot's step) set the run: about
40 steps a second, each with the two reads the demo's bots make before it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.smtp import SMTPServer

from . import capacity
from .stack import Stack, running_stack

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes, pytest.mark.slow]


@pytest.fixture
def stack(redis_url: str, smtp_server: SMTPServer, tmp_path: Path) -> Iterator[Stack]:
    with running_stack(redis_url, smtp_server, tmp_path, "smallworld-capacity") as stack:
        yield stack


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
