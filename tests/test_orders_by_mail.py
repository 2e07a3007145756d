"""A whole game played by mail only (ARCHITECTURE §10): every player reads the mails the service sends to a real
SMTP server (aiosmtpd), takes their seat by replying "yes" to the invitation, and answers by replying with
orders, written from what the mail lists, to the inbound listener over SMTP (smtplib), the very same message
then handed to ``POST /inbound/mail`` too (it is read once). Each reply is written as a mail client writes it,
the clients taken in turn from the corpus (tests/reply_corpus.py: Gmail, Outlook, Apple Mail, Thunderbird, K-9,
FairEmail; top- and bottom-posted, HTML-only, with greetings, in four languages), so that every shape of the
corpus plays part of the game. On the way: a defender's redeploy in ``ask`` mode, a malformed order, a reply to a
step that is over, an automatic answer and a bounce. Every mail a player gets (the answers included) is
scanned for another player's coins (tests/hidden_information.py).

The listener is ``service.cli.inbound.listener``, the one ``smallworld inbound`` and ``smallworld serve``
run, started in this process on a free port.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage

import pytest
from flask import Flask
from sqlmodel import select

import rules
from rules import orders
from service.cli.inbound import InboundController, listener
from service.domain import play
from service.domain.inbound import MAX_STEPS_PER_ORDER
from service.domain.models import InboundKind, OutboxMail, Player
from service.infra.db import get_session
from tests.conftest import deal_games_from
from tests.hidden_information import CoinWatch, with_canaries
from tests.mail_players import (
    MailTable,
    dsn,
    mail_settings,
    post_mail,
    reply_to,
    send_smtp,
    send_smtp_bytes,
    sign_in_again,
)
from tests.processes import free_port
from tests.reply_corpus import CORPUS, Original
from tests.smtp import Received, SMTPServer, smtp_server  # noqa: F401  (fixture)

PLAYERS = 3
#: The game is dealt from this seed, and the players choose their orders from a generator seeded with
#: ``CHOICES``, so that every run plays the same game. Dealt at random, a game now and then had no defender
#: redeploying by mail in ``ask`` mode, and the check that one did failed. The test first plays the dealt game
#: in the engine alone and asserts that it meets every case below (:data:`CASES`); when a change to the rules
#: deals another game that misses one, that check names it: choose another seed (8 meets them all, with 9
#: defender redeploys).
SEED = 8
CHOICES = 5
#: The turn in which Player 2's mail bounces, and the first in which a reply to seat 0's first turn mail is late.
BOUNCE_TURN, LATE_TURN = 2, 3


@pytest.fixture
def inbound_listener(app_by_mail: Flask) -> Iterator[InboundController]:
    server = listener(app_by_mail, port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def app_by_mail(
    request: pytest.FixtureRequest,
    make_app: Callable[..., Flask],
    smtp_server: SMTPServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Flask:
    # Every seat starts with a canary count of coins, so that any leak of them is found (hidden_information).
    monkeypatch.setattr(rules, "new_game", with_canaries(rules.new_game))
    deal_games_from(monkeypatch, SEED)
    if request.param == "sqlite":
        return make_app(**mail_settings(smtp_server))
    database = request.getfixturevalue("postgres_url")
    broker = request.getfixturevalue("redis_url")
    return make_app(**mail_settings(smtp_server, DATABASE_URL=database, BROKER_URL=broker))


def orders_in(mail: Received) -> list[str]:
    """The orders a mail lists ("What you may do now"), each joined back from the text's line wrapping."""
    lines = mail.text.splitlines()
    start = next((i for i, line in enumerate(lines) if "What you may do now" in line), None)
    if start is None:
        return []
    found: list[str] = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        if line.startswith("    ") and found:
            found[-1] += " " + line.strip()
        elif line.startswith("  "):
            found.append(line.strip())
    return found


def numbers(text: str) -> list[int]:
    """The region numbers listed after the colon of an order's line ("…: 1, 2, 9 (with the die)")."""
    listed = text.rsplit(": ", 1)[-1]
    return [int(item.split()[0]) for item in listed.split(", ") if item.split() and item.split()[0].isdigit()]


def choose(offered: list[str], rnd: random.Random) -> str:
    """What a player who reads only the mail writes back."""
    by_word: dict[str, str] = {line.split()[0]: line for line in offered}
    if "pick" in by_word:
        picks = [line.split()[1] for line in offered if line.startswith("pick ")]
        return f"pick {rnd.choice(picks[:3])}"
    if "redeploy" in by_word and "add your" in by_word["redeploy"]:
        # A defender in ``ask`` mode: the tokens in hand go on top of what each region has.
        line = by_word["redeploy"]
        now = dict(tuple(map(int, pair.split(":"))) for pair in re.findall(r"\d+:\d+", line.split("(now", 1)[1]))
        extra = int(re.search(r"add your (\d+) token", line).group(1))  # type: ignore[union-attr]
        for _ in range(extra):
            now[rnd.choice(sorted(now))] += 1
        return "redeploy " + " ".join(f"{r}:{n}" for r, n in sorted(now.items())) + "\nend"
    if "conquer" in by_word and rnd.random() < 0.85:
        regions = numbers(by_word["conquer"])
        chosen = rnd.sample(regions, min(len(regions), rnd.choice([1, 1, 2])))
        ending = "\nend" if rnd.random() < 0.3 else ""
        return "conquer " + " ".join(map(str, chosen)) + ending
    for word in ("dragon", "fortress", "convert"):
        if word in by_word and rnd.random() < 0.5:
            return f"{word} {rnd.choice(numbers(by_word[word]))}"
    if "decline" in by_word and rnd.random() < 0.1:
        return "decline"
    return "end"


@dataclass(frozen=True)
class Reply:
    """A player's reply with orders, and the step it answered."""

    turn: int
    seat: int
    phase: str
    text: str


#: The cases the game must meet on the way, each by a reply of the game's course.
CASES: dict[str, Callable[[Reply], bool]] = {
    "a defender redeploys by mail in ask mode": lambda r: (
        r.phase == rules.Phase.DEFEND and r.text.startswith("redeploy")
    ),
    f"a step in turn {BOUNCE_TURN}, when Player 2's mail bounces": lambda r: r.turn == BOUNCE_TURN,
    f"seat 0 on turn in turn {LATE_TURN} or later, when a reply to its first turn mail is late": (
        lambda r: r.turn >= LATE_TURN and r.seat == 0
    ),
}


def course_in_the_engine(state: rules.GameState, names: list[str], rnd: random.Random) -> list[Reply]:
    """The replies of the game played from ``state`` in the engine alone, each chosen by :func:`choose` from
    what the mail would list (``orders.describe``)."""
    replies: list[Reply] = []
    while state.phase != rules.Phase.OVER and len(replies) < 1500:
        [seat] = rules.awaiting(state)
        text = choose(orders.describe(state, seat, names), rnd)
        replies.append(Reply(state.turn, seat, state.phase, text))
        state = carried_out(state, seat, text, names)
    return replies


def carried_out(state: rules.GameState, seat: int, text: str, names: list[str]) -> rules.GameState:
    """The state after a reply's orders, carried out as the service does (``service.domain.inbound``): each in
    turn, the first refused stops the rest, and only while the step answered lasts."""
    step = play.step_key(state)
    for order in orders.parse(text).orders:
        if order.problem:
            return state
        for intent in orders.intents(order):
            for _ in range(MAX_STEPS_PER_ORDER):
                if play.step_key(state) != step:
                    return state
                try:
                    action = intent.next_action(state, seat, names)
                    if action is None:
                        break
                    state = rules.apply(state, action)
                except rules.IllegalAction:
                    return state
                if not intent.repeats:
                    break
    return state


def test_a_whole_game_by_mail_only(
    app_by_mail: Flask,
    smtp_server: SMTPServer,  # noqa: F811
    inbound_listener: InboundController,
) -> None:
    app = app_by_mail
    table = MailTable(app, smtp_server, players=PLAYERS)
    table.create(redeploy="ask", accept=False)
    port = inbound_listener.port
    shapes_used: list[str] = []

    def written(mail: Received, text: str, **changes: str) -> EmailMessage:
        """A reply saying ``text``, in the next shape of the corpus."""
        shape = CORPUS[len(shapes_used) % len(CORPUS)]
        shapes_used.append(shape.name)
        return shape.write(Original.of(mail), text, **changes)

    # Every seat is taken by a "yes" to its invitation.
    for _, invitation in sorted(table.invitations.items()):
        send_smtp(port, written(invitation, "Yes, count me in!"))
    assert table.game().status == "active", "the last yes started the game"
    # Before any turn: the game as dealt, played in the engine alone, meets every case this test checks.
    names = [f"Player {seat}" for seat in range(PLAYERS)]
    course = course_in_the_engine(rules.read_state(table.game().state or {}), names, random.Random(CHOICES))
    missed = [case for case, met in CASES.items() if not any(map(met, course))]
    assert not missed, f"the game dealt from seed {SEED} misses {missed}: choose another SEED"
    rnd = random.Random(CHOICES)
    watch = CoinWatch(PLAYERS)

    latest: dict[int, Received] = {}  # each seat's latest mail that asks for orders
    first_turn_mail: dict[int, Received] = {}
    subjects: list[str] = []
    ended = False

    def deliver() -> None:
        nonlocal ended
        with app.app_context():
            watch.note(table.game().state)
        for mail in table.deliver():
            if mail.rcpt_tos[0] not in table.emails:
                continue
            seat = table.seat_of(mail)
            subject = mail.header("Subject") or ""
            subjects.append(f"{subject} | {mail.headline}")
            if "is over" in subject:
                ended = True
            if not ended and table.game().status != "finished":
                for part in (mail.text, mail.html):
                    watch.scan_text(part, seat, f"mail {subject!r}")
            if mail.header("Reply-To") and orders_in(mail):
                latest[seat] = mail
                first_turn_mail.setdefault(seat, mail)

    def reply(seat: int, text: str, *, by_http_first: bool) -> None:
        message = written(latest[seat], text)
        if by_http_first:
            assert post_mail(app, message).status_code == 202
            send_smtp(port, message)  # the same mail again, by SMTP: read once
        else:
            send_smtp(port, message)
            again = post_mail(app, message)  # the same mail again, by HTTP: read once
            assert again.status_code == 202 and again.get_json()["outcomes"][0]["duplicate"], again.get_json()

    deliver()
    assert sorted(latest) == [0], "the first player's turn mail asks for orders"

    # A malformed order: nothing is done, the answer says why and what may be done.
    version = table.game().version
    reply(0, "conquer seven\npick 1", by_http_first=False)
    deliver()
    [answer] = [m for m in smtp_server.mailbox.all()[-3:] if "Not all done" in m.headline]
    words = " ".join(answer.text.split())
    assert "'seven' is not one" in words and "pick 1" in words
    assert table.game().version == version

    # An automatic answer (a vacation notice) is never read as orders, nor answered.
    vacation = reply_to(latest[0], "pick 1", headers=[("Auto-Submitted", "auto-replied")])
    send_smtp(port, vacation)
    assert table.game().version == version
    assert not table.deliver(), "no answer to an automatic mail"

    bounced = False
    defended = late = 0
    replies: list[Reply] = []
    for step in range(1500):
        game = table.game()
        if game.status == "ending":
            table.tally()  # as the worker does once the last step commits
            continue
        if game.status == "finished":
            break
        state = rules.read_state(game.state or {})
        seat = min(rules.awaiting(state))
        if seat not in latest:
            deliver()
        offered = orders_in(latest[seat])
        assert offered, f"seat {seat}'s latest mail lists no orders: {latest[seat].text}"
        text = choose(offered, rnd)
        replies.append(Reply(state.turn, seat, state.phase, text))
        if state.phase == "defend" and text.startswith("redeploy"):
            defended += 1
        reply(seat, text, by_http_first=step % 2 == 1)
        deliver()

        if not bounced and state.turn == BOUNCE_TURN:
            # The third player's mail bounces: the address is marked and the host (seat 0) told.
            # The report goes to the returned mail's own envelope sender, its signed bounce address.
            [returned] = [m for m in smtp_server.mailbox.all() if m.rcpt_tos == (table.emails[2],)][-1:]
            bounce = dsn(returned.mail_from, table.emails[2], returned=returned.header("Message-ID"))
            send_smtp_bytes(port, bounce, returned.mail_from)
            bounced = True
            deliver()
            assert any("mail to Player 2 bounces" in s for s in subjects[-2:]), "the host heard of it"
            with app.app_context():
                marked = get_session().exec(select(Player).where(Player.email == table.emails[2])).one()
                assert marked.bouncing_since is not None and marked.bounce_reason == "5.1.1 mailbox unknown"
            # Player 2 signs in again (the sign-in link is the one mail a bouncing address still gets): their
            # address takes mail again.
            sign_in_again(table, table.emails[2])
        if not late and state.turn >= LATE_TURN and seat == 0:
            # A reply to seat 0's first turn mail, long over: a clear answer, nothing changed.
            version = table.game().version
            send_smtp(port, written(first_turn_mail[0], "end"))
            deliver()
            assert table.game().version == version
            assert "Too late" in subjects[-1], subjects[-3:]
            late += 1
    assert table.game().status == "finished", "the game did not end"
    deliver()
    assert replies == course, "the game by mail took another course than in the engine: it is not all dealt by SEED"

    assert defended, "a defender redeployed by mail in ask mode"
    assert any("| Done in" in s for s in subjects)
    assert any("is over" in s for s in subjects), "everyone got the final table"
    with app.app_context():
        # Player 2 signed in again since: the mark is gone.
        session = get_session()
        assert session.exec(select(Player).where(Player.email == table.emails[2])).one().bouncing_since is None
        answers = session.exec(select(OutboxMail).where(OutboxMail.template == "orders_answer")).all()
        assert answers and all(m.status == "sent" for m in answers)
    kinds = [row.kind for row in table.inbound()]
    assert kinds.count(InboundKind.AUTO_REPLY) == 1 and kinds.count(InboundKind.BOUNCE) == 1
    assert kinds.count(InboundKind.LATE) == late == 1
    # Hidden information: no mail told a player another's coins; the scanner did see each one's own.
    watch.assert_no_leaks()
    watch.confirm_own_coins_seen(range(PLAYERS))
    assert inbound_listener.handler.received > 50  # type: ignore[attr-defined]
    # Every shape of the corpus wrote part of the game; the seats were taken by mail.
    assert set(shapes_used) == {shape.name for shape in CORPUS}
    assert kinds.count(InboundKind.INVITATION) == PLAYERS
