"""Previews (``rules/previewing.py``): for every action offered, what the preview says is what ``apply`` then
does: coins, tokens in hand, regions, the score of a step that ends the turn; a die step's preview holds
the outcome of every value of the die, and the die rolled picks the one that happens.

Random games over every player count and both redeploy modes (ARCHITECTURE §4), played by ``rules.bots``, until
every race and every power has been picked; at every position each legal action is previewed and applied.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from rules import POWERS, RACES, Action, GameState, IllegalAction, apply, auto_pass, awaiting, legal_actions, new_game
from rules.actions import is_described
from rules.bots import concrete, random_player
from rules.components import DIE_FACES
from rules.previewing import board_after, explain, preview, previews, turn_score_if_ended
from rules.regions import region_markers
from rules.scoring import turn_score
from rules.state import DEFEND, REDEPLOY, START, Combo

from .builder import Builder

MAX_GAMES = 60
MIN_GAMES = 8


def regions_changed(before: GameState, after: GameState) -> list[dict[str, Any]]:
    """The regions ``apply`` changed, read region by region (not the way the preview reads them)."""
    out = []
    for i in range(len(before.regions)):
        old, new = before.regions[i], after.regions[i]
        old_view = {"owner": old.owner, "race": old.race, "tokens": old.tokens} | region_markers(before, i)
        new_view = {"owner": new.owner, "race": new.race, "tokens": new.tokens} | region_markers(after, i)
        if old_view != new_view:
            out.append({"region": i, "before": old_view, "after": new_view})
    return out


def check_against_apply(state: GameState, action: Action) -> GameState:
    """Preview ``action``, apply it, and check that the preview said what happened; return the state after."""
    seat = action.player
    before_json = state.to_json()
    ahead = preview(state, action)
    assert state.to_json() == before_json, "a preview changed the state"
    after = apply(state, action)
    die = after.last.get("die")
    if ahead.uses_die:
        assert {o.die for o in ahead.outcomes} == set(DIE_FACES), ahead
        assert sum(o.chances for o in ahead.outcomes) == len(DIE_FACES)
        outcome = ahead.outcome(die)
    else:
        (outcome,) = ahead.outcomes
        assert outcome.chances == len(DIE_FACES)
    where = f"{action} in phase {state.phase}, turn {state.turn}"
    assert outcome.coins == after.players[seat].coins - state.players[seat].coins, where
    assert outcome.hand == {t.race: t.hand for t in after.players[seat].troops()}, where
    assert [c.to_json() for c in outcome.regions] == regions_changed(state, after), where
    assert outcome.phase == after.phase, where
    still_on = seat in awaiting(after) and after.phase != DEFEND and after.current == seat and not after.over
    if state.phase == DEFEND:
        assert outcome.ends_turn == (seat not in awaiting(after)), where
        assert outcome.score_if_ended is None
    else:
        assert outcome.ends_turn == (not still_on), where
        if still_on:
            assert outcome.score is None
            # "If the turn ended now": the engine's own completion of the turn, after the step.
            assert outcome.score_if_ended == auto_pass(after, seat).last["score"], where
            now = turn_score_if_ended(state, seat)
            assert outcome.score_change == outcome.score_if_ended["total"] - (now["total"] if now else 0)
        else:
            assert outcome.score == after.last.get("score"), where
            if outcome.score is not None:
                assert outcome.coins >= outcome.score["total"] or action.type != "end_turn"
    return after


def stack_combos(state: GameState, game: int) -> GameState:
    """Show a different part of the races and powers in the column of each game, so that a few games see
    every one of them picked."""
    races, powers = sorted(RACES), sorted(POWERS)
    column = [Combo(races[(game * 6 + k) % len(races)], powers[(game * 6 + k) % len(powers)]) for k in range(6)]
    used = {c.race for c in column}, {c.power for c in column}
    new = state.fork()
    new.combos = column
    new.race_stack = [r for r in races if r not in used[0]]
    new.power_stack = [p for p in powers if p not in used[1]]
    new.power_discard = []
    return new.done()


def play(game: int, seen: dict[str, Counter]) -> int:
    players = 2 + game % 4
    mode = "ask" if (game // 4) % 2 else "auto"
    state = stack_combos(new_game(players, seed=f"preview-{game}", options={"redeploy": mode}), game)
    rnd = random.Random(game)
    checked = 0
    while not state.over:
        seat = min(awaiting(state))
        for choice in legal_actions(state, seat):
            check_against_apply(state, concrete(choice, rnd))
            checked += 1
        action = random_player(state, rnd)
        state = apply(state, action)
        if action.type == "pick":
            troop = state.players[seat].active
            assert troop is not None
            seen["races"][troop.race] += 1
            seen["powers"][troop.power] += 1
        seen["actions"][action.type] += 1
    return checked


def test_every_offered_action_does_what_its_preview_says() -> None:
    seen: dict[str, Counter] = {"races": Counter(), "powers": Counter(), "actions": Counter()}
    checked = games = 0
    while games < MAX_GAMES:
        checked += play(games, seen)
        games += 1
        if games >= MIN_GAMES and set(seen["races"]) == set(RACES) and set(seen["powers"]) == set(POWERS):
            break
    assert set(seen["races"]) == set(RACES), f"never picked: {set(RACES) - set(seen['races'])}"
    assert set(seen["powers"]) == set(POWERS), f"never picked: {set(POWERS) - set(seen['powers'])}"
    assert {"final_conquest", "decline", "end_turn"} <= set(seen["actions"])
    assert checked > 1000


def test_previews_list_every_legal_action_with_its_preview() -> None:
    state = new_game(3, seed=7)
    listed = previews(state, 0)
    assert [a for a, _ in listed] == legal_actions(state, 0)
    for action, ahead in listed:
        assert ahead is not None and ahead.action == action
    assert previews(state, 1) == []


def ratmen_merchant_on_three_regions() -> Builder:
    """Seat 0's Ratmen with Merchant (+1 coin a region) hold regions 1, 2 and 6 at the start of a turn."""
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Merchant", hand=0)
    return b.region(1, seat=0, tokens=4).region(2, seat=0, tokens=2).region(6, seat=0).at(0, START)


def test_going_in_decline_scores_without_the_power() -> None:
    # Rulebook, "Entering In Decline": the badge is discarded, so its bonus is not scored that turn;
    # "Scoring Victory Coins": an In Decline race scores 1 coin per region.
    state = ratmen_merchant_on_three_regions().build()
    assert turn_score(state, 0)["total"] == 6  # what the page used to show: the power counted
    (outcome,) = preview(state, Action("decline", 0)).outcomes
    assert outcome.score == {"regions": 3, "bonus": {}, "total": 3}
    assert outcome.coins == 3 and outcome.ends_turn
    assert apply(state, Action("decline", 0)).last["score"] == outcome.score


def test_a_conquest_says_the_score_it_adds_and_the_tokens_left() -> None:
    state = ratmen_merchant_on_three_regions().build()
    (outcome,) = preview(state, Action("conquer", 0, region=3)).outcomes
    assert outcome.score_change == 2  # one more region, and Merchant's coin for it
    # Readied (rulebook, "Ready your Troops"): 4 tokens in hand, 2 of them on the Swamp.
    assert outcome.hand == {"Ratmen": 2}
    assert [c.region for c in outcome.regions] == [1, 2, 3]  # 1 and 2 keep one token each
    assert outcome.regions[2].after == {"owner": 0, "race": "Ratmen", "tokens": 2}


def test_a_final_conquest_is_previewed_for_every_value_of_the_die_without_telling_the_roll() -> None:
    # Rulebook, "Final Conquest Attempt": 4 tokens in hand against 3 Orcs (cost 5).
    state = ratmen_merchant_on_three_regions().active(1, "Orcs", "Hill", hand=0).region(12, seat=1, tokens=3).build()
    offered = [a for a in legal_actions(state, 0) if a.type == "final_conquest"]
    assert offered
    ahead = preview(state, offered[0])
    assert [o.die for o in ahead.outcomes] == [0, 1, 2, 3]
    assert [o.chances for o in ahead.outcomes] == [3, 1, 1, 1]
    assert [len(o.regions) for o in ahead.outcomes] == [2, 3, 3, 3]  # 0: readied only; else region 12 too
    assert all(o.phase == REDEPLOY for o in ahead.outcomes)  # the conquests end either way
    # The same preview whatever the generator holds: it does not depend on the roll to come.
    other = state.fork()
    other.rng ^= 0x5A5A5A5A
    assert preview(other.done(), offered[0]) == ahead


def test_a_refused_action_is_refused_by_the_preview_with_the_rules_words() -> None:
    state = ratmen_merchant_on_three_regions().build()
    with pytest.raises(IllegalAction, match="not adjacent"):
        preview(state, Action("conquer", 0, region=20))


def test_a_described_choice_is_previewed_once_made() -> None:
    state = ratmen_merchant_on_three_regions().at(0, REDEPLOY).build()
    (choice,) = [a for a in legal_actions(state, 0) if a.type == "redeploy"]
    with pytest.raises(IllegalAction, match="choice"):
        preview(state, choice)
    made = Action("redeploy", 0, tokens=((1, 1), (2, 1), (6, 5)))
    board = board_after(state, made)
    assert [board["regions"][i]["tokens"] for i in (1, 2, 6)] == [1, 1, 5]
    assert state.regions[6].tokens == 1
    with pytest.raises(IllegalAction, match="exactly 7"):
        board_after(state, Action("redeploy", 0, tokens=((1, 1), (2, 1), (6, 1))))


def test_previews_of_a_player_not_awaited_are_empty() -> None:
    state = new_game(2, seed=3)
    assert previews(state, 1) == []
    assert not is_described("conquer")


def test_a_conquest_not_offered_says_why_with_the_cost() -> None:
    # Rulebook, "Conquering a Region": 2 tokens, +1 per token there; 4 in hand once readied.
    state = ratmen_merchant_on_three_regions().active(1, "Orcs", "Hill", hand=0).region(12, seat=1, tokens=3).build()
    told = explain(state, {"type": "conquer", "player": 0, "region": 12})
    assert not told.offered and told.preview is None
    assert told.reason == (
        "Region 12 needs 5 tokens, you have 4 in hand (you may try it as your final conquest with the die)"
    )
    assert told.cost is not None and str(told.cost) == "2 base + 3 tokens = 5"
    far = explain(state, Action("conquer", 0, region=20))
    assert far.reason == "Region 20 is not adjacent to any region your Ratmen hold"
    sea = explain(state, Action("conquer", 0, region=0)).to_json()
    assert "only a Seafaring race" in sea["reason"] and sea["cost"]["refusal"] == sea["reason"]


def test_an_offered_action_is_explained_with_its_preview() -> None:
    state = ratmen_merchant_on_three_regions().build()
    told = explain(state, Action("conquer", 0, region=3))
    assert told.offered and told.reason is None
    assert told.preview == preview(state, Action("conquer", 0, region=3))
    assert told.to_json()["cost"]["words"] == "2 base = 2"


def test_a_step_out_of_its_phase_says_why() -> None:
    state = ratmen_merchant_on_three_regions().build()
    assert explain(state, Action("pick", 0, combo=0)).reason == (
        "You already have an Active race; pick a new combo the turn after going In Decline"
    )
    assert explain(state, Action("end_turn", 1)).reason.startswith("It is not your turn")
    assert explain(state, Action("end_turn", 7)).reason == "There is no player 7 in this game"
