"""The grammar of orders by mail (rules/orders.py): reading, and turning orders into actions."""

from __future__ import annotations

import random

import pytest

import rules
from rules import orders
from rules.abilities import ABILITIES, VERBS


def test_every_ability_verb_names_one_of_its_own_actions_and_no_base_verb() -> None:
    base = {verb.word for verb in orders.BASE_VERBS}
    assert VERBS, "the races and powers declare verbs"
    for word, verb in VERBS.items():
        assert word not in base
        owner = [a for a in ABILITIES.values() if verb in a.verbs]
        assert len(owner) == 1 and verb.action in {k.type for k in owner[0].actions}
    # Every action kind a race or power adds can be written in a mail.
    kinds = {kind.type for a in ABILITIES.values() for kind in a.actions}
    assert kinds == {verb.action for verb in VERBS.values()}


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("pick 3", [("pick", (3,))]),
        ("Decline.", [("decline", ())]),
        ("conquer 7", [("conquer", (7,))]),
        ("conquer 7, 9, 12", [("conquer", (7, 9, 12))]),
        ("redeploy 7:3 9:1", [("redeploy", ((7, 3), (9, 1)))]),
        ("dragon 12", [("dragon", (12,))]),
        ("END", [("end", ())]),
        ("conquer 3; end", [("conquer", (3,)), ("end", ())]),
        ("ally Bob Smith", [("ally", ("Bob Smith",))]),
        ("\n\n  pick 1\n\nend\nThanks, see you!\nconquer 4", [("pick", (1,)), ("end", ())]),
    ],
)
def test_orders_are_read_line_by_line_until_a_line_that_is_not_one(text: str, read: list) -> None:
    assert [(o.word, o.args) for o in orders.parse(text).orders] == read


def test_an_unreadable_argument_is_an_order_with_a_problem_and_a_first_line_that_is_no_order_is_named() -> None:
    [bad] = orders.parse("redeploy 7-3").orders
    assert bad.problem and "region:count" in bad.problem
    assert orders.parse("pick 1 2").orders[0].problem
    nothing = orders.parse("Hello! I attack the hills")
    assert nothing.orders == () and nothing.stopped_at == "Hello! I attack the hills"


def test_end_ends_the_conquests_places_the_tokens_in_hand_by_the_auto_rule_and_ends_the_turn() -> None:
    state = rules.new_game(2, seed="orders")
    state = rules.apply(state, rules.Action("pick", 0, combo=0))
    conquest = next(a for a in rules.legal_actions(state, 0) if a.type == "conquer")
    state = rules.apply(state, conquest)
    [intent] = orders.intents(orders.parse("end").orders[0])
    kinds = []
    while (action := intent.next_action(state, 0)) is not None:
        kinds.append(action.type)
        state = rules.apply(state, action)
    assert kinds == ["end_conquest", "redeploy", "end_turn"]
    assert state.current == 1 and state.players[0].active is not None
    assert state.players[0].active.hand == 0


def test_a_region_the_rules_refuse_gets_the_rules_reason() -> None:
    state = rules.apply(rules.new_game(2, seed="orders"), rules.Action("pick", 0, combo=0))
    [intent] = orders.intents(orders.parse("conquer 99").orders[0])
    with pytest.raises(rules.IllegalAction, match="no region 99"):
        rules.apply(state, intent.next_action(state, 0))


@pytest.mark.parametrize("seed", range(6))
def test_random_games_played_from_the_listed_orders_only_end(seed: int) -> None:
    """A player who writes only what ``describe`` lists finishes the game (``ask`` mode: defenders too)."""
    rnd = random.Random(seed)
    state = rules.new_game(3, seed=f"orders-{seed}", options={"redeploy": "ask"})
    for _ in range(3000):
        if state.over:
            break
        seat = min(rules.awaiting(state))
        listed = orders.describe(state, seat, ["Ann", "Bob", "Cy"])
        assert listed, "the awaited seat always has orders to give"
        words = {line.split()[0] for line in listed}
        if "pick" in words:
            text = f"pick {rnd.randint(1, 3)}"
        elif "conquer" in words and rnd.random() < 0.8:
            line = next(line for line in listed if line.startswith("conquer"))
            text = "conquer " + line.rsplit(": ", 1)[1].split(", ")[0].split()[0]
        else:
            text = "end"
        for order in orders.parse(text).orders:
            for intent in orders.intents(order):
                for _ in range(6):
                    action = intent.next_action(state, seat)
                    if action is None:
                        break
                    state = rules.apply(state, action)
                    if not intent.repeats:
                        break
    assert state.over


@pytest.mark.parametrize("seed", range(3))
def test_each_conquest_listed_has_its_name_its_cost_with_the_breakdown_and_what_holds_it(seed: int) -> None:
    """Text play needs no picture (ARCHITECTURE §10): every region ``conquer`` lists is on a line of its own,
    with its name, the cost function's total and parts, and its holder, as the board has them."""
    rnd = random.Random(seed)
    state = rules.new_game(3, seed=f"conquests-{seed}")
    names = ["Ann", "Bob", "Cy"]
    checked = 0
    for _ in range(400):
        if state.over:
            break
        seat = min(rules.awaiting(state))
        listed = orders.describe(state, seat, names)
        lines = orders.conquests(state, seat, names)
        offered = sorted(
            {a.region for a in rules.legal_actions(state, seat) if a.type in ("conquer", "final_conquest")}
        )
        assert [int(line.split(":")[0].split()[1]) for line in lines] == offered
        for line, region in zip(lines, offered, strict=True):
            action = next(
                a
                for a in rules.legal_actions(state, seat)
                if a.region == region and a.type in ("conquer", "final_conquest")
            )
            cost = rules.explain(state, action).cost
            assert cost is not None and line.startswith(f"{rules.region_name(state, region)}")
            assert f": {cost.total} token" in line and f"({str(cost).rsplit(' = ', 1)[0]})" in line, line
            held = state.regions[region]
            if not held.tokens:
                assert "; empty" in line
            elif held.owner >= 0:
                assert f"held by {names[held.owner]}'s {held.race} ({held.tokens} token" in line
            checked += 1
        if "pick" in {line.split()[0] for line in listed}:
            text = f"pick {rnd.randint(1, 3)}"
        elif lines and rnd.random() < 0.8:
            text = f"conquer {rnd.choice(offered)}"
        else:
            text = "end"
        for order in orders.parse(text).orders:
            for intent in orders.intents(order):
                for _ in range(6):
                    action = intent.next_action(state, seat)
                    if action is None:
                        break
                    state = rules.apply(state, action)
                    if not intent.repeats:
                        break
    assert checked > 20
