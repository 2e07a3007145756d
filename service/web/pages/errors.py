"""Every error outside the JSON API as a page of the site: its layout, a viewport, words a player can act on,
and a way home (a framework's bare error page has none of these)."""

from __future__ import annotations

from typing import Any

from flask import render_template
from werkzeug.exceptions import HTTPException

#: What each status means to a person, and what to do about it.
WORDS: dict[int, tuple[str, str]] = {
    400: ("That request could not be read", "Something in it was missing or malformed. Go back and try again."),
    403: ("This page is not for this browser", "Open it from the link in your mail."),
    404: ("There is no such page", "The address may be mistyped, or the page was removed."),
    405: ("That cannot be done here", "This address does not take that kind of request."),
    413: ("That was too much to send", "Send less at a time."),
    429: ("Too many tries", "Wait a minute, then try again."),
    500: (
        "Something went wrong on our side",
        "Nothing you did caused it, and nothing was lost. Try again in a moment.",
    ),
}


def error_page(error: HTTPException) -> Any:
    """``error`` as a page in the site's layout, with its status."""
    code = error.code or 500
    heading, advice = WORDS.get(code, (error.name, "Go back and try again."))
    return render_template("error.html", code=code, heading=heading, advice=advice), code
