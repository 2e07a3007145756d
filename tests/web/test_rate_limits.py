"""Rate limits on signed links and on submitted steps (service/web/rate_limits.py): 429 with a readable message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

from service import create_app
from service.domain.models import OutboxMail
from service.infra.db import get_engine
from service.web.rate_limits import limiter_counts_every_request

from ..api.conftest import bearer, create_game, new_game_body, seat_link, token_of


def limited_app(make_app: Callable[..., Flask], **limits: Any) -> Flask:
    return make_app(RATELIMIT_ENABLED=True, **limits)


def start_game(app: Flask) -> tuple[int, dict[int, str]]:
    client = app.test_client()
    created = create_game(client, new_game_body(2, start_when_all_accepted=False))
    assert created.status_code == 201
    with Session(get_engine(app)) as session:
        mails = session.exec(
            select(OutboxMail).where(OutboxMail.template == "invitation").order_by(OutboxMail.id)  # type: ignore[arg-type]
        ).all()
    return created.get_json()["id"], {i: token_of(seat_link(app, m)) for i, m in enumerate(mails)}


def from_address(address: str) -> dict[str, Any]:
    return {"environ_base": {"REMOTE_ADDR": address}}


def assert_limited(response: Any, *, json: bool) -> str:
    assert response.status_code == 429
    retry = int(response.headers["Retry-After"])
    assert 1 <= retry <= 60
    if json:
        message = response.get_json()["error"]
    else:
        assert response.mimetype == "text/html"
        message = response.get_data(as_text=True)
    assert "Try again in" in message and "Traceback" not in message
    return str(message)


def test_refused_links_are_limited_per_address_and_good_ones_do_not_count(make_app: Callable[..., Flask]) -> None:
    app = limited_app(make_app, RATELIMIT_BAD_LINKS="3 per minute")
    game_id, tokens = start_game(app)
    client = app.test_client()
    for _ in range(10):  # a player's good requests never count against the refusals
        assert client.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).status_code == 200
    for bad in ("nope", tokens[0][:-4], tokens[0] + "x"):
        assert client.get(f"/play/{bad}").status_code == 403
    message = assert_limited(client.get("/play/another-try"), json=False)
    assert "invalid or expired links" in message
    api_message = assert_limited(client.get(f"/api/games/{game_id}", headers=bearer("guess")), json=True)
    assert "invalid or expired links" in api_message and "3 per 1 minute" in api_message
    # Meanwhile that address is stopped even with a good link; another address is not.
    assert client.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).status_code == 429
    other = client.get(f"/api/games/{game_id}", headers=bearer(tokens[0]), **from_address("192.0.2.9"))
    assert other.status_code == 200
    # Requests that carry no link are not concerned.
    assert client.get("/health").status_code == 200
    assert client.get("/api/openapi.json").status_code == 200


def test_requests_carrying_links_are_limited_per_address(make_app: Callable[..., Flask]) -> None:
    app = limited_app(make_app, RATELIMIT_LINKS="5 per minute")
    game_id, tokens = start_game(app)
    client = app.test_client()
    for _ in range(5):
        assert client.get(f"/api/games/{game_id}", headers=bearer(tokens[1])).status_code == 200
    assert_limited(client.get(f"/api/games/{game_id}", headers=bearer(tokens[1])), json=True)
    assert_limited(client.get(f"/play/{tokens[1]}"), json=False)
    assert (
        client.get(f"/api/games/{game_id}", headers=bearer(tokens[1]), **from_address("192.0.2.10")).status_code == 200
    )


def test_submitted_steps_are_limited_per_seat(make_app: Callable[..., Flask]) -> None:
    app = limited_app(make_app, RATELIMIT_ACTIONS="3 per minute")
    game_id, tokens = start_game(app)
    client = app.test_client()
    statuses = []
    for _ in range(3):
        response = client.post(
            f"/api/games/{game_id}/actions", headers=bearer(tokens[0]), json={"version": 1, "action": {"type": "fly"}}
        )
        statuses.append(response.status_code)
    assert statuses == [422, 422, 422]  # refused steps count too: they cost the same work
    message = assert_limited(
        client.post(f"/api/games/{game_id}/undo", headers=bearer(tokens[0]), json={"version": 1}), json=True
    )
    assert "steps submitted for this seat" in message
    # The same seat from another address is the same seat; reading the game is not a step; the other
    # seat has its own count.
    again = client.post(
        f"/api/games/{game_id}/actions",
        headers=bearer(tokens[0]),
        json={"version": 1, "action": {"type": "pick", "combo": 0}},
        **from_address("192.0.2.11"),
    )
    assert again.status_code == 429
    assert client.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).status_code == 200
    other = client.post(
        f"/api/games/{game_id}/actions", headers=bearer(tokens[1]), json={"version": 1, "action": {"type": "end_turn"}}
    )
    assert other.status_code == 409


def test_limits_are_off_when_disabled(make_app: Callable[..., Flask]) -> None:
    app = make_app(RATELIMIT_ENABLED=False, RATELIMIT_BAD_LINKS="1 per minute")
    client = app.test_client()
    assert [client.get(f"/play/bad{i}").status_code for i in range(5)] == [403] * 5


@pytest.mark.redis
def test_web_processes_share_the_counts_in_redis(make_app: Callable[..., Flask], redis_url: str, tmp_path: Any) -> None:
    settings = {"RATELIMIT_BAD_LINKS": "4 per minute", "RATELIMIT_STORAGE_URI": redis_url}
    first = limited_app(make_app, **settings, INSTANCE_PATH=str(tmp_path / "one"))
    second = limited_app(make_app, **settings, INSTANCE_PATH=str(tmp_path / "two"))
    a, b = first.test_client(), second.test_client()
    assert [a.get(f"/play/bad{i}").status_code for i in range(2)] == [403, 403]
    assert [b.get(f"/play/bad{i}").status_code for i in range(2)] == [403, 403]
    assert_limited(a.get("/play/bad"), json=False)
    assert_limited(b.get("/play/bad"), json=False)


def test_an_unreachable_counter_store_does_not_take_the_site_down(make_app: Callable[..., Flask]) -> None:
    # Nothing listens on port 9 (discard) here: every call to the storage fails at once.
    app = limited_app(make_app, RATELIMIT_STORAGE_URI="redis://127.0.0.1:9/0", RATELIMIT_BAD_LINKS="2 per minute")
    game_id, tokens = start_game(app)
    client = app.test_client()
    assert client.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).status_code == 200
    # The limits still hold, counted in this process's memory meanwhile.
    assert [client.get(f"/play/bad{i}").status_code for i in range(3)] == [403, 403, 429]


@pytest.mark.redis
def test_on_redis_a_request_is_counted_in_one_round_trip_and_every_limit_holds(
    make_app: Callable[..., Flask], redis_url: str
) -> None:
    app = limited_app(
        make_app,
        RATELIMIT_STORAGE_URI=redis_url,
        RATELIMIT_LINKS="6 per minute",
        RATELIMIT_ACTIONS="2 per minute",
        RATELIMIT_BAD_LINKS="2 per minute; 100 per day",
    )
    game_id, tokens = start_game(app)
    client = app.test_client()
    # Once, so that Redis knows the script (a server that does not is sent it: one more round trip).
    assert (
        client.get(f"/api/games/{game_id}", headers=bearer(tokens[1]), **from_address("192.0.2.30")).status_code == 200
    )
    redis = app.extensions["smallworld.limiter"].storage.get_connection()
    sent: list[str] = []
    execute = redis.execute_command

    def counted(*args: Any, **options: Any) -> Any:
        sent.append(str(args[0]))
        return execute(*args, **options)

    redis.execute_command = counted
    step = {"version": 1, "action": {"type": "fly"}}
    # A step carries a link (per address, twice: all and refused ones) and is a step of its seat: three
    # limits, four counters, one round trip.
    assert client.post(f"/api/games/{game_id}/actions", headers=bearer(tokens[0]), json=step).status_code == 422
    assert len(sent) == 1
    assert client.post(f"/api/games/{game_id}/actions", headers=bearer(tokens[0]), json=step).status_code == 422
    message = assert_limited(
        client.post(f"/api/games/{game_id}/actions", headers=bearer(tokens[0]), json=step), json=True
    )
    assert "steps submitted for this seat" in message and "2 per 1 minute" in message
    assert len(sent) == 3
    # A refused link costs a second round trip, after the answer, to count the refusal.
    assert client.get("/play/not-a-link").status_code == 403
    assert len(sent) == 5
    assert client.get("/play/not-a-link-either").status_code == 403
    message = assert_limited(client.get(f"/api/games/{game_id}", headers=bearer(tokens[1])), json=True)
    assert "invalid or expired links" in message
    # Per address: 6 requests carrying a link in a minute, counted in Redis by every process alike.
    other = from_address("192.0.2.20")
    answers = [client.get(f"/api/games/{game_id}", headers=bearer(tokens[1]), **other).status_code for _ in range(7)]
    assert answers == [200] * 6 + [429]
    assert client.get("/health", **other).status_code == 200  # no link: not concerned
    assert sent.count("EVALSHA") == len(sent)
    # The counters are Flask-Limiter's own (its key prefix, the limits library's keys): web processes of the
    # version before, during an upgrade, count in the same ones.
    assert redis.get("LIMITS:LIMITER/smallworld/192.0.2.20/links/6/1/minute") == b"7"


def test_a_limit_that_does_not_parse_is_refused_at_start(make_app: Callable[..., Flask]) -> None:
    with pytest.raises(ValueError, match="SMALLWORLD_RATELIMIT_ACTIONS is not a rate limit"):
        limited_app(make_app, RATELIMIT_ACTIONS="sixty a minute")


def test_flask_limiters_own_limits_on_every_request_hold_when_configured(make_app: Callable[..., Flask]) -> None:
    # Its check before every request is skipped when it has nothing to count there (the usual case)...
    plain = limited_app(make_app)
    assert plain.test_client().get("/health").status_code == 200
    assert limiter_counts_every_request(plain.extensions["smallworld.limiter"]) is False
    # ...and runs, before ours, when an operator sets a default limit of Flask-Limiter's.
    app = limited_app(make_app, RATELIMIT_DEFAULT="2 per minute")
    client = app.test_client()
    assert [client.get("/health").status_code for _ in range(2)] == [200, 200]
    assert client.get("/health").status_code == 429
    assert limiter_counts_every_request(app.extensions["smallworld.limiter"]) is True


def test_a_limit_that_does_not_parse_is_refused_by_the_processes_that_serve_no_request_too(tmp_path: Path) -> None:
    settings = {"INSTANCE_PATH": str(tmp_path), "RATELIMIT_ENABLED": True, "RATELIMIT_LINKS": "many"}
    with pytest.raises(ValueError, match="SMALLWORLD_RATELIMIT_LINKS is not a rate limit"):
        create_app(settings, web=False)
    # With the limits off, neither app reads them, as before.
    create_app({**settings, "RATELIMIT_ENABLED": False}, web=False)
    create_app({**settings, "RATELIMIT_ENABLED": False})
