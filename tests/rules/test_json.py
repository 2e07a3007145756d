"""The versioned JSON form of states and actions (ARCHITECTURE §3; rules/README.md)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from rules import SCHEMA_VERSION, Action, IllegalAction, apply, new_game, read_state
from rules.actions import ACTION_FIELDS, offer, redeploy_action
from rules.bots import random_player

from .builder import Builder
from .invariants import check_invariants

README = Path(__file__).resolve().parents[2] / "rules" / "README.md"


def readme_example() -> dict:
    text = README.read_text()
    section = text[text.index("### Example") :]
    match = re.search(r"```json\n(.*?)\n```", section, re.S)
    assert match, "rules/README.md has a ```json example under '### Example'"
    return json.loads(match.group(1))


def test_the_readme_example_is_a_valid_state() -> None:
    data = readme_example()
    state = read_state(data)
    check_invariants(state)
    assert state.to_json() == data  # the example is exactly what the engine writes
    assert (state.board_name, state.current, state.phase) == ("2-players", 1, "conquer")


def test_a_schema_2_snapshot_still_loads_as_the_same_game() -> None:
    # Schema 3 added only ``designs`` (the host's own race and power), absent from a game without them.
    data = readme_example()
    old = {**data, "schema": 2}
    state = read_state(old)
    assert state == read_state(data) and state.designs == {}
    assert state.to_json() == data
    with pytest.raises(ValueError, match="designs: unknown field"):
        read_state({**old, "designs": {}})


def test_the_readme_example_is_what_its_story_gives() -> None:
    state = new_game(2, seed="readme")
    for action in (
        {"type": "pick", "player": 0, "combo": 0},
        {"type": "conquer", "player": 0, "region": 3},
        {"type": "conquer", "player": 0, "region": 4},
        {"type": "end_conquest", "player": 0},
        {"type": "redeploy", "player": 0, "tokens": {"3": 6, "4": 4}},
        {"type": "end_turn", "player": 0},
        {"type": "pick", "player": 1, "combo": 1},
        {"type": "conquer", "player": 1, "region": 16},
    ):
        state = apply(state, action)
    assert state.to_json() == readme_example()


def test_the_schema_version_is_written_and_checked() -> None:
    data = new_game(2, seed=1).to_json()
    assert data["schema"] == SCHEMA_VERSION == 3
    with pytest.raises(ValueError, match="Not a game state of schema 3"):
        read_state({**data, "schema": 4})
    with pytest.raises(ValueError, match="Not a game state"):
        read_state({k: v for k, v in data.items() if k != "schema"})
    with pytest.raises(ValueError, match="Not a game state"):
        read_state([data])  # type: ignore[arg-type]


def test_states_round_trip_exactly_through_json_text() -> None:
    rnd = random.Random(3)
    state = new_game(5, seed=3, options={"redeploy": "ask"})
    biggest = 0
    while not state.over:
        text = json.dumps(state.to_json())
        biggest = max(biggest, len(text))
        again = read_state(json.loads(text))
        assert again == state
        assert json.dumps(again.to_json()) == text
        state = apply(state, random_player(state, rnd))
    assert read_state(json.loads(json.dumps(state.to_json()))) == state
    assert biggest < 16 * 1024  # ARCHITECTURE §8: state snapshot < 16 KB for a 5-player game


def test_a_built_state_round_trips() -> None:
    b = Builder(3, seed=2).clear_board().active(0, "Trolls", "Fortified", held=0, picked_turn=3)
    b.region(5, seat=0, tokens=3, lair=True, fortress=True).declined(0, "Ghouls", "Spirit", hand=2)
    b.region(6, seat=0, tokens=4, declined=True).coins(1, 0).at(0, "conquer", conquests=2)
    state = b.build()
    data = state.to_json()
    # Schema 2: the Lair and the Fortress are in their ability's own state, under its name.
    assert data["regions"][5] == {"owner": 0, "race": "Trolls", "tokens": 3}
    assert data["abilities"] == {"Trolls": {"lairs": [5]}, "Fortified": {"fortresses": [5]}}
    assert data["players"][0]["declined"] == [{"race": "Ghouls", "power": "Spirit", "declined": True, "hand": 2}]
    assert data["turn_state"] == {"readied": True, "conquests": 2}
    assert read_state(data) == state


# -- actions ---------------------------------------------------------------------------------------
EXAMPLES = [
    {"type": "pick", "player": 0, "combo": 2},
    {"type": "decline", "player": 1},
    {"type": "abandon", "player": 0, "region": 4},
    {"type": "conquer", "player": 0, "region": 12},
    {"type": "conquer", "player": 0, "region": 12, "troop": "declined"},
    {"type": "final_conquest", "player": 2, "region": 7},
    {"type": "end_conquest", "player": 0},
    {"type": "redeploy", "player": 0, "tokens": {"3": 4, "12": 2}},
    {"type": "end_turn", "player": 3},
    {"type": "end_turn", "player": 3, "decline": True},
    {"type": "convert", "player": 0, "region": 5},
    {"type": "berserk_roll", "player": 0},
    {"type": "dragon", "player": 0, "region": 5},
    {"type": "place_encampments", "player": 0, "tokens": {"5": 3}},
    {"type": "return_encampments", "player": 1, "tokens": {"5": 1}},
    {"type": "place_fortress", "player": 0, "region": 5},
    {"type": "place_heroes", "player": 0, "regions": [4, 9]},
    {"type": "choose_ally", "player": 0, "target": 2},
]


@pytest.mark.parametrize("data", EXAMPLES, ids=lambda d: d["type"])
def test_actions_round_trip(data: dict) -> None:
    action = Action.from_json(data)
    assert action.to_json() == data
    assert Action.from_json(json.loads(json.dumps(action.to_json()))) == action


def test_every_action_type_has_an_example() -> None:
    assert {d["type"] for d in EXAMPLES} == set(ACTION_FIELDS)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("pick", "An action must be a JSON object with a 'type'"),
        ({"player": 0}, "Unknown action type None; expected one of: abandon, berserk_roll"),
        ({"type": "fly", "player": 0}, "Unknown action type 'fly'"),
        ({"type": "pick", "player": 0, "combo": 1, "region": 3}, "'pick' does not take 'region'"),
        ({"type": "pick", "player": 0}, "'combo' must be a whole number"),
        ({"type": "pick", "player": 0, "combo": "1"}, "'combo' must be a whole number"),
        ({"type": "pick", "player": 0, "combo": True}, "'combo' must be a whole number"),
        ({"type": "pick", "combo": 0}, "'player' must be a whole number"),
        ({"type": "conquer", "player": 0, "region": 1.5}, "'region' must be a whole number"),
        (
            {"type": "conquer", "player": 0, "region": 1, "troop": "ghouls"},
            "'active' or 'declined'",
        ),
        ({"type": "place_heroes", "player": 0, "regions": "4,9"}, "list of region numbers"),
        ({"type": "end_turn", "player": 0, "decline": "yes"}, "'decline' must be true or false"),
        ({"type": "redeploy", "player": 0, "tokens": {"3": 1.5}}, "whole number"),
    ],
)
def test_malformed_actions_are_refused_readably(data, message: str) -> None:
    with pytest.raises(IllegalAction, match=re.escape(message)):
        Action.from_json(data)
    with pytest.raises(IllegalAction, match=re.escape(message)):
        apply(new_game(2, seed=1), data)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Action("pick", 0), "'combo' must be a whole number"),
        (Action("conquer", 0), "'region' must be a whole number"),
        (Action("conquer", 0, region=1, troop="ghouls"), "'troop' must be 'active' or 'declined'"),
        (Action("choose_ally", 0), "'target' must be a whole number"),
    ],
)
def test_actions_built_in_python_are_held_to_the_same_rules(action: Action, message: str) -> None:
    state = new_game(2, seed=1)
    with pytest.raises(IllegalAction, match=re.escape(message)):
        apply(state, action)


def test_only_actions_made_checked_skip_the_check_in_apply() -> None:
    """``Action.checked``: from_json, offer and redeploy_action check (or build from checked fields) as they
    make an action; one built by hand is checked by apply, and the mark is not part of its value."""
    assert Action.from_json({"type": "conquer", "player": 0, "region": 1}).checked
    assert offer("conquer", 0, 1).checked
    assert redeploy_action(0, "active", ((1, 2),)).checked
    by_hand = Action("conquer", 0, region=1)
    assert not by_hand.checked
    assert by_hand == offer("conquer", 0, 1) and hash(by_hand) == hash(offer("conquer", 0, 1))
    with pytest.raises(IllegalAction, match="'tokens' must map region numbers"):
        apply(new_game(2, seed=1), Action("redeploy", 0, tokens=((1, -1),)))
