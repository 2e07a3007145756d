"""What previews cost (``rules.previews``): every legal action previewed at every position of random games,
next to the step the engine takes there anyway (``legal_actions`` + ``apply``), in the same run.

    PYTHONPATH=. python bench/previews.py --games 10 --players 5

Prints, per position, the time of ``legal_actions`` + ``apply`` (the reference), of ``previews`` (every
offered action applied and, for the player on turn, their turn ended by the engine), the ratio between the
two, and the cost per previewed action. The JSON API's ``legal-actions`` answer pays ``previews`` once per
request (``?previews=false`` does not).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from rules import apply, awaiting, legal_actions, new_game, previews
from rules.bots import random_player


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--players", type=int, default=5)
    args = parser.parse_args()
    step_times: list[float] = []
    preview_times: list[float] = []
    actions = 0
    for game in range(args.games):
        state = new_game(args.players, seed=f"bench-previews-{game}", options={"redeploy": "ask"})
        rnd = random.Random(game)
        while not state.over:
            seat = min(awaiting(state))
            action = random_player(state, rnd)
            started = time.perf_counter()
            legal_actions(state, seat)
            after = apply(state, action)
            middle = time.perf_counter()
            listed = previews(state, seat)
            ended = time.perf_counter()
            step_times.append(middle - started)
            preview_times.append(ended - middle)
            actions += len(listed)
            state = after
    step, ahead = sum(step_times), sum(preview_times)
    print(f"{args.games} games of {args.players} players, {len(step_times)} positions, {actions} actions previewed")
    print(f"legal_actions + apply: median {statistics.median(step_times) * 1e6:.0f} µs a position")
    print(f"previews:              median {statistics.median(preview_times) * 1e6:.0f} µs a position")
    print(f"ratio previews / step: {ahead / step:.1f}×; {ahead / actions * 1e6:.0f} µs per previewed action")


if __name__ == "__main__":
    main()
