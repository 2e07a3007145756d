"""Hidden information over a whole game (ARCHITECTURE §4): no page, API response or mail a player receives before
the end holds another player's coins (the scanner is tests/hidden_information.py).

A three-player game in ``ask`` mode (defenders get their own redeploy step and mail), played through the
JSON API with tokens from the mails, with some turns left to the deadline (auto-pass mails, reminders, the
host's alert) and some admin acts (notices). Every mail is rendered and "sent" as in production; each is
scanned for its recipient's seat. Every seat's API view and the awaited seats' turn pages are scanned at
every step; at each new game turn, every seat's history (API), game page, turn page and history page (all
the players' turns, and another player's alone) too,
the host's admin page, the game page without a seat (refused), each seat's calendar feed (from its turn
mails) and the game's own feed, each seat's My games (signed in by mail: the sign-in and "mail me my links"
mails are scanned too; seat 2 makes a new calendar link there: its old feed's 410 page and its new feed are
scanned), the game's watch pages (by its watch link, and public) and the list of public games,
as seen by nobody in particular. At each new game turn the seat on turn writes at the table (table talk:
mailed to the others, shown on every page, told to the chat); seat 0 chose a daily digest on its page of
mail choices (linked from every mail, scanned with the pages), and gets one at each new turn. The game has
a chat (a local JSON receiver): every notice it gets is scanned as seen by nobody in particular, and none
may hold a signed link. At turn 3 the host gives seat 1 to the house bot (its "the house bot plays your
seat" mail, the page with the way back, the bot's steps in the history are scanned with the rest); at turn 5
the player takes the seat back. Every third turn each seat downloads its data from My games (its games, its
mails so far, its messages): scanned as a page is, and holding no other seat's address and no link.

A second game: a player deletes their address at turn 3 (service/domain/privacy.py), and every page, answer,
mail and chat notice the others and the spectators get from then on is scanned likewise; none holds the erased
address or name, nor does any row of the database.
"""

from __future__ import annotations

import email
import email.policy
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from email.message import EmailMessage, Message
from email.utils import make_msgid
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlmodel import SQLModel, select

import rules
from emails.delivery import to_bytes
from rules.bots import Budget, concrete
from service.domain import bot_seats, chat_notices, deadlines, delivery, house_bot, notifications, privacy, tally
from service.domain.models import Game, utcnow
from service.infra.chat import ChatPolicy
from service.infra.db import get_session
from tests.api.conftest import create_game
from tests.chat_receiver import ChatReceiver, chat_receiver
from tests.conftest import deal_games_from
from tests.hidden_information import CoinWatch, with_canaries
from tests.smtp import headline

BASE = "https://smallworld.example"
#: The house bot's budget here: the test is about what it sends, not how well it plays.
BOT_BUDGET = Budget(worlds=1, breadth=2, deep_worlds=1, shortlist=1)
NEVER = timedelta(days=3650)
INBOUND_SECRET = "inbound-secret-of-the-hidden-information-test"
LINK = re.compile(re.escape(BASE) + r"/(play|invite|admin|unsubscribe)/([A-Za-z0-9_\-.]+)")
FEED = re.compile(re.escape(BASE) + r"(/calendar/[A-Za-z0-9_\-.]+\.ics)")
CHOICES = re.compile(re.escape(BASE) + r"(/choices/[A-Za-z0-9_\-.]+)")
SIGN_IN = re.compile(re.escape(BASE) + r"/sign-in/[A-Za-z0-9_\-.]+")


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, "the page has a form"
    return found.group(1)


class CollectingBackend:
    """A mail backend that keeps what it is given (the same composed messages SMTP would carry)."""

    def __init__(self) -> None:
        self.sent: list[EmailMessage] = []

    @contextmanager
    def open(self) -> Iterator[CollectingBackend]:
        yield self

    def send(self, message: Message) -> None:
        # Read back from the bytes that would go over SMTP, as a mail client would.
        parsed = email.message_from_bytes(to_bytes(message), policy=email.policy.default)
        self.sent.append(parsed)  # type: ignore[arg-type]


def text_parts(message: EmailMessage) -> list[str]:
    return [
        str(part.get_content())
        for part in message.walk()
        if part.get_content_type() in ("text/plain", "text/html") and not part.is_multipart()
    ]


class Table:
    """The game as its players see it: their clients, their mailboxes, the watch on their coins."""

    def __init__(self, app: Flask, players: int, chat: ChatReceiver) -> None:
        self.app = app
        self.chat = chat
        self.chat_seen = 0
        #: Each seat's calendar feed (the path of the link in its turn mails).
        self.feeds: dict[int, str] = {}
        #: Each seat's page of mail choices (the footer of its mails), and the digests sent so far.
        self.choices: dict[int, str] = {}
        self.digest_days = 0
        self.api = app.test_client()
        self.backend = CollectingBackend()
        self.delivered = 0
        self.watch = CoinWatch(players)
        self.emails = [f"p{i}@example.org" for i in range(players)]
        self.tokens: dict[int, str] = {}
        #: Each seat's latest mail that takes orders by reply, and the answers to orders scanned.
        self.replyable: dict[int, EmailMessage] = {}
        self.answers_scanned = 0
        self.pages: dict[int, Any] = {}
        self.templates: set[str] = set()
        self.answers_for_another = 0
        self.not_read_scanned = 0
        self.game_id = 0
        self.finished = False
        self.ending = False
        #: Mail parts scanned that told "Since your last turn" (the other players' turns, issue 18).
        self.since_scanned = 0
        self.host = app.test_client()
        self.said = 0
        #: Regions asked about so far (each look around asks about the next one).
        self.rounds = 0
        #: Each seat's browser signed in by mail (My games), and the game's watch pages (by link, public).
        self.signed_in: dict[int, Any] = {}
        self.watch_paths: list[str] = []
        #: The host gave a seat to the house bot; the steps the bot played.
        self.bot_given = False
        self.bot_steps = 0
        #: The seats' "Download my data" files scanned.
        self.downloads = 0

    def bot_plays(self, seat: int) -> bool:
        with self.app.app_context():
            return bot_seats.is_bot(bot_seats.seat_row(get_session(), self.game_id, seat))

    def state(self) -> dict[str, Any] | None:
        with self.app.app_context():
            game = get_session().get(Game, self.game_id)
            assert game is not None
            self.finished = game.status == "finished"
            self.ending = game.status == "ending"
            return game.state

    def deliver(self, now: Any = None) -> list[tuple[int, EmailMessage]]:
        """Send what is due, as the mail worker would, and scan each new mail for its recipient."""
        with self.app.app_context():
            delivery.deliver_due_mail(
                get_session(),
                self.backend,
                self.app.extensions["smallworld.links"],
                delivery.MailSettings.from_config(self.app.config),
                now=now,
            )
        new = self.backend.sent[self.delivered :]
        self.delivered = len(self.backend.sent)
        self.watch.note(self.state())
        received = []
        for message in new:
            seat = self.emails.index(str(message["To"]).split("<")[-1].rstrip(">").strip())
            self.templates.add(headline(message))
            if not self.finished:
                for index, part in enumerate(text_parts(message)):
                    self.watch.scan_text(part, seat, f"mail {headline(message)!r} part {index}")
                    self.since_scanned += "Since your last turn" in part
            for feed in FEED.findall("\n".join(text_parts(message))):
                self.feeds[seat] = feed
            for choices in CHOICES.findall("\n".join(text_parts(message))):
                self.choices[seat] = choices
            reply_address = str(message["Reply-To"] or "")
            if reply_address.startswith("play+") and "+talk-" not in reply_address:
                self.replyable[seat] = message  # the seat's latest mail that takes orders by reply
            # An answer replies to the player's mail ("Re:"), or, to orders from another address, names it.
            for_another = "not from your address" in "\n".join(text_parts(message))
            answer = headline(message).startswith(("Done in", "Not all done", "No orders"))
            if answer or str(message["Subject"]).startswith("Re: ") or for_another:
                self.answers_scanned += not self.finished
                self.answers_for_another += for_another and not self.finished
            if "was not read" in str(message["Subject"]):
                self.not_read_scanned += not self.finished
            received.append((seat, message))
        self.hear_the_chat()
        return received

    def reply_by_mail(self, seat: int, orders: str, *, sender: str | None = None, to: str | None = None) -> None:
        """The seat replies to its latest mail that takes orders (ARCHITECTURE §10), by ``POST /inbound/mail``;
        from ``sender`` (the seat's owner is then told who), to ``to`` (not a reply address: the sender is told
        it was not read)."""
        original = self.replyable[seat]
        reply = EmailMessage()
        reply["From"] = sender or self.emails[seat]
        reply["To"] = to or str(original["Reply-To"])
        reply["Subject"] = f"Re: {original['Subject']}"
        reply["Message-ID"] = make_msgid(domain="example.org")
        reply.set_content(orders)
        answer = self.api.post(
            "/inbound/mail",
            data=reply.as_bytes(),
            headers={"Authorization": f"Bearer {INBOUND_SECRET}"},
            content_type="message/rfc822",
        )
        assert answer.status_code == 202, answer.get_data(as_text=True)

    def hear_the_chat(self) -> None:
        """Post the due chat notices, as the chat task would; scan each one the chat got, as read by anyone."""
        with self.app.app_context():
            chat_notices.deliver_due_notices(
                get_session(), chat_notices.NoticeSettings(), ChatPolicy.from_config(self.app.config)
            )
        for body in self.chat.bodies[self.chat_seen :]:
            text = f"{body['title']}\n{body['message']}"
            assert "http" not in text and "/play/" not in text, f"a signed link in a chat notice: {text}"
            if not self.finished:
                self.watch.scan_text(text, None, f"chat notice {body['title']!r}")
        self.chat_seen = len(self.chat.bodies)

    def get(self, seat: int, path: str) -> Any:
        response = self.api.get(path, headers={"Authorization": f"Bearer {self.tokens[seat]}"})
        assert response.status_code == 200, (path, response.get_data(as_text=True)[:300])
        body = response.get_json()
        if not self.finished:
            self.watch.scan_json(body, seat, f"GET {path}")
        return body

    def page(self, seat: int | None, path: str) -> None:
        client = self.pages[seat] if seat is not None else self.app.test_client()
        response = client.get(path, follow_redirects=True)
        assert response.status_code == (200 if seat is not None else 403), (seat, path, response.status_code)
        if not self.finished:
            self.watch.scan_text(response.get_data(as_text=True), seat, f"page {path}")

    def spectate(self, path: str) -> None:
        """A page for spectators (the watch pages, the public list): seen by nobody in particular, and never
        with a seat's, an invitation's or the host's link in it."""
        response = self.app.test_client().get(path)
        assert response.status_code == 200, (path, response.status_code)
        text = response.get_data(as_text=True)
        assert not re.search(r"/(play|invite|admin|calendar|unsubscribe)/", text), f"a private link in {path}"
        if not self.finished:
            self.watch.scan_text(text, None, f"watch page {path}")

    def sign_in_every_seat(self) -> None:
        """Each seat signs in by mail (My games) and asks for its links to the game ("mail me my links"); the
        mails are scanned for their recipients as every other mail is."""
        for seat, address in enumerate(self.emails):
            client = self.app.test_client()
            csrf = _csrf(client.get("/sign-in").get_data(as_text=True))
            assert client.post("/sign-in", data={"email": address, "csrf_token": csrf}).status_code == 200
            links = client.post(
                f"/games/{self.game_id}/links", data={"email": address, "csrf_token": csrf, "back": "/"}
            )
            assert links.status_code == 200
            mails = self.deliver()
            [link] = {u for _, m in mails for u in SIGN_IN.findall("\n".join(text_parts(m)))}
            assert any("/play/" in "\n".join(text_parts(m)) for _, m in mails), "the seat's links came by mail"
            path = link.removeprefix(BASE)
            csrf = _csrf(client.get(path).get_data(as_text=True))
            assert client.post(path, data={"csrf_token": csrf}).status_code == 303
            self.signed_in[seat] = client

    def download_my_data(self, seat: int, client: Any) -> dict[str, Any]:
        """The seat's "Download my data" (service/domain/privacy.py): its mails, its messages, its games, and
        nothing another player may not see: no coins of theirs, no address of theirs, no link at all."""
        response = client.get("/me/data")
        assert response.status_code == 200 and response.headers["Content-Disposition"].startswith("attachment")
        document = response.get_json()
        assert document["mails_to_you"], "the download tells the mails the seat got"
        if not self.finished:
            self.watch.scan_json(document, seat, "Download my data")
        text = response.get_data(as_text=True)
        others = [address for number, address in enumerate(self.emails) if number != seat]
        assert not any(address in text for address in others), "another player's address in the download"
        assert not re.search(r"https?://|/(play|invite|admin|calendar|choices|sign-in|never)/", text), "a link"
        self.downloads += 1
        return document

    def say(self, seat: int, text: str) -> None:
        """The seat writes at the game's table from its game page (mailed to the others, told to the chat)."""
        client = self.pages[seat]
        page = client.get(f"/games/{self.game_id}").get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token is not None
        posted = client.post(f"/games/{self.game_id}/talk", data={"csrf_token": token.group(1), "text": text})
        assert posted.status_code == 303, posted.get_data(as_text=True)[:300]
        self.said += 1

    def choose_a_digest(self, seat: int) -> None:
        """The seat chooses a daily digest for all its games, on the page its mails link (at midnight, so
        that every digest round is its hour)."""
        client = self.app.test_client()
        page = client.get(self.choices[seat]).get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token is not None
        form = {"csrf_token": token.group(1), "default": "digest", "digest_hour": "0", "wants_reminders": "1"}
        assert client.post(self.choices[seat], data=form).status_code == 303

    def send_digests(self) -> None:
        """A round of daily digests, as the worker's task would, on the next day each time."""
        self.digest_days += 1
        with self.app.app_context():
            notifications.send_digests(
                get_session(), self.app.extensions["smallworld.links"], now=utcnow() + timedelta(days=self.digest_days)
            )

    def new_calendar_link(self, seat: int) -> None:
        """ "Make a new calendar link" on My games: the old feed's page (410) and the new feed are scanned too."""
        client = self.signed_in[seat]
        page = client.get("/me").get_data(as_text=True)
        old, csrf = FEED.search(page), re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert old and csrf
        assert client.post("/me/calendar-link", data={"csrf_token": csrf.group(1)}).status_code == 303
        gone = self.api.get(old.group(1))
        assert gone.status_code == 410
        self.watch.scan_text(gone.get_data(as_text=True), seat, "a replaced calendar link")
        new = FEED.search(client.get("/me").get_data(as_text=True))
        assert new and new.group(1) != old.group(1)
        self.feeds[seat] = new.group(1)
        self.feed(seat, new.group(1))

    def feed(self, seat: int | None, path: str) -> None:
        response = self.api.get(path)
        assert response.status_code == 200 and response.mimetype == "text/calendar", (seat, path)
        if not self.finished:
            self.watch.scan_text(response.get_data(as_text=True), seat, f"calendar feed {path}")

    def look_around(self, pages: bool) -> None:
        """Every seat reads the API; with ``pages``, every page it can open too (and someone without a link
        tries the game page). The awaited seats' turn pages are read at every step."""
        state = self.state()
        self.watch.note(state)
        if self.finished or state is None:
            return
        awaited = rules.awaiting(rules.read_state(state))
        for seat in sorted(self.tokens):
            self.get(seat, f"/api/games/{self.game_id}")
            self.get(seat, f"/api/games/{self.game_id}/legal-actions")
            if pages:
                self.get(seat, f"/api/games/{self.game_id}/history")
                for path in ("", "/history", f"/history?player={(seat + 1) % 3}", "/resign"):
                    self.page(seat, f"/games/{self.game_id}{path}")
            if pages or seat in awaited:
                self.page(seat, f"/games/{self.game_id}/turn")
            if seat in awaited:
                # What a step will do and why a region cannot be conquered (service/domain/previews.py).
                self.get(seat, f"/api/games/{self.game_id}/regions/{self.rounds % 23}")
                self.get(seat, f"/api/games/{self.game_id}/undo")
                # An action asked about, with the board after it (a redeployment's preview).
                legal = self.get(seat, f"/api/games/{self.game_id}/legal-actions?previews=false")
                offered = legal["actions"][self.rounds % len(legal["actions"])] if legal["actions"] else None
                # A described choice (a redeployment) is asked about as one distribution of it.
                asked = (
                    concrete(rules.Action.from_json(offered), random.Random(self.rounds)).to_json() if offered else {}
                )
                asked = asked or {"type": "end_turn"}
                told = self.api.post(
                    f"/api/games/{self.game_id}/explain",
                    headers={"Authorization": f"Bearer {self.tokens[seat]}"},
                    json={"action": asked, "board": True},
                )
                assert told.status_code == 200, told.get_json()
                if not self.finished:
                    self.watch.scan_json(told.get_json(), seat, "POST explain")
                # The turn page's panel of a region: its cost, who holds it, what each step on it will do.
                self.page(seat, f"/games/{self.game_id}/turn?region={self.rounds % 23}")
                self.rounds += 1
        if pages:
            self.page(None, f"/games/{self.game_id}")
            # The calendar feeds: each seat's own (its turn links), and the game's (public).
            for seat, feed in sorted(self.feeds.items()):
                self.feed(seat, feed)
            # The pages of mail choices (each seat's, from its mails' footer).
            for seat, path in sorted(self.choices.items()):
                self.page(seat, path)
            with self.app.app_context():
                game_feed = self.app.extensions["smallworld.links"].game_calendar_url(self.game_id)
            self.feed(None, game_feed.removeprefix(BASE))
            # My games, for each seat signed in by mail; the watch pages and the list of public games.
            for seat, client in sorted(self.signed_in.items()):
                response = client.get("/me")
                assert response.status_code == 200 and "My games" in response.get_data(as_text=True)
                self.watch.scan_text(response.get_data(as_text=True), seat, "My games")
                if state["turn"] % 3 == 1:  # every third turn: it tells every mail the seat got so far
                    self.download_my_data(seat, client)
            for path in (*self.watch_paths, "/games/public"):
                self.spectate(path)
            # The host is a player too (seat 0): the game's admin page must not tell them the others' coins.
            response = self.host.get(f"/admin/games/{self.game_id}")
            assert response.status_code == 200
            self.watch.scan_text(response.get_data(as_text=True), 0, "admin page")


def seated_table(app: Flask, chat: ChatReceiver, names: list[str] | None = None, **settings: Any) -> tuple[Table, str]:
    """A game of three (``names``, by default Player 0 to 2) in ``ask`` mode with ``settings``, its chat, every
    seat accepted, in its browser, signed in by mail (My games), seat 0 on a daily digest, the game public;
    every page looked at once. Returns the table and the host's admin token."""
    table = Table(app, players=3, chat=chat)
    body = {
        "name": "Secret coins",
        "players": [{"name": n, "email": e} for n, e in zip(names or NAMES, table.emails, strict=True)],
        "settings": {"redeploy": "ask", "reminders_before_seconds": [3600], "auto_pass_alert_after": 1, **settings},
        "chat_url": chat.url,
    }
    created = create_game(table.api, body)
    assert created.status_code == 201
    table.game_id = created.get_json()["id"]
    admin = created.get_json()["admin_url"].rsplit("/", 1)[-1]
    assert table.host.get(f"/admin/{admin}").status_code == 302  # the host's admin session

    for seat, mail in table.deliver():
        for kind, token in LINK.findall("\n".join(text_parts(mail))):
            if kind == "invite":
                accepted = table.api.post("/api/invitations/accept", headers={"Authorization": f"Bearer {token}"})
                assert accepted.status_code == 200
                table.tokens[seat] = accepted.get_json()["turn_url"].rsplit("/", 1)[-1]
    assert sorted(table.tokens) == [0, 1, 2]
    for seat, token in table.tokens.items():
        table.pages[seat] = app.test_client()
        assert table.pages[seat].get(f"/play/{token}").status_code == 302  # the seat's session

    table.deliver()
    # Spectators: the game's watch link, and the game made public (watched without a link, listed).
    watching = table.api.post(
        f"/api/admin/games/{table.game_id}/watching",
        headers={"Authorization": f"Bearer {admin}"},
        json={"public": True},
    ).get_json()
    by_link, public = watching["watch_url"].removeprefix(BASE), watching["public_url"].removeprefix(BASE)
    table.watch_paths = [by_link, public, f"{by_link}/history", f"{public}/history"]
    table.sign_in_every_seat()
    assert sorted(table.choices) == [0, 1, 2], "every seat's mails link its page of mail choices"
    table.choose_a_digest(0)
    table.look_around(pages=True)
    return table, admin


#: The seats' names, unless a test gives its own.
NAMES = [f"Player {i}" for i in range(3)]


def play_a_whole_game(app: Flask, rnd: random.Random, chat: ChatReceiver) -> Table:
    table, admin = seated_table(app, chat)
    table.new_calendar_link(2)

    last_step, last_turn = None, None
    for _ in range(3000):
        state = table.state()
        if table.finished:
            break
        if table.ending:
            # Over by the rules, not yet tallied: every page, the API and the feeds still hide the coins.
            table.look_around(pages=True)
            with app.app_context():
                assert tally.tally_game(get_session(), table.game_id)  # the worker's task, as it runs it
            table.deliver()
            continue
        assert state is not None
        awaited = sorted(rules.awaiting(rules.read_state(state)))
        step_key = (state["turn"], state["current"], state["phase"], tuple(awaited))
        if step_key != last_step:
            # Every page at each new game turn (history pages replay the game: the costly part); the API
            # and the awaited seat's turn page at every new step.
            if state["turn"] != last_turn:
                # Table talk: the seat on turn says a word (mailed to the others, on every page, in the chat).
                table.say(awaited[0], f"Turn {state['turn']}: *good luck*, all.")
                table.deliver()
                # Seat 0 follows the game by a daily digest: one a (simulated) day, scanned as it arrives.
                table.send_digests()
                table.deliver()
            table.look_around(pages=state["turn"] != last_turn)
            last_step, last_turn = step_key, state["turn"]
        seat = awaited[0]
        if state["turn"] == 3 and not table.bot_given:
            # The house bot: the host gives it seat 1 (its player is mailed the way back); at turn 5 the player
            # takes the seat back from their page. Meanwhile the bot plays the seat's turns, as the worker does.
            given = table.api.post(
                f"/api/admin/games/{table.game_id}/bot", headers={"Authorization": f"Bearer {admin}"}, json={"seat": 1}
            )
            assert given.status_code == 200, given.get_json()
            table.watch.scan_json(given.get_json(), 0, "admin bot")
            table.bot_given = True
            table.deliver()
            table.look_around(pages=True)
        if state["turn"] == 5 and table.bot_plays(1):
            page = table.pages[1].get(f"/games/{table.game_id}").get_data(as_text=True)
            table.watch.scan_text(page, 1, "game page with the house bot in the seat")
            back = table.pages[1].post(f"/games/{table.game_id}/turn/take-back", data={"csrf_token": _csrf(page)})
            assert back.status_code == 302
        if table.bot_plays(seat):
            with app.app_context():
                played = house_bot.play_bot_turns(
                    get_session(), table.game_id, app.extensions["smallworld.links"], budget=BOT_BUDGET
                )
            assert played.steps, "the house bot played the seat's step"
            table.bot_steps += played.steps
            table.deliver()
            continue
        roll = rnd.random()
        if roll < 0.04:
            # Left to the deadline: a reminder first, then the auto-pass (and the host's alert).
            with app.app_context():
                game = get_session().get(Game, table.game_id)
                assert game is not None and game.deadline_at is not None
                deadline = game.deadline_at
            for at in (deadline - timedelta(minutes=30), deadline + timedelta(seconds=1)):
                with app.app_context():
                    # (no outage guard: this test jumps the clock, it was never down)
                    deadlines.sweep(get_session(), app.extensions["smallworld.links"], now=at, outage_after=NEVER)
                table.deliver(now=at + timedelta(seconds=1))
            continue
        if roll < 0.09 and roll >= 0.06 and seat in table.replyable:
            # Orders by mail: the answer shows the board, what may be done, and the seat's own coins only.
            # Every third one from another address (the owner is told), and one to the plain sender's address.
            other = "a.friend@example.net" if table.answers_scanned % 3 == 2 else None
            table.reply_by_mail(seat, "help", sender=other)
            if not table.not_read_scanned:
                table.reply_by_mail(seat, "help", to="smallworld@smallworld.example")
            table.deliver()
            continue
        if roll < 0.06:
            extended = table.api.post(
                f"/api/admin/games/{table.game_id}/extend",
                headers={"Authorization": f"Bearer {admin}"},
                json={"hours": 1},
            )
            assert extended.status_code == 200
            if not table.finished:
                table.watch.scan_json(extended.get_json(), 0, "admin extend")
            table.deliver()
        legal = table.get(seat, f"/api/games/{table.game_id}/legal-actions")
        action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
        done = table.api.post(
            f"/api/games/{table.game_id}/actions",
            headers={"Authorization": f"Bearer {table.tokens[seat]}"},
            json={"version": legal["version"], "action": action},
        )
        assert done.status_code == 200, done.get_json()
        table.watch.note(table.state())
        if not table.finished:
            table.watch.scan_json(done.get_json(), seat, f"POST actions {action['type']}")
        table.deliver()
    assert table.finished, "the game did not end"
    table.deliver()
    return table


@pytest.mark.parametrize("seed", [13])
def test_no_player_ever_receives_another_players_coins_before_the_end(
    make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # Every seat starts with a canary count of coins, in the game and in every replay of it.
    monkeypatch.setattr(rules, "new_game", with_canaries(rules.new_game))
    # The game's seed drawn from ``seed`` rather than at random, so every run meets the same game and the
    # same mails (each kind listed below is met in this game); the service's other secrets stay random.
    deal_games_from(monkeypatch, seed)
    # The game's chat is a receiver on this machine; the players may also reply to their mails with orders.
    app = make_app(BASE_URL=BASE, CHAT_LOOPBACK_FOR_TESTS=True, INBOUND_SECRET=INBOUND_SECRET)
    with chat_receiver() as chat:
        table = play_a_whole_game(app, random.Random(seed), chat)
    table.watch.assert_no_leaks()
    table.watch.confirm_own_coins_seen(range(3))
    table.watch.words.assert_one_form()
    subjects = " ".join(table.templates).lower()
    assert table.bot_steps > 5, "the house bot played seat 1's turns"
    for kind in (
        "invited",
        "your turn",
        "redeploy",
        "played for you",
        "reminder",
        "is over",
        "wrote at the table",
        "the house bot plays your seat",
        "your day",
    ):
        assert kind in subjects, f"no {kind!r} mail in this game: {sorted(table.templates)}"
    assert table.watch.scanned > 500
    assert table.downloads >= 6, "every seat's download was scanned, more than once"
    assert table.answers_scanned >= 3, "answers to orders by mail were scanned"
    assert table.answers_for_another >= 1, "an answer telling the owner of orders from another address was scanned"
    assert table.not_read_scanned == 1, "the answer to a mail to no reply address was scanned"
    assert table.since_scanned > 10, "the turn mails told the other players' turns, and were scanned"
    assert len(table.feeds) == 3, "every seat's turn mails offered its calendar feed"
    assert any("turn" in b["title"] or "play" in b["title"] for b in chat.bodies), "the chat heard of the turns"
    assert any(b["title"].startswith("Secret coins is over") for b in chat.bodies), "the chat heard the result"
    assert table.said >= 5 and any(b["title"].endswith("at the table") for b in chat.bodies), "the chat heard the talk"
    # After the end, everything is public: the final mail names every seat's coins.
    with app.app_context():
        final = get_session().exec(select(Game).where(Game.id == table.game_id)).one()
    over = [m for m in table.backend.sent if "is over" in headline(m)]
    assert over and all(str(row["coins"]) in "\n".join(text_parts(over[0])) for row in final.result or [])


def test_after_a_player_deletes_their_address_the_pages_tell_neither_it_nor_anyones_coins(
    make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seat 2 (Zebulon) talks at the table, downloads its data, then deletes its address from My games
    (service/domain/privacy.py) at turn 3: the house bot plays the seat from then on, as the host set. Every
    page, API answer, mail, feed and chat notice the others and the spectators get afterwards is scanned for
    hidden coins as before, and none of them, nor any row of the database, holds the erased address or name."""
    monkeypatch.setattr(rules, "new_game", with_canaries(rules.new_game))
    deal_games_from(monkeypatch, 29)
    app = make_app(BASE_URL=BASE, CHAT_LOOPBACK_FOR_TESTS=True, INBOUND_SECRET=INBOUND_SECRET)
    erased, name = "p2@example.org", "Zebulon"
    rnd = random.Random(29)
    with chat_receiver() as chat:
        table, _ = seated_table(app, chat, ["Ann", "Bob", name], resigned_seats="bot")
        play_until_turn(table, rnd, 3)
        table.say(2, f"{name} here: see you at the end.")
        table.deliver()
        assert table.download_my_data(2, table.signed_in[2])["messages_at_the_tables"]

        browser = table.signed_in[2]
        page = browser.get("/me/delete").get_data(as_text=True)
        deleted = browser.post("/me/delete", data={"csrf_token": _csrf(page), "understood": "yes"})
        assert deleted.status_code == 200, deleted.get_data(as_text=True)[:300]
        # The seat is the former player's now: its links, pages and session no longer open anything.
        assert table.pages[2].get(f"/games/{table.game_id}").status_code == 403
        for seen in (table.tokens, table.pages, table.signed_in, table.feeds, table.choices):
            seen.pop(2, None)
        chat_before = len(chat.bodies)
        mails_before = len(table.backend.sent)
        table.deliver()
        table.look_around(pages=True)
        play_until_turn(table, rnd, 6)
        assert table.bot_steps > 0, "the house bot played the erased seat"

        seen = [str(body) for body in chat.bodies[chat_before:]]
        seen += ["\n".join(text_parts(message)) for message in table.backend.sent[mails_before:]]
        for seat, client in sorted(table.pages.items()):
            for path in ("", "/history", "/history?player=2", "/turn"):
                seen.append(client.get(f"/games/{table.game_id}{path}").get_data(as_text=True))
            seen.append(
                table.api.get(f"/api/games/{table.game_id}/history", headers=_bearer(table, seat)).get_data(
                    as_text=True
                )
            )
            seen.append(table.signed_in[seat].get("/me/data").get_data(as_text=True))
        for path in (*table.watch_paths, "/games/public"):
            seen.append(app.test_client().get(path).get_data(as_text=True))
    table.watch.assert_no_leaks()
    table.watch.confirm_own_coins_seen([0, 1])
    assert privacy.FORMER_PLAYER in "\n".join(seen)
    for text in seen:
        assert erased not in text and name not in text, text[:500]
    with app.app_context():
        session = get_session()
        for table_name, table_model in SQLModel.metadata.tables.items():
            for column in table_model.columns:
                if not isinstance(getattr(column.type, "impl_instance", column.type), sa.String | sa.JSON):
                    continue
                for needle in (erased, name.lower()):
                    where = sa.func.lower(sa.cast(column, sa.Text)).contains(needle, autoescape=True)
                    count = session.execute(sa.select(sa.func.count()).select_from(table_model).where(where)).scalar()
                    assert not count, f"{needle} in {table_name}.{column.name}"


def _bearer(table: Table, seat: int) -> dict[str, str]:
    return {"Authorization": f"Bearer {table.tokens[seat]}"}


def play_until_turn(table: Table, rnd: random.Random, turn: int) -> None:
    """Random legal steps by the seats the game waits for (the house bot's, as the worker plays them) until
    game turn ``turn``; every page looked at at each new turn, the API at each step."""
    last_turn = None
    for _ in range(2000):
        state = table.state()
        assert state is not None and not (table.finished or table.ending)
        if state["turn"] >= turn:
            return
        if state["turn"] != last_turn:
            table.look_around(pages=True)
            last_turn = state["turn"]
        seat = min(rules.awaiting(rules.read_state(state)))
        if table.bot_plays(seat):
            with table.app.app_context():
                played = house_bot.play_bot_turns(
                    get_session(), table.game_id, table.app.extensions["smallworld.links"], budget=BOT_BUDGET
                )
            table.bot_steps += played.steps
            table.deliver()
            continue
        legal = table.get(seat, f"/api/games/{table.game_id}/legal-actions")
        action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
        done = table.api.post(
            f"/api/games/{table.game_id}/actions",
            headers=_bearer(table, seat),
            json={"version": legal["version"], "action": action},
        )
        assert done.status_code == 200, done.get_json()
        table.watch.note(table.state())
        table.watch.scan_json(done.get_json(), seat, f"POST actions {action['type']}")
        table.deliver()
    raise AssertionError(f"turn {turn} never came")
