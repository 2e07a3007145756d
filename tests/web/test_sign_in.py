"""Signing in by mail, My games and "mail me my links" (service/web/pages/me.py, service/domain/sign_in.py,
service/domain/my_games.py; ARCHITECTURE §9: an address is an identity, strangers cannot use us to mail strangers).

On SQLite, and on PostgreSQL with the limits counted in Redis (as deployed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from icalendar import Calendar
from sqlmodel import Session, select

from service.domain import block_list, sign_in
from service.domain.links import SIGN_IN_MAX_AGE
from service.domain.models import Game, Player, PlayerRecord, SignIn, utcnow
from service.infra.db import get_engine
from tests.api.conftest import seat_link
from tests.security.conftest import body, created_and_confirmed, invitations, mails, token_of

ANN, BOB, CAT = "ann@example.org", "bob@example.org", "cat@example.org"
#: What differs between two answers of the same page: its CSRF token, and the serial of each response.
CSRF = re.compile(r'name="csrf_token" value="[^"]+"|data-page="[0-9a-f]+"')


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Flask:
    settings: dict[str, Any] = {"BASE_URL": "https://smallworld.example"}
    if request.param == "postgres":
        redis = request.getfixturevalue("redis_url")
        settings.update(DATABASE_URL=request.getfixturevalue("postgres_url"), RATELIMIT_STORAGE_URI=redis)
    return make_app(**settings)


def csrf_of(client: Any, path: str = "/sign-in") -> str:
    page = client.get(path).get_data(as_text=True)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, "the page has a form with a CSRF token"
    return found.group(1)


def ask(client: Any, email: str, **environ: Any) -> Any:
    return client.post("/sign-in", data={"email": email, "csrf_token": csrf_of(client)}, environ_base=environ)


def game_of(app: Flask, emails: list[str], name: str = "A game") -> dict[str, Any]:
    return created_and_confirmed(app, body([e.split("@")[0].title() for e in emails], emails, name=name))


def signed_in_client(app: Flask, email: str) -> Any:
    client = app.test_client()
    assert ask(client, email).status_code == 200
    link = mails(app, "sign_in", to=email)[-1].context["sign_in_url"]
    path = link.removeprefix("https://smallworld.example")
    assert client.get(path).status_code == 200
    used = client.post(path, data={"csrf_token": csrf_of(client, path)})
    assert used.status_code == 303 and used.headers["Location"].endswith("/me")
    # The session cookie goes over HTTPS only (the site's address is https), never to scripts nor other sites.
    cookie = used.headers["Set-Cookie"]
    assert all(flag in cookie for flag in ("Secure", "HttpOnly", "SameSite=Lax")), cookie
    return client


def test_a_known_address_gets_one_mail_with_one_single_use_link_and_nothing_else(app: Flask) -> None:
    game_of(app, [ANN, BOB])
    client = app.test_client()
    answer = ask(client, ANN)
    assert answer.status_code == 200
    assert "If that address has games here, a sign-in link is on its way" in answer.get_data(as_text=True)
    [mail] = mails(app, "sign_in")
    assert mail.to_email == ANN and mail.game_id is None
    assert set(mail.context) == {"sign_in_url", "valid_minutes", "sign_in_id"}, "the link, and nothing else"
    assert mail.context["valid_minutes"] == SIGN_IN_MAX_AGE // 60

    path = mail.context["sign_in_url"].removeprefix("https://smallworld.example")
    # Opening the link (as a mail scanner does) uses nothing up; the button signs in, once.
    for _ in range(2):
        assert "Sign in as ann@example.org" in client.get(path).get_data(as_text=True)
    token = csrf_of(client, path)
    assert client.post(path, data={"csrf_token": token}).status_code == 303
    again = app.test_client().post(path, data={"csrf_token": csrf_of(app.test_client(), "/sign-in")})
    assert again.status_code in (400, 403)
    used = app.test_client()
    refused = used.post(path, data={"csrf_token": csrf_of(used)})
    assert refused.status_code == 403 and "used already" in refused.get_data(as_text=True)
    page = client.get("/me")
    assert page.status_code == 200 and "My games" in page.get_data(as_text=True)


def test_the_answer_is_the_same_for_a_known_an_unknown_and_a_blocked_address(app: Flask) -> None:
    game_of(app, [ANN, BOB])
    with Session(get_engine(app)) as session:
        block_list.block(session, BOB)
        session.commit()
    answers = {}
    for email in (ANN, "nobody@example.org", BOB):
        client = app.test_client()
        response = ask(client, email)
        answers[email] = (response.status_code, CSRF.sub("", response.get_data(as_text=True)))
    assert len(set(answers.values())) == 1, "the page tells nobody which addresses play here"
    # Only the known address that is not blocked got a mail: nothing is mailed to an address never mailed.
    assert [m.to_email for m in mails(app, "sign_in")] == [ANN]


def test_an_address_named_only_in_an_unconfirmed_game_gets_nothing(app: Flask) -> None:
    client = app.test_client()
    created = client.post("/api/games", json=body(["Ann", "Cat"], [ANN, CAT]))
    assert created.status_code == 201
    ask(app.test_client(), CAT)
    ask(app.test_client(), ANN)  # the host: mailed the confirmation, so known
    assert [m.to_email for m in mails(app, "sign_in")] == [ANN]


def test_bad_addresses_are_refused_naming_the_field(app: Flask) -> None:
    for typed in ("", "not an address", "a@b@c", "x" * 500 + "@example.org"):
        response = ask(app.test_client(), typed)
        assert response.status_code == 400, typed
        assert "Your email address" in response.get_data(as_text=True)
    client = app.test_client()
    assert client.post("/sign-in", data={"email": ANN}).status_code == 400, "a form without its CSRF token"
    assert mails(app, "sign_in") == []


def test_an_expired_or_tampered_link_is_refused_with_a_page_that_says_why(app: Flask) -> None:
    game_of(app, [ANN, BOB])
    ask(app.test_client(), ANN)
    path = mails(app, "sign_in")[-1].context["sign_in_url"].removeprefix("https://smallworld.example")
    client = app.test_client()
    tampered = client.get(path[:-3] + ("AAA" if not path.endswith("AAA") else "BBB"))
    assert tampered.status_code == 403 and "not valid" in tampered.get_data(as_text=True)
    with Session(get_engine(app)) as session:
        row = session.exec(select(SignIn)).one()
        row.created_at = utcnow() - timedelta(seconds=SIGN_IN_MAX_AGE + 1)
        session.add(row)
        session.commit()
    expired = client.get(path)
    assert expired.status_code == 403 and "expired" in expired.get_data(as_text=True)
    assert client.get("/me").status_code == 302


def test_signing_out_ends_the_session_even_for_a_copy_of_its_cookie(app: Flask) -> None:
    game_of(app, [ANN, BOB])
    client = signed_in_client(app, ANN)
    cookie = client.get_cookie("session")
    assert cookie is not None
    copy = app.test_client()
    copy.set_cookie("session", cookie.value)
    assert copy.get("/me").status_code == 200
    assert client.post("/sign-out", data={"csrf_token": csrf_of(client, "/me")}).status_code == 303
    assert client.get("/me").status_code == 302
    assert copy.get("/me").status_code == 302, "the copied cookie is signed out too"


def test_signing_out_everywhere_ends_every_session_and_unused_link(app: Flask) -> None:
    game_of(app, [ANN, BOB])
    first, second = signed_in_client(app, ANN), signed_in_client(app, ANN)
    ask(app.test_client(), ANN)
    unused = mails(app, "sign_in")[-1].context["sign_in_url"].removeprefix("https://smallworld.example")
    assert first.post("/sign-out-everywhere", data={"csrf_token": csrf_of(first, "/me")}).status_code == 303
    assert second.get("/me").status_code == 302
    assert app.test_client().get(unused).status_code == 403


def test_my_games_lists_every_game_of_the_address_waiting_for_it_first(app: Flask) -> None:
    # Ann plays three games: her turn in one (seat 0 plays first), Bob's turn in another, one she must accept.
    mine = game_of(app, [ANN, BOB], name="Ann starts")
    theirs = game_of(app, [BOB, ANN], name="Bob starts")
    game_of(app, [CAT, ANN], name="Cat invites")
    for game in (mine, theirs):
        for seat, mail in invitations(app, game["id"]).items():
            accept = app.test_client().post(
                "/api/invitations/accept", headers={"Authorization": f"Bearer {token_of(mail.context['invite_url'])}"}
            )
            assert accept.status_code == 200, (seat, accept.get_json())
    game_of(app, [BOB, CAT], name="Not hers")
    client = signed_in_client(app, ANN)
    page = client.get("/me").get_data(as_text=True)
    assert "Not hers" not in page
    assert page.index("Ann starts") < page.index("Cat invites") < page.index("Bob starts")
    assert "Your turn</strong> as Ann" in page and "Bob to play" in page and "You are invited as Ann" in page
    # Each row opens the seat by its own signed link (the turn link, or the invitation to accept), made when the
    # row is opened: the page itself holds no signed link.
    assert not re.search(r"/(play|invite)/", page)
    rows = list(dict.fromkeys(re.findall(r'href="(/me/games/\d+/\d+)"', page)))
    assert len(rows) == 3
    targets = [client.get(row).headers["Location"] for row in rows]
    assert [t.split("/")[3] for t in targets] == ["play", "invite", "play"]
    opened = client.get(targets[0].removeprefix("https://smallworld.example"), follow_redirects=True)
    assert opened.status_code == 200 and "Your turn" in opened.get_data(as_text=True)
    # Another address's seat, or a seat of no game, is refused; signed out, the rows ask to sign in.
    assert client.get(f"/me/games/{theirs['id']}/0").status_code == 404
    assert client.get("/me/games/9999/0").status_code == 404
    assert app.test_client().get(rows[0]).status_code == 302
    assert "/sign-in" in app.test_client().get(rows[0]).headers["Location"]


def test_my_games_links_the_address_s_calendar_feed(app: Flask) -> None:
    game = game_of(app, [ANN, BOB], name="Ann starts")
    for mail in invitations(app, game["id"]).values():
        accept = app.test_client().post(
            "/api/invitations/accept", headers={"Authorization": f"Bearer {token_of(mail.context['invite_url'])}"}
        )
        assert accept.status_code == 200
    page = signed_in_client(app, ANN).get("/me").get_data(as_text=True)
    (feed,) = set(re.findall(r"https://smallworld\.example(/calendar/[A-Za-z0-9_\-.]+\.ics)", page))
    assert f'href="webcal://smallworld.example{feed}"' in page
    answer = app.test_client().get(feed)
    assert answer.status_code == 200 and answer.mimetype == "text/calendar"
    (event,) = Calendar.from_ical(answer.data).walk("VEVENT")
    assert str(event["summary"]) == "Your turn: Ann starts"


def test_my_games_shows_a_finished_game_s_result(app: Flask) -> None:
    game = game_of(app, [ANN, BOB], name="Over")
    with Session(get_engine(app)) as session:
        row = session.get(Game, game["id"])
        assert row is not None
        row.status = "finished"
        row.finished_at = utcnow()
        row.result = [
            {"player": 1, "coins": 80, "tokens_on_board": 9, "place": 1, "tie_break": False, "name": "Bob"},
            {"player": 0, "coins": 61, "tokens_on_board": 7, "place": 2, "tie_break": False, "name": "Ann"},
        ]
        session.add(row)
        session.commit()
        ann = session.exec(select(Player).where(Player.email == ANN)).one()
        session.add(
            PlayerRecord(
                player_id=ann.id or 0,
                rating_mu=30,
                rating_sigma=3,
                games_finished=12,
                deadlines=100,
                deadlines_missed=2,
            )
        )
        session.commit()
    page = signed_in_client(app, ANN).get("/me").get_data(as_text=True)
    assert "came 2nd with 61 coins" in page and "Won by Bob" in page
    assert "Your record: 12 games, missed 2 % of deadlines, rating 21." in page


def test_mail_me_my_links_mails_the_seat_s_links_and_answers_the_same_for_anyone(app: Flask) -> None:
    game = game_of(app, [ANN, BOB])
    other = game_of(app, [CAT, BOB], name="Other")
    path = f"/games/{game['id']}"
    refused = app.test_client().get(path)
    assert refused.status_code == 403 and "Mail me my links" in refused.get_data(as_text=True)
    answers = set()
    for email in (ANN, CAT, "nobody@example.org"):
        client = app.test_client()
        response = client.post(
            f"{path}/links", data={"email": email, "csrf_token": csrf_of(client, "/sign-in"), "back": path}
        )
        answers.add((response.status_code, CSRF.sub("", response.get_data(as_text=True))))
    assert len(answers) == 1
    [mail] = mails(app, "your_links")
    assert mail.to_email == ANN and mail.game_id == game["id"]
    [seat] = mail.context["seats"]
    assert seat["name"] == "Ann" and "/invite/" in seat["url"] and seat["accepted"] is False
    assert other["id"] != game["id"]
    client = app.test_client()
    bad = client.post(f"{path}/links", data={"email": "", "csrf_token": csrf_of(client, "/sign-in")})
    assert bad.status_code == 400 and "Your email address" in bad.get_data(as_text=True)


def test_sign_in_mails_are_limited_per_address_and_per_client(make_app: Callable[..., Flask]) -> None:
    app = make_app(RATELIMIT_ENABLED=True, RATELIMIT_SIGN_IN="6 per minute", RATELIMIT_SIGN_IN_PER_ADDRESS="2 per hour")
    game_of(app, [ANN, BOB])
    client = app.test_client()
    answers = [ask(client, ANN, REMOTE_ADDR=f"192.0.2.{n}") for n in range(4)]
    assert [a.status_code for a in answers] == [200] * 4
    assert len({CSRF.sub("", a.get_data(as_text=True)) for a in answers}) == 1, "over its limit, the same answer"
    assert len(mails(app, "sign_in")) == 2
    # One client asking for many addresses is stopped by its own limit (both forms count together).
    stranger = app.test_client()
    codes = [ask(stranger, f"x{n}@example.org", REMOTE_ADDR="203.0.113.9").status_code for n in range(6)]
    codes.append(
        stranger.post(
            "/games/1/links",
            data={"email": ANN, "csrf_token": csrf_of(stranger)},
            environ_base={"REMOTE_ADDR": "203.0.113.9"},
        ).status_code
    )
    assert codes == [200] * 6 + [429]


def test_the_domain_never_mails_an_unknown_or_blocked_address(app: Flask) -> None:
    game_of(app, [ANN, BOB])
    with app.app_context(), Session(get_engine(app)) as session:
        links = app.extensions["smallworld.links"]
        assert sign_in.request_sign_in(session, "NoBody@Example.org", links) is False
        assert sign_in.request_sign_in(session, " Ann@Example.org ", links) is True
        block_list.block(session, ANN)
        session.commit()
        assert sign_in.request_sign_in(session, ANN, links) is False
        assert sign_in.mail_links(session, 1, ANN, links) is False
    assert len(mails(app, "sign_in")) == 1


def accepted_game(app: Flask, emails: list[str], name: str = "A game") -> dict[str, Any]:
    game = game_of(app, emails, name=name)
    for seat, mail in invitations(app, game["id"]).items():
        accept = app.test_client().post(
            "/api/invitations/accept", headers={"Authorization": f"Bearer {token_of(mail.context['invite_url'])}"}
        )
        assert accept.status_code == 200, (seat, accept.get_json())
    return game


def path_of(url: str) -> str:
    return url.removeprefix("https://smallworld.example")


def test_signing_out_everywhere_ends_the_seats_opened_through_my_games_and_every_link_made_before(
    app: Flask,
) -> None:
    """A leaked sign-in link used by someone else: they open Ann's seat through My games and keep its turn link.
    "Sign out everywhere" ends it all (their browser's seat, the turn link they kept, the turn links of the mails
    Ann got so far, as page and as the API's bearer token, her page of mail choices, her calendar feed), and
    nothing of Bob's; the links written after it (the next mail's) work."""
    game = accepted_game(app, [ANN, BOB])
    game_id = game["id"]
    (ann_turn,) = [seat_link(app, m) for m in mails(app, "your_turn", to=ANN)]
    bob_invitation = seat_link(app, invitations(app, game_id)[1])
    intruder = signed_in_client(app, ANN)
    me = intruder.get("/me").get_data(as_text=True)
    choices = re.search(r'href="https://smallworld\.example(/choices/[^"]+)"', me)
    feed = re.search(r"https://smallworld\.example(/calendar/[A-Za-z0-9_\-.]+\.ics)", me)
    assert choices and feed
    kept = intruder.get(f"/me/games/{game_id}/0").headers["Location"]
    assert intruder.get(path_of(kept)).status_code == 302  # the seat opens in the intruder's browser
    assert intruder.get(f"/games/{game_id}").status_code == 200
    for path in (path_of(ann_turn), choices.group(1), feed.group(1)):
        assert app.test_client().get(path).status_code in (200, 302), path

    ann = signed_in_client(app, ANN)
    assert ann.post("/sign-out-everywhere", data={"csrf_token": csrf_of(ann, "/me")}).status_code == 303

    assert intruder.get("/me").status_code == 302
    seat_page = intruder.get(f"/games/{game_id}")
    assert seat_page.status_code == 403 and "signed out everywhere" in seat_page.get_data(as_text=True)
    for turn_link in (kept, ann_turn):
        refused = app.test_client().get(path_of(turn_link))
        assert refused.status_code == 403 and "signed out everywhere" in refused.get_data(as_text=True)
        api = app.test_client().get(f"/api/games/{game_id}", headers={"Authorization": f"Bearer {token_of(turn_link)}"})
        assert api.status_code == 403, api.get_json()
    assert app.test_client().get(choices.group(1)).status_code == 403
    gone = app.test_client().get(feed.group(1))
    assert gone.status_code == 410 and "My games" in gone.get_data(as_text=True)
    # Bob's links are his own: untouched.
    assert app.test_client().get(path_of(bob_invitation)).status_code == 302

    # The links made from now on carry the new serial: "mail me my links", My games after signing in again.
    asker = app.test_client()
    asked = asker.post(f"/games/{game_id}/links", data={"email": ANN, "csrf_token": csrf_of(asker, "/sign-in")})
    assert asked.status_code == 200
    (fresh,) = [seat["url"] for seat in mails(app, "your_links", to=ANN)[-1].context["seats"]]
    browser = app.test_client()
    assert browser.get(path_of(fresh)).status_code == 302
    assert browser.get(f"/games/{game_id}").status_code == 200
    again = signed_in_client(app, ANN)
    assert again.get(path_of(again.get(f"/me/games/{game_id}/0").headers["Location"])).status_code == 302
    new_me = again.get("/me").get_data(as_text=True)
    new_feed = re.search(r"https://smallworld\.example(/calendar/[A-Za-z0-9_\-.]+\.ics)", new_me)
    assert new_feed and new_feed.group(1) != feed.group(1)
    assert app.test_client().get(new_feed.group(1)).status_code == 200


def test_the_next_turn_mail_after_signing_out_everywhere_has_a_working_link(app: Flask) -> None:
    """Mails in flight: a player who signed out everywhere gets the next turn mail with a link that works."""
    game = accepted_game(app, [ANN, BOB])
    game_id = game["id"]
    (ann_turn,) = [seat_link(app, m) for m in mails(app, "your_turn", to=ANN)]
    ann = signed_in_client(app, ANN)
    assert ann.post("/sign-out-everywhere", data={"csrf_token": csrf_of(ann, "/me")}).status_code == 303
    assert app.test_client().get(path_of(ann_turn)).status_code == 403
    # Bob's turn passes by its deadline (the sweep's own operation) twice: Ann's turn comes again, with a mail.
    from service.domain import play
    from service.domain.links import current_links

    with app.app_context(), Session(get_engine(app)) as session:
        game_row = session.get(Game, game_id)
        assert game_row is not None
        play.auto_pass(session, game_id, 0, current_links())
        play.auto_pass(session, game_id, 1, current_links())
    later = [seat_link(app, m) for m in mails(app, "your_turn", to=ANN)]
    assert len(later) == 2 and later[-1] != ann_turn
    browser = app.test_client()
    assert browser.get(path_of(later[-1])).status_code == 302
    assert browser.get(f"/games/{game_id}").status_code == 200


def test_a_new_calendar_link_ends_the_old_feed_with_a_410_and_nothing_else(app: Flask) -> None:
    game = accepted_game(app, [ANN, BOB], name="Ann starts")
    (ann_turn,) = [seat_link(app, m) for m in mails(app, "your_turn", to=ANN)]
    client = signed_in_client(app, ANN)
    page = client.get("/me").get_data(as_text=True)
    (old,) = set(re.findall(r"https://smallworld\.example(/calendar/[A-Za-z0-9_\-.]+\.ics)", page))
    assert "Make a new calendar link" in page
    # A POST with the page's CSRF token: without it, refused and nothing changes.
    assert client.post("/me/calendar-link").status_code == 400
    assert app.test_client().get(old).status_code == 200
    moved = client.post("/me/calendar-link", data={"csrf_token": csrf_of(client, "/me")})
    assert moved.status_code == 303 and moved.headers["Location"].endswith("/me")
    page = client.get("/me").get_data(as_text=True)
    (new,) = set(re.findall(r"https://smallworld\.example(/calendar/[A-Za-z0-9_\-.]+\.ics)", page))
    assert new != old
    gone = app.test_client().get(old)
    assert gone.status_code == 410
    assert "a new one was made on My games" in gone.get_data(as_text=True)
    assert "BEGIN:VCALENDAR" not in gone.get_data(as_text=True)
    (event,) = Calendar.from_ical(app.test_client().get(new).data).walk("VEVENT")
    assert str(event["summary"]) == "Your turn: Ann starts" and str(event["url"]) == "https://smallworld.example/me"
    # Nothing else of the address changed: still signed in, the turn link of the mail still works.
    assert client.get("/me").status_code == 200
    assert app.test_client().get(path_of(ann_turn)).status_code == 302
    # Signed out, the form asks to sign in first.
    assert app.test_client().post("/me/calendar-link").status_code in (302, 303, 400)
    assert game["id"]


def test_once_signed_in_every_page_links_my_games_and_my_games_says_as_whom_once(app: Flask) -> None:
    """Issue 35: the header's "My games" link on every page once signed in; "Signed in as…" said once."""
    game_of(app, [ANN, BOB])
    stranger = app.test_client().get("/how-to-play").get_data(as_text=True)
    assert ">My games</a>" not in stranger.split("</header>")[0]
    client = signed_in_client(app, ANN)
    me = client.get("/me").get_data(as_text=True)
    assert me.count("Signed in as") == 1 and "You are signed in." in me
    assert '<a href="/me" aria-current="page">My games</a>' in me.split("</header>")[0]
    for path in ("/", "/how-to-play", "/games/new"):
        header = client.get(path).get_data(as_text=True).split("</header>")[0]
        assert '<a href="/me">My games</a>' in header, path
