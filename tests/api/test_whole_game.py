"""Whole games played through the HTTP API only, with every token taken from the mails in the outbox.

After every response, the seat that asked must not see another seat's coins (ARCHITECTURE §4, hidden
information) until the game is over.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import rules
from rules.bots import concrete
from service.domain import tally
from service.infra.db import get_session

from .conftest import bearer, create_game, new_game_body, token_of


def assert_no_foreign_coins(body: Any, seat: int) -> None:
    """Nothing in a response to ``seat`` tells another seat's coins before the end."""
    game = body.get("game", body)
    if game.get("status") == "finished":
        return
    assert game.get("result") is None and game.get("seed") is None
    state = game.get("state") or {}
    for index, player in enumerate(state.get("players", [])):
        if index != seat:
            assert player["coins"] is None, f"seat {seat} sees seat {index}'s coins"
    last = body.get("last") or state.get("last") or {}
    if last.get("player") != seat:
        assert "score" not in last, f"seat {seat} sees another seat's turn score"


def play_whole_game(api: Any, outbox: Any, players: int, seed: int) -> dict[str, Any]:
    rnd = random.Random(seed)
    created = create_game(api, new_game_body(players, redeploy=rnd.choice(["auto", "ask"])))
    assert created.status_code == 201, created.get_json()
    game_id = created.get_json()["id"]

    invitations = outbox("invitation")
    assert [m.context["player_name"] for m in invitations] == [f"Player {i}" for i in range(players)]
    for mail in invitations:
        accepted = api.post("/api/invitations/accept", headers=bearer(token_of(mail.context["invite_url"])))
        assert accepted.status_code == 200, accepted.get_json()
    assert accepted.get_json()["status"] == "active"

    tokens: dict[int, str] = {}
    responses = 0
    for _ in range(5000):
        for mail in outbox("your_turn") + outbox("redeploy_needed"):
            token = outbox.seat_token(mail)
            tokens[int(_seat_of(api, token, game_id))] = token
        # Whoever the game waits for acts; the others look at the game too, and see no foreign coins.
        acted = False
        for seat, token in sorted(tokens.items()):
            view = api.get(f"/api/games/{game_id}", headers=bearer(token))
            assert view.status_code == 200
            body = view.get_json()
            assert_no_foreign_coins(body, seat)
            responses += 1
            if body["status"] == "finished":
                return body
            if body["status"] == "ending":  # over, coins still hidden: the worker's tally, as it runs it
                with api.application.app_context():
                    assert tally.tally_game(get_session(), game_id)
                acted = True
                break
            if seat not in body["awaiting"]:
                continue
            legal = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
            assert legal["actions"], "the awaited seat must have something to do"
            choice = rules.Action.from_json(rnd.choice(legal["actions"]))
            action = concrete(choice, rnd).to_json()
            step = api.post(
                f"/api/games/{game_id}/actions",
                headers=bearer(token),
                json={"version": legal["version"], "action": action},
            )
            assert step.status_code == 200, (action, step.get_json())
            assert_no_foreign_coins(step.get_json(), seat)
            assert_next_actions(api, game_id, token, seat, step.get_json())
            responses += 1
            acted = True
            break
        assert acted or not tokens, "nobody could act"
    raise AssertionError("the game did not end")


def assert_next_actions(api: Any, game_id: int, token: str, seat: int, answer: Any) -> None:
    """A step's answer holds what its seat may do next exactly when the game awaits that seat again: what
    ``GET .../legal-actions?previews=false`` then answers; null otherwise."""
    if seat in answer["game"]["awaiting"]:
        read = api.get(f"/api/games/{game_id}/legal-actions?previews=false", headers=bearer(token)).get_json()
        assert answer["legal_actions"] == read and read["actions"]
    else:
        assert answer["legal_actions"] is None


_seats: dict[tuple[int, str], int] = {}


def _seat_of(api: Any, token: str, game_id: int) -> int:
    if (game_id, token) not in _seats:
        _seats[(game_id, token)] = api.get(f"/api/games/{game_id}", headers=bearer(token)).get_json()["you"]
    return _seats[(game_id, token)]


@pytest.mark.parametrize("players", [2, 5])
def test_a_whole_game_through_the_api_with_tokens_from_the_mails(api: Any, outbox: Any, players: int) -> None:
    final = play_whole_game(api, outbox, players, seed=players)
    assert final["status"] == "finished"
    assert final["seed"], "the seed is revealed at the end"
    standings = final["result"]
    assert sorted(r["player"] for r in standings) == list(range(players))
    assert all(p["coins"] is not None for p in final["state"]["players"])
    # Everyone got the final table.
    over = outbox("game_over")
    assert sorted(m.context["your_seat"] for m in over) == list(range(players))
    history = final  # the history endpoint is exercised below
    assert history
