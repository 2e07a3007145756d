"""Admin acts over the JSON API (``/api/admin``). Bearer: the host's signed admin link token.

The same domain operations as the admin pages and the ``smallworld admin`` commands.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from flask import Blueprint
from pydantic import BaseModel
from spectree import Response as Responses
from sqlmodel import col, select

from service.domain import admin, bot_seats, chat_notices, views, watching
from service.domain.errors import BadRequest, DomainError, Forbidden
from service.domain.games import settings_of
from service.domain.links import current_links
from service.domain.models import Game, OutboxMail
from service.domain.schemas import (
    AdminGameView,
    CancelGame,
    ChangeSettings,
    ChatOut,
    ExtendDeadline,
    GameView,
    MailOut,
    NoticeOut,
    PauseGame,
    ReplacePlayer,
    SeatRef,
    SetChat,
    SetWatching,
    WatchingOut,
)
from service.infra.chat import mask, service_name
from service.infra.db import get_session
from service.web import hosting
from service.web.access import game_from_admin_token
from service.web.api_spec import ERRORS, LIMITED_ERRORS, bearer_token, domain_error, refuse_unreadable_bodies, spec

bp = Blueprint("admin_api", __name__, url_prefix="/api/admin")
bp.register_error_handler(DomainError, domain_error)
bp.before_request(refuse_unreadable_bodies)
SECURITY: list[dict[str, list[str]]] = [{"seat": []}]


def _admin_route(
    answer: type[BaseModel], *, json: type[BaseModel] | None = None, errors: dict[str, Any] = ERRORS
) -> Callable[..., Any]:
    """The API contract every admin route shares: its body (``json``), its answer, the errors a domain
    operation raises (``errors``), under the "admin" tag and the admin link's token as bearer."""
    return spec.validate(json=json, resp=Responses(HTTP_200=answer, **errors), tags=["admin"], security=SECURITY)


def _game(game_id: int) -> Game:
    game = game_from_admin_token(get_session(), current_links(), bearer_token())
    if game.id != game_id:
        raise Forbidden("This admin link belongs to another game.")
    return game


def _view(game: Game) -> GameView:
    return views.game_view(get_session(), game, None)


def admin_view(game: Game) -> AdminGameView:
    session = get_session()
    mails = session.exec(
        select(OutboxMail).where(OutboxMail.game_id == game.id).order_by(col(OutboxMail.id).desc())
    ).all()
    game_view = _view(game)
    return AdminGameView(
        game=game_view,
        settings=settings_of(game),
        audit=game_view.audit,
        outbox=[
            MailOut(
                id=m.id or 0,
                to=m.to_email,
                template=m.template,
                status=m.status,
                attempts=m.attempts,
                last_error=m.last_error,
                created_at=m.created_at,
                sent_at=m.sent_at,
            )
            for m in mails
        ],
        chat=chat_view(game),
    )


def chat_view(game: Game) -> ChatOut:
    """The game's chat as its host sees it: the address masked (a secret), and the notices' outcomes."""
    return ChatOut(
        url=mask(game.chat_url),
        service=service_name(game.chat_url),
        notices=[
            NoticeOut(
                id=n.id or 0,
                kind=n.kind,
                title=n.title,
                status=n.status,
                attempts=n.attempts,
                last_error=n.last_error,
                created_at=n.created_at,
                sent_at=n.sent_at,
            )
            for n in chat_notices.notices_of(get_session(), game.id or 0)
        ],
    )


@bp.get("/games/<int:game_id>")
@_admin_route(AdminGameView)
def game(game_id: int) -> Any:
    """The game as its host sees it: settings, audit log and the game's mail."""
    return admin_view(_game(game_id))


@bp.post("/games/<int:game_id>/extend")
@_admin_route(GameView, json=ExtendDeadline)
def extend(game_id: int, json: ExtendDeadline) -> Any:
    """Extend the current deadline by some hours, or to a moment."""
    _game(game_id)
    by = timedelta(hours=json.hours) if json.hours is not None else None
    return _view(admin.extend_deadline(get_session(), game_id, admin.HOST, current_links(), by=by, to=json.to))


@bp.post("/games/<int:game_id>/pause")
@_admin_route(GameView, json=PauseGame)
def pause(game_id: int, json: PauseGame) -> Any:
    """Pause the clock (the time left is kept); the reason is shown to the players."""
    _game(game_id)
    return _view(admin.pause(get_session(), game_id, admin.HOST, current_links(), json.reason))


@bp.post("/games/<int:game_id>/resume")
@_admin_route(GameView)
def resume(game_id: int) -> Any:
    """Resume: the deadline becomes now + the time that was left."""
    _game(game_id)
    return _view(admin.resume(get_session(), game_id, admin.HOST, current_links()))


@bp.post("/games/<int:game_id>/pass")
@_admin_route(GameView)
def pass_now(game_id: int) -> Any:
    """Auto-pass the player the game waits for, now."""
    _game(game_id)
    return _view(admin.pass_now(get_session(), game_id, admin.HOST, current_links()))


@bp.post("/games/<int:game_id>/settings")
@_admin_route(GameView, json=ChangeSettings)
def change_settings(game_id: int, json: ChangeSettings) -> Any:
    """Turn length and reminders (from the next turn), defenders' redeploy mode, vacation allowance."""
    _game(game_id)
    return _view(
        admin.change_settings(get_session(), game_id, admin.HOST, current_links(), **json.model_dump(exclude_none=True))
    )


@bp.post("/games/<int:game_id>/replace")
@_admin_route(GameView, json=ReplacePlayer, errors=LIMITED_ERRORS)
def replace(game_id: int, json: ReplacePlayer) -> Any:
    """Give a seat to a new player; the seat's old links stop working."""
    _game(game_id)
    return _view(hosting.replace_player(game_id, admin.HOST, json.seat, json.email, json.name))


@bp.post("/games/<int:game_id>/bot")
@_admin_route(GameView, json=SeatRef)
def give_to_bot(game_id: int, json: SeatRef) -> Any:
    """Give a seat to the house bot: it plays the seat's turns (in the worker) until its player takes it back
    from their link; the player is mailed that link, and no turn mail meanwhile."""
    _game(game_id)
    return _view(bot_seats.host_gives_seat_to_bot(get_session(), game_id, json.seat, admin.HOST.label, current_links()))


@bp.post("/games/<int:game_id>/remove")
@_admin_route(GameView, json=SeatRef)
def remove(game_id: int, json: SeatRef) -> Any:
    """Remove a player: their seat is auto-passed for the rest of the game."""
    _game(game_id)
    return _view(admin.remove_player(get_session(), game_id, admin.HOST, current_links(), json.seat))


@bp.post("/games/<int:game_id>/chat")
@_admin_route(ChatOut, json=SetChat)
def set_chat(game_id: int, json: SetChat) -> Any:
    """Connect the game to a chat (an apprise URL), or disconnect it (null); the address is shown back masked."""
    _game(game_id)
    return chat_view(admin.set_chat_url(get_session(), game_id, admin.HOST, json.chat_url))


def watching_view(game: Game) -> WatchingOut:
    links = current_links()
    return WatchingOut(
        public=game.public,
        watch_url=watching.watch_url(game, links),
        public_url=links.url(f"/games/{game.id}/watch") if game.public else None,
    )


@bp.get("/games/<int:game_id>/watching")
@_admin_route(WatchingOut)
def get_watching(game_id: int) -> Any:
    """The game's watch link, and whether it is public."""
    return watching_view(_game(game_id))


@bp.post("/games/<int:game_id>/watching")
@_admin_route(WatchingOut, json=SetWatching)
def set_watching(game_id: int, json: SetWatching) -> Any:
    """Make the game public or private, and/or make a new watch link (the ones shared before stop working)."""
    game = _game(game_id)
    if json.public is None and not json.new_link:
        raise BadRequest("public: give true or false, or new_link: true")
    if json.public is not None:
        game = watching.set_public(get_session(), game_id, admin.HOST, json.public)
    if json.new_link:
        game = watching.new_watch_link(get_session(), game_id, admin.HOST)
    return watching_view(game)


@bp.post("/games/<int:game_id>/cancel")
@_admin_route(GameView, json=CancelGame)
def cancel(game_id: int, json: CancelGame) -> Any:
    """Cancel the game."""
    _game(game_id)
    return _view(admin.cancel(get_session(), game_id, admin.HOST, current_links(), json.reason))
