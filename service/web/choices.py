"""The page of mail choices (ARCHITECTURE §9): ``/choices/<token>``, linked from the footer of every mail.

The signed token (purpose ``choices``) names the address (a player row) and is the only credential: no
sign-in needed, as for the unsubscribe link. The page shows the address's default (every event / only my
turns and results / a daily digest at a local hour), a choice per game that may still mail, and the three
kinds of optional mail with their own switch (reminders, notices, table talk). What is saved holds for every
mail not yet sent (``service.domain.notifications``). Invitations, the mails of one's own turns and the
final results always come.

A form that cannot be saved (an unknown choice, an hour out of range, a game of another address) comes back
with a 400 naming the field; nothing is saved then.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from service.domain import notifications
from service.domain.errors import BadRequest, DomainError
from service.domain.links import CHOICES, SIGNED_OUT, LinkError, current_links, serial_of
from service.domain.models import NotifyMode, Player
from service.infra.db import get_session

bp = Blueprint("choices", __name__)


class _Refused(Exception):
    """A link to the page that does not work; ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


NOT_VALID = (
    "This link to your mail choices is not valid: it may have been cut short or changed. Every mail from a game "
    "has one in its footer."
)


def _player_id(token: str) -> int:
    """The player the link is for; :class:`_Refused` if it is not valid, or made before its address signed out
    everywhere (``links.with_serial``)."""
    try:
        payload = current_links().signer.verify(CHOICES, token)
    except LinkError:
        raise _Refused(NOT_VALID) from None
    player_id = payload.get("p")
    if not isinstance(player_id, int):
        raise _Refused(NOT_VALID)
    player = get_session().get(Player, player_id)
    if player is None:
        raise _Refused(NOT_VALID)
    if serial_of(payload) != player.links_serial:
        raise _Refused(SIGNED_OUT)
    return player_id


def _refused(message: str = NOT_VALID) -> tuple[str, int]:
    return render_template("refused.html", heading="This link does not work", message=message), 403


def _page(token: str, choices: notifications.Choices, error: str | None = None, form: Any = None) -> str:
    return render_template(
        "choices/page.html",
        token=token,
        choices=choices,
        modes=list(NotifyMode),
        mode_words=notifications.MODE_WORDS,
        error=error,
        form=form,
    )


@bp.get("/choices/<token>")
def page(token: str) -> Any:
    try:
        player_id = _player_id(token)
    except _Refused as refused:
        return _refused(refused.message)
    try:
        choices = notifications.choices_of(get_session(), player_id)
    except DomainError:
        return _refused()
    return _page(token, choices)


@bp.post("/choices/<token>")
def save(token: str) -> Response | Any:
    try:
        player_id = _player_id(token)
    except _Refused as refused:
        return _refused(refused.message)
    db = get_session()
    form = request.form
    try:
        default = notifications.parse_mode(form.get("default"), "default")
        assert default is not None
        games: dict[int, NotifyMode | None] = {}
        for name, value in form.items():
            if name.startswith("game_"):
                if not name[5:].isdigit():
                    raise BadRequest(f"{name}: not a game of this address.", field=name)
                games[int(name[5:])] = notifications.parse_mode(value, name, blank=True)
        saved = notifications.save_choices(
            db,
            player_id,
            default=default,
            digest_hour=notifications.parse_hour(form.get("digest_hour", "")),
            games=games,
            wants_reminders="wants_reminders" in form,
            wants_notices="wants_notices" in form,
            wants_messages="wants_messages" in form,
        )
    except DomainError as error:
        db.rollback()
        try:
            choices = notifications.choices_of(db, player_id)
        except DomainError:
            return _refused()
        return _page(token, choices, error=error.message, form=form), error.status
    later = (
        f" Your first daily digest comes tomorrow at {saved.digest_hour:02d}:00 (that hour has passed today)."
        if saved.digest_from_tomorrow
        else ""
    )
    flash(f"Your choices are saved: the next mails follow them.{later}", "done")
    return redirect(url_for(".page", token=token), code=303)
