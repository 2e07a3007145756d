"""Finding 6: ``serve --host 0.0.0.0`` in development exposed ``/mailbox/`` (every player's signed links) to
the network, and every link was signed with the public development key. Now ``serve`` refuses a host other
machines reach unless a secret key of its own is set, and the mailbox answers only a browser on this
machine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
import flask.cli
import pytest
from click.testing import CliRunner
from flask import Flask
from flask.cli import ScriptInfo
from flask.testing import FlaskCliRunner

import service.cli as cli
from service.console import cli as smallworld_group


@pytest.fixture
def nothing_started(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``serve``'s child processes, recorded instead of started."""
    started: list[Any] = []
    monkeypatch.setattr(cli, "supervise", lambda children, env: started.append(children) or 0)
    return started


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.4", "smallworld.example"])
def test_serve_refuses_a_reachable_host_with_the_public_development_key(
    runner: FlaskCliRunner, nothing_started: list[Any], host: str
) -> None:
    result = runner.invoke(args=["serve", "--host", host])
    assert result.exit_code != 0
    assert "SMALLWORLD_SECRET_KEY" in result.output and "127.0.0.1" in result.output
    assert nothing_started == []


def test_serve_listens_on_this_machine_or_with_a_key_of_its_own(
    make_app: Callable[..., Flask], nothing_started: list[Any]
) -> None:
    default = make_app()
    for host in ("127.0.0.1", "localhost", "::1"):
        result = default.test_cli_runner().invoke(args=["serve", "--host", host])
        assert result.exit_code == 0, result.output
    own_key = make_app(SECRET_KEY="a-long-random-key-of-this-machine", INSTANCE_PATH=default.instance_path + "-k")
    result = own_key.test_cli_runner().invoke(args=["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 0, result.output
    assert len(nothing_started) == 4


@pytest.mark.parametrize(
    ("address", "status"), [("127.0.0.1", 200), ("::1", 200), ("203.0.113.66", 404), ("10.0.0.2", 404)]
)
def test_the_mailbox_answers_only_this_machine(app: Flask, address: str, status: int) -> None:
    client = app.test_client()
    answer = client.get("/mailbox/", environ_base={"REMOTE_ADDR": address})
    assert answer.status_code == status
    home = client.get("/", environ_base={"REMOTE_ADDR": address}).get_data(as_text=True)
    assert ("/mailbox/" in home) is (status == 200), "the link to it is shown only where it answers"


@pytest.fixture
def nothing_served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Flask's development server, recorded instead of started."""
    served: list[tuple[str, int]] = []
    monkeypatch.setattr(flask.cli, "run_simple", lambda host, port, *args, **kwargs: served.append((host, port)))
    return served


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.4", "smallworld.example"])
def test_run_refuses_a_reachable_host_with_the_public_development_key(
    app: Flask, nothing_served: list[tuple[str, int]], host: str
) -> None:
    # Issue 32, finding 8: ``smallworld run`` (Flask's) served the public development key to the network.
    smallworld = CliRunner()
    result = smallworld.invoke(smallworld_group, ["run", "--host", host], obj=ScriptInfo(create_app=lambda: app))
    assert result.exit_code != 0
    assert "SMALLWORLD_SECRET_KEY" in result.output and "127.0.0.1" in result.output
    assert nothing_served == []


def test_run_listens_on_this_machine_or_with_a_key_of_its_own(
    make_app: Callable[..., Flask], nothing_served: list[tuple[str, int]]
) -> None:
    default = make_app()
    result = default.test_cli_runner().invoke(args=["run", "--host", "127.0.0.1", "--port", "5077"])
    assert result.exit_code == 0, result.output
    own_key = make_app(SECRET_KEY="a-long-random-key-of-this-machine", INSTANCE_PATH=default.instance_path + "-k")
    result = own_key.test_cli_runner().invoke(args=["run", "--host", "0.0.0.0"])
    assert result.exit_code == 0, result.output
    assert nothing_served == [("127.0.0.1", 5077), ("0.0.0.0", 5000)]


def test_smallworld_run_is_the_guarded_one() -> None:
    # ``smallworld run`` finds FlaskGroup's own commands first: the group's ``run`` must be the guarded one too.
    assert smallworld_group.get_command(click.Context(smallworld_group), "run") is cli.run_command
