"""Site admins in the browser: the sign-in form that tells nobody who is an admin, the emailed link (it
expires, serves one purpose, dies with the account's secret), every game with its filters, managing any
game as "site admin <email>", signing out."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from itsdangerous import TimestampSigner
from sqlmodel import Session, select

from service.domain import site_admins
from service.domain.links import LOGIN_MAX_AGE
from service.domain.models import Game, OutboxMail, SiteAdmin, utcnow
from service.infra.db import get_engine

from .browsing import act, admin_path, audit_of, host, mails_of, messages, new_game, path_of, stored, turn_path

BOSS = "boss@example.org"


def make_admin(app: Flask, email: str = BOSS) -> SiteAdmin:
    with Session(get_engine(app)) as session:
        account = session.exec(select(SiteAdmin).where(SiteAdmin.email == email)).first()
        if account is None:
            account = SiteAdmin(email=email, secret=secrets.token_urlsafe(24))
            session.add(account)
            session.commit()
            session.refresh(account)
        return account


def sign_in_link(app: Flask, account: SiteAdmin) -> str:
    return path_of(
        app, app.extensions["smallworld.links"].login_url(account.id, account.secret, account.sign_in_serial)
    )


def open_link(browser: Any, link: str, **options: Any) -> Any:
    """Follow a sign-in link as its reader does: open its page, press its button (opening alone signs in
    nobody, since mail scanners open links). The button's answer."""
    page = browser.get(link)
    assert page.status_code == 200, page.text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert token
    return browser.post(link, data={"csrf_token": token.group(1)}, **options)


def signed_in(app: Flask, email: str = BOSS) -> Any:
    browser = app.test_client()
    opened = open_link(browser, sign_in_link(app, make_admin(app, email)))
    assert opened.status_code == 303 and opened.headers["Location"].endswith("/admin/games")
    return browser


def ask_for_link(client: Any, email: str) -> Any:
    form = client.get("/admin/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
    assert token
    return client.post("/admin/login", data={"csrf_token": token.group(1), "email": email})


def comparable(page: Any) -> str:
    """A page without what differs between any two responses (the CSRF token, the page serial)."""
    text = re.sub(r'name="csrf_token" value="[^"]+"', "", page.text)
    return re.sub(r'data-page="[^"]+"', "", text)


def test_the_sign_in_form_answers_the_same_for_any_address_and_mails_only_admins(admin_app: Flask) -> None:
    make_admin(admin_app)
    sent_before = len(mails_of(admin_app, None, "admin_login"))
    for_admin = ask_for_link(admin_app.test_client(), "  Boss@Example.org ")
    for_nobody = ask_for_link(admin_app.test_client(), "nobody@example.org")
    for_garbage = ask_for_link(admin_app.test_client(), "not an address")
    assert for_admin.status_code == for_nobody.status_code == for_garbage.status_code == 200
    assert comparable(for_admin) == comparable(for_nobody) == comparable(for_garbage)
    assert "If that address belongs to a site admin, a sign-in link is on its way to it." in for_admin.text
    mails = mails_of(admin_app, None, "admin_login")[sent_before:]
    assert [m.to_email for m in mails] == [BOSS]
    assert "/admin/login/" in mails[0].context["login_url"] and mails[0].game_id is None

    # Asking again and again sends one mail every two minutes at most (anyone can send the form).
    for _ in range(3):
        ask_for_link(admin_app.test_client(), BOSS)
    assert len(mails_of(admin_app, None, "admin_login")) == sent_before + 1


def test_a_sign_in_mail_goes_once_in_two_minutes_even_across_the_edge_of_a_window(admin_app: Flask) -> None:
    """Asked a second before and a second after a two-minute mark of the clock, one mail; asked again two
    minutes after the last mail, another (this file's first test flaked at that edge)."""
    edge_admin = "edge@example.org"
    make_admin(admin_app, edge_admin)
    links = admin_app.extensions["smallworld.links"]

    def mailed() -> int:
        return len([m for m in mails_of(admin_app, None, "admin_login") if m.to_email == edge_admin])

    edge = datetime.fromtimestamp((int(utcnow().timestamp()) // 120 + 1) * 120, tz=UTC)
    with Session(get_engine(admin_app)) as session:
        for moment in (edge - timedelta(seconds=1), edge + timedelta(seconds=1), edge + timedelta(seconds=118)):
            assert site_admins.request_sign_in(session, edge_admin, links, now=moment)  # the same answer each time
    assert mailed() == 1
    with Session(get_engine(admin_app)) as session:
        assert site_admins.request_sign_in(session, edge_admin, links, now=edge + timedelta(seconds=120))
    assert mailed() == 2


def test_the_mailed_link_signs_in_and_the_site_admin_manages_any_game_in_their_own_name(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Any game")
    account = make_admin(admin_app)
    browser = admin_app.test_client()
    assert browser.get("/admin/games").status_code == 403, "not before signing in"
    landed = open_link(browser, sign_in_link(admin_app, account), follow_redirects=True)
    assert landed.status_code == 200 and "Signed in as site admin boss@example.org." in landed.text
    assert f'href="/admin/games/{game_id}"' in landed.text

    page = browser.get(f"/admin/games/{game_id}")
    assert "You manage this game as site admin boss@example.org" in page.text
    page = act(browser, game_id, "pause", reason="Server maintenance")
    assert messages(page) == ["done: The game is paused; the players were told why."]
    entry = audit_of(admin_app, game_id)[-1]
    assert (entry.actor, entry.act) == ("site admin boss@example.org", "pause")
    assert "Site admin boss@example.org paused the game" in page.text
    notice = mails_of(admin_app, game_id, "admin_change")[-1]
    assert notice.context["actor"] == "site admin boss@example.org"
    # The players read who acted, without the admin's address.
    player = admin_app.test_client()
    player.get(turn_path(admin_app, game_id, 1))
    game_page = player.get(f"/games/{game_id}")
    assert "A site admin paused the game" in game_page.text and BOSS not in game_page.text


def test_a_sign_in_link_expires(admin_app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    account = make_admin(admin_app)
    now = int(utcnow().timestamp())
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: now - LOGIN_MAX_AGE - 60)
    stale = sign_in_link(admin_app, account)
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: now - LOGIN_MAX_AGE + 60)
    fresh = sign_in_link(admin_app, account)
    monkeypatch.undo()
    page = admin_app.test_client().get(stale)
    assert page.status_code == 403 and "This sign-in link has expired" in page.text
    assert open_link(admin_app.test_client(), fresh).status_code == 303


def test_a_sign_in_link_serves_one_purpose(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Purposes")
    account = make_admin(admin_app)
    sign_in = sign_in_link(admin_app, account).rsplit("/", 1)[1]
    host_link = admin_path(admin_app, game_id).rsplit("/", 1)[1]
    turn_link = turn_path(admin_app, game_id, 0).rsplit("/", 1)[1]
    browser = admin_app.test_client()
    assert browser.get(f"/admin/{sign_in}").status_code == 403, "not a host link"
    assert browser.get(f"/play/{sign_in}").status_code == 403, "not a turn link"
    for other in (host_link, turn_link):
        page = browser.get(f"/admin/login/{other}")
        assert page.status_code == 403 and "This sign-in link is not valid" in page.text
    assert browser.get("/admin/games").status_code == 403
    assert browser.get(f"/admin/games/{game_id}").status_code == 403


def test_rotating_the_secret_ends_every_session_and_every_link(admin_app: Flask) -> None:
    make_admin(admin_app, "rotate@example.org")
    link = sign_in_link(admin_app, make_admin(admin_app, "rotate@example.org"))
    laptop, phone = signed_in(admin_app, "rotate@example.org"), signed_in(admin_app, "rotate@example.org")
    assert laptop.get("/admin/games").status_code == 200 and phone.get("/admin/games").status_code == 200

    page = phone.get("/admin/games")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    out = phone.post("/admin/logout-everywhere", data={"csrf_token": token}, follow_redirects=True)
    assert "Signed out everywhere" in out.text
    assert laptop.get("/admin/games").status_code == 403
    assert phone.get("/admin/games").status_code == 403
    refused = admin_app.test_client().get(link)
    assert refused.status_code == 403 and "signed out everywhere" in refused.text
    # A new link, with the new secret, works.
    assert signed_in(admin_app, "rotate@example.org").get("/admin/games").status_code == 200


def test_signing_out_forgets_the_admin_rights_of_this_browser_only(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Sign out")
    browser = host(admin_app, game_id)
    other = signed_in(admin_app, "other@example.org")
    page = browser.get(f"/admin/games/{game_id}")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    assert browser.post("/admin/logout", data={"csrf_token": token}).status_code == 303
    assert browser.get(f"/admin/games/{game_id}").status_code == 403
    assert other.get(f"/admin/games/{game_id}").status_code == 200


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_the_games_list_filters_by_player_waiting_stalled_and_failed_mail(
    make_app: Callable[..., Flask], request: pytest.FixtureRequest, database: str
) -> None:
    app = make_app(**({"DATABASE_URL": request.getfixturevalue("postgres_url")} if database == "postgres" else {}))
    waiting = new_game(app, name="Waiting on Zoe")  # players p0..p2@waiting-on-zoe.example; p0 on turn
    overdue = new_game(app, name="Overdue")
    inviting = new_game(app, name="Old invitation", start=False)
    failing = new_game(app, name="Failing mail")
    passed = new_game(app, name="Auto passed")
    over = new_game(app, name="Over")
    with Session(get_engine(app)) as session:
        games = {g.id: g for g in session.exec(select(Game))}
        games[overdue].deadline_at = utcnow() - timedelta(hours=1)
        games[inviting].created_at = utcnow() - timedelta(days=5)
        games[over].status = "cancelled"
        state = dict(games[passed].state or {})
        state["players"] = [dict(p) for p in state["players"]]
        state["players"][2]["auto_passes"] = 2
        games[passed].state = state
        mail = session.exec(select(OutboxMail).where(OutboxMail.game_id == failing)).first()
        assert mail is not None
        mail.status, mail.last_error = "failed", "550 no such user"
        session.add_all([*games.values(), mail])
        session.commit()
    browser = signed_in(app)

    def listed(**query: str) -> list[str]:
        page = browser.get("/admin/games", query_string=query)
        assert page.status_code == 200
        return re.findall(r'<a href="/admin/games/\d+">([^<]+)</a>', page.text)

    running = ["Overdue", "Waiting on Zoe", "Failing mail", "Auto passed"]  # soonest deadline first
    assert listed() == [*running, "Old invitation"], "the games without a deadline last"
    assert "Over" in listed(status="all") and listed(status="cancelled") == ["Over"]
    assert listed(player="waiting-on-zoe") == ["Waiting on Zoe"]
    assert listed(player="WAITING-on-zoe", status="inviting") == []
    assert listed(player="Player 0", waiting="1") == listed(status="active") == running
    assert listed(player="p1@waiting-on-zoe", waiting="1") == []
    assert listed(player="p0@waiting-on-zoe", waiting="1") == ["Waiting on Zoe"]
    assert sorted(listed(stalled="1")) == ["Auto passed", "Old invitation", "Overdue"]
    assert listed(failed="1") == ["Failing mail"]
    page = browser.get("/admin/games", query_string={"stalled": "1"})
    assert "deadline passed, not auto-passed yet" in page.text
    assert "inviting for 5 days" in page.text and "Player 2 auto-passed 2 times in a row" in page.text
    assert "1 failed mail" in browser.get("/admin/games").text
    # Times in the zone chosen (UTC until then).
    assert "UTC" in browser.get("/admin/games").text
    form = browser.get("/admin/games")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)  # type: ignore[union-attr]
    shown = browser.post("/admin/zone", data={"csrf_token": token, "zone": "Asia/Tokyo"}, follow_redirects=True)
    assert "Times are shown in Asia/Tokyo." in shown.text and "JST (Asia/Tokyo)" in shown.text
    assert stored(app, waiting).status == "active"


def test_the_sign_in_form_is_rate_limited_per_address(make_app: Callable[..., Flask]) -> None:
    app = make_app(RATELIMIT_ENABLED=True, RATELIMIT_ADMIN_SIGN_IN="2 per minute")
    client = app.test_client()
    assert [ask_for_link(client, f"x{i}@example.org").status_code for i in range(3)] == [200, 200, 429]
    assert client.get("/admin/login").status_code == 200, "showing the form is not limited"
