"""service.web.calendar_feeds: the feeds behind their signed links, as a calendar app and a player meet them.

The turn mail's footer offers the reader's feed; opening it gives an ``.ics`` whose event links back to
the seat; a tampered token gets 403 and a page that says so; the game page offers both feeds.
"""

from __future__ import annotations

import email
import email.policy
import re
import time
from pathlib import Path
from typing import Any

from flask import Flask
from icalendar import Calendar
from sqlmodel import Session

from emails.delivery import backend_from_config
from service.domain import delivery
from service.domain.links import TURN, current_links
from service.infra.db import get_engine
from tests.api.conftest import create_game
from tests.smtp import headline

BASE = "https://smallworld.example"
FEED = re.compile(re.escape(BASE) + r"/calendar/[A-Za-z0-9_\-.]+\.ics")


def started_game(client: Any) -> int:
    body = {
        "name": "Calendar night",
        "players": [{"name": "Ann", "email": "ann@example.org"}, {"name": "Bob", "email": "bob@example.org"}],
        "settings": {"start_when_all_accepted": False},
    }
    created = create_game(client, body)
    assert created.status_code == 201, created.get_json()
    return int(created.get_json()["id"])


def delivered(app: Flask) -> dict[str, list[str]]:
    """Deliver the outbox into the mail folder; the text of each mail, by its headline (``tests.smtp.headline``)."""
    with app.app_context(), Session(get_engine(app)) as session:
        delivery.deliver_due_mail(
            session, backend_from_config(app.config), current_links(), delivery.MailSettings.from_config(app.config)
        )
    mails: dict[str, list[str]] = {}
    for path in sorted(Path(app.config["MAIL_DIR"]).glob("*.eml")):
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        text = message.get_body(("plain",)).get_content()  # type: ignore[union-attr]
        mails.setdefault(headline(message), []).append(text)
    return mails


def test_the_turn_mail_offers_the_readers_feed_whose_event_links_to_my_games_not_to_the_seat(make_app: Any) -> None:
    app = make_app(BASE_URL=BASE)
    client = app.test_client()
    started_game(client)
    mails = delivered(app)
    (turn_mail,) = [text for subject, texts in mails.items() if "your turn" in subject for text in texts]
    (feed_url,) = FEED.findall(turn_mail)
    assert "webcal://" in turn_mail
    invitations = [text for subject, texts in mails.items() if "invited" in subject.lower() for text in texts]
    assert invitations and not any("/calendar/" in text for text in invitations)

    response = client.get(feed_url.removeprefix(BASE))
    assert response.status_code == 200
    assert response.mimetype == "text/calendar"
    assert "private" in response.headers["Cache-Control"]
    (event,) = Calendar.from_ical(response.data).walk("VEVENT")
    turn_url = re.search(re.escape(BASE) + r"/play/(\S+)", turn_mail)
    assert turn_url is not None
    # The feed is fetched for months and its link is in every turn mail: it opens no seat. Its event links to
    # My games, where a signed-in browser opens the seat; neither the turn link nor its token is in it.
    assert str(event["url"]) == f"{BASE}/me"
    unfolded = response.data.replace(b"\r\n ", b"")
    assert b"/play/" not in unfolded and turn_url.group(1).split(".")[0].encode() not in unfolded
    assert str(event["summary"]) == "Your turn: Calendar night"

    # Calendar apps poll: an unchanged feed reads the same later (its links too), and answers 304 to its ETag.
    time.sleep(1.1)  # a later second: a link signed at the time of each fetch would differ
    later = client.get(feed_url.removeprefix(BASE))
    assert later.data == response.data and later.headers["ETag"] == response.headers["ETag"]
    again = client.get(feed_url.removeprefix(BASE), headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304
    # And the event's link is My games (which asks this browser, not signed in, to sign in).
    assert client.get(str(event["url"]).removeprefix(BASE)).headers["Location"].endswith("/sign-in")


def test_a_tampered_or_foreign_token_gets_403_and_a_page_that_says_so(make_app: Any) -> None:
    app = make_app(BASE_URL=BASE)
    client = app.test_client()
    game_id = started_game(client)
    with app.app_context():
        links = current_links()
        good = links.game_calendar_url(game_id).removeprefix(BASE)
        turn_token = links.signer.sign(TURN, {"g": game_id, "s": 0, "k": "whatever"})
        unknown_game = links.game_calendar_url(game_id + 1000).removeprefix(BASE)
        unknown_player = links.address_calendar_url(99999, serial=0, calendar_serial=0).removeprefix(BASE)
    assert client.get(good).status_code == 200
    token = good.removeprefix("/calendar/").removesuffix(".ics")
    tampered = "/calendar/" + token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB") + ".ics"
    for path in (tampered, f"/calendar/{turn_token}.ics", unknown_game, unknown_player, "/calendar/x.ics"):
        response = client.get(path)
        assert response.status_code == 403, path
        page = response.get_data(as_text=True)
        assert "This calendar link does not work" in page
        assert "Calendar night" not in page and "BEGIN:VCALENDAR" not in page


def test_the_game_page_offers_the_players_feed_and_the_games_own(make_app: Any) -> None:
    app = make_app(BASE_URL=BASE)
    client = app.test_client()
    game_id = started_game(client)
    mails = delivered(app)
    (turn_mail,) = [text for subject, texts in mails.items() if "your turn" in subject for text in texts]
    turn_url = re.search(re.escape(BASE) + r"/play/(\S+)", turn_mail)
    assert turn_url is not None
    assert client.get(f"/play/{turn_url.group(1)}").status_code == 302
    page = client.get(f"/games/{game_id}").get_data(as_text=True)
    with app.app_context():
        game_feed = current_links().game_calendar_url(game_id)
    (mine,) = FEED.findall(turn_mail)
    assert mine in page and mine.replace("https://", "webcal://") in page
    assert game_feed in page and game_feed.replace("https://", "webcal://") in page
    public = client.get(game_feed.removeprefix(BASE))
    assert public.status_code == 200 and b"/play/" not in public.data


def test_an_address_has_one_feed_address_whichever_mail_gives_it(make_app: Any) -> None:
    # Subscribed to once and fetched for months: every mail gives the same address (and a mail sent
    # again is the very same mail).
    app = make_app(BASE_URL=BASE)
    with app.app_context():
        links = current_links()
        first = links.address_calendar_url(4, serial=0, calendar_serial=0)
        assert (
            links.address_calendar_url(4, serial=0, calendar_serial=0)
            == first
            != links.address_calendar_url(5, serial=0, calendar_serial=0)
        )
        assert links.game_calendar_url(4) not in (first, links.address_calendar_url(4, serial=0, calendar_serial=0))


def test_a_feed_answers_304_to_its_weak_etag_and_to_its_last_modified(make_app: Any) -> None:
    app = make_app(BASE_URL=BASE)
    client = app.test_client()
    game_id = started_game(client)
    with app.app_context():
        path = current_links().game_calendar_url(game_id).removeprefix(BASE)
    first = client.get(path)
    assert first.status_code == 200
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    assert etag.startswith('W/"') and modified
    # As calendar apps ask again: with the weak ETag, with the strong form of it, with the date.
    assert client.get(path, headers={"If-None-Match": etag}).status_code == 304
    assert client.get(path, headers={"If-None-Match": etag.removeprefix("W/")}).status_code == 304
    assert client.get(path, headers={"If-Modified-Since": modified}).status_code == 304
    assert client.get(path, headers={"If-None-Match": 'W/"other"'}).status_code == 200
    assert client.get(path, headers={"If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}).status_code == 200
