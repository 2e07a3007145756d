"""The calendar feeds' addresses (``/calendar/<token>.ics``): an address's deadlines, or one game's.

The token says which (``service.domain.links``, purpose ``calendar``); the feed itself is
``service.domain.calendar``. A tampered token, or one naming a game or an address that does not exist,
gets 403 and a short page saying so, never a feed; an address's link replaced by a new one ("make a new
calendar link" on My games) or made before the address signed out everywhere gets 410 and a page saying so.
Calendar apps fetch these often, so the answer has a weak ETag of its deadlines, a Last-Modified
(``If-None-Match`` and ``If-Modified-Since`` get 304 while nothing changed) and a short cache lifetime; it is
private (an address's feed lists its games).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, render_template, request

from service.domain import block_list, calendar
from service.domain.links import CALENDAR, LinkError, current_links
from service.domain.models import Game, Player
from service.infra.db import get_session

bp = Blueprint("calendar", __name__)

#: Seconds a calendar app (or a proxy) may keep a feed before asking again.
MAX_AGE = 300
NOT_VALID = (
    "This calendar link is not valid: it may have been cut short or changed. Copy it again from your game's mail "
    "or page."
)
REPLACED = (
    "This calendar link no longer works: a new one was made on My games, or its address signed out everywhere. "
    "Subscribe to the new link shown on My games (sign in there with a link that comes by mail)."
)


@bp.get("/calendar/<token>.ics")
def feed(token: str) -> Any:
    links = current_links()
    try:
        payload = links.signer.verify(CALENDAR, token)
    except LinkError as error:
        return _refused(str(error))
    db = get_session()
    player_id, game_id = payload.get("p"), payload.get("g")
    player = db.get(Player, player_id) if isinstance(player_id, int) and game_id is None else None
    if player is not None and player.id is not None:
        # An erased address's feed (service.domain.privacy) ends with it, as does one replaced by a new link.
        if block_list.is_erased(player.email):
            return _refused(NOT_VALID)
        if not calendar.feed_is_current(player, payload):
            return _refused(REPLACED, 410)
        found = calendar.address_calendar(db, player.id, links)
        name = "smallworld-deadlines.ics"
    elif isinstance(game_id, int) and player_id is None and db.get(Game, game_id) is not None:
        found = calendar.game_calendar(db, game_id, links)
        name = f"smallworld-game-{game_id}.ics"
    else:
        return _refused(NOT_VALID)
    db.rollback()  # read only: end the transaction before the answer goes out
    response = Response(found.body, mimetype="text/calendar")
    response.headers["Content-Disposition"] = f'inline; filename="{name}"'
    response.headers["Cache-Control"] = f"private, max-age={MAX_AGE}"
    # A weak ETag of the deadlines alone (a step taken in a turn moves no deadline), and the latest change of the
    # games the feed covers: an app that asks with either gets 304 while its copy says the same.
    response.set_etag(found.etag, weak=True)
    if found.last_modified is not None:
        response.last_modified = found.last_modified
    return response.make_conditional(request)


def _refused(message: str, status: int = 403) -> Any:
    page = render_template("refused.html", heading="This calendar link does not work", message=message)
    return page, status
