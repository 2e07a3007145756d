"""Unsubscribing from reminders and notices: the link in those mails' footers and ``List-Unsubscribe``.

``GET /unsubscribe/<token>`` shows a page with one button; it changes nothing by itself, because mail
scanners open links. ``POST`` to the same address turns the mail off: the page's button, and the
one-click POST a mail provider sends (RFC 8058, body ``List-Unsubscribe=One-Click``, no cookies). The
signed token is the only credential, so the POST needs no session and no CSRF token (RFC 8058 §3.2: the
URL carries what identifies the recipient). Essential mail (invitations, "your turn", "redeploy") cannot be
turned off: it carries the links the game needs.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, render_template_string

from service.domain.links import UNSUBSCRIBE, LinkError, current_links
from service.domain.models import Player
from service.infra.db import get_session

bp = Blueprint("unsubscribe", __name__)

#: What a token turns off (the ``w`` field): reminders, notices, or both when absent.
KINDS = {"reminders": ("wants_reminders",), "notices": ("wants_notices",), None: ("wants_reminders", "wants_notices")}
NAMES = {"reminders": "reminders before your deadlines", "notices": "notices", None: "reminders and notices"}


PAGE = """<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} · Small World by Mail</title>
<style nonce="{{ csp_nonce() }}">
main { font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem }
button { font-size: 1rem; padding: .6rem 1.2rem }
.note { color: #666 }
</style>
<main>
<h1>{{ title }}</h1>
<p>{{ message }}</p>
{% if form %}
<form method="post">
  <button type="submit">Stop {{ what }}</button>
</form>
{% endif %}
<p class="note">Mails that let you play (invitations, your turn, redeploying after an attack) always come:
the game needs them.</p>
</main></html>"""


def _player_and_kind(token: str) -> tuple[Player | None, str | None, str | None]:
    """The player and kind named by ``token``, or an error message for the reader."""
    try:
        payload = current_links().signer.verify(UNSUBSCRIBE, token)
    except LinkError as error:
        return None, None, str(error)
    kind = payload.get("w")
    player_id = payload.get("p")
    if kind not in KINDS or not isinstance(player_id, int):
        return None, None, "This link is not valid."
    player = get_session().get(Player, player_id)
    if player is None:
        return None, None, "This link is not valid."
    return player, kind, None


@bp.get("/unsubscribe/<token>")
def confirm(token: str) -> Any:
    player, kind, error = _player_and_kind(token)
    if error or player is None:
        return render_template_string(PAGE, title="This link does not work", message=error, form=False), 403
    return render_template_string(
        PAGE,
        title="Unsubscribe",
        message=f"Stop sending {NAMES[kind]} to {player.email}?",
        what=NAMES[kind],
        form=True,
    )


@bp.post("/unsubscribe/<token>")
def unsubscribe(token: str) -> Any:
    player, kind, error = _player_and_kind(token)
    if error or player is None:
        return render_template_string(PAGE, title="This link does not work", message=error, form=False), 403
    for flag in KINDS[kind]:
        setattr(player, flag, False)
    session = get_session()
    session.add(player)
    session.commit()
    current_app.logger.info("unsubscribe player=%s kind=%s", player.id, kind or "all")
    return render_template_string(
        PAGE,
        title="Unsubscribed",
        message=f"You will get no more {NAMES[kind]} at {player.email}.",
        form=False,
    )
