"""Site admins in the browser: signing in by emailed link, the list of every game, signing out.

The sign-in form answers the same words whether or not the address belongs to a site admin, so it cannot
be used to find out who is one; the link goes by mail only to an existing account
(``service.domain.site_admins``).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from emails import times
from service.domain import site_admins
from service.domain.games_overview import STATUSES, GameFilters, list_games
from service.domain.links import LOGIN_MAX_AGE, current_links
from service.domain.models import GameStatus, utcnow
from service.infra.db import get_session
from service.web.admin_pages.access import (
    forget_admin_rights,
    remember_site_admin,
    require_site_admin,
    signed_in_site_admin,
)
from service.web.admin_pages.game import ZONE, clock_words, known_zones, remember_zone
from service.web.pages.access import refused_as
from service.web.pages.forms import int_or_none
from service.web.pages.game_summary import deadline

bp = Blueprint("site_admin", __name__)

#: The heading of the page a mailed sign-in link that does not work opens (its error says why).
LINK_REFUSED = "This sign-in link does not work"

SENT = (
    "If that address belongs to a site admin, a sign-in link is on its way to it. "
    f"The link works for {LOGIN_MAX_AGE // 60} minutes, in the browser you open it in."
)


@bp.route("/admin/login", methods=["GET", "POST"])
def sign_in() -> Any:
    if request.method == "GET":
        if signed_in_site_admin() is not None:
            return redirect(url_for(".games"))
        return render_template("admin/sign_in.html", sent=False, email="", sent_message=SENT)
    email = request.form.get("email", "").strip()
    if "@" in email and len(email) <= 320:
        site_admins.request_sign_in(get_session(), email, current_links())
    # The same page whatever happened (an admin's address or not): nothing here says who is a site admin.
    return render_template("admin/sign_in.html", sent=True, email="", sent_message=SENT)


@bp.get("/admin/login/<token>")
def open_sign_in_link(token: str) -> Any:
    """The emailed link's page: one button signs in (a mail scanner that opens the link uses nothing up)."""
    with refused_as(LINK_REFUSED, 403):
        account = site_admins.from_sign_in_token(get_session(), current_links(), token)
    return render_template("admin/sign_in_link.html", email=account.email, valid_minutes=LOGIN_MAX_AGE // 60)


@bp.post("/admin/login/<token>")
def use_sign_in_link(token: str) -> Any:
    with refused_as(LINK_REFUSED, 403):
        account = site_admins.sign_in(get_session(), current_links(), token)
    remember_site_admin(account)
    flash(f"Signed in as site admin {account.email}.", "done")
    return redirect(url_for(".games"), code=303)


@bp.post("/admin/logout")
def sign_out() -> Response:
    """Forget every admin right of this browser (site admin and host links); a seat it holds stays."""
    forget_admin_rights()
    flash("Signed out of the admin pages in this browser.", "done")
    return redirect(url_for(".sign_in"), code=303)


@bp.post("/admin/logout-everywhere")
def sign_out_everywhere() -> Response:
    """Rotate the site admin's secret: every browser signed in as them, and every sign-in link, stops working."""
    account = require_site_admin()
    site_admins.sign_out_everywhere(get_session(), account.id or 0)
    forget_admin_rights()
    flash("Signed out everywhere: every session and sign-in link of your account stopped working.", "done")
    return redirect(url_for(".sign_in"), code=303)


@bp.post("/admin/zone")
def choose_zone() -> Response:
    """The time zone of the games list (and of every admin page in this browser)."""
    require_site_admin()
    remember_zone()
    return redirect(url_for(".games"), code=303)


@bp.get("/admin/games")
def games() -> Any:
    account = require_site_admin()
    args = request.args
    filters = GameFilters(
        player=args.get("player", "").strip()[:200],
        waiting_only=args.get("waiting") == "1",
        status=status if (status := args.get("status", "")) in STATUSES else "running",
        stalled=args.get("stalled") == "1",
        failed_mail=args.get("failed") == "1",
        page=max(1, int_or_none(args.get("page")) or 1),
    )
    now = utcnow()
    listing = list_games(get_session(), filters, now)
    zone = times.zone(session.get(ZONE) or "UTC")
    rows = [
        {
            "row": row,
            "deadline": deadline(row.clock, now, zone),
            "paused_left": clock_words(row.clock.paused_left) if row.status == GameStatus.PAUSED else None,
        }
        for row in listing.rows
    ]
    query: dict[str, Any] = {k: v for k, v in args.items() if k != "page"}
    return render_template(
        "admin/games.html",
        zones=sorted(known_zones()),
        account=account,
        listing=listing,
        rows=rows,
        filters=filters,
        statuses=list(STATUSES),
        zone=zone.key,
        previous_url=url_for(".games", **query, page=listing.page - 1) if listing.page > 1 else None,
        next_url=url_for(".games", **query, page=listing.page + 1) if listing.has_next else None,
    )
