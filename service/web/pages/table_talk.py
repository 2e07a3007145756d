"""Table talk on the seat's pages (the game page and the turn page): what the board shows (``_talk.html``).

The forms post to the game page's routes (``service.web.pages.game``).
"""

from __future__ import annotations

from typing import Any

from flask import request
from markupsafe import Markup

from emails.table_talk import LONGEST, message_html
from emails.times import zone as zone_of
from service.domain import table_talk
from service.infra.db import get_session
from service.web.pages.access import Viewer

#: The page's anchor of the board.
ANCHOR = "table-talk"


def board_context(
    viewer: Viewer, *, draft: str = "", error: str | None = None, back: str | None = None
) -> dict[str, Any]:
    """What ``_talk.html`` needs: the messages (their HTML cleaned, times in the viewer's zone), the form."""
    game = viewer.game
    zone = zone_of(viewer.player.time_zone)
    shown = table_talk.messages_of(get_session(), game.id or 0)
    return {
        "messages": [
            {
                "id": m.id,
                "seat": m.seat,
                "author": m.author,
                "mine": m.seat == viewer.number,
                "at": f"{m.at.astimezone(zone):%a %-d %b %H:%M}",
                "at_iso": m.at.isoformat(),
                "html": Markup(message_html(m.text)) if m.text is not None else None,
            }
            for m in shown
        ],
        "open": game.status in table_talk.OPEN,
        "can_hide": is_host(viewer),
        "draft": draft,
        "error": error,
        "longest": LONGEST,
        "back": back or request.path,
    }


def is_host(viewer: Viewer) -> bool:
    """The seat's address is the game's host's: they may hide messages from their seat's pages too."""
    return viewer.player.email.lower() == viewer.game.host_email.lower()
