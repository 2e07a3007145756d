"""Previews and explanations through the API (``service/domain/previews.py``): each legal action comes with
what the engine says it will do, and that is what the step then does; an action not offered says why."""

from __future__ import annotations

import random
from typing import Any

import rules
from rules.bots import concrete

from .conftest import bearer, create_game, new_game_body, token_of


def started_game(api: Any, outbox: Any) -> tuple[int, dict[int, str]]:
    created = create_game(api, new_game_body(2))
    game_id = created.get_json()["id"]
    for mail in outbox("invitation"):
        api.post("/api/invitations/accept", headers=bearer(token_of(mail.context["invite_url"])))
    tokens = {}
    for mail in outbox("your_turn"):
        token = outbox.seat_token(mail)
        tokens[api.get(f"/api/games/{game_id}", headers=bearer(token)).get_json()["you"]] = token
    return game_id, tokens


def test_legal_actions_come_with_previews_that_the_steps_then_do(api: Any, outbox: Any) -> None:
    game_id, tokens = started_game(api, outbox)
    seat, token = 0, tokens[0]
    legal = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
    assert len(legal["previews"]) == len(legal["actions"])
    picks = [(a, p) for a, p in zip(legal["actions"], legal["previews"], strict=True) if a["type"] == "pick"]
    action, preview = picks[-1]
    (outcome,) = preview["outcomes"]
    coins = api.get(f"/api/games/{game_id}", headers=bearer(token)).get_json()["state"]["players"][seat]["coins"]
    step = api.post(
        f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": legal["version"], "action": action}
    )
    assert step.status_code == 200, step.get_json()
    me = step.get_json()["game"]["state"]["players"][seat]
    assert me["coins"] - coins == outcome["coins"] == -action["combo"]
    assert me["active"]["hand"] == outcome["hand"][me["active"]["race"]]
    # After the pick: every conquest offered says what it changes and what it adds to the score.
    legal = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
    conquests = [(a, p) for a, p in zip(legal["actions"], legal["previews"], strict=True) if a["type"] == "conquer"]
    assert conquests
    action, preview = conquests[0]
    (outcome,) = preview["outcomes"]
    assert outcome["score_change"] >= 1 and outcome["score_if_ended"]["total"] >= 1
    changed = {c["region"]: c["after"] for c in outcome["regions"]}
    step = api.post(
        f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": legal["version"], "action": action}
    )
    regions = step.get_json()["game"]["state"]["regions"]
    assert regions[action["region"]]["tokens"] == changed[action["region"]]["tokens"]
    # Left out on request.
    full = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
    bare = api.get(f"/api/games/{game_id}/legal-actions?previews=false", headers=bearer(token)).get_json()
    assert bare["previews"] == [] and bare["actions"] == full["actions"]
    refused = api.get(f"/api/games/{game_id}/legal-actions?previews=maybe", headers=bearer(token))
    assert refused.status_code == 400 and "previews" in refused.get_json()["error"]


def test_a_steps_answer_holds_the_next_legal_actions_with_previews_on_request(api: Any, outbox: Any) -> None:
    game_id, tokens = started_game(api, outbox)
    token = tokens[0]
    legal = api.get(f"/api/games/{game_id}/legal-actions?previews=false", headers=bearer(token)).get_json()
    pick = next(a for a in legal["actions"] if a["type"] == "pick")
    # A bad flag is refused before the step is taken.
    refused = api.post(
        f"/api/games/{game_id}/actions?previews=maybe", headers=bearer(token), json={"version": 1, "action": pick}
    )
    assert refused.status_code == 400 and "previews" in refused.get_json()["error"]
    assert api.get(f"/api/games/{game_id}", headers=bearer(token)).get_json()["version"] == 1
    # The pick's answer: the conquests that follow, as the GET answers them, without previews by default.
    step = api.post(f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": 1, "action": pick})
    answer = step.get_json()["legal_actions"]
    read = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
    assert answer["version"] == read["version"] == 2 and answer["actions"] == read["actions"]
    assert answer["previews"] == [] and len(read["previews"]) == len(read["actions"])
    # With ?previews=true, the previews too; the next step is made from the answer alone.
    conquest = next(a for a in answer["actions"] if a["type"] == "conquer")
    step = api.post(
        f"/api/games/{game_id}/actions?previews=true", headers=bearer(token), json={"version": 2, "action": conquest}
    )
    answer = step.get_json()["legal_actions"]
    read = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
    assert answer == read and answer["version"] == 3 and any(answer["previews"])
    # An undo's answer too.
    undone = api.post(f"/api/games/{game_id}/undo", headers=bearer(token), json={"version": 3})
    assert undone.status_code == 200
    read = api.get(f"/api/games/{game_id}/legal-actions?previews=false", headers=bearer(token)).get_json()
    assert undone.get_json()["legal_actions"] == read and read["version"] == 4
    # Played from the answers alone to the turn's end: then the game awaits the other seat, and the answer
    # holds nothing for this one.
    legal = read
    for _ in range(20):
        kinds = {a["type"]: a for a in legal["actions"]}
        offered = kinds.get("end_turn") or kinds.get("end_conquest") or legal["actions"][0]
        action = concrete(rules.Action.from_json(offered), random.Random(0)).to_json()
        answer = api.post(
            f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": legal["version"], "action": action}
        ).get_json()
        if answer["legal_actions"] is None:
            break
        legal = answer["legal_actions"]
    assert answer["game"]["awaiting"] == [1] and answer["legal_actions"] is None


def test_an_action_not_offered_says_why_and_a_region_says_what_it_costs(api: Any, outbox: Any) -> None:
    game_id, tokens = started_game(api, outbox)
    token = tokens[0]
    legal = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
    told = api.post(f"/api/games/{game_id}/explain", headers=bearer(token), json={"action": {"type": "decline"}})
    assert told.status_code == 200, told.get_json()
    body = told.get_json()
    assert body["offered"] is False and body["reason"] == "You have no Active race to put In Decline"
    pick = next(a for a in legal["actions"] if a["type"] == "pick")
    body = api.post(f"/api/games/{game_id}/explain", headers=bearer(token), json={"action": pick}).get_json()
    assert body["offered"] is True and body["reason"] is None and body["preview"]["outcomes"]
    api.post(f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": legal["version"], "action": pick})
    legal = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
    offered = {a["region"] for a in legal["actions"] if "region" in a}
    for number in range(23):
        region = api.get(f"/api/games/{game_id}/regions/{number}", headers=bearer(token)).get_json()
        assert {e["action"]["region"] for e in region["offered"]} == ({number} & offered)
        if number in offered:
            assert region["conquest"] is None and region["offered"][0]["preview"]["outcomes"]
        else:
            # Why not, in the rules' words, with what it would cost (rulebook, "Conquering a Region").
            assert region["conquest"]["offered"] is False and region["conquest"]["reason"]
            assert region["conquest"]["cost"]["words"].startswith("2 base")
    missing = api.get(f"/api/games/{game_id}/regions/999", headers=bearer(token))
    assert missing.status_code == 400 and "region" in missing.get_json()["error"]
    bad = api.post(f"/api/games/{game_id}/explain", headers=bearer(token), json={"action": {"type": "fly"}})
    assert bad.status_code == 400 and "action" in bad.get_json()["error"]
    other = api.post(
        f"/api/games/{game_id}/explain", headers=bearer(token), json={"action": {"type": "decline", "player": 1}}
    )
    assert other.status_code == 400 and "player" in other.get_json()["error"]


def test_undo_lists_the_steps_in_words_and_takes_back_as_many_as_asked(api: Any, outbox: Any) -> None:
    game_id, tokens = started_game(api, outbox)
    token = tokens[0]
    assert api.get(f"/api/games/{game_id}/undo", headers=bearer(token)).get_json()["steps"] == []
    for _ in range(3):  # the pick, then two conquests
        legal = api.get(f"/api/games/{game_id}/legal-actions?previews=false", headers=bearer(token)).get_json()
        action = next(a for a in legal["actions"] if a["type"] in ("pick", "conquer"))
        api.post(
            f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": legal["version"], "action": action}
        )
    listed = api.get(f"/api/games/{game_id}/undo", headers=bearer(token)).get_json()
    assert [(s["kind"], s["back"]) for s in listed["steps"]] == [("conquer", 1), ("conquer", 2)]
    assert all(s["words"].startswith("Player 0 conquered ") for s in listed["steps"])
    too_many = api.post(f"/api/games/{game_id}/undo", headers=bearer(token), json={"version": 4, "steps": 3})
    assert too_many.status_code == 422 and "steps" in too_many.get_json()["error"]
    zero = api.post(f"/api/games/{game_id}/undo", headers=bearer(token), json={"version": 4, "steps": 0})
    assert zero.status_code == 400
    one = api.post(f"/api/games/{game_id}/undo", headers=bearer(token), json={"version": 4, "steps": 1})
    assert one.status_code == 200 and one.get_json()["last"]["undone"] == 1
    listed = api.get(f"/api/games/{game_id}/undo", headers=bearer(token)).get_json()
    assert [s["back"] for s in listed["steps"]] == [1] and listed["version"] == 5


def test_explain_gives_the_board_after_a_redeployment_without_others_coins(api: Any, outbox: Any) -> None:
    game_id, tokens = started_game(api, outbox)
    token = tokens[0]
    for kind in ("pick", "conquer", "end_conquest"):
        legal = api.get(f"/api/games/{game_id}/legal-actions?previews=false", headers=bearer(token)).get_json()
        action = next(a for a in legal["actions"] if a["type"] == kind)
        api.post(
            f"/api/games/{game_id}/actions", headers=bearer(token), json={"version": legal["version"], "action": action}
        )
    legal = api.get(f"/api/games/{game_id}/legal-actions", headers=bearer(token)).get_json()
    (choice,) = [a for a in legal["actions"] if a["type"] == "redeploy"]
    region = choice["regions"][0]
    proposed = {"type": "redeploy", "tokens": {str(region): choice["count"]}}
    told = api.post(f"/api/games/{game_id}/explain", headers=bearer(token), json={"action": proposed, "board": True})
    body = told.get_json()
    assert told.status_code == 200 and body["offered"] is True, body
    assert body["board"]["regions"][region]["tokens"] == choice["count"]
    assert body["board"]["players"][1]["coins"] is None and "rng" not in body["board"]
    wrong = {"type": "redeploy", "tokens": {str(region): choice["count"] + 1}}
    body = api.post(f"/api/games/{game_id}/explain", headers=bearer(token), json={"action": wrong, "board": True})
    assert body.get_json()["offered"] is False and "exactly" in body.get_json()["reason"]
    assert body.get_json()["board"] is None
