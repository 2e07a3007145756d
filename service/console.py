"""``smallworld``, the console script (and ``python -m service``): the command group that builds the app.

Above both the app factory and the commands: ``create_app`` registers the commands of ``service.cli`` on the
app it builds (``flask --app service`` and the tests' ``app.test_cli_runner()`` find them there), and this
group builds that app when a command needs it. Kept out of ``service.cli`` so that the commands never import
the factory that imports them (no import cycle: tests/test_architecture.py).
"""

from __future__ import annotations

import functools

import click
from flask import Flask
from flask.cli import FlaskGroup, ScriptInfo

from service import create_app
from service.cli import demo, run_command
from service.infra.config import ConfigurationError


def _create_app(*, web: bool = True) -> Flask:
    try:
        return create_app(web=web)
    except ConfigurationError as error:
        # A configuration mistake is the operator's to fix: say what, without a traceback.
        raise click.ClickException(str(error)) from error


#: The commands whose process serves no request: they build the app without its web part (``create_app``).
WITHOUT_WEB = frozenset({"serve", "worker", "beat", "inbound", "db"})


class _ServiceGroup(FlaskGroup):
    """Flask's group, building the app without its web part for the commands of :data:`WITHOUT_WEB`."""

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        info = ctx.ensure_object(ScriptInfo)
        if name in WITHOUT_WEB and info.create_app is _create_app:
            info.create_app = functools.partial(_create_app, web=False)
        return super().get_command(ctx, name)


cli = _ServiceGroup(
    name="smallworld",
    help="Small World by Mail: run the service, its worker and beat, and migrate the database.",
    create_app=_create_app,
    load_dotenv=False,
)
# FlaskGroup's own ``run`` is found before the app's: replaced by the one that refuses an exposed development key.
cli.add_command(run_command)
# The bots' client needs no app of its own: found on the command itself, ``smallworld demo`` does not build one
# (FlaskGroup looks at its own commands before loading the app), nor import the web to build it.
cli.add_command(demo)
