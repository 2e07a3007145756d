"""``smallworld admin …`` runs the same domain operations as the API."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from click import BadParameter
from sqlmodel import Session, select

from service.cli.admin import parse_duration
from service.domain.models import Game, Player, Seat, SiteAdmin
from service.infra.db import get_engine

from ..api.conftest import create_game, new_game_body


def test_durations_read_like_people_write_them() -> None:
    assert parse_duration("24h") == timedelta(hours=24)
    assert parse_duration("1d12h") == timedelta(days=1, hours=12)
    assert parse_duration("90m") == timedelta(minutes=90)
    with pytest.raises(BadParameter):
        parse_duration("soon")


def test_the_admin_commands_act_on_a_game(app: Any) -> None:
    client = app.test_client()
    game_id = create_game(client, new_game_body(2, start_when_all_accepted=False)).get_json()["id"]
    runner = app.test_cli_runner()
    with Session(get_engine(app)) as session:
        before = session.get(Game, game_id).deadline_at  # type: ignore[union-attr]
    result = runner.invoke(args=["admin", "extend", str(game_id), "24h"])
    assert result.exit_code == 0, result.output
    assert f"game {game_id}: active" in result.output
    with Session(get_engine(app)) as session:
        assert session.get(Game, game_id).deadline_at == before + timedelta(hours=24)  # type: ignore[union-attr]
    result = runner.invoke(args=["admin", "pause", str(game_id), "server move"])
    assert "paused" in result.output
    result = runner.invoke(args=["admin", "pause", str(game_id), "again"])
    assert result.exit_code != 0 and "paused" in result.output
    assert runner.invoke(args=["admin", "resume", str(game_id)]).exit_code == 0
    assert runner.invoke(args=["admin", "pass", str(game_id)]).exit_code == 0
    result = runner.invoke(args=["admin", "games"])
    assert f"game {game_id}: active" in result.output


def test_a_site_admin_account_gets_a_sign_in_link(app: Any) -> None:
    result = app.test_cli_runner().invoke(args=["admin", "create", "Boss@Example.org"])
    assert result.exit_code == 0
    assert "Site admin boss@example.org created." in result.output
    assert "/admin/login/" in result.output


def test_signing_a_site_admin_out_everywhere_rotates_the_secret(app: Any) -> None:
    runner = app.test_cli_runner()
    runner.invoke(args=["admin", "create", "boss@example.org"])
    with Session(get_engine(app)) as session:
        before = session.exec(select(SiteAdmin)).one().secret
    result = runner.invoke(args=["admin", "sign-out", "Boss@Example.org"])
    assert result.exit_code == 0 and "signed out everywhere" in result.output
    with Session(get_engine(app)) as session:
        assert session.exec(select(SiteAdmin)).one().secret != before
    result = runner.invoke(args=["admin", "sign-out", "nobody@example.org"])
    assert result.exit_code != 0 and "There is no site admin nobody@example.org" in result.output


def test_a_site_admin_erases_an_address_on_request_only_with_the_confirmation_flag(app: Any) -> None:
    """``forget-address`` (service/domain/privacy.py) for a request received by other means: without ``--yes``
    it only says what it would erase; with it, the address is gone and its running seat passed."""
    client = app.test_client()
    game_id = create_game(client, new_game_body(2, start_when_all_accepted=False)).get_json()["id"]
    runner = app.test_cli_runner()

    exported = runner.invoke(args=["admin", "export-address", "P1@Example.org"])
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.output)["games"][0]["game"] == game_id

    dry = runner.invoke(args=["admin", "forget-address", "P1@Example.org"])
    assert dry.exit_code != 0 and "add --yes" in dry.output
    assert "p1@example.org: 1 game(s) played (1 under way), 0 hosted" in dry.output
    with Session(get_engine(app)) as session:
        assert session.exec(select(Player).where(Player.email == "p1@example.org")).first() is not None

    done = runner.invoke(args=["admin", "forget-address", "P1@Example.org", "--yes"])
    assert done.exit_code == 0, done.output
    assert f"game {game_id}: auto_pass" in done.output
    with Session(get_engine(app)) as session:
        assert session.exec(select(Player).where(Player.email == "p1@example.org")).first() is None
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 1)).one()
        assert seat.display_name == "A former player" and seat.resigned_at is not None

    again = runner.invoke(args=["admin", "forget-address", "p1@example.org", "--yes"])
    assert again.exit_code == 0 and "was not known here" in again.output
