"""The admin pages (ARCHITECTURE §1, item 4): a game's host (signed admin link) and site admins (emailed sign-in
link) manage deadlines and seats in the browser.

- ``game``: a game's admin page, ``/admin/games/<id>``, and its acts (extend, pause and resume, pass now,
  settings, replace and remove a player, cancel, resend a failed mail), for the host and for site admins.
- ``site``: signing in (``/admin/login``), every game with filters (``/admin/games``), signing out.
- ``access``: who may manage which game in this browser; ``audit_log``: the audit log in words, also shown
  to every player on the game page.

The pages follow the other pages (``service.web.pages``): Jinja templates extending ``base.html``, forms that
POST and redirect, CSRF tokens checked for every form (``service.web.pages``' ``CSRFProtect``).
"""

from __future__ import annotations

from typing import Any

from flask import Flask, current_app

from emails import times
from service.domain.schemas import GameView
from service.web.admin_pages import confirm, game, site
from service.web.admin_pages.audit_log import AuditLine, audit_lines
from service.web.rate_limits import client_address


def init_app(app: Flask) -> None:
    app.register_blueprint(game.bp)
    app.register_blueprint(confirm.bp)
    app.register_blueprint(site.bp)
    app.jinja_env.globals["audit_for_players"] = audit_for_players
    # The sign-in form mails a link to whichever admin address is typed in: limited per client address, on
    # top of the one mail per account every few minutes (service.domain.site_admins).
    limiter = app.extensions["smallworld.limiter"]
    endpoint = "site_admin.sign_in"
    app.view_functions[endpoint] = limiter.limit(
        lambda: current_app.config["RATELIMIT_ADMIN_SIGN_IN"],
        key_func=client_address,
        methods=["POST"],
        scope="admin-sign-in",
        error_message="Too many sign-in links asked for from your address",
    )(app.view_functions[endpoint])


def audit_for_players(game_view: GameView, viewer: Any = None) -> list[AuditLine]:
    """The game's audit log as its players read it, in the viewer's time zone (the game page's partial)."""
    player = getattr(viewer, "player", None)
    zone = times.zone(getattr(player, "time_zone", None) or "UTC")
    return audit_lines(game_view.audit, zone, [s.name for s in game_view.seats])
