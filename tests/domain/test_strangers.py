"""service.domain.strangers: who played with a host before (issue 32, finding 7: no relay to strangers)."""

from __future__ import annotations

from sqlmodel import Session

from service.domain import admin, lobby
from service.domain.links import LinkMaker
from service.domain.models import Game
from service.domain.schemas import CreateGame
from service.domain.strangers import strangers_to
from tests.factories import confirmed_game


def game_of(session: Session, links: LinkMaker, emails: list[str], host_email: str | None = None) -> Game:
    request = CreateGame.model_validate(
        {
            "name": "Known",
            "players": [{"name": f"P{i}", "email": email} for i, email in enumerate(emails)],
            "host_email": host_email,
            "settings": {"start_when_all_accepted": False},
        }
    )
    game, _ = confirmed_game(session, request, links)
    return game


def accept(session: Session, links: LinkMaker, game: Game, seat: int) -> None:
    lobby.accept_invitation(session, game.id or 0, seat, links)


def test_an_address_played_with_a_host_when_it_accepted_a_seat_in_another_game_of_theirs(
    db_session: Session, links: LinkMaker
) -> None:
    earlier = game_of(db_session, links, ["hal@example.org", "ann@example.org", "bob@example.org"])
    accept(db_session, links, earlier, 1)  # Ann accepted; Bob never did
    now = game_of(db_session, links, ["hal@example.org", "ann@example.org", "bob@example.org", "cy@example.org"])
    emails = ["Ann@example.org", "bob@example.org", "cy@example.org", "hal@example.org", "cy@example.org"]
    assert strangers_to(db_session, "hal@example.org", emails, now.id or 0) == ["bob@example.org", "cy@example.org"]
    # The game being mailed for is no proof: in it, everybody is new.
    assert strangers_to(db_session, "hal@example.org", ["ann@example.org"], earlier.id or 0) == ["ann@example.org"]


def test_a_game_the_host_played_in_without_hosting_it_counts(db_session: Session, links: LinkMaker) -> None:
    theirs = game_of(db_session, links, ["zed@example.org", "hal@example.org", "ann@example.org"])
    accept(db_session, links, theirs, 2)
    mine = game_of(db_session, links, ["hal@example.org", "ann@example.org"])
    assert strangers_to(db_session, "hal@example.org", ["ann@example.org"], mine.id or 0) == []
    # A game hosted by an address that holds no seat in it counts for its host too.
    hosted = game_of(db_session, links, ["dee@example.org", "eve@example.org"], host_email="hal@example.org")
    accept(db_session, links, hosted, 1)
    assert strangers_to(db_session, "hal@example.org", ["eve@example.org"], mine.id or 0) == []


def test_a_player_replaced_out_of_a_game_did_not_play_in_it(db_session: Session, links: LinkMaker) -> None:
    earlier = game_of(db_session, links, ["hal@example.org", "ann@example.org"])
    accept(db_session, links, earlier, 1)
    admin.replace_player(db_session, earlier.id or 0, admin.HOST, links, 1, "bob@example.org", "Bob")
    now = game_of(db_session, links, ["hal@example.org", "ann@example.org"])
    assert strangers_to(db_session, "hal@example.org", ["ann@example.org"], now.id or 0) == ["ann@example.org"]
