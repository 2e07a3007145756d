"""The game told in words (``service/domain/story.py``): "Since your last turn" in the turn mails, from a scripted
three-player game that shows every kind of step with a visible effect (issue 18).

The game (seed "2008", 3-player board) deals Sorcerers with Dragon Master, Skeletons with Fortified, Elves with
Berserk and Ghouls with Heroic among its first combos, so it shows: picks with coins taken from the column and
left on it, conquests of empty regions, of Lost Tribes and of another player's region, the Dragon, a Fortress,
a Sorcerers' conversion, Berserk rolls, a decline, an auto-pass at the deadline, the Heroes, and the host's
acts (a deadline moved, a pause and a resume). Each "your turn" mail's "Since your last turn" part (its plain
text) is compared with a file in ``golden/``; ``SMALLWORLD_UPDATE_GOLDEN=1`` rewrites them (read the diff).
"""

from __future__ import annotations

import html
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, col, select

import rules
from emails.messages import YourTurn, from_json
from service.domain import admin, play, story
from service.domain.links import LinkMaker
from service.domain.models import Game, GameAction, OutboxMail
from tests.factories import GameFactory, PlayerFactory, SeatFactory

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SMALLWORLD_UPDATE_GOLDEN") == "1"
NAMES = ("Ann", "Bob", "Cy")

ANN, BOB, CY = 0, 1, 2

#: The scripted game: (seat, action) in order; ("auto_pass",) for a missed deadline, ("admin", act) for a
#: host's act.
SCRIPT: list[tuple[Any, ...]] = [
    # Turn 1.
    (ANN, {"type": "pick", "combo": 0}),  # Sorcerers with Dragon Master, free
    (ANN, {"type": "conquer", "region": 1}),
    (ANN, {"type": "conquer", "region": 7}),  # a Lost Tribe
    (ANN, {"type": "dragon", "region": 8}),
    (ANN, {"type": "conquer", "region": 9}),
    (ANN, {"type": "end_conquest"}),
    (ANN, {"type": "redeploy", "tokens": {"1": 2, "7": 3, "8": 1, "9": 4}}),
    (ANN, {"type": "end_turn"}),
    (BOB, {"type": "pick", "combo": 3}),  # Skeletons with Fortified: 3 coins left on the combos above
    (BOB, {"type": "conquer", "region": 3}),
    (BOB, {"type": "conquer", "region": 4}),
    (BOB, {"type": "conquer", "region": 10}),
    (BOB, {"type": "place_fortress", "region": 3}),
    (BOB, {"type": "end_conquest"}),
    (BOB, {"type": "redeploy", "tokens": {"3": 4, "4": 4, "10": 1}}),  # a lone token on Mountain 10
    (BOB, {"type": "end_turn"}),
    (CY, {"type": "pick", "combo": 0}),  # Elves with Berserk, and the coin Bob left on it
    (CY, {"type": "berserk_roll"}),
    (CY, {"type": "conquer", "region": 29}),  # a Lost Tribe
    (CY, {"type": "berserk_roll"}),
    (CY, {"type": "conquer", "region": 28}),
    (CY, {"type": "end_conquest"}),
    (CY, {"type": "redeploy", "tokens": {"28": 5, "29": 5}}),
    (CY, {"type": "end_turn"}),
    # Turn 2.
    (ANN, {"type": "convert", "region": 10}),  # Bob's lone Skeleton
    (ANN, {"type": "conquer", "region": 4}),  # from Bob
    (ANN, {"type": "end_conquest"}),
    (ANN, {"type": "end_turn"}),
    (BOB, {"type": "decline"}),
    ("admin", "extend"),  # the host gives Cy more time…
    (CY, "auto_pass"),  # …which Cy lets pass all the same
    # Turn 3.
    (ANN, {"type": "conquer", "region": 13}),
    (ANN, {"type": "end_conquest"}),
    (ANN, {"type": "redeploy", "tokens": {"1": 1, "4": 4, "7": 1, "8": 1, "9": 1, "10": 1, "13": 2}}),
    (ANN, {"type": "end_turn"}),
    ("admin", "pause"),
    ("admin", "resume"),
    (BOB, {"type": "pick", "combo": 0}),  # Ghouls with Heroic
    (BOB, {"type": "conquer", "region": 5}),  # a Lost Tribe
    (BOB, {"type": "conquer", "region": 6}),
    (BOB, {"type": "end_conquest"}),
    (BOB, {"type": "redeploy", "tokens": {"5": 5, "6": 5}}),
    (BOB, {"type": "place_heroes", "regions": [5, 6]}),
    (BOB, {"type": "end_turn"}),
    (CY, {"type": "berserk_roll"}),
    (CY, {"type": "conquer", "region": 23}),  # a Lost Tribe
    (CY, {"type": "end_conquest"}),
    (CY, {"type": "redeploy", "tokens": {"23": 4, "28": 3, "29": 3}}),
    (CY, {"type": "end_turn"}),
]


def play_script(session: Session, links: LinkMaker) -> Game:
    game = GameFactory(started=True, players=3, seed="2008", name="Scripted")
    for seat, name in enumerate(NAMES):
        SeatFactory(game_id=game.id, player_id=PlayerFactory(display_name=name).id, seat=seat, display_name=name)
    session.flush()
    for seat, what in SCRIPT:
        session.refresh(game)
        if seat == "admin":
            if what == "extend":
                admin.extend_deadline(session, game.id, admin.HOST, links, by=timedelta(hours=12))
            elif what == "pause":
                admin.pause(session, game.id, admin.HOST, links, "Bob is on a train")
            else:
                admin.resume(session, game.id, admin.HOST, links)
        elif what == "auto_pass":
            play.auto_pass(session, game.id, seat, links)
        else:
            play.submit_action(session, game.id, seat, what, game.version, links)
    session.refresh(game)
    return game


def turn_mails(session: Session, game: Game) -> list[tuple[OutboxMail, YourTurn]]:
    rows = session.exec(
        select(OutboxMail)
        .where(OutboxMail.game_id == game.id, OutboxMail.template == "your_turn")
        .order_by(col(OutboxMail.id))
    ).all()
    return [(row, from_json(row.template, row.context)) for row in rows]  # type: ignore[misc]


def since_part(text: str) -> str:
    """The "Since your last turn" part of a turn mail's plain text (empty if it has none)."""
    found = re.search(r"^Since your last turn:\n(?:  (?:- |  ).*\n)+", text, re.MULTILINE)
    return found.group(0) if found else ""


def sentences(part: str) -> list[str]:
    """The sentences of a "Since your last turn" part, each unwrapped."""
    return [" ".join(item.split()) for item in part.split("\n  - ")[1:]]


@pytest.fixture
def scripted(db_session: Session, links: LinkMaker) -> tuple[Session, Game]:
    return db_session, play_script(db_session, links)


def test_each_turn_mail_tells_the_other_players_turns_since_the_readers_last(scripted: tuple[Session, Game]) -> None:
    session, game = scripted
    mails = turn_mails(session, game)
    assert [(m.turn, m.seat) for _, m in mails] == [
        (1, ANN), (1, BOB), (1, CY), (2, ANN), (2, BOB), (2, CY), (3, ANN), (3, BOB), (3, CY), (4, ANN),
    ]  # fmt: skip
    assert mails[0][1].since == []  # the first turn of the game: nothing before it
    for row, mail in mails[1:]:
        rendered = mail.render(now=row.created_at)
        part = since_part(rendered.text)
        assert part, f"no 'Since your last turn' in the mail to {mail.player_name}, turn {mail.turn}"
        assert sentences(part) == mail.since
        for line in mail.since:  # the HTML part tells the same sentences
            assert f"<li>{html.escape(line, quote=False)}</li>" in rendered.html.replace("&#39;", "'")
        golden = GOLDEN / f"since-your-last-turn-{mail.turn}-{mail.player_name.lower()}.txt"
        if UPDATE or not golden.exists():
            golden.parent.mkdir(exist_ok=True)
            golden.write_text(part, encoding="utf-8")
            if not UPDATE:
                pytest.fail(f"{golden} did not exist; written now: read it, then commit it")
        assert part == golden.read_text(encoding="utf-8"), golden.name


def test_the_story_shows_every_kind_of_step_the_script_plays(scripted: tuple[Session, Game]) -> None:
    session, game = scripted
    told = "\n".join(line for _, mail in turn_mails(session, game) for line in mail.since)
    for words in (
        "from a Lost Tribe",  # Lost Tribes
        "from your Skeletons",  # a conquest from the reader
        "from Bob's Skeletons",  # …and from someone else, as the third player reads it
        "sent the Dragon to",
        "built a Fortress on",
        "converted",  # Sorcerers
        "(Berserk)",  # the die, with its roll
        "put the Skeletons In Decline",
        "had the turn completed automatically (the deadline passed)",
        "placed the Heroes on",
        "taking the 1 coin lying on it",
        "leaving 3 coins on the combos above",
        "The host moved Cy's deadline.",
        "The host paused the game: Bob is on a train.",
        "The host resumed the game.",
    ):
        assert words in told, words


def test_the_story_tells_no_score_and_no_coins_of_another_player(scripted: tuple[Session, Game]) -> None:
    """Rulebook, "Scoring Victory Coins": coins are hidden "from other players at all times"; a turn's score
    would add up to them, so another player's turn is told without it."""
    session, game = scripted
    for _, mail in turn_mails(session, game):
        for line in mail.since:
            assert "scored" not in line and "coins =" not in line, line


def test_undone_steps_never_appear(db_session: Session, links: LinkMaker) -> None:
    game = GameFactory(started=True, players=3, seed="2008")
    for seat, name in enumerate(NAMES):
        SeatFactory(game_id=game.id, player_id=PlayerFactory().id, seat=seat, display_name=name)
    db_session.flush()
    play.submit_action(db_session, game.id, ANN, {"type": "pick", "combo": 0}, 1, links)
    play.submit_action(db_session, game.id, ANN, {"type": "conquer", "region": 12}, 2, links)
    play.undo(db_session, game.id, ANN, 3, links)  # Mountain 12 taken back
    play.submit_action(db_session, game.id, ANN, {"type": "conquer", "region": 1}, 4, links)
    play.submit_action(db_session, game.id, ANN, {"type": "end_conquest"}, 5, links)
    play.submit_action(db_session, game.id, ANN, {"type": "redeploy", "tokens": {"1": 10}}, 6, links)
    play.submit_action(db_session, game.id, ANN, {"type": "end_turn"}, 7, links)
    (_, to_bob), *_ = [(r, m) for r, m in turn_mails(db_session, game) if m.seat == BOB]
    assert len(to_bob.since) == 1
    assert "Forest 1" in to_bob.since[0] and "12" not in to_bob.since[0]
    log = db_session.exec(
        select(GameAction).where(GameAction.game_id == game.id).order_by(col(GameAction.version))
    ).all()
    turns = story.turns_of(log, play.replay_steps(game, story.kept(log)))
    assert all(not e.undone and e.kind != "undo" for t in turns for e in t.entries)


def test_who_passed_a_turn_or_acted_is_told_by_role_never_by_address() -> None:
    passed = GameAction(
        game_id=1, seat=0, kind="auto_pass", action={"reason": "site admin boss@example.org"}, version=3
    )
    assert story.pass_reason(passed) == "passed by a site admin"
    assert story.pass_reason(GameAction(game_id=1, seat=0, kind="auto_pass", action={}, version=3)) == (
        "the deadline passed"
    )
    paused = GameAction(
        game_id=1, seat=None, kind="admin", action={"act": "pause", "by": "site admin", "reason": "Upgrade"}, version=4
    )
    assert story.admin_words(paused, rules.new_game(2, seed="s"), NAMES, 0) == "A site admin paused the game: Upgrade."
    # An act logged before its details were kept is still told.
    assert story.admin_words(
        GameAction(game_id=1, kind="admin", action={"act": "resume"}, version=5), None, NAMES, 0
    ) == (  # type: ignore[arg-type]
        "The game was resumed."
    )


def test_a_log_that_does_not_replay_still_lets_the_turn_mail_go(
    db_session: Session, links: LinkMaker, caplog: pytest.LogCaptureFixture
) -> None:
    """The story is told from the log; a log that no longer replays (here a step the rules refuse) must not
    stop the game: the mail goes without its "Since your last turn", and the error is logged."""
    game = GameFactory(started=True, players=2, seed="2008")
    for seat, name in enumerate(NAMES[:2]):
        SeatFactory(game_id=game.id, player_id=PlayerFactory().id, seat=seat, display_name=name)
    db_session.add(
        GameAction(
            game_id=game.id, seat=0, kind="action", action={"type": "conquer", "player": 0, "region": 99}, version=1
        )
    )
    db_session.flush()
    play.submit_action(db_session, game.id, ANN, {"type": "pick", "combo": 0}, 1, links)
    [(_, mail)] = turn_mails(db_session, game)
    assert mail.since == [] and "does not replay" in caplog.text


def test_a_resignation_is_told_with_what_becomes_of_the_seat() -> None:
    resigned = GameAction(
        game_id=1,
        seat=None,
        kind="admin",
        action={"act": "resign", "by": "seat 1", "seat": 1, "then": "bot"},
        version=6,
    )
    state = rules.new_game(2, seed="s")
    assert story.admin_words(resigned, state, NAMES, 0) == "Bob resigned from the game: the house bot plays their seat."
    assert story.admin_words(resigned, state, NAMES, 1) == "You resigned from the game: the house bot plays your seat."


def _turns(*told: tuple[int, int, int | None]) -> list[story.Turn]:
    """Turns as (game turn, seat on turn, who acted: None for an admin act)."""
    return [story.Turn(turn=turn, on_turn=on_turn, seat=seat) for turn, on_turn, seat in told]


ROUND_1 = [(1, ANN, ANN), (1, BOB, BOB), (1, CY, CY)]


@pytest.mark.parametrize(
    ("then", "what"),
    [
        ([], "as the turn begins (its mail)"),
        ([(2, ANN, ANN)], "after a step of its own"),
        ([(2, ANN, ANN), (2, ANN, BOB), (2, ANN, ANN)], "after an attack that Bob redeployed after"),
        ([(2, ANN, ANN), (2, ANN, BOB)], "while Bob redeploys after its attack"),
        ([(2, ANN, ANN), (2, ANN, None), (2, ANN, ANN)], "after the host moved the deadline mid-turn"),
    ],
)
def test_the_page_tells_all_through_a_turn_what_its_mail_told_as_it_began(
    then: list[tuple[int, int, int | None]], what: str
) -> None:
    # Mid-turn, a defender's redeployment or an admin act between the seat's own steps used to end "since"
    # there: the page told only that, and no longer the other players' turns since the seat's last.
    turns = _turns(*ROUND_1, *then)
    told = [(t.turn, t.on_turn, t.seat) for t in story.since_last_turn(turns, ANN)]
    assert told == [(1, BOB, BOB), (1, CY, CY)], what


def test_what_came_before_the_seats_first_step_of_its_turn_is_still_since_its_last() -> None:
    turns = _turns(*ROUND_1, (2, ANN, None), (2, ANN, None), (2, ANN, ANN), (2, ANN, BOB))
    told = [(t.turn, t.on_turn, t.seat) for t in story.since_last_turn(turns, ANN)]
    assert told == [(1, BOB, BOB), (1, CY, CY), (2, ANN, None), (2, ANN, None)]
    # A defender reads everything since its own last turn, the attack under way included.
    told = [(t.turn, t.on_turn, t.seat) for t in story.since_last_turn(turns, BOB)]
    assert told == [(1, CY, CY), (2, ANN, None), (2, ANN, None), (2, ANN, ANN)]
