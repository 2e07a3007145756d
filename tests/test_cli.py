"""The ``smallworld`` console script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import inspect

from service import create_app
from service.infra.db import get_engine
from tests.processes import SMALLWORLD, family, free_port, service_environment, start, stop
from worker.tasks.ping import ping


def get_health(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], seconds: float) -> float:
    """Seconds until ``url`` answered 200; fails the test after ``seconds``."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        assert process.poll() is None, "smallworld serve exited before it was healthy"
        try:
            status, _body = get_health(url)
        except OSError:
            status = None
        if status == 200:
            return time.monotonic() - started
        time.sleep(0.2)
    pytest.fail(f"{url} did not answer 200 within {seconds} s")


@pytest.mark.processes
def test_serve_runs_everything_with_no_servers_and_ctrl_c_leaves_no_process(
    tmp_path: Path,
) -> None:
    instance = tmp_path / "instance"
    results = f"db+sqlite:///{tmp_path / 'results.sqlite'}"
    # No database, broker or SMTP settings: the embedded defaults. A result backend only lets
    # this test see the worker's answer.
    env = service_environment(instance, SMALLWORLD_RESULT_BACKEND=results)
    port = free_port()
    log = tmp_path / "serve.log"
    serve = start(["serve", "--port", str(port)], env, log)
    try:
        # A guard against a start that never ends, not a measure of speed: serve starts five processes that each
        # build the app (about 1.4 s of CPU apiece), healthy in about 7 s on a quiet machine and past 20 s once
        # beside the rest of the suite on two cores. A worker's start is measured in bench/web_worker_start.py.
        wait_until_healthy(f"http://127.0.0.1:{port}/health", serve, seconds=120)
        status, body = get_health(f"http://127.0.0.1:{port}/health")
        assert (status, body["database"], body["broker"]) == (200, {"reachable": True}, {"reachable": True})
        assert f"http://127.0.0.1:{port}/" in log.read_text()
        assert f"http://127.0.0.1:{port}/mailbox/" in log.read_text(), "serve says where the mailbox is"

        # The worker, a separate process, takes a task from the embedded broker.
        app = create_app({"INSTANCE_PATH": str(instance), "RESULT_BACKEND": results})
        celery_app = app.extensions["celery"]
        celery_app.backend.get_task_meta("warm-up")  # creates the result tables before the worker
        # The worker may still be starting (health asks the database and the broker, not the worker): a guard too.
        assert celery_app.tasks[ping.name].delay().get(timeout=120) == "pong"
        get_engine(app).dispose()
        assert (instance / "smallworld.sqlite").exists()
        assert (instance / "celerybeat-schedule").exists() or list(instance.glob("celerybeat-schedule*")), (
            "beat has not started"
        )

        processes = family(serve)
        assert len(processes) >= 3  # web server, worker, beat (and their own workers)
        # Ctrl-C in a terminal signals the foreground process group: the supervisor's.
        os.killpg(serve.pid, signal.SIGINT)
        assert serve.wait(timeout=40) == 0
        _gone, alive = psutil.wait_procs(processes, timeout=5)
        assert alive == [], f"left behind: {alive}"
    except BaseException:
        print(log.read_text())
        raise
    finally:
        if serve.poll() is None:
            stop(serve)


def test_a_configuration_error_is_one_clear_line_not_a_traceback(tmp_path: Path) -> None:
    env = service_environment(tmp_path / "instance", SMALLWORLD_ENV="production")
    result = subprocess.run([SMALLWORLD, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "SMALLWORLD_SECRET_KEY" in result.stderr
    assert "Traceback" not in result.stderr


def test_db_downgrade_and_upgrade_remove_and_create_the_tables(app: Flask, runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["db", "downgrade", "base"])
    assert result.exit_code == 0, result.output
    assert "service_status" not in inspect(get_engine(app)).get_table_names()

    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert "service_status" in inspect(get_engine(app)).get_table_names()


def test_the_command_lists_the_service_commands(runner: FlaskCliRunner) -> None:
    from service.console import cli

    result = runner.invoke(cli, ["--help"])
    for command in ("serve", "worker", "beat", "db"):
        assert f"  {command} " in result.output


def app_loaded_for(command: str) -> Flask:
    """The app ``smallworld <command>`` builds (in this process, as the console script would)."""
    from service.console import cli

    with cli.make_context("smallworld", [command], resilient_parsing=True) as context:
        cli.get_command(context, command)
        app: Flask = context.obj.load_app()
        return app


@pytest.mark.parametrize("command", ["serve", "worker", "beat", "inbound", "db"])
def test_the_commands_that_serve_no_request_build_the_app_without_its_web_part(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.infra.config import DEFAULTS

    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path / "instance"))
    monkeypatch.setenv("SMALLWORLD_MAIL_FROM", "Small World <game@example.org>")
    app = app_loaded_for(command)
    assert app.blueprints == {} and list(app.view_functions) == ["static"]
    # Everything else is the whole app's: the settings, the database, Celery, the links, the commands.
    whole = create_app()
    assert {name: app.config[name] for name in DEFAULTS} == {name: whole.config[name] for name in DEFAULTS}
    assert app.config["MAIL_FROM"] == "Small World <game@example.org>"
    web_only = {"limiter", "smallworld.limiter", "smallworld.mail_quotas", "csrf"}  # rate limits, forms
    assert sorted(app.extensions) == sorted(set(whole.extensions) - web_only)
    assert app.extensions["celery"].conf.broker_url == whole.extensions["celery"].conf.broker_url
    assert sorted(app.cli.commands) == sorted(whole.cli.commands)


def imported_by(instance: Path, *command: str) -> set[str]:
    """The modules ``smallworld <command>`` imports (Python's ``-X importtime`` names each on stderr)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "service", *command],
        capture_output=True,
        text=True,
        timeout=60,
        env=service_environment(instance),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return {line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def test_beat_db_and_serve_start_without_the_admin_commands_and_the_inbound_listener(tmp_path: Path) -> None:
    # Nearly half such a process's start (service/cli/__init__.py, _AdminCommands): the admin commands' module
    # is imported by ``smallworld admin``, the listener's by ``smallworld inbound`` as it runs (test_inbound.py).
    heavy = {"service.domain.admin", "service.cli.admin", "service.domain.inbound", "service.cli.inbound"}
    for command in (["beat", "--help"], ["db", "--help"], ["serve", "--help"]):
        assert heavy.isdisjoint(imported_by(tmp_path, *command)), command
    assert {"service.domain.admin", "service.cli.admin"} <= imported_by(tmp_path, "admin", "--help")


def test_the_other_commands_build_the_whole_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path / "instance"))
    for command in ("admin", "routes"):
        assert "api" in app_loaded_for(command).blueprints, command
