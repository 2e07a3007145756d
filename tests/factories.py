"""factory-boy factories for every table.

Sessions are wired the recommended way: ``sqlalchemy_session_factory`` returns the session of the test
in progress (set by the ``db_session`` fixture, which rolls everything back at the end).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

import factory
from sqlmodel import Session, select

import rules
from service.domain import block_list, lobby
from service.domain.links import LinkMaker
from service.domain.models import (
    AuditEntry,
    BlockedAddress,
    ChatNotice,
    DigestSent,
    ErasedAddress,
    Game,
    GameAction,
    GameNotification,
    GameResult,
    InboundKind,
    InboundMail,
    NotifyMode,
    OutboxMail,
    Player,
    PlayerRecord,
    ReminderSent,
    Seat,
    ServiceStatus,
    SignIn,
    SiteAdmin,
    TableMessage,
    TurnStart,
    utcnow,
)
from service.domain.schemas import CreateGame, GameSettings

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
    the log still rebuild the snapshot (ARCHITECTURE §2), and seat 0 is still on turn, as the mails said."""
    game = session.get(Game, game_id)
    assert game is not None and game.state is not None
    assert game.version == 1, "reseed a game before its first step"
    game.seed = seed
    game.state = rules.new_game(len(game.state["players"]), seed=seed, options=game.state["options"]).to_json()
    session.add(game)
    session.commit()


def _player_name(player_id: int) -> str:
    player = current_session().get(Player, player_id)
    return player.display_name if player is not None else ""


class SeatFactory(Base):
    class Meta:
        model = Seat

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    player_id = factory.LazyAttribute(lambda o: PlayerFactory().id)
    seat = factory.Sequence(lambda n: n)
    #: The seat's name: its player's (as the migration gave every seat that existed before seats had names).
    display_name = factory.LazyAttribute(lambda o: _player_name(o.player_id))
    secret = factory.LazyFunction(lambda: secrets.token_urlsafe(16))


class GameActionFactory(Base):
    class Meta:
        model = GameAction

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    seat = 0
    kind = "action"
    action = factory.LazyFunction(lambda: {"type": "pick", "player": 0, "combo": 0})
    version = factory.Sequence(lambda n: n + 2)


class TurnStartFactory(Base):
    class Meta:
        model = TurnStart

    game_id = factory.LazyAttribute(lambda o: GameFactory(started=True).id)
    version = factory.Sequence(lambda n: n + 2)
    seat = 0
    state = factory.LazyFunction(lambda: rules.new_game(2, seed="turn-start").to_json())


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


class BlockedAddressFactory(Base):
    class Meta:
        model = BlockedAddress

    email = factory.Sequence(lambda n: f"never{n}@example.org")


class ErasedAddressFactory(Base):
    """What is kept of an address erased on its owner's request: its digest (``service.domain.privacy``)."""

    class Meta:
        model = ErasedAddress

    digest = factory.Sequence(lambda n: block_list.address_digest(f"erased{n}@example.org"))


class ReminderSentFactory(Base):
    class Meta:
        model = ReminderSent

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    step_key = "1:0:-"
    before_seconds = 7200
    sent_at = factory.LazyFunction(utcnow)


def confirmed_game(
    session: Session, request: CreateGame, links: LinkMaker, *, time_zones: Mapping[str, str] | None = None
) -> tuple[Game, str]:
    """A game created through ``lobby.create_game`` and confirmed as its host does (ARCHITECTURE §9: only then go the
    invitations, and a game set to start at once starts): what ``create_game`` did by itself before. Returns
    the game and the host's admin URL. ``time_zones`` (address → zone): the players' own choices, made as they
    make them on their pages (``lobby.choose_time_zone``)."""
    game = lobby.create_game(session, request, links)
    for email, zone in (time_zones or {}).items():
        player = session.exec(select(Player).where(Player.email == email.lower())).one()
        lobby.choose_time_zone(session, player.id or 0, zone)
    confirmed = lobby.confirm_game(session, game.id or 0, game.admin_secret, links)
    return confirmed.game, confirmed.admin_url


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


class GameResultFactory(Base):
    """A seat's line of a finished game's final table (the tally writes them: service.domain.tally)."""

    class Meta:
        model = GameResult

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    seat = 0
    player_id = factory.LazyAttribute(lambda o: PlayerFactory().id)
    place = 1
    coins = 42
    tokens_on_board = 12
    deadlines = 10
    rating_mu_before = 25.0
    rating_sigma_before = 25 / 3
    rating_mu = 27.6
    rating_sigma = 7.9


class PlayerRecordFactory(Base):
    """An address's rating and record (the tally writes them)."""

    class Meta:
        model = PlayerRecord

    player_id = factory.LazyAttribute(lambda o: PlayerFactory().id)
    rating_mu = 27.6
    rating_sigma = 7.9
    games_finished = 1
    deadlines = 10


class InboundMailFactory(Base):
    class Meta:
        model = InboundMail

    message_key = factory.Sequence(lambda n: f"{n:064x}")
    via = "smtp"
    kind = InboundKind.ORDERS
    sender = factory.Sequence(lambda n: f"from{n}@example.org")
    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    seat = 0
    outcome = "orders; 1 step(s) done"


class TableMessageFactory(Base):
    """A message at a game's table, written on the page by seat 0."""

    class Meta:
        model = TableMessage

    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    seat = 0
    author_name = "Ann"
    text = factory.Sequence(lambda n: f"Good luck, everyone ({n}).")


class GameNotificationFactory(Base):
    """A player's choice of mail for one game."""

    class Meta:
        model = GameNotification

    player_id = factory.LazyAttribute(lambda o: PlayerFactory().id)
    game_id = factory.LazyAttribute(lambda o: GameFactory().id)
    mode = NotifyMode.TURNS


class DigestSentFactory(Base):
    """The record of a daily digest sent to a player on one of their local days."""

    class Meta:
        model = DigestSent

    player_id = factory.LazyAttribute(lambda o: PlayerFactory().id)
    local_date = factory.Sequence(lambda n: f"2026-{1 + n // 28 % 12:02d}-{1 + n % 28:02d}")
    games = 2
    messages = 1


class SignInFactory(Base):
    """A sign-in link mailed to an address, not used yet."""

    class Meta:
        model = SignIn

    email = factory.Sequence(lambda n: f"signin{n}@example.org")
    link_secret = factory.Sequence(lambda n: f"{n:032x}")
