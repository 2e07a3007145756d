"""CSRF (ARCHITECTURE §7): every form of every page refuses a POST without its token, or with another browser's,
and changes nothing. The only POST that takes no token is the one-click unsubscribe (RFC 8058: mail
providers send it without cookies; its signed link is the credential); the JSON API takes bearer tokens.

Each form is tried by a browser that holds the right to use it (the seat's session for the turn page, the
host's for the game's admin page, a site admin's for the site's), so the refusal is the CSRF check's alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from flask import Flask
from sqlmodel import Session, func, select

from service.domain.models import AuditEntry, Game, OutboxMail, Seat, SiteAdmin
from service.infra.db import get_engine

from ..api.conftest import create_game, new_game_body, seat_link, token_of

#: POST endpoints outside /api that take no CSRF token, and why (see service/web/pages/__init__.py): the
#: one-click unsubscribe and "never invite me again", whose signed token is the credential; and the mail
#: hook for MTAs (``POST /inbound/mail``), whose credential is the inbound secret in its Authorization
#: header, never a browser's cookie (``test_the_mail_hook_takes_its_secret_not_a_browser_s_session``).
EXEMPT = {"unsubscribe.unsubscribe", "unsubscribe.never", "inbound_mail.receive_mail"}

#: Plausible fields for each form, so that only the missing token can be what is wrong.
FIELDS = {
    "turn.act": {"version": "1", "type": "pick", "combo": "0"},
    "turn.undo": {"version": "1"},
    "lobby.new_game": {"name": "CSRF", "player_name": "A", "player_email": "a@example.org"},
    "admin_game.extend": {"hours": "2"},
    "admin_game.pause": {"reason": "tea"},
    "admin_game.replace": {"seat": "1", "email": "eve@example.org", "name": "Eve"},
    "admin_game.remove": {"seat": "1"},
    "admin_game.cancel": {"reason": "no"},
    "admin_game.choose_zone": {"time_zone": "Europe/Paris"},
    "site_admin.choose_zone": {"time_zone": "Europe/Paris"},
    "site_admin.sign_in": {"email": "admin@example.org"},
}


def csrf_token_of(client: Any, path: str) -> str:
    page = client.get(path, follow_redirects=True).get_data(as_text=True)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, f"no CSRF token in {path}"
    return found[1]


def snapshot(app: Flask) -> tuple[Any, ...]:
    with Session(get_engine(app)) as session:
        games = [(g.id, g.version, g.status, g.deadline_at, g.settings) for g in session.exec(select(Game)).all()]
        secrets = sorted(s.secret for s in session.exec(select(Seat)).all())
        admins = sorted(a.secret for a in session.exec(select(SiteAdmin)).all())
        audit = session.exec(select(func.count()).select_from(AuditEntry)).one()
        mail = session.exec(select(func.count()).select_from(OutboxMail)).one()
    return games, secrets, admins, audit, mail


def test_every_form_refuses_a_post_without_its_token_or_with_another_browsers(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    api = app.test_client()
    created = create_game(api, new_game_body(3, start_when_all_accepted=False)).get_json()
    game_id = created["id"]
    with Session(get_engine(app)) as session:
        invitation = session.exec(select(OutboxMail).where(OutboxMail.template == "invitation")).first()
        assert invitation is not None
        turn = token_of(seat_link(app, invitation, session))
        admin = SiteAdmin(email="admin@example.org", secret="s3cret-site-admin")
        session.add(admin)
        session.commit()
        login = token_of(app.extensions["smallworld.links"].login_url(admin.id or 0, admin.secret, 0))

    browsers = {name: app.test_client() for name in ("seat", "host", "site", "anyone", "other")}
    assert browsers["seat"].get(f"/play/{turn}").status_code == 302
    assert browsers["host"].get(f"/admin/{token_of(created['admin_url'])}").status_code == 302
    signed_in = browsers["site"].post(
        f"/admin/login/{login}", data={"csrf_token": csrf_token_of(browsers["site"], f"/admin/login/{login}")}
    )
    assert signed_in.status_code in (302, 303)
    foreign_token = csrf_token_of(browsers["other"], "/games/new")  # valid, but another browser's

    before = snapshot(app)
    tried = []
    for rule in app.url_map.iter_rules():
        if "POST" not in (rule.methods or ()) or rule.rule.startswith("/api/") or rule.endpoint in EXEMPT:
            continue
        url = rule.rule.replace("<int:game_id>", str(game_id)).replace("<int:mail_id>", "1")
        blueprint = rule.endpoint.split(".")[0]
        browser = {"turn": "seat", "admin_game": "host", "site_admin": "site"}.get(blueprint, "anyone")
        fields = FIELDS.get(rule.endpoint, {})
        for token in (None, foreign_token):
            data = dict(fields, **({"csrf_token": token} if token else {}))
            response = browsers[browser].post(url, data=data)
            assert response.status_code == 400, (rule.endpoint, token is not None, response.status_code)
            assert "out of date" in response.get_data(as_text=True), rule.endpoint
        tried.append(rule.endpoint)
    assert snapshot(app) == before, "a form without its CSRF token changed something"
    assert {"turn.act", "turn.undo", "lobby.new_game", "admin_game.pass_now", "site_admin.sign_out"} <= set(tried)

    # The same form with its own token goes through: the refusals above were the token's doing.
    token = csrf_token_of(browsers["seat"], f"/games/{game_id}/turn")
    done = browsers["seat"].post(f"/games/{game_id}/turn", data=dict(FIELDS["turn.act"], csrf_token=token))
    assert done.status_code in (302, 303)
    assert snapshot(app) != before


def test_only_the_one_click_unsubscribe_and_the_mail_hook_take_no_token() -> None:
    from service.web.pages import CSRF_EXEMPT_BLUEPRINTS, CSRF_EXEMPT_PREFIXES

    assert CSRF_EXEMPT_PREFIXES == ("/api/",)
    assert frozenset(CSRF_EXEMPT_BLUEPRINTS) == frozenset({"unsubscribe", "inbound_mail"})


def test_the_mail_hook_takes_its_secret_not_a_browser_s_session(make_app: Any) -> None:
    app = make_app(INBOUND_SECRET="hook-secret-of-the-mail-server")
    browser = app.test_client()
    browser.get("/games/new")  # a browser with a session cookie and nothing else
    mail = b"From: a@example.org\r\nTo: play@example.org\r\nSubject: x\r\n\r\nend\r\n"
    assert browser.post("/inbound/mail", data=mail, content_type="message/rfc822").status_code == 401
    wrong = {"Authorization": "Bearer not-the-secret"}
    assert browser.post("/inbound/mail", data=mail, content_type="message/rfc822", headers=wrong).status_code == 403
