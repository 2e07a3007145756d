"""``next_action`` (service/web/pages/turn.py): where the turn page puts the focus after each step (issue 35),
through one turn dealt from a fixed seed: the combos, the map during the conquests, "Save this
redeployment", then "End turn…" once it is saved."""

from __future__ import annotations

import rules
from service.web.pages.turn import Choices, next_action
from tests.pages.steps import plan_turn


def where(state: rules.GameState) -> str | None:
    return next_action(state, 0, Choices.of(rules.legal_actions(state, 0)))


def test_the_focus_follows_the_turn_from_the_combos_to_the_end() -> None:
    state = rules.new_game(2, seed="turn-cost")
    plan = plan_turn(state)
    assert where(state) == "pick"
    state = rules.apply(state, {"type": "pick", "player": 0, "combo": plan.combo})
    assert where(state) == "map"
    for region in plan.conquests:
        state = rules.apply(state, {"type": "conquer", "player": 0, "region": region})
        assert where(state) == "map"
    state = rules.apply(state, {"type": "end_conquest", "player": 0})
    assert state.phase == rules.Phase.REDEPLOY
    assert where(state) == "save"
    offered = next(a for a in rules.legal_actions(state, 0) if a.type == "redeploy")
    tokens = {str(r): state.regions[r].tokens for r in offered.regions}
    spare = (offered.count or 0) - sum(tokens.values())
    tokens[str(offered.regions[0])] += spare
    state = rules.apply(state, {"type": "redeploy", "player": 0, "tokens": tokens})
    assert where(state) == "end_turn"
