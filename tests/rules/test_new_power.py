"""A new special power written entirely here, registered for the test only, played through the engine's
public operations with no edit anywhere else: the seams of ``rules/abilities.py`` are enough for one.

Foresters (made up): +1 coin per Forest region conquered this turn. Its own state is a slot for the turn,
``"Foresters": {"forests": [2, 10]}``; its telling notes each Forest it counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from rules import (
    ABILITIES,
    POWERS,
    Action,
    apply,
    legal_actions,
    new_game,
    read_state,
    registered,
    tell,
    turn_score,
)
from rules.abilities import Power, Slot, names_with
from rules.state import GameState as State
from rules.state import Troop
from rules.telling import Step, plural

from .builder import Builder
from .invariants import check_invariants


@dataclass(frozen=True, slots=True)
class Groves(Slot):
    #: The Forest regions conquered this turn.
    forests: frozenset[int] = frozenset()


class Foresters(Power):
    name = "Foresters"
    tokens = 4
    summary = "+1 coin per Forest region conquered this turn."
    source = "tests/rules/test_new_power.py (a power made up for this test, in the rulebook's manner)"
    description = "Each Forest Region you conquer this turn is worth 1 bonus Victory coin at turn's end."
    turn_slot = Groves

    def on_conquer(self, state: State, seat: int, troop: Troop, region: int, nonempty: bool) -> None:
        if state.board.regions[region].terrain == "forest":
            groves = self.read_turn(state, Groves)
            self.write_turn(state, Groves(groves.forests | {region}))

    def score(self, state: State, seat: int, troop: Troop, regions: list[int]) -> int:
        return len(self.read_turn(state, Groves).forests)

    def note(self, step: Step) -> str | None:
        before = self.read_turn(step.before, Groves).forests
        after = self.read_turn(step.after, Groves).forests
        if after - before:
            return f"a Forest for the Foresters: {plural(len(after), 'Forest')} this turn"
        return None


@pytest.fixture
def foresters() -> Iterator[None]:
    with registered(Foresters):
        yield


def test_the_power_is_known_only_while_registered() -> None:
    assert "Foresters" not in POWERS
    with registered(Foresters):
        assert POWERS["Foresters"].description.startswith("Each Forest Region")
        assert "Foresters" in new_game(2, seed=1).power_stack + [c.power for c in new_game(2, seed=1).combos]
    assert "Foresters" not in POWERS and "Foresters" not in ABILITIES
    assert "Foresters" not in new_game(2, seed=1).power_stack


class Rafters(Power):
    name = "Rafters"
    tokens = 4
    summary = "Conquer Seas and the Lake."
    source = "tests/rules/test_new_power.py (a power made up for this test)"
    description = "You may conquer Seas and the Lake."
    sails = True


def test_a_new_power_that_sails_is_named_in_the_refusals_while_registered() -> None:
    # names_with is worked out once per flag: registering and unregistering must forget it.
    before = names_with("sails")
    assert "Rafters" not in before.split(" or ")
    with registered(Rafters):
        assert "Rafters" in names_with("sails").split(" or ")
    assert names_with("sails") == before


def test_foresters_play_through_legal_actions_apply_scoring_and_the_telling(foresters: None) -> None:
    # 2-player board: 10 and 2 are Forests on the edge; 4 (Hill) and 3 (Swamp) lie between them.
    state = Builder(2, seed=1).clear_board().combos(("Ratmen", "Foresters"), ("Humans", "Hill")).at(0).build()
    state = apply(state, Action("pick", 0, combo=0))
    assert state.players[0].active.hand == 8 + 4  # the badge's tokens

    steps = []
    for region in (10, 4, 3, 2):
        action = next(a for a in legal_actions(state, 0) if a.type == "conquer" and a.region == region)
        after = apply(state, action)
        steps.append(tell(state, after, action, ("Ann", "Bob")))
        state = after
    assert steps == [
        "Ann conquered Forest 10 with 2 tokens (a Forest for the Foresters: 1 Forest this turn)",
        "Ann conquered Hill 4 with 2 tokens",
        "Ann conquered Swamp 3 with 2 tokens",
        "Ann conquered Forest 2 with 2 tokens (a Forest for the Foresters: 2 Forests this turn)",
    ]
    # Its own state, under its name, in the JSON of the turn; read back while registered.
    data = state.to_json()
    assert data["turn_state"]["abilities"] == {"Foresters": {"forests": [2, 10]}}
    assert read_state(data) == state
    check_invariants(state)

    assert turn_score(state, 0) == {"regions": 4, "bonus": {"Foresters": 2}, "total": 6}
    state = apply(state, Action("end_conquest", 0))
    assert any(a.type == "redeploy" and a.count == 12 for a in legal_actions(state, 0))
    state = apply(state, Action("redeploy", 0, tokens=((2, 2), (3, 2), (4, 2), (10, 6))))
    end = Action("end_turn", 0)
    after = apply(state, end)
    assert after.last["score"] == {"regions": 4, "bonus": {"Foresters": 2}, "total": 6}
    assert after.players[0].coins == 5 + 6
    assert tell(state, after, end, ("Ann", "Bob"), viewer=0) == (
        "Ann ended the turn, scoring 4 regions + 2 (Foresters) = 6 coins"
    )
    assert tell(state, after, end, ("Ann", "Bob"), viewer=1) == "Ann ended the turn"
    assert "Foresters" not in after.to_json()["turn_state"].get("abilities", {})  # a new turn: absent


def test_a_state_holding_the_power_is_refused_once_it_is_unknown() -> None:
    with registered(Foresters):
        data = Builder(2, seed=1).build().to_json()
    with pytest.raises(ValueError, match="'Foresters' is not a special power of this game"):
        read_state(data)
