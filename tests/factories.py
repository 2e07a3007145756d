"""factory-boy factories for every table.

Sessions are wired the recommended way: ``sqlalchemy_session_factory`` returns the session of the test
in progress (set by the ``db_session`` fixture, which rolls everything back at the end).
"""

from __future__ import annotations

import secrets

import factory
from sqlmodel import Session

import rules
from service.domain.models import (
    AuditEntry,
    ChatNotice,
    Game,
    GameAction,
    OutboxMail,
    Player,
    ReminderSent,
    Seat,
    ServiceStatus,
    SiteAdmin,
    utcnow,
)
from service.domain.schemas import GameSettings

_current: list[Session] = []


def current_session() -> Session:
    if not _current:
        raise RuntimeError("no test database session: use the db_session fixture")
    return _current[-1]


class Base(factory.alchemy.SQLAlchemyModelFactory):
    class Meta:
        abstract = True
        sqlalchemy_session_factory = current_session
        sqlalchemy_session_persistence = "flush"


class PlayerFactory(Base):
    class Meta:
        model = Player

    email = factory.Sequence(lambda n: f"player{n}@example.org")
    display_name = factory.Sequence(lambda n: f"Player {n}")
    time_zone = "UTC"


class GameFactory(Base):
    class Meta:
        model = Game

    name = factory.Sequence(lambda n: f"Game {n}")
    status = "inviting"
    settings = factory.LazyFunction(lambda: GameSettings().model_dump())
    seed = factory.LazyFunction(lambda: secrets.token_hex(16))
    admin_secret = factory.LazyFunction(lambda: secrets.token_urlsafe(24))
    host_email = "host@example.org"

    class Params:
        #: ``GameFactory(started=True, players=3)``: an active game with its rules state at version 1.
        started = factory.Trait(
            status="active",
            version=1,
            state=factory.LazyAttribute(lambda o: rules.new_game(o.players, seed=o.seed).to_json()),
        )
        players = 2


def reseed_new_game(session: Session, game_id: int, seed: str) -> None:
    """Give a game that has just started (no step yet) the seed ``seed`` instead of its secret random one, and
    the snapshot that seed deals, so that a test which plays it meets the same game every run. The seed and
    the log still rebuild the snapshot (DESIGN §2), and seat 0 is still on turn, as the mails said."""
    game = session.get(Game, game_id)
    assert game is not None and game.state is not None
    assert game.version == 1, "reseed a game before its first step"
    game.seed = seed
    game.state = rules.new_game(len(game.state["players"]), seed=seed, options=game.state["options"]).to_json()
    session.add(game)
    session.commit()


class SeatFactory(Base):
    class Meta:
        model = Seat

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    player_id = factory.LazyAttribute(lambda o: PlayerFactory().id)
    seat = factory.Sequence(lambda n: n)
    secret = factory.LazyFunction(lambda: secrets.token_urlsafe(16))


class GameActionFactory(Base):
    class Meta:
        model = GameAction

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    seat = 0
    kind = "action"
    action = factory.LazyFunction(lambda: {"type": "pick", "player": 0, "combo": 0})
    version = factory.Sequence(lambda n: n + 2)


class OutboxMailFactory(Base):
    class Meta:
        model = OutboxMail

    player_id = factory.LazyAttribute(lambda o: PlayerFactory().id)
    to_email = factory.Sequence(lambda n: f"to{n}@example.org")
    template = "your_turn"
    context = factory.LazyFunction(lambda: {"game_name": "A game"})
    message_id = factory.Sequence(lambda n: f"<factory-{n}@smallworld.invalid>")


class ServiceStatusFactory(Base):
    class Meta:
        model = ServiceStatus

    name = factory.Sequence(lambda n: f"status-{n}")
    at = factory.LazyFunction(utcnow)


class AuditEntryFactory(Base):
    class Meta:
        model = AuditEntry

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    actor = "host"
    act = "extend"
    details = factory.LazyFunction(lambda: {"hours": 24})


class SiteAdminFactory(Base):
    class Meta:
        model = SiteAdmin

    email = factory.Sequence(lambda n: f"admin{n}@example.org")
    secret = factory.LazyFunction(lambda: secrets.token_urlsafe(24))


class ReminderSentFactory(Base):
    class Meta:
        model = ReminderSent

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    step_key = "1:0:-"
    before_seconds = 7200
    sent_at = factory.LazyFunction(utcnow)


class ChatNoticeFactory(Base):
    class Meta:
        model = ChatNotice

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    kind = "turn"
    title = "A game: Ann to play"
    body = "Game turn 1 of 10: it is Ann's turn."
    step_key = "1:0:-"
    dedupe_key = factory.Sequence(lambda n: f"game:factory:turn:{n}")
    next_attempt_at = factory.LazyFunction(utcnow)
