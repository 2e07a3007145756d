"""Malformed action JSON is refused with IllegalAction, never another exception."""

import pytest

import rules
from rules import Action, IllegalAction


@pytest.mark.parametrize(
    "data",
    [
        {"type": ["conquer"], "player": 0},
        {"type": {"a": 1}, "player": 0},
        {"type": None, "player": 0},
        {"type": "conquer", "player": True, "region": 1},
        {"type": "conquer", "player": 0, "region": 1.5},
        {"type": "redeploy", "player": 0, "tokens": {"x": 1}},
        {"type": "redeploy", "player": 0, "tokens": {"1": -1}},
        [],
        "pick",
    ],
)
def test_malformed_actions_are_refused_readably(data: object) -> None:
    with pytest.raises(IllegalAction):
        Action.from_json(data)
    with pytest.raises(IllegalAction):
        rules.apply(rules.new_game(2, seed=1), data)  # type: ignore[arg-type]
