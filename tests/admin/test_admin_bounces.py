"""The game's admin page says when mail to a player bounces (service/domain/inbound.py marks the address)."""

from __future__ import annotations

from flask import Flask
from sqlmodel import Session, select

from service.domain.models import Player, utcnow
from service.infra.db import get_engine

from .browsing import host, new_game


def test_the_admin_page_marks_a_player_whose_mail_bounces(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Bounces")
    browser = host(admin_app, game_id)
    assert "mail bounces" not in browser.get(f"/admin/games/{game_id}").text
    with Session(get_engine(admin_app)) as session:
        player = session.exec(select(Player).where(Player.email == "p2@bounces.example")).one()
        player.bouncing_since = utcnow()
        player.bounce_reason = "550 5.1.1 No such user"
        session.add(player)
        session.commit()
    page = browser.get(f"/admin/games/{game_id}").text
    row = page[page.index("p2@bounces.example") :][:400]
    assert "mail bounces" in row and "550 5.1.1 No such user" in row
