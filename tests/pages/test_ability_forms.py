"""The turn page reads what a race or power is and does from its module (``rules``): the one-line summary in
the combo table, the rulebook's paragraph for the seat's own race and power, a form for each of its action
kinds by the kind's shape (a region, a button, a spread, regions to choose, a seat), and the history's
sentences from its telling. A power defined in a test (``tests/rules/test_new_power.py``) shows there too.
"""

from __future__ import annotations

import html
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, col, select

import rules
from emails.messages import from_json
from service.domain.models import OutboxMail
from service.infra.db import get_engine
from tests.pages.test_pages import edit_state, start_game, step, stored
from tests.rules.builder import Builder
from tests.rules.test_new_power import Foresters


def turn_page(app: Flask, state: rules.GameState) -> str:
    """The turn page of seat 0 with ``state`` as the game's state."""
    game_id, links = start_game(app)
    data = state.to_json()
    edit_state(app, game_id, lambda stored_state: (stored_state.clear(), stored_state.update(data)))
    client = app.test_client()
    client.get(links[0])
    page = client.get(f"/games/{game_id}/turn")
    assert page.status_code == 200
    return html.unescape(page.text)


def conquering(power: str, phase: str = "conquer", **extras: Any) -> rules.GameState:
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", power, hand=6, **extras).region(9, seat=0, tokens=2)
    b = b.active(1, "Humans", "Swamp", hand=0).region(10, seat=1).region(3, seat=1)
    return b.at(0, phase).build()


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        (conquering("Berserk"), "Roll the die first (Berserk)</button>"),
        (conquering("Dragon Master"), "Dragon Master: send the dragon to</label>"),
        (conquering("Fortified", "redeploy"), "Fortified: build a fortress on</label>"),
        (conquering("Bivouacking", "redeploy", camps=5), "Place the Encampments (Bivouacking): 5 to place</legend>"),
        (conquering("Heroic", "redeploy"), "Place the Heroes (Heroic): choose 1 region</legend>"),
        (conquering("Diplomat", "redeploy"), "Diplomat: make peace with</label>"),
    ],
    ids=["button", "region", "region-redeploy", "spread", "choose", "seat"],
)
def test_each_ability_kind_gets_the_form_of_its_shape(app: Flask, state: rules.GameState, expected: str) -> None:
    page = turn_page(app, state)
    assert expected in page
    power = rules.POWERS[state.players[0].active.power]  # type: ignore[union-attr]
    assert power.description in page  # the rulebook's paragraph, from the power's module


def test_the_combo_table_says_what_each_race_and_power_does(app: Flask) -> None:
    state = Builder(2, seed=1).combos(("Ratmen", "Hill"), ("Orcs", "Commando")).at(0).build()
    page = turn_page(app, state)
    for name in ("Ratmen", "Hill", "Orcs", "Commando"):
        assert rules.ABILITIES[name].summary in page


def test_a_power_defined_in_a_test_shows_on_the_turn_page_in_the_history_and_in_the_turn_mail(app: Flask) -> None:
    with rules.registered(Foresters):
        # A seed that deals the Foresters among the visible combos of a 2-player game.
        seed = next(f"foresters-{k}" for k in range(200) if _foresters_at(f"foresters-{k}") is not None)
        combo = _foresters_at(seed)
        game_id, links = start_game(app, seed=seed)
        client = app.test_client()
        client.get(links[0])
        page = html.unescape(client.get(f"/games/{game_id}/turn").text)
        assert Foresters.summary in page  # its line in the combo table
        step(client, game_id, type="pick", combo=str(combo))
        page = html.unescape(client.get(f"/games/{game_id}/turn").text)
        assert Foresters.description in page  # the seat's own power, in its words
        state = rules.read_state(stored(app, game_id).state or {})
        forest = next(
            a.region
            for a in rules.legal_actions(state, 0)
            if a.type == "conquer" and a.region is not None and state.board.regions[a.region].terrain == "forest"
        )
        step(client, game_id, type="conquer", region=str(forest))
        history = html.unescape(client.get(f"/games/{game_id}/history").text)
        told = next(line for line in history.splitlines() if f"P0 conquered Forest {forest} " in line)
        assert "(a Forest for the Foresters: 1 Forest this turn)" in told
        assert stored(app, game_id).state["turn_state"]["abilities"] == {"Foresters": {"forests": [forest]}}  # type: ignore[index]

        # The turn ends; the next player's "your turn" mail tells it, with the power's own note.
        step(client, game_id, type="end_conquest")
        state = rules.read_state(stored(app, game_id).state or {})
        [redeploy] = [a for a in rules.legal_actions(state, 0) if a.type == "redeploy"]
        step(client, game_id, type="redeploy", troop="active", **{f"tokens-{forest}": str(redeploy.count)})
        step(client, game_id, type="end_turn")
        assert stored(app, game_id).state["current"] == 1  # type: ignore[index]
        with Session(get_engine(app)) as session:
            row = session.exec(
                select(OutboxMail)
                .where(OutboxMail.game_id == game_id, OutboxMail.template == "your_turn")
                .order_by(col(OutboxMail.id).desc())
            ).first()
            assert row is not None
            text = from_json(row.template, row.context).render(now=row.created_at).text
        told = " ".join(text.split())
        assert f"conquered Forest {forest}" in told and "a Forest for the Foresters: 1 Forest this turn" in told


def _foresters_at(seed: str) -> int | None:
    state = rules.new_game(2, seed=seed)
    for index, combo in enumerate(state.combos[:5]):
        if combo.power == "Foresters":
            return index
    return None


def test_an_attacked_bivouacking_player_places_the_encampments_on_their_redeploy_page(app: Flask) -> None:
    # ``ask`` mode (rulebook, "Bivouacking": "they are redeployed at the end of the current player's turn"):
    # seat 0's Humans lost region 3 with its 2 Encampments; seat 1's Ratmen attacked and ended the turn.
    state = (
        Builder(2, seed=1, redeploy="ask")
        .clear_board()
        .active(0, "Humans", "Bivouacking", hand=1, camps=2)
        .region(4, seat=0, encampments=3)
        .region(10, seat=0)
        .active(1, "Ratmen", "Hill", hand=0)
        .region(3, seat=1, tokens=4)
        .at(1, "redeploy")
        .build()
    )
    state = rules.apply(state, rules.Action("end_turn", 1))
    assert state.phase == "defend" and state.defenders == [0]
    game_id, links = start_game(app, redeploy="ask")
    data = state.to_json()
    edit_state(app, game_id, lambda stored_state: (stored_state.clear(), stored_state.update(data)))
    client = app.test_client()
    client.get(links[0])
    page = html.unescape(client.get(f"/games/{game_id}/turn").text)
    assert "Place your Encampments again (Bivouacking): 2 to place</legend>" in page
    step(client, game_id, type="return_encampments", **{"tokens-10": "2", "tokens-4": "0"})
    after = rules.read_state(stored(app, game_id).state or {})
    assert rules.region_markers(after, 10) == {"encampments": 2}
    assert rules.region_markers(after, 4) == {"encampments": 3}


def test_the_decline_confirmation_shows_the_score_without_the_power(app: Flask) -> None:
    # Rulebook, "Entering In Decline": the badge is discarded, so its bonus is not scored that turn
    # ("Scoring Victory Coins": 1 coin a region). Merchant would add 1 a region while Active.
    state = (
        Builder(2, seed=1)
        .clear_board()
        .active(0, "Ratmen", "Merchant", hand=0)
        .region(1, seat=0, tokens=4)
        .region(2, seat=0, tokens=2)
        .region(6, seat=0)
        .at(0, "start")
        .build()
    )
    assert rules.turn_score(state, 0)["total"] == 6
    game_id, links = start_game(app)
    data = state.to_json()
    edit_state(app, game_id, lambda stored_state: (stored_state.clear(), stored_state.update(data)))
    client = app.test_client()
    client.get(links[0])
    page = html.unescape(client.get(f"/games/{game_id}/turn?confirm=decline").text)
    assert "you score <strong>3 regions = 3 coins</strong>" in page
    assert "(Merchant)" not in page.split("Put your Ratmen In Decline?")[1].split("</p>")[0]
