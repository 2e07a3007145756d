"""Does a design that reproduces an official race or power play exactly as that race or power?

    python bench/design_equivalence.py --games 200

For each pair of :data:`PAIRS` (a design made of the vocabulary's effects, and the official race or power
it copies), each game is played twice from the same seed: once as the box deals it, once with the design
in the official one's place (``rules.new_game``'s ``custom``: ``replaces`` for a race, ``power_replaces``
for a power, so both games deal the same stacks). A ``random.Random`` seeded alike chooses the steps
(``rules.bots.random_action``; a step in 50 an auto-pass). After every step the two states must be the
same JSON once the official name is read as the design's (every coin, token, region, score and the die),
and so must the final standings. Prints one line per pair and exits 1 if any game differs.
``tests/rules/test_design_equivalence.py`` plays the first games of the same run.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rules  # noqa: E402
from rules.bots import random_action  # noqa: E402

Design = dict[str, Any]


def _race(name: str, tokens: int, *effects: dict[str, Any]) -> Design:
    return {"kind": "race", "name": name, "tokens": tokens, "text": "", "effects": list(effects)}


def _power(name: str, tokens: int, *effects: dict[str, Any]) -> Design:
    return {"kind": "power", "name": name, "tokens": tokens, "text": "", "effects": list(effects)}


#: official race or power -> the design made to reproduce it.
PAIRS: dict[str, Design] = {
    "Forest": _power("Woodlanders", 4, {"effect": "coins_per_terrain", "terrain": "forest"}),
    "Dwarves": _race("Deep Folk", 3, {"effect": "coins_per_symbol", "symbol": "mine", "in_decline": True}),
    "Humans": _race("Farmers", 5, {"effect": "coins_per_terrain", "terrain": "farmland"}),
    "Wizards": _race("Mages", 5, {"effect": "coins_per_symbol", "symbol": "magic"}),
    "Orcs": _race("Raiders", 5, {"effect": "coins_per_conquest"}),
    "Ghouls": _race("Revenants", 5, {"effect": "keeps_tokens_in_decline"}, {"effect": "conquers_in_decline"}),
    "Merchant": _power("Traders", 2, {"effect": "coins_per_region"}),
    "Alchemist": _power("Gold Makers", 4, {"effect": "coins_each_turn", "coins": 2}),
    "Wealthy": _power("Rich", 4, {"effect": "coins_first_turn", "coins": 7}),
    "Commando": _power("Raiding", 4, {"effect": "discount_all"}),
    "Mounted": _power(
        "Riders",
        5,
        {"effect": "discount_terrain", "terrain": "hill"},
        {"effect": "discount_terrain", "terrain": "farmland"},
    ),
}


def custom_for(official: str) -> dict[str, Any]:
    design = PAIRS[official]
    if design["kind"] == "race":
        return {"race": design, "replaces": official}
    return {"power": design, "power_replaces": official}


def _as_designed(data: dict[str, Any], official: str, name: str) -> Any:
    """The JSON of the official game, the official name read as the design's (names are whole JSON strings)."""
    return json.loads(json.dumps(data).replace(json.dumps(official), json.dumps(name)))


def compare(official: str, seed: int) -> str | None:
    """Play game ``seed`` both ways; the first difference in words, or None."""
    players = 2 + seed % 4
    options = {"redeploy": "ask" if seed % 3 == 0 else "auto"}
    a = rules.new_game(players, seed=seed, options=options)
    b = rules.new_game(players, seed=seed, options=options, custom=custom_for(official))
    (name,) = b.designs
    rnd_a, rnd_b = random.Random(seed), random.Random(seed)
    for step in range(20_000):
        data_b = b.to_json()
        del data_b["designs"]
        if _as_designed(a.to_json(), official, name) != data_b:
            return f"game {seed}: the states differ after step {step}"
        if a.over:
            break
        seat = min(rules.awaiting(a))
        if rnd_a.random() < 0.02:
            rnd_b.random()
            a, b = rules.auto_pass(a, seat), rules.auto_pass(b, seat)
            continue
        rnd_b.random()
        action_a, action_b = random_action(a, seat, rnd_a), random_action(b, seat, rnd_b)
        if action_a != action_b:
            return f"game {seed}, step {step}: {action_a.to_json()} against {action_b.to_json()}"
        a, b = rules.apply(a, action_a), rules.apply(b, action_b)
    standings = rules.final_standings(a), rules.final_standings(b)
    return None if standings[0] == standings[1] else f"game {seed}: the standings differ"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per pair (seeds 0 …)")
    args = parser.parse_args()
    failed = 0
    for official in PAIRS:
        start = time.process_time()  # CPU: the machine may be shared
        differ = [d for d in (compare(official, seed) for seed in range(args.games)) if d is not None]
        failed += len(differ)
        seconds = time.process_time() - start
        print(f"{official:10} = {PAIRS[official]['name']:12} {args.games - len(differ)}/{args.games} games the same")
        print(f"{'':10}   {seconds:.1f} s CPU" + "".join(f"\n  {d}" for d in differ[:3]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
