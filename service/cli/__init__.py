"""The ``smallworld`` commands: run the service, its worker and beat, and migrate the database.

``smallworld serve`` is the embedded default (everything on this machine, nothing to install);
``smallworld worker``, ``smallworld beat`` and ``smallworld db upgrade`` are the pieces a
production deployment runs separately (see deploy/). Flask's own commands (``run``, ``shell``,
``routes``) are there too. ``create_app`` registers these commands on the app it builds
(:func:`init_app`); the console script's group, which builds that app, is ``service.console``.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import sys
import threading
from collections.abc import Sequence

import click
from flask import Flask, current_app
from flask.cli import ScriptInfo, pass_script_info, with_appcontext
from flask.cli import run_command as flask_run_command

from service.infra import logfmt, queues
from service.infra.broker import is_embedded, prepare_embedded_broker
from service.infra.celery import worker_arguments
from service.infra.config import DEFAULT_SECRET_KEY, PREFIX, PRODUCTION
from service.infra.db import alembic_config, get_engine, upgrade_database
from service.infra.supervisor import ChildProcess, supervise


def init_app(app: Flask) -> None:
    """Register the service's commands on ``app.cli`` (and so on ``smallworld``)."""
    for command in (serve, worker, beat, database, _AdminCommands("admin", help=ADMIN_HELP), demo, inbound_command):
        app.cli.add_command(command)
    app.cli.add_command(run_command)


#: What ``smallworld --help`` says of ``smallworld admin`` (service/cli/admin.py).
ADMIN_HELP = "Manage games and site admins."


class _AdminCommands(click.Group):
    """``smallworld admin``, whose module is imported only when one of its commands is asked for or listed.

    That module brings the domain's admin acts and, through them, the models, the mails and their templates:
    nearly half of the start of every process that builds an app and never runs an admin command (``beat``,
    ``serve``'s supervisor, ``db upgrade``), about 0.45 s of CPU each (bench/README.md, "The test suite").
    ``smallworld --help`` lists it from :data:`ADMIN_HELP` alone; ``inbound`` imports its own module (the
    domain's inbound mail) the same way, when it runs."""

    @staticmethod
    def _group() -> click.Group:
        from service.cli.admin import group

        return group

    def list_commands(self, ctx: click.Context) -> list[str]:
        return self._group().list_commands(ctx)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._group().get_command(ctx, name)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=5000, show_default=True, type=int, help="Port to listen on.")
@with_appcontext
def serve(host: str, port: int) -> None:
    """Run the whole service on this machine: web server, Celery worker and beat, and the SMTP listener
    for orders by mail (SMALLWORLD_INBOUND_PORT, 2525).

    With no configuration it needs no servers: SQLite and an embedded broker in the instance
    folder, mail written there as .eml files. Ctrl-C stops everything.
    """
    app = current_app
    refuse_exposed_development(app, host)
    upgrade_database(get_engine())
    celery_app = app.extensions["celery"]
    if is_embedded(celery_app.conf.broker_url):
        # Before any child starts: the web server may send a task before the worker is up.
        prepare_embedded_broker(celery_app)

    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    env = dict(os.environ, SMALLWORLD_INSTANCE_PATH=app.instance_path)
    env.setdefault("SMALLWORLD_BASE_URL", f"http://{address}")
    python = sys.executable
    children = [
        ChildProcess(
            "web server",
            [
                python,
                "-m",
                "gunicorn",
                "--config",
                "python:service.web.gunicorn_serve",
                "--bind",
                address,
                "--workers",
                "2",
                "--graceful-timeout",
                "5",
                "service:create_app()",
            ],
        ),
        ChildProcess("worker", [python, "-m", "service", "worker"]),
        ChildProcess("beat", [python, "-m", "service", "beat"]),
        # Orders by mail (ARCHITECTURE §10): SMTP on SMALLWORLD_INBOUND_HOST:SMALLWORLD_INBOUND_PORT.
        ChildProcess("inbound mail", [python, "-m", "service", "inbound"]),
    ]
    click.echo(f"Small World by Mail is starting at http://{address}/ (Ctrl-C stops it)")
    click.echo(f"Data and mail of this instance: {app.instance_path}")
    click.echo(
        f"Orders by mail: replies to @{app.config['INBOUND_DOMAIN']} are taken by SMTP on "
        f"{app.config['INBOUND_HOST']}:{app.config['INBOUND_PORT']}"
    )
    if app.config["MAIL_BACKEND"] == "file" and app.config["ENV"] != PRODUCTION:
        click.echo(f"Mailbox (every mail this instance writes, with its links): http://{address}/mailbox/")
    sys.exit(supervise(children, env))


def refuse_exposed_development(app: Flask, host: str) -> None:
    """``serve`` on an address other machines reach, with the public development key, would let anyone
    forge every signed link (and read the local mailbox's): refused, saying what to do."""
    if is_loopback(host) or app.config["SECRET_KEY"] != DEFAULT_SECRET_KEY:
        return
    raise click.ClickException(
        f"Refusing to listen on {host} with the development secret key: it is public, so anyone who can reach "
        f"this machine could forge every game link. Either listen on 127.0.0.1 (the default), or set "
        f"{PREFIX}_SECRET_KEY to a long random value of your own, e.g. the output of: "
        "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
    )


def _guarded_run(info: ScriptInfo, host: str, **options: object) -> None:
    """Flask's ``run`` (a development server), refusing as ``serve`` does to listen where other machines reach
    it with the public development key."""
    refuse_exposed_development(info.load_app(), host)
    flask_run_command.callback.__wrapped__(info, host=host, **options)  # type: ignore[union-attr]


#: ``smallworld run``: Flask's own command, its options and help, behind :func:`refuse_exposed_development`.
run_command = click.Command(
    "run",
    callback=pass_script_info(_guarded_run),
    params=flask_run_command.params,
    help=flask_run_command.help,
    short_help=flask_run_command.short_help,
)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) is this machine only: 127.0.0.0/8, ::1 or localhost."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("celery_args", nargs=-1, type=click.UNPROCESSED)
@with_appcontext
def worker(celery_args: Sequence[str]) -> None:
    """Run a Celery worker on every queue (deadlines and mail). Other options go to `celery worker`
    (e.g. --concurrency 4, or -Q mail for a worker that only sends mail)."""
    _run_celery("worker", worker_arguments(queues.with_queues(celery_args)))


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("celery_args", nargs=-1, type=click.UNPROCESSED)
@with_appcontext
def beat(celery_args: Sequence[str]) -> None:
    """Run Celery beat, the periodic scheduler. Run exactly one (RedBeat enforces it on Redis)."""
    scheduler = current_app.extensions["celery"].conf.beat_scheduler
    if scheduler == "redbeat.RedBeatScheduler" and not any(a in ("-S", "--scheduler") for a in celery_args):
        # RedBeat, riding out a Redis outage instead of exiting (service/infra/beat.py).
        celery_args = ["--scheduler", STEADY_REDBEAT, *celery_args]
    _run_celery("beat", celery_args)


@click.command("inbound")
@click.option("--host", default=None, help="Address to listen on (default: SMALLWORLD_INBOUND_HOST, 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default: SMALLWORLD_INBOUND_PORT, 2525).")
@click.option("--lmtp", is_flag=True, help="Speak LMTP (RFC 2033) instead of SMTP, for an MTA's lmtp transport.")
@with_appcontext
def inbound_command(host: str | None, port: int | None, lmtp: bool) -> None:
    """Take mail in by SMTP (or LMTP): orders by reply, bounces. Run it behind a real MTA at scale."""
    # Not named ``inbound``: importing the module service.cli.inbound sets that name on this package.
    from service.cli.inbound import listener  # the domain's inbound mail: imported by this process alone

    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    logfmt.ROLE = "inbound"
    server = listener(app, host=host, port=port, lmtp=lmtp)
    refuse_exposed_development(app, server.hostname)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        server.start()
    except (OSError, RuntimeError) as error:
        raise click.ClickException(
            f"Cannot take mail on {server.hostname}:{server.port} ({error}). Set {PREFIX}_INBOUND_PORT (and "
            f"{PREFIX}_INBOUND_HOST) to an address and port that are free, or stop what listens there."
        ) from None
    protocol = "LMTP" if lmtp else "SMTP"
    click.echo(f"Taking mail for {app.config['INBOUND_DOMAIN']} by {protocol} on {server.hostname}:{server.port}")
    try:
        while not stop.wait(1.0):
            pass
    finally:
        server.stop()


#: The scheduler ``smallworld beat`` runs on Redis.
STEADY_REDBEAT = "service.infra.beat:SteadyRedBeatScheduler"


def _run_celery(subcommand: str, celery_args: Sequence[str]) -> None:
    logfmt.ROLE = subcommand  # its log lines say worker[pid] or beat[pid]
    celery_app = current_app.extensions["celery"]
    if is_embedded(celery_app.conf.broker_url):
        prepare_embedded_broker(celery_app)
    status = celery_app.start([subcommand, "--loglevel", "INFO", *celery_args])
    sys.exit(status or 0)


@click.group("db")
def database() -> None:
    """Database schema migrations (Alembic)."""


@database.command()
@click.argument("revision", default="head")
@with_appcontext
def upgrade(revision: str) -> None:
    """Upgrade the database schema to REVISION (default: the latest), creating it if needed."""
    upgrade_database(get_engine(), revision)
    click.echo(f"Database upgraded to {revision}.")


@database.command()
@click.argument("revision")
@with_appcontext
def downgrade(revision: str) -> None:
    """Downgrade the database schema to REVISION ("base" removes every table)."""
    from alembic import command as alembic_command

    alembic_command.downgrade(alembic_config(get_engine()), revision)
    click.echo(f"Database downgraded to {revision}.")


@database.command()
@click.option("-m", "--message", required=True, help="What the migration does.")
@with_appcontext
def revision(message: str) -> None:
    """Write a new migration from the difference between the models and the database."""
    from alembic import command as alembic_command

    alembic_command.revision(alembic_config(get_engine()), message=message, autogenerate=True)


@click.command()
@click.option("--players", default=3, show_default=True, type=click.IntRange(2, 5), help="Bots in the game.")
@click.option("--seed", default=1, show_default=True, type=int, help="Seed of the bots' choices.")
@click.option("--turn-length", default="5s", show_default=True, help="Time for a turn, e.g. 5s, 1m.")
@click.option("--url", default=None, help="Play against this running service instead of starting one.")
@click.option("--mail-dir", default=None, type=click.Path(file_okay=False), help="With --url: its mail folder.")
@click.option(
    "--smtp",
    default=None,
    is_flag=False,
    flag_value="",
    metavar="[HOST:PORT]",
    help="Read the mail over SMTP: the demo runs an SMTP server there (alone: a free port) that the service "
    "sends to (with --url: that service's SMTP settings must point at it).",
)
def demo(players: int, seed: int, turn_length: str, url: str | None, mail_dir: str | None, smtp: str | None) -> None:
    """Watch a whole game played by bots through the real service, mail and deadlines included.

    Without --url it starts its own embedded stack (like ``serve``) and stops it at the end. Exits 0
    only if the game finished and every invariant held.
    """
    from pathlib import Path

    from service.cli import demo_game as demo_module

    seconds = _seconds(turn_length)
    try:
        demo_module.run(players, seed, seconds, url, Path(mail_dir) if mail_dir else None, out=click.echo, smtp=smtp)
    except demo_module.DemoFailed as failure:
        raise click.ClickException(str(failure)) from None


def _seconds(text: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600}
    try:
        return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)
    except (ValueError, IndexError):
        raise click.BadParameter(f"{text!r} is not a duration like 5s or 2m") from None
