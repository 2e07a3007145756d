"""Ways back in (ARCHITECTURE §9): signing in by mail, My games, signing out, and "mail me my links".

- ``POST /sign-in`` (the home page's form, and ``/sign-in``'s): an address asks for a sign-in link. The page
  answers the same words whatever happened (a known address or not, blocked, over its limit), so it tells
  nobody which addresses play here; the link goes by mail only to an address the service has mailed before
  (``service.domain.sign_in``).
- ``/sign-in/<token>``: the mailed link's page, whose one button signs in (mail scanners open links).
- ``/me``: My games, for the signed-in address: games waiting for it first, invitations to accept, the
  other running games, the finished ones with results; each row opens the seat by its own signed link
  (``/me/games/<id>/<seat>`` sends the signed-in browser on to it, so the page itself holds no link).
- ``POST /sign-out``, ``POST /sign-out-everywhere``.
- ``/me/data``: "Download my data", a JSON file of what the service keeps about the address
  (``service.domain.privacy.export``); ``/me/delete``: "Delete my address", a page that says what it does and
  whose button (a POST, with its CSRF token and a box to tick) erases the address (``privacy.forget_address``)
  and signs the browser out. ``/privacy``: what is kept, and for how long (``docs/PRIVACY.md``).
- ``POST /games/<id>/links``: "mail me my links", from a game's public pages, without signing in: one mail
  with the address's own links to that game, under the same limits and with the same answer for any address.

Both forms are limited per client address (``RATELIMIT_SIGN_IN``, one count for both) and per address asked
for (``RATELIMIT_SIGN_IN_PER_ADDRESS``, :meth:`MailQuotas.take_sign_in_mail`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, Concatenate, ParamSpec
from zoneinfo import ZoneInfo

from flask import Blueprint, Flask, current_app, flash, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from emails import times
from emails.render import webcal
from service.domain import calendar, my_games, notifications, privacy, records, sign_in
from service.domain.errors import BadRequest, DomainError
from service.domain.links import SIGN_IN_MAX_AGE, current_links
from service.domain.models import GameStatus, SignIn, utcnow
from service.domain.text import checked, mail_address
from service.infra.db import get_session
from service.web.pages.access import refused_as, signed_in_as
from service.web.pages.game_summary import deadline
from service.web.rate_limits import client_address, mail_quotas

bp = Blueprint("me", __name__)

#: The heading of the page a mailed sign-in link that does not work opens (its error says why).
LINK_REFUSED = "This sign-in link does not work"

#: The session key of a signed-in address.
ADDRESS = "address"

SIGN_IN_SENT = (
    "If that address has games here, a sign-in link is on its way to it. It works once, for "
    f"{SIGN_IN_MAX_AGE // 60} minutes, in the browser you open it in."
)
LINKS_SENT = "If that address has a seat in this game, its links are on their way to it."
ADDRESS_LABEL = "Your email address"


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
    app.jinja_env.globals["signed_in_address"] = signed_in_address
    app.jinja_env.globals["signed_in_browser"] = signed_in_browser
    # Each form mails whichever address is typed in: limited per client address, both forms together, on top
    # of the limit per address asked for (counted in the form's handler).
    limiter = app.extensions["smallworld.limiter"]
    limited = limiter.shared_limit(
        lambda: current_app.config["RATELIMIT_SIGN_IN"],
        scope="sign-in",
        key_func=client_address,
        methods=["POST"],
        error_message="Too many sign-in links asked for from your address",
    )
    for endpoint in ("me.ask_for_sign_in", "me.mail_my_links"):
        app.view_functions[endpoint] = limited(app.view_functions[endpoint])


def _sign_in_first(code: int = 302) -> Response:
    """To the sign-in page, saying why: the page asked for needs a signed-in browser."""
    flash("Sign in first: a sign-in link comes by mail.", "refusal")
    return redirect(url_for(".sign_in_page"), code=code)


def signed_in() -> SignIn | None:
    """The sign-in this browser holds, if it is still on (else the session forgets it)."""
    return signed_in_as(ADDRESS, sign_in.from_session)


P = ParamSpec("P")


def _signed_in_only(view: Callable[Concatenate[SignIn, P], Any]) -> Callable[P, Any]:
    """A page of the signed-in address alone: the view is given the browser's sign-in first; without one, the
    browser goes to the sign-in page (with 303 after a form's POST, so that it asks for that page with GET)."""

    @functools.wraps(view)
    def page(*args: P.args, **kwargs: P.kwargs) -> Any:
        row = signed_in()
        if row is None:
            return _sign_in_first(code=303 if request.method == "POST" else 302)
        return view(row, *args, **kwargs)

    return page


def signed_in_browser() -> bool:
    """Whether this browser's session holds a sign-in, for the header's link to My games on every page: read
    from the session alone, so an error page never needs the database (a sign-in ended since leads to the
    sign-in page, as My games does)."""
    return session.get(ADDRESS) is not None


def signed_in_address() -> str | None:
    """The address signed in in this browser (for the pages' links to My games)."""
    row = signed_in()
    return row.email if row is not None else None


def _address(form_value: str) -> str:
    """The address typed in, as addresses are stored; :class:`BadRequest` naming the field if it is none."""
    value = form_value.strip()
    if not value:
        raise BadRequest(f"{ADDRESS_LABEL}: give the address your game mails come to.")
    return checked(f"{ADDRESS_LABEL}:", mail_address, value[:400])


@bp.get("/sign-in")
def sign_in_page() -> Any:
    if signed_in() is not None:
        return redirect(url_for(".my_games_page"))
    return render_template("me/sign_in.html", sent=False, email="", errors=[], sent_message=SIGN_IN_SENT)


@bp.post("/sign-in")
def ask_for_sign_in() -> Any:
    try:
        email = _address(request.form.get("email", ""))
    except DomainError as error:
        page = render_template(
            "me/sign_in.html", sent=False, email="", errors=[error.message], sent_message=SIGN_IN_SENT
        )
        return page, 400
    # Whatever happens next (a known address or not, blocked, over its limit), the same page.
    if mail_quotas().take_sign_in_mail(email):
        sign_in.request_sign_in(get_session(), email, current_links())
    return render_template("me/sign_in.html", sent=True, email="", errors=[], sent_message=SIGN_IN_SENT)


@bp.get("/sign-in/<token>")
def open_sign_in_link(token: str) -> Any:
    """The mailed link's page: one button signs in (a mail scanner that opens the link uses nothing up)."""
    with refused_as(LINK_REFUSED, 403):
        row = sign_in.from_sign_in_token(get_session(), current_links(), token)
    return render_template("me/sign_in_link.html", email=row.email, valid_minutes=SIGN_IN_MAX_AGE // 60)


@bp.post("/sign-in/<token>")
def use_sign_in_link(token: str) -> Any:
    with refused_as(LINK_REFUSED, 403):
        row = sign_in.sign_in(get_session(), current_links(), token)
    session[ADDRESS] = sign_in.remembered(row)
    session.permanent = True
    flash("You are signed in.", "done")  # the page says as whom, once
    return redirect(url_for(".my_games_page"), code=303)


@bp.get("/me")
@_signed_in_only
def my_games_page(row: SignIn) -> Any:
    listing = my_games.my_games(get_session(), row.email)
    zone = times.zone(listing.time_zone)
    now = utcnow()
    # Each row's words are made here, in one pass, so that a page of 200 games renders in one loop.
    rows = url_for(".my_games_page") + "/games"
    parts = (
        ("waiting", "waiting", "Waiting for you", "No game waits for you now.", listing.waiting),
        ("invitations", "invitation", "Invitations to accept", None, listing.invitations),
        ("running", "running", "Other games in progress", "None.", listing.running),
        ("finished", "finished", "Finished games", None, listing.finished),
    )
    sections: list[dict[str, Any]] = [
        {
            "id": part,
            "title": title,
            "empty": empty,
            "rows": [_row(game, kind, zone, now, f"{rows}/{game.game_id}/{game.seat}") for game in games],
        }
        for part, kind, title, empty, games in parts
    ]
    record = records.address_record(get_session(), row.email)
    player = notifications.player_of(get_session(), row.email)
    choices_url = None
    if player is not None and player.id is not None:
        choices_url = current_links().choices_url(player.id, serial=player.links_serial)
    # Every deadline of every game of the address, in the player's calendar app (the same feed as the mails').
    feed = calendar.address_feed_url(get_session(), row.email, current_links())
    calendar_links = {"https": feed, "webcal": webcal(feed)} if feed else None
    return render_template(
        "me/games.html",
        listing=listing,
        sections=sections,
        zone=zone.key,
        record=record,
        choices_url=choices_url,
        calendar=calendar_links,
    )


def _row(game: my_games.MyGame, kind: str, zone: ZoneInfo, now: datetime, url: str) -> dict[str, Any]:
    """One row of My games in words: what it is about (``lead`` in bold, then ``line``), the deadline, the button."""
    turn = f", turn {game.turn}{f' of {game.turns}' if game.turns else ''}" if game.turn else ""
    lead, line = "", ""
    if kind == "waiting":
        lead = "Your turn"
        line = f"as {game.seat_name}{turn}." + (" Accept the invitation first." if game.to_accept else "")
        label = "Accept and play your turn" if game.to_accept else "Play your turn"
    elif kind == "invitation":
        others = game.players - 1
        line = f"You are invited as {game.seat_name}, with {others} other player{'s' if others != 1 else ''}."
        label = "Open the invitation"
    elif game.status == GameStatus.FINISHED:
        line = "Over" + (f" since {times.local_time(game.finished_at, zone.key)}." if game.finished_at else ".")
        if game.place:
            suffix = {1: "st", 2: "nd", 3: "rd"}.get(game.place, "th")
            coins = f"{game.coins} coin{'s' if game.coins != 1 else ''}"
            line += f" You ({game.seat_name}) came {game.place}{suffix} with {coins}."
        if game.winners:
            line += f" Won by {' and '.join(game.winners)}."
        label = "See the game"
    elif game.status == GameStatus.CANCELLED:
        line, label = "Cancelled by its host.", "See the game"
    elif game.status == GameStatus.ENDING:
        line = f"Over: the final table is being tallied, and will be mailed to you. You play as {game.seat_name}."
        label = "See the game"
    else:
        you = f"You play as {game.seat_name}."
        if game.status == GameStatus.INVITING:
            line = f"Waiting for the other players to accept. {you}"
        elif game.status == GameStatus.PAUSED:
            kept = game.clock.paused_left
            left = f", {times.duration(kept)} left on the clock" if kept else ""
            line = f"Paused{left}. {you}"
        else:
            line = f"{', '.join(game.awaited) or 'Someone'} to play{turn}. {you}"
        label = "Open the game"
    return {
        "kind": kind,
        "name": game.name,
        "url": url,
        "lead": lead,
        "line": line,
        "deadline": deadline(game.clock, now, zone) if game.status == GameStatus.ACTIVE else None,
        "deadline_words": "Your deadline" if kind == "waiting" else "Deadline",
        "label": label,
        "primary": kind in ("waiting", "invitation"),
    }


@bp.get("/me/games/<int:game_id>/<int:seat>")
@_signed_in_only
def open_seat(row: SignIn, game_id: int, seat: int) -> Any:
    """A row of My games opened: on to the seat's own signed link (which opens the seat in this browser)."""
    link = my_games.seat_link(get_session(), row.email, game_id, seat, current_links())
    if link is None:
        message = "That seat is not one of your games (any more): see My games for those that are."
        return render_template("refused.html", heading="Not a game of yours", message=message), 404
    return redirect(link)


@bp.post("/me/calendar-link")
@_signed_in_only
def new_calendar_link(row: SignIn) -> Response:
    """ "Make a new calendar link": the feed's old link gets 410 from now on, the new one is on My games."""
    if calendar.new_calendar_link(get_session(), row.email):
        flash("A new calendar link is below: the old one no longer works. Subscribe to the new one.", "done")
    return redirect(url_for(".my_games_page"), code=303)


@bp.post("/sign-out")
def sign_out() -> Response:
    row = signed_in()
    if row is not None and row.id is not None:
        sign_in.sign_out(get_session(), row.id)
    session.pop(ADDRESS, None)
    flash("Signed out in this browser.", "done")
    return redirect(url_for(".sign_in_page"), code=303)


@bp.post("/sign-out-everywhere")
def sign_out_everywhere() -> Response:
    row = signed_in()
    if row is not None:
        sign_in.sign_out_everywhere(get_session(), row.email)
    session.pop(ADDRESS, None)
    flash(
        "Signed out everywhere: every session of your address, every seat opened in a browser, every sign-in link "
        "and the links in the game mails you got so far stopped working. The next game mail brings new links.",
        "done",
    )
    return redirect(url_for(".sign_in_page"), code=303)


@bp.get("/me/data")
@_signed_in_only
def download_my_data(row: SignIn) -> Any:
    """Download my data: the address's data as a JSON file (``privacy.export``), never kept in a cache."""
    db = get_session()
    document = privacy.export(db, row.email)
    db.rollback()  # read only: end the transaction before the file goes out
    response = current_app.response_class(
        json.dumps(document, ensure_ascii=False, indent=2) + "\n", mimetype="application/json"
    )
    name = f"smallworld-my-data-{utcnow():%Y-%m-%d}.json"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    response.headers["Cache-Control"] = "no-store"
    return response


#: The box to tick on the page of "Delete my address".
CONFIRM_FIELD = "understood"


@bp.get("/me/delete")
@_signed_in_only
def delete_my_address_page(row: SignIn) -> Any:
    return render_template("me/delete.html", email=row.email, errors=[], field=CONFIRM_FIELD)


@bp.post("/me/delete")
@_signed_in_only
def delete_my_address(row: SignIn) -> Any:
    """Erase the signed-in address (``privacy.forget_address``), once its box is ticked; then sign out."""
    if request.form.get(CONFIRM_FIELD) != "yes":
        error = "Tick the box to say you understand: deleting your address cannot be undone."
        return render_template("me/delete.html", email=row.email, errors=[error], field=CONFIRM_FIELD), 400
    email = row.email
    privacy.forget_address(get_session(), email, current_links())
    session.pop(ADDRESS, None)
    current_app.logger.info("erased an address on its owner's request")
    return render_template("me/deleted.html")


@bp.get("/privacy")
def privacy_page() -> Any:
    """What the service keeps about a player, and for how long."""
    return render_template("privacy.html", days=int(current_app.config["MAIL_RETENTION_DAYS"]))


@bp.post("/games/<int:game_id>/links")
def mail_my_links(game_id: int) -> Any:
    """Mail me my links: the same answer whatever the address (or the game: nothing says whether it exists)."""
    back = request.form.get("back", "")
    try:
        email = _address(request.form.get("email", ""))
    except DomainError as error:
        return render_template("me/links_sent.html", sent=False, errors=[error.message], back=_safe(back)), 400
    if mail_quotas().take_sign_in_mail(email):
        sign_in.mail_links(get_session(), game_id, email, current_links())
    return render_template("me/links_sent.html", sent=True, errors=[], back=_safe(back))


def _safe(back: str) -> str | None:
    """A page of this site to go back to (a path, never another site)."""
    return back if back.startswith("/") and not back.startswith("//") and len(back) < 300 else None
