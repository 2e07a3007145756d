"""Property tests of the host's designs (``rules/designs.py``): random valid designs in random games keep the
engine's invariants, and random invalid designs are refused naming the field.

Each game of :data:`SEEDS` draws, from its seed, a race design and a power design (random effects of the
vocabulary with random parameters), whether the race names its stand-in or has one drawn, whether the
custom combo comes first, the players, the redeploy mode, and plays to the end with ``rules.bots``
(now and then an auto-pass). After every step: ``tests/rules/invariants.py`` (box counts with the stand-in's
box, every banner and badge once, the JSON round trip), the step's input unchanged; every tenth step, every
action ``legal_actions`` offers applies; at the end, the game replays exactly from its seed and log, and
``custom_of`` rebuilds the game as it began from the designs its last snapshot holds. The seed
list is fixed and checked to meet every effect, both kinds of stand-in, and designed races and powers that went
In Decline (CPU: about ten seconds).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest

from rules import GameState, apply, auto_pass, awaiting, new_game
from rules.bots import random_action
from rules.designs import (
    EFFECT_LIST,
    POWER,
    RACE,
    SYMBOLS,
    TERRAINS,
    TOKENS,
    DesignError,
    custom_of,
    design_schema,
    read_design,
)

from .invariants import check_invariants
from .test_properties import apply_every_legal_action

SEEDS = range(40)
IN_DECLINE_SEEDS = (0, 7)


def random_effect(rnd: random.Random, kind: str, effect: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"effect": effect.id}
    for param in effect.params:
        if param.default is not None and rnd.random() < 0.3:
            continue  # left to its default
        if param.kind == "int":
            out[param.name] = rnd.randint(param.low, param.high)
        elif param.kind == "bool":
            out[param.name] = kind == RACE and rnd.random() < 0.6
        else:
            out[param.name] = rnd.choice(TERRAINS if param.kind == "terrain" else SYMBOLS)
    return out


def random_design(rnd: random.Random, kind: str, seed: int) -> dict[str, Any]:
    """A valid design: up to 5 different effects (an effect once; not both ways of entering)."""
    offered = [e for e in EFFECT_LIST if kind in e.kinds]
    chosen = rnd.sample(offered, rnd.randint(0, 5))
    if {"enters_anywhere", "enters_terrain"} <= {e.id for e in chosen}:
        chosen = [e for e in chosen if e.id != "enters_terrain"]
    low, high = TOKENS[kind]
    return {
        "kind": kind,
        "name": f"{'Folk' if kind == RACE else 'Gift'} {seed}",
        "tokens": rnd.randint(low, high),
        "text": rnd.choice(["", "Made up at the table.", "  Two\r\nlines  "]),
        "effects": [random_effect(rnd, kind, e) for e in chosen],
    }


def setup(seed: int) -> dict[str, Any]:
    rnd = random.Random(f"design-{seed}")
    parts = rnd.choice([(RACE, POWER), (RACE, POWER), (RACE,), (POWER,)])  # with and without the host's race
    custom: dict[str, Any] = {kind: random_design(rnd, kind, seed) for kind in parts}
    if RACE in parts and rnd.random() < 0.5:
        custom["replaces"] = rnd.choice(["Ratmen", "Skeletons", "Sorcerers", "Amazons"])  # 13 or more tokens
    custom["first"] = rnd.random() < 0.7
    return {
        "players": rnd.randint(2, 5),
        "seed": seed,
        "options": {"redeploy": rnd.choice(["auto", "ask"])},
        "custom": custom,
        "missed": rnd.choice([0.0, 0.03]),
        "moves": rnd.randrange(2**32),
    }


def start(game: dict[str, Any]) -> GameState:
    return new_game(game["players"], seed=game["seed"], options=game["options"], custom=copy.deepcopy(game["custom"]))


def play(game: dict[str, Any]) -> tuple[GameState, list[tuple[str, Any]], set[str]]:
    """Play the game to its end, checking every step; the final state, the log, and what was met."""
    rnd = random.Random(game["moves"])
    state = start(game)
    designed = set(state.designs)
    met: set[str] = set()
    before = check_invariants(state)
    log: list[tuple[str, Any]] = []
    for step in range(20_000):
        if state.over:
            return state, log, met
        if step % 10 == 0:
            apply_every_legal_action(state, rnd)
        seat = min(awaiting(state))
        if rnd.random() < game["missed"]:
            new = auto_pass(state, seat)
            log.append(("auto_pass", seat))
        else:
            action = random_action(state, seat, rnd)
            new = apply(state, action)
            log.append(("apply", action.to_json()))
        assert state.to_json() == before, f"step {step} changed its input"
        before = check_invariants(new)
        state = new
        for p in state.players:
            for troop in p.troops():
                if troop.race in designed:
                    met.add("race In Decline" if troop.declined else "race Active")
                if troop.power in designed:
                    met.add("power In Decline" if troop.declined else "power Active")
    raise AssertionError("no end after 20,000 steps")


def replay(game: dict[str, Any], log: list[tuple[str, Any]]) -> GameState:
    state = start(game)
    for kind, what in log:
        state = auto_pass(state, what) if kind == "auto_pass" else apply(state, what)
    return state


@pytest.mark.parametrize("seed", SEEDS)
def test_random_designs_in_random_games_keep_the_invariants_and_replay(seed: int) -> None:
    game = setup(seed)
    final, log, _ = play(game)
    again = replay(game, log)
    assert again == final and again.to_json() == final.to_json()
    # The service replays a game from its seed and the designs its snapshot holds (custom_of).
    rebuilt = new_game(game["players"], seed=game["seed"], options=game["options"], custom=custom_of(final))
    assert rebuilt.to_json() == start(game).to_json()


def test_the_seed_list_meets_every_effect_both_stand_ins_and_in_decline() -> None:
    games = [setup(seed) for seed in SEEDS]
    designs = [g["custom"][kind] for g in games for kind in (RACE, POWER) if kind in g["custom"]]
    assert {e["effect"] for design in designs for e in design["effects"]} == {e.id for e in EFFECT_LIST}
    parts = {(RACE in g["custom"], POWER in g["custom"]) for g in games}
    assert parts == {(True, True), (True, False), (False, True)}
    assert {"replaces" in g["custom"] for g in games if RACE in g["custom"]} == {True, False}
    assert {g["custom"]["first"] for g in games} == {True, False}
    assert {g["options"]["redeploy"] for g in games} == {"auto", "ask"}
    # Played again here (the games above may run in other processes): these seeds meet both In Decline.
    met = set().union(*(play(setup(seed))[2] for seed in IN_DECLINE_SEEDS))
    assert {"race In Decline", "power In Decline", "race Active", "power Active"} <= met


# -- invalid designs -------------------------------------------------------------------------------------------
def breakages(rnd: random.Random, design: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Random ways to break a valid design, each with the field its refusal must name."""
    kind = design["kind"]
    low, high = TOKENS[kind]
    broken = copy.deepcopy(design)
    broken["tokens"] = rnd.choice([low - 1, high + 1, high + rnd.randint(2, 50), str(low), None])
    yield broken, "tokens"
    broken = copy.deepcopy(design)
    broken["name"] = rnd.choice(["", "Orcs", "FOREST", "x" * 30, "a\x00b", "(x)"])
    yield broken, "name"
    if design["effects"]:
        k = rnd.randrange(len(design["effects"]))
        broken = copy.deepcopy(design)
        broken["effects"][k]["effect"] = rnd.choice(["fly", "", None, "Coins_per_region"])
        yield broken, f"effects[{k}].effect"
        broken = copy.deepcopy(design)
        broken["effects"][k][rnd.choice(["colour", "Terrain", "turns"])] = 1
        yield broken, f"effects[{k}]"
        effect = design["effects"][k]
        if "coins" in effect or "tokens" in effect:
            field = "coins" if "coins" in effect else "tokens"
            broken = copy.deepcopy(design)
            broken["effects"][k][field] = rnd.choice([0, -1, 9, 2.5, True])
            yield broken, f"effects[{k}].{field}"
        if "terrain" in effect:
            broken = copy.deepcopy(design)
            broken["effects"][k]["terrain"] = rnd.choice(["sea", "lake", "desert", "Forest", 3])
            yield broken, f"effects[{k}].terrain"
        broken = copy.deepcopy(design)
        broken["effects"].append(copy.deepcopy(effect))  # the same effect twice
        yield broken, f"effects[{len(design['effects'])}]"
    if kind == POWER:
        broken = copy.deepcopy(design)
        broken["effects"].append({"effect": "coins_per_region", "in_decline": True})
        broken["effects"] = [e for e in broken["effects"][:-1] if e["effect"] != "coins_per_region"] + [
            broken["effects"][-1]
        ]
        yield broken, f"effects[{len(broken['effects']) - 1}].in_decline"


@pytest.mark.parametrize("seed", SEEDS)
def test_random_invalid_designs_are_refused_naming_the_field(seed: int) -> None:
    rnd = random.Random(f"broken-{seed}")
    for kind in (RACE, POWER):
        design = random_design(rnd, kind, seed)
        read_design(design)  # valid as drawn
        for broken, field in breakages(rnd, design):
            with pytest.raises(DesignError) as refused:
                read_design(broken)
            assert refused.value.field.startswith(field), (broken, refused.value)
            assert str(refused.value).startswith(refused.value.field)


#: The breakages the JSON Schema can tell too (an official name, an effect twice… only read_design refuses).
SCHEMA_FIELDS = ("tokens", ".effect", ".terrain", ".coins", ".tokens")


@pytest.mark.parametrize("seed", SEEDS)
def test_the_json_schema_of_a_design_agrees_with_the_rules(seed: int) -> None:
    schema = design_schema()
    assert jsonschema_rs.meta.is_valid(schema)
    validator = jsonschema_rs.Draft202012Validator(schema)
    rnd = random.Random(f"broken-{seed}")
    for kind in (RACE, POWER):
        design = random_design(rnd, kind, seed)
        assert validator.is_valid(design) and validator.is_valid(read_design(design).to_json())
        for broken, field in breakages(rnd, design):
            unknown_parameter = (
                field.startswith("effects[")
                and field.endswith("]")
                and len(broken["effects"]) == len(design["effects"])
            )
            if field.endswith(SCHEMA_FIELDS) or unknown_parameter:
                assert not validator.is_valid(broken), (field, broken)
