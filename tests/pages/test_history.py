"""The history page (``service/web/pages/game.py``: ``history``) and the turn page's "Since your last turn": the
game told turn by turn with the sentences of ``service.domain.story``, a filter per player that works as a
plain GET, and no step that was taken back (issue 18)."""

from __future__ import annotations

import html
import re

from flask import Flask

import rules
from tests.pages.test_pages import start_game, step, stored


def turns_listed(page: str) -> list[str]:
    """The turn sentences of a history page (the items of its ``turns`` lists, without their steps)."""
    items = re.findall(r'<ol class="turns">(.*?)</ol>\s*</li>\s*</ol>', page, flags=re.S)
    found = []
    for block in items:
        found += [html.unescape(t).strip() for t in re.findall(r"<li>([^<]*?)<span", block)]
    return found


def play_first_turn(app: Flask, client: object, game_id: int) -> int:
    """Seat 0 picks, conquers a region, takes it back, conquers another and ends the turn: the region it
    kept."""
    step(client, game_id, type="pick", combo="0")
    state = rules.read_state(stored(app, game_id).state or {})
    first, second = [a.region for a in rules.legal_actions(state, 0) if a.type == "conquer"][:2]
    step(client, game_id, type="conquer", region=str(first))
    page = client.get(f"/games/{game_id}/turn").text  # type: ignore[attr-defined]
    version = re.search(r'name="version" value="(\d+)"', page).group(1)  # type: ignore[union-attr]
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    client.post(f"/games/{game_id}/turn/undo", data={"csrf_token": csrf, "version": version})  # type: ignore[attr-defined]
    step(client, game_id, type="conquer", region=str(second))
    step(client, game_id, type="end_conquest")
    state = rules.read_state(stored(app, game_id).state or {})
    [redeploy] = [a for a in rules.legal_actions(state, 0) if a.type == "redeploy"]
    step(client, game_id, type="redeploy", troop="active", **{f"tokens-{second}": str(redeploy.count)})
    step(client, game_id, type="end_turn")
    assert rules.read_state(stored(app, game_id).state or {}).current == 1, "seat 0's turn is over"
    return second


def test_the_history_tells_each_turn_once_without_the_steps_taken_back(app: Flask) -> None:
    game_id, links = start_game(app, players=3, seed="history-1")
    first = app.test_client()
    first.get(links[0])
    kept = play_first_turn(app, first, game_id)
    state = rules.read_state(stored(app, game_id).state or {})
    page = first.get(f"/games/{game_id}/history")
    assert page.status_code == 200
    [told] = turns_listed(page.text)
    assert told.startswith("P0 — ") and f"conquered {rules.region_name(state, kept)}" in told
    assert "took back" not in page.text and "taken back" not in page.text and "<s>" not in page.text
    game_page = first.get(f"/games/{game_id}").text  # its latest steps too
    assert "taken back" not in game_page and "took back" not in game_page
    assert "Turn by turn" in page.text and '<select id="history-player" name="player">' in page.text

    # The next player's turn page begins with it, as their mail does: "you" are the others' reader.
    second = app.test_client()
    second.get(links[1])
    turn = html.unescape(second.get(f"/games/{game_id}/turn").text)
    assert "Since your last turn" in turn and told.split(" — ", 2)[2].split(",")[0] in turn


def test_the_filter_per_player_is_a_plain_get_and_a_bad_player_is_refused_by_name(app: Flask) -> None:
    game_id, links = start_game(app, players=3, seed="history-1")
    client = app.test_client()
    client.get(links[0])
    play_first_turn(app, client, game_id)
    mine = client.get(f"/games/{game_id}/history?player=0")
    assert mine.status_code == 200 and len(turns_listed(mine.text)) == 1
    assert '<option value="0" selected>' in mine.text
    others = client.get(f"/games/{game_id}/history?player=2")
    assert others.status_code == 200 and turns_listed(others.text) == []
    assert "P2 has not played yet." in others.text
    everyone = client.get(f"/games/{game_id}/history?player=")
    assert everyone.status_code == 200 and len(turns_listed(everyone.text)) == 1
    for bad in ("7", "-1", "Bob"):
        refused = client.get(f"/games/{game_id}/history?player={bad}")
        assert refused.status_code == 400 and "player" in refused.text, bad


def test_the_replay_counts_the_steps_kept_not_those_taken_back(app: Flask) -> None:
    """Issue 35: "After step N" counts the steps the history lists; the step taken back and its undo are not
    counted (the address keeps the game's version, which counts them)."""
    game_id, links = start_game(app, players=3, seed="history-2")
    client = app.test_client()
    client.get(links[0])
    play_first_turn(app, client, game_id)
    page = client.get(f"/games/{game_id}/history").text
    listed = re.findall(r'href="[^"]*\?step=(\d+)[^"]*#replay-title"(?: aria-current="step")?>', page)
    versions = sorted({int(v) for v in listed} - {0})  # (0: the "Start" button)
    # pick, conquer, end conquests, redeploy, end turn: five kept steps of the seven versions written.
    assert len(versions) == 5 and versions[-1] == stored(app, game_id).version
    last = client.get(f"/games/{game_id}/history?step={versions[-1]}").text
    assert re.search(r'id="replay-title">After step 5: ', last), "the last of five steps kept"
    second = client.get(f"/games/{game_id}/history?step={versions[1]}").text
    assert re.search(r'id="replay-title">After step 2: ', second)
