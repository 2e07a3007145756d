"""Reading a game as a given seat (``rules.player_view``), its legal actions and its history."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session, col, select

import rules
from service.domain.clock import Clock
from service.domain.games import seat_rows
from service.domain.models import AuditEntry, GameAction, GameStatus, SeatController
from service.domain.rows import GameRecord, SeatRow, by_number
from service.domain.schemas import AuditOut, GameView, HistoryEntry, LegalActions, SeatOut

_AUDIT_TABLE: sa.Table = AuditEntry.__table__  # type: ignore[attr-defined]
#: The audit trail's shown columns, oldest first: a Core statement built once (every step's answer reads it).
_AUDIT = (
    sa.select(_AUDIT_TABLE.c.created_at, _AUDIT_TABLE.c.actor, _AUDIT_TABLE.c.act, _AUDIT_TABLE.c.details)
    .where(_AUDIT_TABLE.c.game_id == sa.bindparam("audit_game"))
    .order_by(_AUDIT_TABLE.c.id)
)


class ViewInputs:
    """What a game's view reads besides the game row: its seats (with their players) and its audit trail.

    A step changes neither, so the API reads them in the step's own transaction, before its commit, and
    builds the view after the commit without going back to the database.
    """

    def __init__(
        self,
        session: Session,
        game_id: int,
        *,
        seats: list[SeatRow] | None = None,
        has_audit: bool = True,
    ) -> None:
        """``seats``: the game's seats with their players, by seat number, when the caller read them in this
        transaction; ``has_audit`` False: the caller knows the game has no audit entry (nothing is read)."""
        self.seats: list[SeatRow] = seat_rows(session, game_id) if seats is None else seats
        self.audit: list[AuditOut] = []
        if not has_audit:
            return
        # The audit trail is only shown: its columns, no ORM objects (read for every step's answer).
        if session.autoflush:  # as the ORM's own queries do: what this transaction added is seen
            session.flush()
        rows = session.connection().execute(_AUDIT, {"audit_game": game_id})
        self.audit = [AuditOut(at=at, actor=actor, act=act, details=details) for at, actor, act, details in rows]

    def seats_by_number(self) -> dict[int, SeatRow]:
        return by_number(self.seats)


def game_view(
    session: Session,
    game: GameRecord,
    viewer: int | None,
    inputs: ViewInputs | None = None,
    state: rules.GameState | None = None,
) -> GameView:
    """What ``viewer`` (a seat, or None for a spectator) may see: never another seat's coins before the end.

    ``inputs``, when the caller read them already, are not read again; nor is ``state``, the game's state
    when the caller holds it (a step's answer: the state the step made), parsed again from the snapshot.
    """
    inputs = inputs or ViewInputs(session, game.id or 0)
    if state is None and game.state:
        state = rules.read_state(game.state)
    seats = [
        SeatOut(
            seat=s.seat,
            name=s.display_name,
            accepted=s.accepted_at is not None,
            removed=s.removed,
            bot=s.controller == SeatController.BOT,
        )
        for s in inputs.seats
    ]
    over = game.status == GameStatus.FINISHED
    clock = Clock.read(game)
    return GameView(
        id=game.id or 0,
        name=game.name,
        status=game.status,
        version=game.version,
        you=viewer,
        seats=seats,
        awaiting=sorted(rules.awaiting(state)) if state and game.status == GameStatus.ACTIVE else [],
        deadline_at=clock.deadline,
        paused_remaining_seconds=clock.paused_left if game.status == GameStatus.PAUSED else None,
        pause_reason=game.pause_reason if game.status == GameStatus.PAUSED else None,
        # Over by the rules, the coins are revealed only once the tally is done (service.domain.tally).
        state=rules.player_view(state, viewer, revealed=over) if state else None,
        seed=game.seed if over else None,
        result=game.result if over else None,
        audit=inputs.audit,
    )


def legal_actions(game: GameRecord, seat: int) -> LegalActions:
    if game.state is None or game.status != GameStatus.ACTIVE:
        return LegalActions(version=game.version, actions=[])
    state = rules.read_state(game.state)
    return LegalActions(version=game.version, actions=[a.to_json() for a in rules.legal_actions(state, seat)])


def history(session: Session, game: GameRecord) -> list[HistoryEntry]:
    """Every step in order. Actions, die rolls and times are public (ARCHITECTURE §4); coins are not in them."""
    rows = session.exec(
        select(GameAction).where(GameAction.game_id == game.id).order_by(sa.asc(col(GameAction.version)))
    ).all()
    return [
        HistoryEntry(
            version=r.version, seat=r.seat, kind=r.kind, action=r.action, die=r.die, undone=r.undone, at=r.created_at
        )
        for r in rows
    ]
