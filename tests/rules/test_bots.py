"""``rules.bots.sample_action`` (what ``random_player`` plays) follows ``random_action``'s policy without
listing every legal conquest: it plays only actions ``legal_actions`` offers, with the probabilities
``random_action`` gives them; and ``legal_choices`` holds exactly what ``legal_actions`` lists.

Size: ``SMALLWORLD_PROPERTY_GAMES`` // 15 games (100 by default), see tests/rules/test_properties.py.
"""

from __future__ import annotations

import math
import random
from collections import Counter

from hypothesis import given

from rules import Action, GameState, apply, awaiting, legal_actions, new_game
from rules.actions import DECLINED, is_described
from rules.bots import CONQUESTS, random_player, sample_action
from rules.engine import legal_choices
from rules.state import CONQUER, PICK, START

from .test_properties import GAMES, _settings, games, play


def offered(action: Action, choices: list[Action]) -> bool:
    """Whether ``action`` is one of ``choices``, or fills in a described one (``redeploy``, and every
    ability kind whose ``choice`` legal_actions describes: ``rules.actions.is_described``)."""
    if is_described(action.type):
        return any(c.type == action.type and c.troop == action.troop for c in choices)
    return action in choices


def check_sample(state: GameState, rnd: random.Random) -> None:
    seat = min(awaiting(state))
    choices = legal_actions(state, seat)
    known, offers = legal_choices(state, seat)
    listed = known + [a for o in offers for a in o.all()]
    assert sorted(listed, key=repr) == sorted(choices, key=repr)
    action = sample_action(state, seat, rnd)
    assert offered(action, choices), (action, choices)
    apply(state, action)


@_settings(GAMES // 15)
@given(games())
def test_sampled_actions_are_legal_and_legal_choices_list_the_legal_actions(game) -> None:
    play(game, check_sample)


def policy(state: GameState, choices: list[Action]) -> dict[Action, float]:
    """The probability of each choice under ``random_action`` (before a described choice is filled
    in), worked out from its branches."""
    p: Counter[Action] = Counter()
    rest = 1.0
    ghouls = [a for a in choices if a.troop == DECLINED and a.type in ("conquer", "final_conquest")]
    if ghouls:
        for a in ghouls:
            p[a] += rest * 0.6 / len(ghouls)
        rest *= 0.4
    declines = [a for a in choices if a.type == "decline"]
    if declines:
        p[declines[0]] += rest * 0.12
        rest *= 0.88
    rolls = [a for a in choices if a.type == "berserk_roll"]
    if rolls:
        p[rolls[0]] += rest * 0.5
        rest *= 0.5
    conquests = [a for a in choices if a.type in CONQUESTS]
    if conquests:
        for a in conquests:
            p[a] += rest * 0.85 / len(conquests)
        rest *= 0.15
    for a in choices:
        p[a] += rest / len(choices)
    return p


def conquest_states() -> list[GameState]:
    """States of random games where the policy chooses among conquests (Ghouls' too, when dealt)."""
    found: list[GameState] = []
    for seed in range(12):
        rnd = random.Random(seed)
        state = new_game(2 + seed % 4, seed=seed)
        step = 0
        while not state.over:
            if state.phase in (PICK, START, CONQUER) and step % 23 == 0:
                found.append(state)
            state = apply(state, random_player(state, rnd))
            step += 1
    return found


def test_sample_action_draws_each_action_with_random_action_s_probability() -> None:
    draws = 2000
    states = conquest_states()
    assert len(states) > 40
    # Over all the states, by action type: expected count, variance, count seen.
    by_type: dict[str, list[float]] = {}
    for k, state in enumerate(states):
        seat = min(awaiting(state))
        expected = policy(state, legal_actions(state, seat))
        rnd = random.Random(k)
        seen = Counter(sample_action(state, seat, rnd) for _ in range(draws))
        assert set(seen) <= set(expected), set(seen) - set(expected)
        for action, p in expected.items():
            # 5 standard deviations of the binomial count, + 1 for the rounding.
            assert abs(seen[action] - p * draws) <= 5 * math.sqrt(draws * p * (1 - p)) + 1, (action, p, seen[action])
        for kind in {a.type for a in expected}:
            p = sum(q for a, q in expected.items() if a.type == kind)
            row = by_type.setdefault(kind, [0.0, 0.0, 0.0])
            row[0] += p * draws
            row[1] += draws * p * (1 - p)
            row[2] += sum(n for a, n in seen.items() if a.type == kind)
    for kind, (mean, variance, count) in by_type.items():
        assert abs(count - mean) <= 5 * math.sqrt(variance) + 1, (kind, mean, count)
