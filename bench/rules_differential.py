"""Do two trees' rules engines play the same games? A trace of hashes from each, then compared.

    python bench/rules_differential.py trace --games 300 --out /tmp/after.txt     # in each tree
    python bench/rules_differential.py compare /tmp/before.txt /tmp/after.txt

``trace`` plays random 5-player games (seed = game number) with this tree's engine (the script puts its
own tree first on ``sys.path``: run each tree's own copy) and writes one line per game: the seed, the
steps, and a hash over every step of the awaited seat's legal actions (each as its JSON), the action
played, the state's JSON after it and its ``last``. Every third game is played by
``rules.bots.random_action`` from the whole list, the others by ``random_player`` (which asks the
conquests region by region); every other game redeploys attacked players in ``ask`` mode, and 2% of the
steps are auto-passes, so that the rarer paths are played too. ``compare`` names the games whose lines
differ (and exits 1 if any does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rules  # noqa: E402
from rules.bots import random_action, random_player  # noqa: E402
from rules.engine import awaited  # noqa: E402

PLAYERS = 5


def trace_game(seed: int) -> tuple[int, str]:
    """The steps of game ``seed`` and the hash of everything the engine said along the way."""
    options = {"redeploy": "ask" if seed % 2 else "auto"}
    state = rules.new_game(PLAYERS, seed=seed, options=options)
    rnd = random.Random(seed)
    digest = hashlib.sha256()
    steps = 0
    while not state.over:
        seat = awaited(state)
        assert seat is not None
        offered = [a.to_json() for a in rules.legal_actions(state, seat)]
        digest.update(json.dumps(offered, sort_keys=True).encode())
        if rnd.random() < 0.02:
            state = rules.auto_pass(state, seat)
            digest.update(b"auto_pass")
        else:
            action = random_action(state, seat, rnd) if seed % 3 == 0 else random_player(state, rnd)
            digest.update(json.dumps(action.to_json(), sort_keys=True).encode())
            state = rules.apply(state, action)
        digest.update(json.dumps(state.to_json(), sort_keys=True).encode())
        steps += 1
    return steps, digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    trace = sub.add_parser("trace", help="trace random games with this tree's engine")
    trace.add_argument("--games", type=int, default=300)
    trace.add_argument("--first", type=int, default=0, help="the first game's seed")
    trace.add_argument("--out", required=True)
    compare = sub.add_parser("compare", help="compare two traces")
    compare.add_argument("before")
    compare.add_argument("after")
    args = parser.parse_args()
    if args.command == "trace":
        total = 0
        with open(args.out, "w") as out:
            for seed in range(args.first, args.first + args.games):
                steps, digest = trace_game(seed)
                total += steps
                out.write(f"{seed} {steps} {digest}\n")
        print(f"{args.games} games, {total} steps traced by {Path(rules.__file__).parent}")
        return
    before = Path(args.before).read_text().splitlines()
    after = Path(args.after).read_text().splitlines()
    differ = [a.split()[0] for a, b in zip(before, after, strict=False) if a != b]
    steps = sum(int(line.split()[1]) for line in before)
    if len(before) != len(after):
        print(f"the traces have {len(before)} and {len(after)} games")
    named = f" ({', '.join(differ)})" if differ else ""
    print(f"{len(before)} games, {steps} steps: {len(differ)} games differ{named}")
    sys.exit(1 if differ or len(before) != len(after) else 0)


if __name__ == "__main__":
    main()
