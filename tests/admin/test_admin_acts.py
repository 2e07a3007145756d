"""Host admin acts through the JSON API: effect on the deadline, the audit log, the mails, the refusals."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import Session, col, select

import rules
from rules.bots import concrete
from service.domain import play
from service.domain.errors import Conflict
from service.domain.models import AuditEntry, Game, GameAction, OutboxMail, utcnow
from service.infra.db import get_engine

from ..api.conftest import bearer, create_game, new_game_body, token_of


@pytest.fixture
def game(api: Any, outbox: Any) -> dict[str, Any]:
    """A started 3-player game: its id, the host's admin token and the seats' turn tokens."""
    created = create_game(api, new_game_body(3, start_when_all_accepted=False)).get_json()
    seats = {i: outbox.seat_token(m) for i, m in enumerate(outbox("invitation"))}
    return {"id": created["id"], "admin": token_of(created["admin_url"]), "seats": seats}


def row(app: Any, game_id: int) -> Game:
    with Session(get_engine(app)) as session:
        found = session.get(Game, game_id)
        assert found is not None
        return found


def audit(app: Any, game_id: int) -> list[AuditEntry]:
    with Session(get_engine(app)) as session:
        return list(session.exec(select(AuditEntry).where(AuditEntry.game_id == game_id)).all())


def notices(app: Any, game_id: int) -> list[OutboxMail]:
    with Session(get_engine(app)) as session:
        query = select(OutboxMail).where(OutboxMail.game_id == game_id, OutboxMail.template == "admin_change")
        return list(session.exec(query).all())


def act(api: Any, game: dict[str, Any], name: str, body: dict[str, Any] | None = None, token: str | None = None) -> Any:
    return api.post(f"/api/admin/games/{game['id']}/{name}", headers=bearer(token or game["admin"]), json=body or {})


def test_extend_by_hours_moves_the_deadline_audits_and_announces(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    before = row(api_app, game["id"])
    response = act(api, game, "extend", {"hours": 24})
    assert response.status_code == 200, response.get_json()
    after = row(api_app, game["id"])
    assert after.deadline_at == before.deadline_at + timedelta(hours=24)
    assert after.version == before.version + 1
    entry = audit(api_app, game["id"])[-1]
    assert (entry.actor, entry.act) == ("host", "extend")
    # Only the player the game waits for is mailed (issue 18: a host's act mails only those it concerns).
    assert [(m.to_email, m.context["change"]) for m in notices(api_app, game["id"])] == [
        ("p0@example.org", "deadline_extended")
    ]


def test_extend_to_a_moment_in_the_hosts_time_zone(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    target = (utcnow() + timedelta(days=5)).replace(microsecond=0).astimezone()
    response = act(api, game, "extend", {"to": target.isoformat()})
    assert response.status_code == 200
    assert row(api_app, game["id"]).deadline_at == target


def test_an_extended_deadline_is_not_auto_passed_by_a_sweep_that_read_the_old_one(
    api: Any, api_app: Any, game: dict[str, Any]
) -> None:
    seen = row(api_app, game["id"])  # what a sweep already running read: version and old deadline
    assert act(api, game, "extend", {"hours": 2}).status_code == 200
    with api_app.app_context(), Session(get_engine(api_app)) as session, pytest.raises(Conflict):
        play.auto_pass(session, game["id"], 0, api_app.extensions["smallworld.links"], expected_version=seen.version)
    assert row(api_app, game["id"]).version == seen.version + 1, "no auto-pass happened"


def test_pause_keeps_the_time_left_and_resume_gives_exactly_that(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    left = (row(api_app, game["id"]).deadline_at - utcnow()).total_seconds()
    response = act(api, game, "pause", {"reason": "Ann is moving house"})
    assert response.status_code == 200
    paused = row(api_app, game["id"])
    assert paused.status == "paused" and paused.deadline_at is None
    assert abs(paused.paused_remaining - left) <= 2
    # Players see the reason and cannot act.
    view = api.get(f"/api/games/{game['id']}", headers=bearer(game["seats"][0])).get_json()
    assert view["pause_reason"] == "Ann is moving house"
    refused = api.post(
        f"/api/games/{game['id']}/actions",
        headers=bearer(game["seats"][0]),
        json={"version": paused.version, "action": {"type": "pick", "combo": 0}},
    )
    assert refused.status_code == 409 and "paused" in refused.get_json()["error"]
    started = utcnow()
    assert act(api, game, "resume").status_code == 200
    resumed = row(api_app, game["id"])
    assert resumed.status == "active"
    expected = started + timedelta(seconds=paused.paused_remaining)
    assert abs((resumed.deadline_at - expected).total_seconds()) <= 2
    assert [e.act for e in audit(api_app, game["id"])] == ["pause", "resume"]


def test_a_paused_game_has_no_deadline_for_the_sweep(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    act(api, game, "pause", {"reason": "holidays"})
    with Session(get_engine(api_app)) as session:
        due = session.exec(select(Game).where(Game.deadline_at <= utcnow() + timedelta(days=365))).all()  # type: ignore[operator]
    assert due == []


def test_pass_now_auto_passes_the_current_player(api: Any, api_app: Any, game: dict[str, Any], outbox: Any) -> None:
    response = act(api, game, "pass")
    assert response.status_code == 200
    assert response.get_json()["awaiting"] == [1]
    assert [m.to_email for m in outbox("auto_passed")] == ["p0@example.org"]
    assert audit(api_app, game["id"])[-1].act == "pass"


def test_replacing_a_player_kills_the_old_links_and_invites_the_new_one(
    api: Any, api_app: Any, game: dict[str, Any], outbox: Any
) -> None:
    old = game["seats"][1]
    response = act(api, game, "replace", {"seat": 1, "email": "newcomer@example.org", "name": "Newcomer"})
    assert response.status_code == 200, response.get_json()
    assert api.get(f"/api/games/{game['id']}", headers=bearer(old)).status_code == 403
    invitation = [m for m in outbox("invitation") if m.to_email == "newcomer@example.org"]
    assert len(invitation) == 1 and invitation[0].context["replacing"] == "Player 1"
    new = outbox.seat_token(invitation[0])
    view = api.get(f"/api/games/{game['id']}", headers=bearer(new)).get_json()
    assert view["you"] == 1 and view["seats"][1]["name"] == "Newcomer"
    # The replaced player hears of it too.
    assert "p1@example.org" in {m.to_email for m in notices(api_app, game["id"])}


def test_a_removed_seat_is_passed_at_once_when_its_turn_comes(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    response = act(api, game, "remove", {"seat": 0})
    assert response.status_code == 200
    assert row(api_app, game["id"]).deadline_at <= utcnow()
    assert act(api, game, "remove", {"seat": 0}).status_code == 409


def _play_steps(api: Any, game: dict[str, Any], steps: int, seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(steps):
        any_seat = api.get(f"/api/games/{game['id']}", headers=bearer(game["seats"][0])).get_json()
        seat = any_seat["awaiting"][0]
        token = game["seats"][seat]
        legal = api.get(f"/api/games/{game['id']}/legal-actions", headers=bearer(token)).get_json()
        action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
        step = api.post(
            f"/api/games/{game['id']}/actions",
            headers=bearer(token),
            json={"version": legal["version"], "action": action},
        )
        assert step.status_code == 200, step.get_json()


def test_changing_the_redeploy_mode_is_replayed_from_the_log(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    _play_steps(api, game, 25, seed=1)
    assert act(api, game, "settings", {"redeploy": "ask", "turn_length_seconds": 3600}).status_code == 200
    _play_steps(api, game, 25, seed=2)
    stored = row(api_app, game["id"])
    assert stored.settings["redeploy"] == "ask" and stored.settings["turn_length_seconds"] == 3600
    assert stored.state["options"]["redeploy"] == "ask"
    with Session(get_engine(api_app)) as session:
        # In version order: PostgreSQL returns rows in no set order (a test's schema reuses the space of rows
        # an earlier test deleted).
        log = list(
            session.exec(
                select(GameAction).where(GameAction.game_id == game["id"]).order_by(col(GameAction.version))
            ).all()
        )
    # The seed and the log rebuild the snapshot exactly: the turns before the change in the old mode.
    assert play.replay(stored, log).to_json() == stored.state


def test_cancel_stops_the_game(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    assert act(api, game, "cancel", {"reason": "not enough time"}).status_code == 200
    cancelled = row(api_app, game["id"])
    assert cancelled.status == "cancelled" and cancelled.deadline_at is None
    assert act(api, game, "extend", {"hours": 1}).status_code == 409


def test_refusals(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    # A player's link cannot reach admin acts.
    response = act(api, game, "extend", {"hours": 1}, token=game["seats"][0])
    assert response.status_code == 403
    # A host link cannot touch another game.
    other = create_game(api, new_game_body(2, start_when_all_accepted=False)).get_json()["id"]
    response = api.post(f"/api/admin/games/{other}/pause", headers=bearer(game["admin"]), json={"reason": "x"})
    assert response.status_code == 403 and "another game" in response.get_json()["error"]
    # Validation.
    assert act(api, game, "extend", {}).status_code == 400
    assert act(api, game, "extend", {"to": "2020-01-01T00:00:00+00:00"}).status_code == 400
    assert act(api, game, "pause", {"reason": ""}).status_code == 400
    assert act(api, game, "resume").status_code == 409
    assert act(api, game, "replace", {"seat": 0, "email": "p1@example.org", "name": "Dup"}).status_code == 400
    assert audit(api_app, game["id"]) == []


def test_a_player_takes_vacation_within_the_allowance(api: Any, api_app: Any, game: dict[str, Any]) -> None:
    before = row(api_app, game["id"]).deadline_at
    response = api.post(f"/api/games/{game['id']}/vacation", headers=bearer(game["seats"][0]), json={"days": 2})
    assert response.status_code == 200, response.get_json()
    assert row(api_app, game["id"]).deadline_at == before + timedelta(days=2)
    entry = audit(api_app, game["id"])[-1]
    assert (entry.actor, entry.act, entry.details["days"]) == ("seat 0", "vacation", 2)
    too_much = api.post(f"/api/games/{game['id']}/vacation", headers=bearer(game["seats"][0]), json={"days": 6})
    assert too_much.status_code == 400 and "5.0 days" in too_much.get_json()["error"]
    not_yours = api.post(f"/api/games/{game['id']}/vacation", headers=bearer(game["seats"][1]), json={"days": 1})
    assert not_yours.status_code == 409


def test_the_admin_view_shows_audit_and_the_games_mail(api: Any, game: dict[str, Any]) -> None:
    act(api, game, "extend", {"hours": 3})
    view = api.get(f"/api/admin/games/{game['id']}", headers=bearer(game["admin"])).get_json()
    assert [a["act"] for a in view["audit"]] == ["extend"]
    assert {m["template"] for m in view["outbox"]} >= {"invitation", "admin_link", "your_turn", "admin_change"}
    assert all(p["coins"] is None for p in view["game"]["state"]["players"]), "the host sees no coins either"
