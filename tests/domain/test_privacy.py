"""The player's own data (``service.domain.privacy``): the download holds the address's data and nothing of
another player's; "Delete my address" erases the address and its names from every table, hands its running
seats to the house bot or to the auto-pass as the host set, mails it nothing again, and leaves every game's
history replaying as it was."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import Session, SQLModel, select

from emails.messages import SignInLink
from service.domain import block_list, lobby, play, privacy, sign_in, table_talk
from service.domain.errors import BadRequest, Conflict
from service.domain.links import LinkMaker
from service.domain.models import (
    ErasedAddress,
    Game,
    GameStatus,
    InboundKind,
    InboundMail,
    MailStatus,
    MessageSource,
    OutboxMail,
    Player,
    Seat,
    SeatController,
    SignIn,
    utcnow,
)
from service.domain.outbox import queue_mail
from service.domain.schemas import CreateGame
from tests.factories import (
    AuditEntryFactory,
    GameNotificationFactory,
    InboundMailFactory,
    PlayerRecordFactory,
    SignInFactory,
    confirmed_game,
)

ADDRESS = "Zeb.Ulon@Example.org"
NAME = "Zebulon"


def _game(session: Session, links: LinkMaker, name: str, players: list[tuple[str, str]], **extra: Any) -> Game:
    request = CreateGame.model_validate(
        {"name": name, "players": [{"name": n, "email": e} for n, e in players], **extra}
    )
    game, _ = confirmed_game(session, request, links)
    return game


def _scenario(session: Session, links: LinkMaker) -> tuple[Game, Game]:
    """Zebulon plays a running game whose host set resigned seats to the house bot (and talks there), and hosts
    a game still inviting; the service met the address in every way it keeps one."""
    running = _game(
        session,
        links,
        "Running",
        [("Ann", "ann@example.org"), (NAME, ADDRESS), ("Cy", "cy@example.org")],
        settings={"start_when_all_accepted": False, "resigned_seats": "bot"},
    )
    table_talk.post_message(session, running, 1, f"Hi, I am {NAME}.", MessageSource.PAGE)
    table_talk.post_message(session, running, 0, "Hello all.", MessageSource.PAGE)
    inviting = _game(
        session, links, "Inviting", [(NAME, ADDRESS), ("Dee", "dee@example.org")], host_email=ADDRESS.lower()
    )
    player = session.exec(select(Player).where(Player.email == ADDRESS.lower())).one()
    player.bounce_reason = f"550 5.1.1 <{ADDRESS}>: no such user"
    session.add(player)
    SignInFactory(email=ADDRESS.lower())
    PlayerRecordFactory(player_id=player.id)
    GameNotificationFactory(player_id=player.id, game_id=running.id)
    InboundMailFactory(sender=ADDRESS, player_id=player.id, game_id=running.id, seat=1, kind=InboundKind.ORDERS)
    AuditEntryFactory(game_id=running.id, act="resend", details={"mail": 1, "to": ADDRESS.lower()})
    session.commit()
    return running, inviting


def _text_columns() -> list[sa.Column[Any]]:
    return [
        column
        for table in SQLModel.metadata.sorted_tables
        for column in table.columns
        if isinstance(getattr(column.type, "impl_instance", column.type), sa.String | sa.JSON)
    ]


def _found(session: Session, needle: str) -> list[str]:
    """Every ``table.column`` of every table with a row whose text holds ``needle`` (case-insensitively)."""
    found = []
    for column in _text_columns():
        where = sa.func.lower(sa.cast(column, sa.Text)).contains(needle.lower(), autoescape=True)
        if session.execute(sa.select(sa.func.count()).select_from(column.table).where(where)).scalar():
            found.append(f"{column.table.name}.{column.name}")
    return found


def _byte_columns() -> list[sa.Column[Any]]:
    return [
        column
        for table in SQLModel.metadata.sorted_tables
        for column in table.columns
        if isinstance(getattr(column.type, "impl_instance", column.type), sa.LargeBinary)
    ]


def test_every_text_column_says_whether_it_may_hold_an_address() -> None:
    every = {f"{column.table.name}.{column.name}" for column in _text_columns() + _byte_columns()}
    decided = set(privacy.ADDRESS_COLUMNS) | set(privacy.NEVER_AN_ADDRESS) | set(privacy.DROPPED_BYTES)
    assert every - decided == set(), "a new text column: say in privacy.py whether it may hold an address"
    assert decided - every == set(), "privacy.py names a column that is no more"


def test_deleting_an_address_leaves_it_and_its_names_in_no_table(db_session: Session, links: LinkMaker) -> None:
    running, inviting = _scenario(db_session, links)
    assert "players.email" in _found(db_session, ADDRESS) and "outbox.context" in _found(db_session, NAME)
    admin_secret = inviting.admin_secret

    forgotten = privacy.forget_address(db_session, ADDRESS, links)

    assert forgotten.known and forgotten.games == sorted([running.id or 0, inviting.id or 0])
    assert _found(db_session, ADDRESS) == []
    assert _found(db_session, NAME) == []
    assert _found(db_session, "zeb.ulon") == []
    # The game it hosts goes on under the stand-in, with a new admin link (the old one was mailed to it only).
    hosted = db_session.get(Game, inviting.id)
    assert hosted is not None and block_list.is_erased(hosted.host_email) and hosted.admin_secret != admin_secret
    # Only a digest is kept, so that no game names the address again.
    assert db_session.get(ErasedAddress, block_list.address_digest(ADDRESS)) is not None


def test_a_running_seat_goes_to_the_house_bot_and_the_history_still_replays(
    db_session: Session, links: LinkMaker
) -> None:
    running, _ = _scenario(db_session, links)
    before = db_session.exec(select(Seat).where(Seat.game_id == running.id, Seat.seat == 1)).one()
    old_secret, version = before.secret, running.version

    forgotten = privacy.forget_address(db_session, ADDRESS, links)

    assert forgotten.seats_left[running.id or 0] == "bot" and forgotten.seats_not_settled == []
    seat = db_session.exec(select(Seat).where(Seat.game_id == running.id, Seat.seat == 1)).one()
    assert seat.display_name == privacy.FORMER_PLAYER and seat.resigned_at is not None
    assert seat.controller == SeatController.BOT
    assert seat.secret != old_secret, "the seat's old links stop working"
    game = db_session.get(Game, running.id)
    assert game is not None and game.version == version + 1, "the seat left as a resignation, in the log"
    assert play.replay(game, play.live_log(db_session, game.id or 0)).to_json() == game.state
    shown = [(m.author, m.text) for m in table_talk.messages_of(db_session, game.id or 0)]
    assert shown == [(privacy.FORMER_PLAYER, f"Hi, I am {privacy.FORMER_PLAYER}."), ("Ann", "Hello all.")]


def test_a_seat_left_to_the_auto_pass_is_passed_not_played(db_session: Session, links: LinkMaker) -> None:
    game = _game(
        db_session,
        links,
        "Passing",
        [(NAME, ADDRESS), ("Ann", "ann@example.org")],
        settings={"start_when_all_accepted": False},
    )
    privacy.forget_address(db_session, ADDRESS, links)
    seat = db_session.exec(select(Seat).where(Seat.game_id == game.id, Seat.seat == 0)).one()
    assert seat.resigned_at is not None and seat.controller == SeatController.PERSON
    assert play.passed_without_player(seat)
    refreshed = db_session.get(Game, game.id)
    # Seat 0 was on turn: its deadline ran out, so the next sweep passes it.
    assert refreshed is not None and refreshed.deadline_at is not None and refreshed.deadline_at <= utcnow()


def test_a_game_still_inviting_does_not_wait_for_the_erased_seat(db_session: Session, links: LinkMaker) -> None:
    game = _game(db_session, links, "Waiting", [(NAME, ADDRESS), ("Ann", "ann@example.org")])
    lobby.accept_invitation(db_session, game.id or 0, 1, links)
    assert db_session.get(Game, game.id).status == GameStatus.INVITING  # type: ignore[union-attr]
    privacy.forget_address(db_session, ADDRESS, links)
    started = db_session.get(Game, game.id)
    assert started is not None and started.status == GameStatus.ACTIVE


def test_no_mail_goes_to_an_erased_address_again(db_session: Session, links: LinkMaker) -> None:
    running, _ = _scenario(db_session, links)
    player = db_session.exec(select(Player).where(Player.email == ADDRESS.lower())).one()
    pending = db_session.exec(
        select(OutboxMail).where(OutboxMail.player_id == player.id, OutboxMail.status == MailStatus.PENDING)
    ).all()
    assert pending, "the scenario left mail to send to the address"

    forgotten = privacy.forget_address(db_session, ADDRESS, links)

    assert forgotten.mails_cancelled >= len(pending)
    rows = db_session.exec(select(OutboxMail).where(OutboxMail.player_id == player.id)).all()
    assert {row.status for row in rows} <= {MailStatus.SKIPPED, MailStatus.SENT, MailStatus.FAILED}
    assert all(row.context == {} and row.body_purged_at is not None for row in rows)
    assert not queue_mail(db_session, player, SignInLink(sign_in_url="u", valid_minutes=30, sign_in_id=1))
    # Not by a sign-in, nor by a host naming it again, until its owner allows invitations again.
    assert not sign_in.request_sign_in(db_session, ADDRESS, links)
    again = CreateGame.model_validate(
        {"name": "Again", "players": [{"name": "Ann", "email": "ann@example.org"}, {"name": "Z", "email": ADDRESS}]}
    )
    with pytest.raises(BadRequest, match="asked never to be invited"):
        lobby.create_game(db_session, again, links)
    block_list.unblock(db_session, ADDRESS)
    assert lobby.create_game(db_session, again, links).id is not None


def test_after_an_erasure_new_sign_ins_and_inbound_mails_take_new_ids_and_their_mails_go(
    db_session: Session, links: LinkMaker
) -> None:
    """The erased address's sign-ins and inbound records are deleted, and mails name those rows by id in their
    dedupe key. Had a new row taken a deleted row's id (SQLite does, for the newest row, without AUTOINCREMENT),
    its mail would have been taken for the old one's and never written: the next sign-in asked for went
    unanswered."""
    _scenario(db_session, links)
    assert sign_in.request_sign_in(db_session, ADDRESS, links)  # the newest sign-in is the erased address's
    newest_sign_in = max(row.id or 0 for row in db_session.exec(select(SignIn)).all())
    newest_inbound = max(row.id or 0 for row in db_session.exec(select(InboundMail)).all())

    privacy.forget_address(db_session, ADDRESS, links)

    assert sign_in.request_sign_in(db_session, "ann@example.org", links)
    ann = db_session.exec(select(SignIn).where(SignIn.email == "ann@example.org")).one()
    assert (ann.id or 0) > newest_sign_in
    mailed = db_session.exec(
        select(OutboxMail).where(OutboxMail.to_email == "ann@example.org", OutboxMail.template == "sign_in")
    ).all()
    assert [row.status for row in mailed] == [MailStatus.PENDING]
    assert (InboundMailFactory(sender="ann@example.org").id or 0) > newest_inbound


def test_forgetting_is_refused_for_a_stand_in_and_finds_nothing_the_second_time(
    db_session: Session, links: LinkMaker
) -> None:
    _scenario(db_session, links)
    privacy.forget_address(db_session, ADDRESS, links)
    again = privacy.forget_address(db_session, ADDRESS, links)
    assert not again.known and again.games == [] and again.rows_rewritten == 0
    with pytest.raises(Conflict):
        privacy.forget_address(db_session, privacy.stand_in(1), links)


def test_the_download_holds_the_address_s_data_and_no_other_address_link_or_secret(
    db_session: Session, links: LinkMaker
) -> None:
    running, inviting = _scenario(db_session, links)

    document = privacy.export(db_session, ADDRESS)

    text = json.dumps(document)
    assert document["address"] == ADDRESS.lower()
    assert [g["game"] for g in document["games"]] == [running.id, inviting.id]
    assert [g["game"] for g in document["hosted_games"]] == [inviting.id]
    assert [m["text"] for m in document["messages_at_the_tables"]] == [f"Hi, I am {NAME}."]
    assert document["mail_choices"]["games"] == [{"game": running.id, "mails": "turns"}]
    assert document["rating"]["record"]["games_finished"] == 1
    kinds = {m["kind"] for m in document["mails_to_you"]}
    assert {"invitation", "confirm_game", "table_talk"} <= kinds
    assert all(m["subject"] and m["text"] for m in document["mails_to_you"])
    assert [m["kind"] for m in document["mails_from_you"]] == ["orders"]
    assert len(document["sign_ins"]) == 1
    # The host's mail named Dee's address; the invitations carried signed links: none of that is copied.
    for other in ("ann@example.org", "cy@example.org", "dee@example.org", "http", "/play/", "/invite/"):
        assert other not in text, other
    assert privacy.AN_ADDRESS in text and privacy.A_LINK in text
    for game in (running, inviting):
        secrets = [s.secret for s in db_session.exec(select(Seat).where(Seat.game_id == game.id)).all()]
        assert all(secret not in text for secret in [*secrets, game.admin_secret, game.seed])
