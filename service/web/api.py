"""The JSON API (``/api``). The bearer token is the seat's signed turn token from its mails.

Every error is JSON ``{"error": "…"}`` with the right status: 400 malformed, 403 bad or expired link,
404 unknown, 409 stale version or not your turn, 422 a move the rules refuse. The OpenAPI document is
generated from the pydantic models in ``service/domain/schemas.py`` and served at ``/api/openapi.json``.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, jsonify, request
from spectree import Response as Responses
from werkzeug.exceptions import HTTPException

from service.domain import admin, games, lobby, play, previews, views
from service.domain.errors import BadRequest, DomainError, Forbidden
from service.domain.links import INVITE, current_links
from service.domain.models import Player, SeatController
from service.domain.rows import GameRow
from service.domain.schemas import (
    Accepted,
    AcceptInvitation,
    ConfirmGame,
    CreateGame,
    ExplainAction,
    Explained,
    GameCreated,
    GameView,
    History,
    LegalActions,
    RegionExplained,
    SeatOut,
    StepOut,
    SubmitAction,
    UndoRequest,
    UndoStep,
    UndoSteps,
    Vacation,
)
from service.infra.db import get_reading_session, get_session
from service.web import hosting
from service.web.access import AtTable, at_table_from_token, rows_from_token, seat_from_token
from service.web.api_spec import ERRORS, LIMITED_ERRORS, bearer_token, domain_error, refuse_unreadable_bodies, spec
from service.web.pages.errors import error_page

bp = Blueprint("api", __name__, url_prefix="/api")


def _seat_for(game_id: int, *, only_read: bool = False) -> tuple[GameRow, int]:
    """The link's game, as a plain row for the API's reads, and its seat's number; refused for another game.
    ``only_read``: the request reads nothing else (``get_reading_session``)."""
    session = get_reading_session() if only_read else get_session()
    game, seat = rows_from_token(session, current_links(), bearer_token())
    _check_same_game(game_id, game.id)
    return game, seat.seat


def _at_table(game_id: int) -> AtTable:
    """:func:`_seat_for` with the game's seats and players (and whether it has an audit trail), in one read."""
    linked = at_table_from_token(get_session(), current_links(), bearer_token())
    _check_same_game(game_id, linked.game.id)
    return linked


def _check_same_game(asked: int, linked: int | None) -> None:
    if linked != asked:
        raise Forbidden("This link belongs to another game.")


def _created(game_id: int, admin_url: str | None) -> GameCreated:
    session = get_session()
    game = games.get_game(session, game_id)
    seats = [
        SeatOut(
            seat=s.seat, name=s.display_name, accepted=s.accepted_at is not None, bot=s.controller == SeatController.BOT
        )
        for s, _ in games.seats_of(session, game_id)
    ]
    return GameCreated(id=game_id, status=game.status, admin_url=admin_url, seats=seats)


@bp.post("/games")
@spec.validate(json=CreateGame, resp=Responses(HTTP_201=GameCreated, **LIMITED_ERRORS), tags=["games"])
def create_game(json: CreateGame) -> Any:
    """Create a game, unconfirmed: only its host is mailed, a link to confirm it. The invitations go when
    the host confirms (``POST /api/games/confirm``, or the link's page)."""
    game = hosting.new_game(json)
    return _created(game.id or 0, None), 201


@bp.post("/games/confirm")
@spec.validate(
    json=ConfirmGame, resp=Responses(HTTP_200=GameCreated, **LIMITED_ERRORS), tags=["games"], security=[{"seat": []}]
)
def confirm_game(json: ConfirmGame) -> Any:
    """Confirm a new game (bearer: the token of the host's confirmation link): the invitations go out, and
    the answer holds the host's admin link."""
    confirmed = hosting.confirm(bearer_token(), json.time_zone)
    return _created(confirmed.game.id or 0, confirmed.admin_url)


@bp.post("/invitations/accept")
@spec.validate(
    json=AcceptInvitation, resp=Responses(HTTP_200=Accepted, **ERRORS), tags=["games"], security=[{"seat": []}]
)
def accept_invitation(json: AcceptInvitation) -> Any:
    """Accept an invitation (bearer: the invitation token), optionally under another name and with your time
    zone; the game starts once all have accepted."""
    session = get_session()
    game, seat = seat_from_token(session, current_links(), bearer_token(), purpose=INVITE)
    game = lobby.accept_invitation(
        session, game.id or 0, seat.seat, current_links(), name=json.name, time_zone=json.time_zone
    )
    player = session.get(Player, seat.player_id)
    serial = player.links_serial if player is not None else 0
    return Accepted(
        game_id=game.id or 0,
        seat=seat.seat,
        status=game.status,
        turn_url=current_links().turn_url(game.id or 0, seat.seat, seat.secret, serial=serial),
    )


@bp.get("/games/<int:game_id>")
@spec.validate(resp=Responses(HTTP_200=GameView, **ERRORS), tags=["play"], security=[{"seat": []}])
def game_state(game_id: int) -> Any:
    """The game as the caller's seat may see it (others' coins hidden until the end)."""
    linked = _at_table(game_id)
    inputs = linked.view_inputs(get_session())
    return views.game_view(get_session(), linked.game, linked.seat.seat, inputs)


@bp.get("/games/<int:game_id>/legal-actions")
@spec.validate(resp=Responses(HTTP_200=LegalActions, **ERRORS), tags=["play"], security=[{"seat": []}])
def legal_actions(game_id: int) -> Any:
    """What the caller may do now (empty when it is not their turn), each with its preview (what it will
    do, computed by the rules engine) in ``previews``; ``?previews=false`` leaves them out."""
    game, seat = _seat_for(game_id, only_read=True)
    return previews.legal_actions(game, seat, with_previews=_previews_wanted(default=True))


def _previews_wanted(*, default: bool) -> bool:
    """The request's ``?previews=`` (true or false, 1 or 0), else ``default``; a BadRequest naming it."""
    wanted = request.args.get("previews")
    if wanted is None:
        return default
    if wanted.lower() not in ("true", "false", "1", "0"):
        raise BadRequest("'previews' must be true or false")
    return wanted.lower() in ("true", "1")


def _next_actions(view: GameView, result: play.StepResult, seat: int, *, with_previews: bool) -> LegalActions | None:
    """What ``seat`` may do after its step (a step's answer, ``view`` being the game after it): the answer
    of ``GET .../legal-actions``, so that a client needs no second request; None when the game awaits
    another seat or is over. Previews only with ``?previews=true``: they cost many times the step itself
    (each legal action is played out by the rules engine, ``bench/previews.py``), and a client that shows
    them asks for them."""
    if seat not in view.awaiting:
        return None
    return previews.legal_actions(result.game, seat, with_previews=with_previews, state=result.state)


@bp.post("/games/<int:game_id>/explain")
@spec.validate(json=ExplainAction, resp=Responses(HTTP_200=Explained, **ERRORS), tags=["play"], security=[{"seat": []}])
def explain(game_id: int, json: ExplainAction) -> Any:
    """Whether an action is offered to you now and, if not, why (the rules' words); for a conquest, what
    the region costs and why; for an action offered, what it will do, and with ``board``, the board after
    it (a redeployment's preview)."""
    game, seat = _seat_for(game_id, only_read=True)
    return previews.explain_action(game, seat, json.action, board=json.board)


@bp.get("/games/<int:game_id>/regions/<int:region>")
@spec.validate(resp=Responses(HTTP_200=RegionExplained, **ERRORS), tags=["play"], security=[{"seat": []}])
def region(game_id: int, region: int) -> Any:
    """What you may do on one region now, each with its preview, and why a conquest of it is not offered."""
    game, seat = _seat_for(game_id, only_read=True)
    return previews.explain_region(game, seat, region)


@bp.post("/games/<int:game_id>/actions")
@spec.validate(json=SubmitAction, resp=Responses(HTTP_200=StepOut, **ERRORS), tags=["play"], security=[{"seat": []}])
def submit_action(game_id: int, json: SubmitAction) -> Any:
    """Apply one step of the caller's turn, made against ``version``. When the game then awaits you again,
    ``legal_actions`` holds what you may do next (as ``GET .../legal-actions`` would answer), without
    previews unless asked (``?previews=true``)."""
    with_previews = _previews_wanted(default=False)  # refused before the step, not after it
    linked = _at_table(game_id)
    seat = linked.seat.seat
    session = get_session()
    key = json.idempotency_key or request.headers.get("Idempotency-Key")
    # Read in the step's transaction, with the link: the step's clock needs the seats, and the answer needs
    # them and the audit trail after the commit, which would otherwise be another checkout and transaction.
    inputs = linked.view_inputs(get_session())
    result = play.submit_action(
        session,
        game_id,
        seat,
        json.action,
        json.version,
        current_links(),
        idempotency_key=key,
        seats=inputs.seats_by_number(),
        game=linked.game,
    )
    view = views.game_view(session, result.game, seat, inputs, state=result.state)
    return StepOut(
        version=result.version,
        replayed=result.replayed,
        last=_public_last(result.last, seat),
        game=view,
        legal_actions=_next_actions(view, result, seat, with_previews=with_previews),
    )


@bp.post("/games/<int:game_id>/undo")
@spec.validate(json=UndoRequest, resp=Responses(HTTP_200=StepOut, **ERRORS), tags=["play"], security=[{"seat": []}])
def undo(game_id: int, json: UndoRequest) -> Any:
    """Take back your steps since the last undo point (a pick, a die roll): all of them, or your latest
    ``steps`` (``GET .../undo`` lists them). ``legal_actions`` holds what you may do then, as after a step
    (previews with ``?previews=true``)."""
    with_previews = _previews_wanted(default=False)
    linked = _at_table(game_id)
    seat = linked.seat.seat
    session = get_session()
    inputs = linked.view_inputs(get_session())
    result = play.undo(session, game_id, seat, json.version, current_links(), steps=json.steps, game=linked.game)
    view = views.game_view(session, result.game, seat, inputs, state=result.state)
    legal = _next_actions(view, result, seat, with_previews=with_previews)
    return StepOut(version=result.version, last=result.last, game=view, legal_actions=legal)


@bp.get("/games/<int:game_id>/undo")
@spec.validate(resp=Responses(HTTP_200=UndoSteps, **ERRORS), tags=["play"], security=[{"seat": []}])
def undo_steps(game_id: int) -> Any:
    """Your steps an undo may take back now (back to your last pick or die roll), latest first, each in
    words; ``back`` is the ``steps`` of an undo back to just before that step."""
    game, seat = _seat_for(game_id)
    steps = play.undo_steps(get_session(), game, seat)
    return UndoSteps(
        version=game.version,
        steps=[UndoStep(version=s.version, kind=s.kind, words=s.words, back=s.back) for s in steps],
    )


@bp.get("/games/<int:game_id>/history")
@spec.validate(resp=Responses(HTTP_200=History, **ERRORS), tags=["play"], security=[{"seat": []}])
def history(game_id: int) -> Any:
    """Every step of the game in order, with die rolls."""
    game, _ = _seat_for(game_id)
    return History(entries=views.history(get_session(), game))


def _public_last(last: dict[str, Any], seat: int) -> dict[str, Any]:
    return last if last.get("player") == seat else {k: v for k, v in last.items() if k != "score"}


@bp.get("/openapi.json")
def openapi() -> Response:
    """The OpenAPI document of this API."""
    return jsonify(spec.spec)


@bp.post("/games/<int:game_id>/vacation")
@spec.validate(json=Vacation, resp=Responses(HTTP_200=GameView, **ERRORS), tags=["play"], security=[{"seat": []}])
def vacation(game_id: int, json: Vacation) -> Any:
    """Take vacation: extends your current deadline, within the game's allowance; visible to all."""
    session = get_session()
    # The ORM's objects: the act changes the game (and reads it again from the session, not the database).
    game, seat = seat_from_token(session, current_links(), bearer_token())
    _check_same_game(game_id, game.id)
    return views.game_view(
        session, admin.take_vacation(session, game_id, seat.seat, current_links(), json.days), seat.seat
    )


bp.register_error_handler(DomainError, domain_error)
bp.before_request(refuse_unreadable_bodies)


def init_app(app: Flask) -> None:
    from service.web.admin_api import bp as admin_bp

    app.register_blueprint(bp)
    app.register_blueprint(admin_bp)
    spec.register(app)

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException) -> Any:
        # Under /api every error is JSON with a readable message, never an HTML page; elsewhere a page.
        if not request.path.startswith("/api/"):
            return error_page(error)
        return jsonify({"error": f"{error.name}: {error.description}"}), error.code or 500
