"""Unsubscribing from reminders and notices (the link in those mails' footers and ``List-Unsubscribe``),
and "never invite me again" (the link in every invitation and every request to confirm a game).

``GET /unsubscribe/<token>`` shows a page with one button; it changes nothing by itself, because mail
scanners open links. ``POST`` to the same address turns the mail off: the page's button, and the
one-click POST a mail provider sends (RFC 8058, body ``List-Unsubscribe=One-Click``, no cookies). The
signed token is the only credential, so the POST needs no session and no CSRF token (RFC 8058 §3.2: the
URL carries what identifies the recipient). Each link turns off its own kind of mail only (reminders,
notices or table talk; the links of older mails, which name no kind, reminders and notices): never the
mail a player needs to play (invitations, "your turn", "redeploy") nor the final results. The page links
the address's page of mail choices (``service.web.choices``).

"Never invite me again" (``/never/<token>``, purpose ``block``, naming the address) works the same way: the
page has one button, the POST puts the address on the block list (``service.domain.block_list``), which the
lobby honours. The same page lets the address's owner allow invitations again.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, render_template_string, request

from service.domain import block_list
from service.domain.links import BLOCK, UNSUBSCRIBE, LinkError, current_links
from service.domain.models import Player
from service.infra.db import get_session

bp = Blueprint("unsubscribe", __name__)

#: What a token turns off (the ``w`` field): reminders, notices, table talk, or reminders and notices when
#: absent (the links of older mails).
KINDS = {
    "reminders": ("wants_reminders",),
    "notices": ("wants_notices",),
    "messages": ("wants_messages",),
    None: ("wants_reminders", "wants_notices"),
}
NAMES = {
    "reminders": "reminders before your deadlines",
    "notices": "notices",
    "messages": "mails of table talk",
    None: "reminders and notices",
}


#: The head of both pages (a page of its own, not the site's: it must work whatever the site's pages load), a
#: ``title`` and a ``message`` under it.
_HEAD = """<!doctype html>
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
"""

PAGE = (
    _HEAD
    + """{% if form %}
<form method="post">
  <button type="submit">Stop {{ what }}</button>
</form>
{% endif %}
<p class="note">Mails that let you play (invitations, your turn, redeploying after an attack) and the final
results always come: this link turns off {{ what or "one kind of mail" }} alone.</p>
{% if choices_url %}
<p><a href="{{ choices_url }}">Choose which mails you get</a>: every event, only your turns and results, or a
daily digest, for all your games or game by game.</p>
{% endif %}
</main></html>"""
)


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
        return _refused(error)
    return _unsubscribe_page(player, kind, done=False)


@bp.post("/unsubscribe/<token>")
def unsubscribe(token: str) -> Any:
    player, kind, error = _player_and_kind(token)
    if error or player is None:
        return _refused(error)
    for flag in KINDS[kind]:
        setattr(player, flag, False)
    session = get_session()
    session.add(player)
    session.commit()
    current_app.logger.info("unsubscribe player=%s kind=%s", player.id, kind or "all")
    return _unsubscribe_page(player, kind, done=True)


def _unsubscribe_page(player: Player, kind: str | None, *, done: bool) -> str:
    """The question (a button stops ``kind`` of mail to ``player``), or once ``done`` what it did; both link
    to the player's page of mail choices."""
    what = NAMES[kind]
    return render_template_string(
        PAGE,
        title="Unsubscribed" if done else "Unsubscribe",
        message=f"You will get no more {what} at {player.email}."
        if done
        else f"Stop sending {what} to {player.email}?",
        what=what,
        form=not done,
        choices_url=current_links().choices_url(player.id or 0, serial=player.links_serial),
    )


def _refused(error: str | None) -> tuple[str, int]:
    """The page of a link that does not work (tampered with, expired, or naming nobody), and why."""
    return render_template_string(PAGE, title="This link does not work", message=error, form=False), 403


NEVER = (
    _HEAD
    + """{% if act %}
<form method="post">
  <button type="submit" name="act" value="{{ act }}">{{ button }}</button>
</form>
{% endif %}
</main></html>"""
)


def _blocked_address(token: str) -> tuple[str | None, str | None]:
    try:
        payload = current_links().signer.verify(BLOCK, token)
    except LinkError as error:
        return None, str(error)
    email = payload.get("e")
    if not isinstance(email, str) or "@" not in email:
        return None, "This link is not valid."
    return email, None


def _never_page(email: str, blocked: bool, done: bool = False) -> str:
    if blocked:
        return render_template_string(
            NEVER,
            title="No more invitations" if done else "You asked for no more invitations",
            message=f"No game here will invite {email} again, nor name it as a game's host. Hosts who try are "
            "told that this address asked not to be invited.",
            act="allow",
            button="Allow invitations again",
        )
    return render_template_string(
        NEVER,
        title="Invitations allowed" if done else "Never be invited again?",
        message=f"Hosts may invite {email} to games again."
        if done
        else f"Stop every invitation to games of Small World by Mail at {email}, whoever sends it? "
        "Games you already play in go on as before.",
        act=None if done else "block",
        button="Never invite me again",
    )


@bp.get("/never/<token>")
def never_page(token: str) -> Any:
    email, error = _blocked_address(token)
    if email is None:
        return _refused(error)
    return _never_page(email, bool(block_list.blocked_among(get_session(), [email])))


@bp.post("/never/<token>")
def never(token: str) -> Any:
    email, error = _blocked_address(token)
    if email is None:
        return _refused(error)
    session = get_session()
    if request.form.get("act") == "allow":
        block_list.unblock(session, email)
        session.commit()
        return _never_page(email, False, done=True)
    block_list.block(session, email)
    session.commit()
    current_app.logger.info("blocked invitations to an address on its owner's request")
    return _never_page(email, True, done=True)
