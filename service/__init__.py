"""The web service: app factory, models, domain operations, pages, JSON API, admin."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Any

from flask import Flask


def create_app(config: Mapping[str, Any] | None = None, *, web: bool = True) -> Flask:
    """Create the Flask app.

    Settings come from ``SMALLWORLD_*`` environment variables (see ``service.infra.config``), then
    from ``config``, which tests use to override them. Raises
    :class:`service.infra.config.ConfigurationError` when the configuration must not be run, such as
    production with the default secret key.

    The service's modules are imported here, once the configuration is known to be good, not with the package:
    every process of the service imports the package (``smallworld`` and its commands, gunicorn's master
    for its settings), and not all of them build an app (``smallworld demo``, the bots' client, does not).

    ``web=False`` builds the app of the processes that serve no request (``smallworld worker``, ``beat``,
    ``inbound``, ``db`` and ``serve``'s supervisor: ``service.console``): the same configuration, refused for the
    same mistakes (the rate limits' included), the same database, Celery app, signed links and commands,
    without the pages, the API, the admin pages and their request hooks, whose modules it never imports (a
    sixth of such a process's start).
    """
    from service.infra import config as configuration

    app = Flask(
        __name__,
        instance_path=configuration.instance_path_from(config),
        template_folder="web/templates",
        static_folder="web/static",
    )
    configuration.configure(app, config)
    os.makedirs(app.instance_path, exist_ok=True)

    from service.domain import links
    from service.infra import db
    from service.infra.celery import celery_init_app

    db.init_app(app)
    celery_init_app(app)
    links.init_app(app)
    if web:
        _add_web(app)
    else:
        from service.web import rate_limits

        rate_limits.check_settings(app.config)

    from service import cli  # the commands (the console script's group that builds this app: service.console)

    cli.init_app(app)
    return app


def _add_web(app: Flask) -> None:
    """The pages, the JSON API, the admin pages, the signed links' pages and their request hooks."""
    from service.web import (
        access_log,
        admin_pages,
        api,
        api_docs,
        calendar_feeds,
        choices,
        health,
        inbound_mail,
        links_pages,
        pages,
        rate_limits,
        security,
        unsubscribe,
    )

    access_log.init_app(app)
    security.init_app(app)
    rate_limits.init_app(app)
    app.register_blueprint(health.blueprint)
    api.init_app(app)
    api_docs.init_app(app)
    app.register_blueprint(links_pages.bp)
    app.register_blueprint(unsubscribe.bp)
    app.register_blueprint(choices.bp)
    app.register_blueprint(calendar_feeds.bp)
    inbound_mail.init_app(app)
    pages.init_app(app)
    admin_pages.init_app(app)
    _log_lines_name_their_game(app)


def _log_lines_name_their_game(app: Flask) -> None:
    """Every line logged while a request about a game is served names the game (service.infra.logfmt)."""
    from flask import g, request

    from service.infra import logfmt

    @app.before_request
    def bind_game() -> None:
        game = (request.view_args or {}).get("game_id")
        if game is not None:
            g.log_fields = logfmt.push(game=game)

    @app.teardown_request
    def unbind_game(_error: BaseException | None) -> None:
        token = g.pop("log_fields", None)
        if token is not None:
            with contextlib.suppress(ValueError):  # set in another context (a request that never began)
                logfmt.pop(token)
