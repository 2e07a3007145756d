"""The web pages: the lobby (create a game), the game page and history, the turn page, and the
development mailbox.

Pages are Jinja templates (``service/web/templates``) with the board drawn as inline SVG
(``service.web.maps``); the basic flow is plain HTML forms that POST and redirect, and htmx (vendored in
``service/web/static``) makes them smoother when JavaScript runs. Every form carries a CSRF token.
"""

from __future__ import annotations

import functools
import secrets
from typing import Any

from flask import Flask, render_template, request
from flask_wtf.csrf import CSRFError, CSRFProtect
from markupsafe import Markup, escape

from service.domain.text import zones
from service.web.maps import legend_svg, seat_badge_svg
from service.web.pages import game, guide, lobby, mailbox, me, turn, watch
from service.web.pages.access import PageRefused

csrf = CSRFProtect()

#: Requests that carry no CSRF token by design: the JSON API (bearer tokens, no cookies), and the one-click
#: unsubscribe POST that mail providers send without cookies (RFC 8058; the signed token is the credential).
CSRF_EXEMPT_PREFIXES = ("/api/",)
CSRF_EXEMPT_BLUEPRINTS = frozenset({"unsubscribe", "inbound_mail"})  # inbound mail: the MTA's shared secret


def init_app(app: Flask) -> None:
    # The check runs in _protect_forms below, with the exemptions; a turn page may stay open for days,
    # so its token lasts as long as the session.
    app.config.setdefault("WTF_CSRF_CHECK_DEFAULT", False)
    app.config.setdefault("WTF_CSRF_TIME_LIMIT", None)
    csrf.init_app(app)
    app.before_request(_protect_forms)
    for blueprint in (lobby.bp, game.bp, turn.bp, mailbox.bp, guide.bp, watch.bp):
        app.register_blueprint(blueprint)
    me.init_app(app)
    app.jinja_env.globals.update(
        seat_badge=seat_badge_svg,
        legend=legend_svg,
        mailbox_available=mailbox.mailbox_available,
        page_serial=lambda: secrets.token_hex(6),
        time_zone_options=time_zone_options,
    )
    app.register_error_handler(PageRefused, _refused)
    app.register_error_handler(CSRFError, _form_expired)


@functools.cache
def time_zone_options() -> Markup:
    """The ``<option>`` of every time zone this server knows, for the time-zone form's datalist: about 600,
    on every game and turn page, written once per process instead of by the template at every page."""
    return Markup("".join(f'<option value="{escape(zone)}">' for zone in sorted(zones())))


def _protect_forms() -> None:
    if request.method in ("GET", "HEAD", "OPTIONS", "TRACE"):
        return
    if request.path.startswith(CSRF_EXEMPT_PREFIXES) or request.blueprint in CSRF_EXEMPT_BLUEPRINTS:
        return
    csrf.protect()


#: Pages of a game that a browser without its seat is refused: the refusal offers "mail me my links".
GAME_PAGES = frozenset({"game.page", "game.history", "turn.page"})


def _refused(error: PageRefused) -> Any:
    # The same offer for any game number, existing or not: it tells nothing about the game.
    links_game = (request.view_args or {}).get("game_id") if request.endpoint in GAME_PAGES else None
    page = render_template("refused.html", heading=error.heading, message=error.message, links_game=links_game)
    return page, error.status


def _form_expired(error: CSRFError) -> Any:
    message = "This form is out of date (or was not sent from this site). Reload the page and try again."
    return render_template("refused.html", heading="Please try again", message=message), 400
