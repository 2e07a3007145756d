"""Table talk on the pages (ARCHITECTURE §9): what the board shows (``_talk.html``), on a seat's game and turn
pages (with the form to write, and the host's "hide") and on the watch page (read-only, times in UTC).

The forms post to the game page's routes (``service.web.pages.game``).
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from flask import request
from markupsafe import Markup

from emails.table_talk import LONGEST, message_html
from emails.times import zone as zone_of
from service.domain import table_talk
from service.domain.models import Game
from service.infra.db import get_session
from service.web.pages.access import AnyViewer

#: The page's anchor of the board.
ANCHOR = "table-talk"


def _messages(game_id: int, zone: ZoneInfo, seat: int | None) -> list[dict[str, Any]]:
    """The game's messages as the board shows them: their HTML cleaned (``emails.table_talk``), times in
    ``zone``; a hidden one without its text."""
    suffix = " UTC" if zone.key == "UTC" else ""
    return [
        {
            "id": m.id,
            "seat": m.seat,
            "author": m.author,
            "mine": m.seat == seat,
            "at": f"{m.at.astimezone(zone):%a %-d %b %H:%M}{suffix}",
            "at_iso": m.at.isoformat(),
            "html": Markup(message_html(m.text)) if m.text is not None else None,
        }
        for m in table_talk.messages_of(get_session(), game_id)
    ]


def watch_context(game: Game) -> dict[str, Any]:
    """The board of the watch page: the messages only (spectators read, never write nor hide)."""
    return {"messages": _messages(game.id or 0, zone_of("UTC"), None), "open": False, "can_hide": False}


def board_context(
    viewer: AnyViewer, *, draft: str = "", error: str | None = None, back: str | None = None
) -> dict[str, Any]:
    """What ``_talk.html`` needs: the messages (times in the viewer's zone), the form."""
    game = viewer.game
    return {
        "messages": _messages(game.id or 0, zone_of(viewer.player.time_zone), viewer.number),
        "open": game.status in table_talk.OPEN,
        "can_hide": is_host(viewer),
        "draft": draft,
        "error": error,
        "longest": LONGEST,
        "back": back or request.path,
    }


def is_host(viewer: AnyViewer) -> bool:
    """The seat's address is the game's host's: they may hide messages from their seat's pages too."""
    return viewer.player.email.lower() == viewer.game.host_email.lower()
