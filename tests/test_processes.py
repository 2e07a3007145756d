"""tests/processes.py and the schemas of tests/conftest.py: a test run killed outright (``SIGKILL``: no fixture
ends, no ``atexit``) leaves no process behind, and the next run drops its schemas, never those of a run that
lives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
from sqlalchemy import create_engine, make_url, text

from tests.conftest import POSTGRES_URL, _drop_schemas_of_runs_that_are_over, _lock_run, _run_holding_schemas
from tests.processes import RUN_MARK, _owner_gone, kill_marked

ROOT = Path(__file__).resolve().parent.parent


def schema_of(url: str) -> str:
    """The schema of a test database's URL (its search path)."""
    options = str(make_url(url).query["options"])
    return options.split("search_path=")[1].split()[0]


def killed_run(script: str) -> list[str]:
    """Run ``script`` as a test process would (its children guarded), read the lines it prints up to "ready",
    then ``SIGKILL`` it; those lines."""
    code = "from tests.processes import guard_children\nguard_children()\n" + textwrap.dedent(script)
    run = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert run.stdout is not None
    lines = []
    while (line := run.stdout.readline().strip()) != "ready":
        assert line, "the run ended before it was ready"
        lines.append(line)
    run.send_signal(signal.SIGKILL)
    run.wait(10)
    return lines


def test_what_a_killed_test_run_started_dies_with_it_children_of_children_and_daemons_too() -> None:
    # A child in a session of its own (as tests/processes.start makes them), the child it started (as a gunicorn
    # worker or a Celery pool process), and one that left its parent (as redis-server --daemonize does).
    lines = killed_run(
        """
        import subprocess, time
        leader = subprocess.Popen(["sh", "-c", "sleep 300 & echo $!; wait"], stdout=subprocess.PIPE,
                                  start_new_session=True, text=True)
        print(leader.pid)
        print(leader.stdout.readline().strip())
        daemon = subprocess.run(["sh", "-c", "sleep 300 > /dev/null 2>&1 & echo $!"], capture_output=True, text=True)
        print(daemon.stdout.strip())
        print("ready", flush=True)
        time.sleep(300)
        """
    )
    pids = [int(line) for line in lines]
    assert len(pids) == 3
    gone, alive = psutil.wait_procs([psutil.Process(pid) for pid in pids if psutil.pid_exists(pid)], timeout=10)
    assert not alive, [process.cmdline() for process in alive]


def test_a_run_kills_what_runs_that_are_over_left_and_nothing_of_a_run_that_lives() -> None:
    # Should a killed run's reaper have been killed too: what carries the mark of a test process that is gone
    # (no process of that pid and start time) is killed as the next run starts.
    over = subprocess.Popen(["sleep", "300"], env={**os.environ, RUN_MARK: "999999999:12.00"})
    living = subprocess.Popen(["sleep", "300"])  # this run's own mark
    try:
        assert _owner_gone("999999999:12.00") and not _owner_gone(os.environ[RUN_MARK])
        killed = kill_marked(_owner_gone)
        assert over.pid in killed and living.pid not in killed
        # (kill_marked waited for it, and so reaped its own child.)
        assert not psutil.pid_exists(over.pid) and living.poll() is None
    finally:
        for process in (over, living):
            process.kill()
            process.wait()


def test_the_schemas_of_a_killed_run_are_dropped_by_the_next_and_those_of_a_living_run_kept(postgres_url: str) -> None:
    [killed_url] = killed_run(
        """
        from tests.conftest import postgres_schema
        import time
        with postgres_schema() as url:
            print(url)
            print("ready", flush=True)
            time.sleep(300)
        """
    )
    killed_schema = schema_of(killed_url)
    engine = create_engine(POSTGRES_URL)
    with engine.connect() as living, engine.connect() as connection:
        # Another run that lives (its lock held on a connection of its own), with a schema of its own.
        assert _lock_run(living, "0123abcd")
        connection.execute(text('CREATE SCHEMA "test_0123abcd_00000001"'))
        connection.commit()
        try:
            schemas = set(connection.execute(text("SELECT nspname FROM pg_namespace")).scalars())
            assert killed_schema.startswith("test_") and killed_schema in schemas
            deadline = time.monotonic() + 10
            # The server ends the killed run's sessions as it notices them gone (at once, over loopback).
            own = _run_holding_schemas()
            while killed_schema not in (dropped := _drop_schemas_of_runs_that_are_over(connection, own)):
                assert time.monotonic() < deadline, dropped
                time.sleep(0.2)
            schemas = set(connection.execute(text("SELECT nspname FROM pg_namespace")).scalars())
            connection.commit()
            assert killed_schema not in schemas
            assert "test_0123abcd_00000001" in schemas  # the living run's
            assert schema_of(postgres_url) in schemas  # this run's
        finally:
            connection.execute(text('DROP SCHEMA IF EXISTS "test_0123abcd_00000001"'))
            connection.commit()
    engine.dispose()


def test_the_benchmarks_redis_databases_are_none_of_the_tests() -> None:
    """A benchmark run by hand beside a test run (or another checkout's) must not publish into a Redis database a
    test has taken (``tests.conftest.redis_database``): ``api_load.py``'s gunicorn once put a sixth task on the
    ``mail`` queue of a test that counts five. Every Redis URL a script under ``bench/`` names by default, and
    every one its README's commands give, is outside the tests' databases."""
    import re

    from tests.conftest import REDIS_DATABASES, REDIS_URL

    first = int(REDIS_URL.rsplit("/", 1)[1])
    taken = set(range(first, first + REDIS_DATABASES))
    bench = Path(__file__).resolve().parent.parent / "bench"
    named = {
        (path.name, int(number))
        for path in [*bench.glob("*.py"), bench / "README.md"]
        for number in re.findall(r"redis://[^\s\"'/]*:6379/(\d+)", path.read_text(encoding="utf-8"))
    }
    assert named, "no Redis URL found under bench/: the check reads nothing"
    assert not {(name, number) for name, number in named if number in taken}, f"tests take Redis databases {taken}"
