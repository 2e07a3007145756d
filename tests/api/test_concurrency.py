"""Optimistic concurrency over HTTP (ARCHITECTURE §2): stale versions, idempotency keys, racing submissions."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy import text
from sqlmodel import Session, select

import rules
from rules.bots import concrete
from service.domain import play, previews
from service.domain.models import ActionKind, Game, GameAction, OutboxMail
from service.infra.db import get_engine, get_session

from .conftest import Outbox, bearer, create_game, new_game_body, read_outbox


def started(api: Any, outbox: Any, players: int = 2) -> tuple[int, dict[int, str]]:
    """A game started at once; the seats' tokens from the invitation mails."""
    created = create_game(api, new_game_body(players, start_when_all_accepted=False))
    assert created.status_code == 201, created.get_json()
    tokens = {i: outbox.seat_token(m) for i, m in enumerate(outbox("invitation"))}
    return created.get_json()["id"], tokens


def first_pick(api: Any, game_id: int, token: str) -> Any:
    """Seat 0's first step, the pick of the first combo at version 1 (it keeps the seat on turn)."""
    body = {"version": 1, "action": {"type": "pick", "combo": 0}}
    return api.post(f"/api/games/{game_id}/actions", headers=bearer(token), json=body)


def actions_logged(app: Any, game_id: int) -> list[GameAction]:
    with Session(get_engine(app)) as session:
        return list(session.exec(select(GameAction).where(GameAction.game_id == game_id)).all())


def test_a_stale_version_gets_409_and_changes_nothing(api: Any, api_app: Any, outbox: Any) -> None:
    game_id, tokens = started(api, outbox)
    first = api.post(
        f"/api/games/{game_id}/actions",
        headers=bearer(tokens[0]),
        json={"version": 1, "action": {"type": "pick", "combo": 0}},
    )
    assert first.status_code == 200
    before = api.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).get_json()
    stale = api.post(
        f"/api/games/{game_id}/actions",
        headers=bearer(tokens[0]),
        json={"version": 1, "action": {"type": "end_conquest"}},
    )
    assert stale.status_code == 409
    assert stale.get_json()["version"] == 2
    assert "moved on" in stale.get_json()["error"]
    after = api.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).get_json()
    assert after == before
    assert len(actions_logged(api_app, game_id)) == 1


def test_the_same_idempotency_key_twice_applies_once(api: Any, api_app: Any, outbox: Any) -> None:
    game_id, tokens = started(api, outbox)
    body = {"version": 1, "action": {"type": "pick", "combo": 2}, "idempotency_key": "click-1"}
    first = api.post(f"/api/games/{game_id}/actions", headers=bearer(tokens[0]), json=body)
    second = api.post(f"/api/games/{game_id}/actions", headers=bearer(tokens[0]), json=body)
    assert first.status_code == second.status_code == 200
    assert first.get_json()["version"] == second.get_json()["version"] == 2
    assert (first.get_json()["replayed"], second.get_json()["replayed"]) == (False, True)
    assert len(actions_logged(api_app, game_id)) == 1
    state = second.get_json()["game"]["state"]
    assert state["players"][0]["coins"] == 3, "paid once for combo 2"


def test_two_concurrent_submissions_apply_exactly_once(api_app: Any, outbox: Any) -> None:
    api = api_app.test_client()
    game_id, tokens = started(api, outbox)
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def submit(combo: int) -> None:
        client = api_app.test_client()
        barrier.wait()
        response = client.post(
            f"/api/games/{game_id}/actions",
            headers=bearer(tokens[0]),
            json={"version": 1, "action": {"type": "pick", "combo": combo}},
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=submit, args=(combo,)) for combo in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(statuses) == [200, 409]
    logged = actions_logged(api_app, game_id)
    assert [a.version for a in logged] == [2]
    with Session(get_engine(api_app)) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.version == 2


def test_many_racing_clicks_with_one_key_apply_once(api_app: Any, outbox: Any) -> None:
    api = api_app.test_client()
    game_id, tokens = started(api, outbox)
    barrier = threading.Barrier(4)
    results: list[tuple[int, int]] = []

    def click() -> None:
        client = api_app.test_client()
        barrier.wait()
        response = client.post(
            f"/api/games/{game_id}/actions",
            headers=bearer(tokens[0]),
            json={"version": 1, "action": {"type": "pick", "combo": 1}, "idempotency_key": "double-click"},
        )
        results.append((response.status_code, response.get_json().get("version")))

    threads = [threading.Thread(target=click) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert [status for status, _ in results] == [200] * 4, results
    assert {version for _, version in results} == {2}
    assert len(actions_logged(api_app, game_id)) == 1


def test_a_game_moved_by_something_else_mid_step_refuses_the_step(
    make_app: Any, postgres_url: str, redis_url: str, monkeypatch: Any
) -> None:
    """The step's one UPDATE of the game is guarded by the version it was made against: a change that lands
    between the step's read and its write (here a bare version bump; no domain operation makes one without
    an event) wins, and the step changes nothing. PostgreSQL only: on SQLite a step's transaction holds the
    write lock from its first read (``BEGIN IMMEDIATE``), so nothing can land in between."""
    app = make_app(DATABASE_URL=postgres_url, BROKER_URL=redis_url)
    api = app.test_client()
    game_id, tokens = started(api, Outbox(app))
    mails = read_outbox(app)
    with Session(get_engine(app)) as session:
        before = session.get(Game, game_id)
        assert before is not None
    apply = play.rules.apply

    def apply_then_someone_else_moves_the_game(state: Any, action: Any) -> Any:
        with get_engine(app).begin() as other:
            other.execute(text("UPDATE games SET version = version + 1 WHERE id = :id"), {"id": game_id})
        return apply(state, action)

    monkeypatch.setattr(play.rules, "apply", apply_then_someone_else_moves_the_game)
    refused = first_pick(api, game_id, tokens[0])
    assert refused.status_code == 409, refused.get_json()
    assert refused.get_json() == {"error": "Another step was applied first: reload and retry", "version": 2}
    assert actions_logged(app, game_id) == []
    with Session(get_engine(app)) as session:
        after = session.get(Game, game_id)
        assert after is not None
        assert (after.version, after.state, after.step_key, after.deadline_at) == (
            2,
            before.state,
            before.step_key,
            before.deadline_at,
        )
        assert len(session.exec(select(OutboxMail)).all()) == len(mails), "the step's mail was not written"


def test_a_step_whose_database_connection_drops_gets_503_and_applies_once_when_sent_again(
    make_app: Any, postgres_url: str, redis_url: str, monkeypatch: Any
) -> None:
    """The server drops the step's connection mid-flight (as in a restart or failover): the answer is 503 with
    ``Retry-After`` and a readable message, nothing is written, and the same step sent again with its
    idempotency key applies once."""
    app = make_app(DATABASE_URL=postgres_url, BROKER_URL=redis_url)
    api = app.test_client()
    game_id, tokens = started(api, Outbox(app))
    token = tokens[0]
    apply = play.rules.apply
    dropped: list[int] = []

    def apply_while_the_connection_drops(state: Any, action: Any) -> Any:
        if not dropped:
            pid = get_session().connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            with get_engine(app).connect() as other:
                other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            dropped.append(pid)
        return apply(state, action)

    monkeypatch.setattr(play.rules, "apply", apply_while_the_connection_drops)
    step = {"version": 1, "action": {"type": "pick", "combo": 0}, "idempotency_key": "click-1"}
    failed = api.post(f"/api/games/{game_id}/actions", headers=bearer(token), json=step)
    assert failed.status_code == 503, failed.get_data(as_text=True)
    assert failed.headers["Retry-After"] == "5"
    assert "briefly unavailable" in failed.get_json()["error"] and "Traceback" not in failed.get_json()["error"]
    assert actions_logged(app, game_id) == []
    again = api.post(f"/api/games/{game_id}/actions", headers=bearer(token), json=step)
    assert again.status_code == 200, again.get_json()
    assert again.get_json()["version"] == 2
    assert [a.version for a in actions_logged(app, game_id)] == [2]
    assert len(dropped) == 1


def test_a_step_meeting_another_writer_of_its_version_waits_for_it_then_is_refused(
    make_app: Any, postgres_url: str, redis_url: str, monkeypatch: Any
) -> None:
    """Another transaction writes the game's next version as every writer does (the game's row locked and
    written first, as the deadline sweep locks the game it auto-passes, then its event's INSERT) and is still
    open when the step writes: the step waits for it, and once it commits, is refused with the version it made;
    neither deadlocks. On PostgreSQL a step that keeps the seat on turn writes the game's UPDATE and its event in
    one statement, which takes its locks in that same order: the game's row first, the event's unique (game,
    version) after (a deadlock would fail one of the two after PostgreSQL's ``deadlock_timeout``: a 503 here, or
    an error in the other transaction). Before, a step took them the other way round, and met the sweep so."""
    app = make_app(DATABASE_URL=postgres_url, BROKER_URL=redis_url)
    api = app.test_client()
    game_id, tokens = started(api, Outbox(app))
    apply = play.rules.apply
    other = get_engine(app).connect()
    other_transaction = other.begin()
    finished: list[str] = []

    def finish_once_the_step_waits(pid: int) -> None:
        try:
            with get_engine(app).connect() as watcher:
                for _ in range(200):  # the step's statement waits on the other's row lock of the game
                    waiting = watcher.execute(
                        text("SELECT wait_event_type FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}
                    ).scalar()
                    watcher.rollback()
                    if waiting == "Lock":
                        finished.append("the step waited")
                        break
                    time.sleep(0.05)
            event = play.new_event(game_id=game_id, seat=0, kind=ActionKind.ACTION, action={"type": "x"}, version=2)
            other.execute(sa.insert(GameAction.__table__), event)  # type: ignore[attr-defined]
            other_transaction.commit()
            finished.append("committed")
        except Exception as error:  # the test fails on it below
            finished.append(repr(error))

    waiter: list[threading.Thread] = []

    def apply_while_another_writes(state: Any, action: Any) -> Any:
        if not waiter:
            other.execute(text("UPDATE games SET version = 2 WHERE id = :id"), {"id": game_id})
            pid = get_session().connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            waiter.append(threading.Thread(target=finish_once_the_step_waits, args=(pid,)))
            waiter[0].start()
        return apply(state, action)

    monkeypatch.setattr(play.rules, "apply", apply_while_another_writes)
    refused = first_pick(api, game_id, tokens[0])
    waiter[0].join(30)
    other.close()
    assert finished == ["the step waited", "committed"]
    assert refused.status_code == 409, refused.get_json()
    assert refused.get_json() == {"error": "Another step was applied first: reload and retry", "version": 2}
    assert [(a.version, a.action) for a in actions_logged(app, game_id)] == [(2, {"type": "x"})]


def test_a_read_alone_goes_outside_a_transaction_and_steps_in_one(
    make_app: Any, postgres_url: str, redis_url: str, monkeypatch: Any
) -> None:
    """On PostgreSQL the legal actions' one read runs outside a transaction (no BEGIN, no ROLLBACK, and none
    of the ``DEALLOCATE ALL`` that psycopg sends after a ROLLBACK); the steps on the same pooled connection
    after it each run in a transaction, as before: one that keeps the seat on turn (its event and the game's
    UPDATE in one statement) and one that passes the turn (its event, the turn's mail, the game)."""
    app = make_app(DATABASE_URL=postgres_url, BROKER_URL=redis_url)
    api = app.test_client()
    game_id, tokens = started(api, Outbox(app))
    seen: list[tuple[str, str, bool]] = []

    def connection_now(what: str) -> None:
        dbapi = get_session().connection().connection.dbapi_connection
        assert dbapi is not None
        seen.append((what, dbapi.info.transaction_status.name, dbapi.autocommit))

    legal_actions, after_change = previews.legal_actions, play.after_change

    def listed(*args: Any, **kwargs: Any) -> Any:
        connection_now("read")
        return legal_actions(*args, **kwargs)

    def changed(session: Any, game: Any, state: Any, *args: Any, **kwargs: Any) -> Any:
        connection_now("passes" if play.step_key(state) != game.step_key else "keeps")
        return after_change(session, game, state, *args, **kwargs)

    monkeypatch.setattr(previews, "legal_actions", listed)
    monkeypatch.setattr(play, "after_change", changed)
    legal = api.get(f"/api/games/{game_id}/legal-actions?previews=false", headers=bearer(tokens[0])).get_json()
    for _ in range(20):
        kinds = {a["type"]: a for a in legal["actions"]}
        offered = kinds.get("end_turn") or kinds.get("end_conquest") or legal["actions"][0]
        action = concrete(rules.Action.from_json(offered), random.Random(0)).to_json()
        answer = api.post(
            f"/api/games/{game_id}/actions",
            headers=bearer(tokens[0]),
            json={"version": legal["version"], "action": action},
        )
        assert answer.status_code == 200, answer.get_json()
        if answer.get_json()["legal_actions"] is None:
            break
        legal = answer.get_json()["legal_actions"]
    assert answer.get_json()["game"]["awaiting"] == [1]
    # The GET's read, then the steps' answers' legal actions (read from the step, after its commit).
    reads, steps = [s for s in seen if s[0] == "read"], [s for s in seen if s[0] != "read"]
    assert reads[0] == ("read", "IDLE", True) and set(reads[1:]) == {("read", "IDLE", False)}
    assert set(steps[:-1]) == {("keeps", "INTRANS", False)} and steps[-1] == ("passes", "INTRANS", False)
    assert [a.version for a in actions_logged(app, game_id)] == list(range(2, len(steps) + 2))
    with get_engine(app).connect() as pooled:
        dbapi = pooled.connection.dbapi_connection
        assert dbapi is not None and not dbapi.autocommit
