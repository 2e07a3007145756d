"""Finding 6: a site admin's sign-in link worked more than once (for 30 minutes). Now it works once, for 15
minutes; its page signs in only when its button is pressed (a mail scanner opening it uses nothing up), and
signing in ends every link made before."""

from __future__ import annotations

import secrets

import pytest
from flask import Flask
from itsdangerous import TimestampSigner
from sqlmodel import Session

from service.domain.models import SiteAdmin, utcnow
from service.infra.db import get_engine


def admin_link(app: Flask, email: str = "root@example.org") -> str:
    with Session(get_engine(app)) as session:
        account = SiteAdmin(email=email, secret=secrets.token_urlsafe(24))
        session.add(account)
        session.commit()
        session.refresh(account)
        serial = getattr(account, "sign_in_serial", None)
        links = app.extensions["smallworld.links"]
        url = links.login_url(account.id, account.secret, *([serial] if serial is not None else []))
    return str(url).removeprefix("http://127.0.0.1:5000")


def press(client: object, link: str) -> object:
    page = client.get(link)  # type: ignore[attr-defined]
    assert page.status_code == 200, page.text
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    return client.post(link, data={"csrf_token": token})  # type: ignore[attr-defined]


def test_a_sign_in_link_works_once(app: Flask) -> None:
    link = admin_link(app)
    scanner = app.test_client()
    for _ in range(3):
        assert scanner.get(link).status_code == 200, "opening the link uses nothing up"
    assert scanner.get("/admin/games").status_code == 403, "nor signs anyone in"
    first = app.test_client()
    signed = press(first, link)
    assert signed.status_code == 303 and first.get("/admin/games").status_code == 200  # type: ignore[attr-defined]
    thief = app.test_client()
    again = thief.get(link)
    assert again.status_code == 403 and "used already" in again.text
    assert thief.post(link, data={}).status_code in (400, 403)
    assert thief.get("/admin/games").status_code == 403


def test_a_sign_in_link_lasts_fifteen_minutes(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    now = int(utcnow().timestamp())
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: now - 16 * 60)
    stale = admin_link(app, "late@example.org")
    monkeypatch.undo()
    page = app.test_client().get(stale)
    assert page.status_code == 403 and "expired" in page.text and "15 minutes" in page.text


def test_two_presses_of_one_link_at_once_sign_in_once(app: Flask) -> None:
    link = admin_link(app, "twice@example.org")
    one, two = app.test_client(), app.test_client()
    pages = [c.get(link) for c in (one, two)]
    tokens = [p.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0] for p in pages]
    answers = [c.post(link, data={"csrf_token": t}) for c, t in zip((one, two), tokens, strict=True)]
    assert sorted(a.status_code for a in answers) == [303, 403]
